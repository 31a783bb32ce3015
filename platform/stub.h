/* Private to platform/: the layout of the stub page (code page, then a parameter page) and the
 * seccomp filters of the stub factory and of the stubs it forks. */
#ifndef PLATFORM_STUB_H
#define PLATFORM_STUB_H

#include <stddef.h>
#include <stdint.h>
#include <linux/filter.h>

#define STUB_GADGET_OFFSET 0 /* "syscall; int3" */
#define STUB_ENTRY_OFFSET 16
#define STUB_MAX_FILTER 240

struct stub_params {
	uint64_t low_start, low_len;   /* everything below the stub page */
	uint64_t high_start, high_len; /* everything above it */
	/* The factory's filter, which the entry installs: a stub's, plus the fork of a stub and
	 * the installation of stub_prog in it. */
	struct sock_fprog prog;
	struct sock_filter filter[STUB_MAX_FILTER];
	/* Every stub's own filter, stacked in it over the factory's by the Sentry. */
	struct sock_fprog stub_prog;
	struct sock_filter stub_filter[STUB_MAX_FILTER];
};

_Static_assert(offsetof(struct stub_params, high_start) == 16, "stub entry reads offset 16");
_Static_assert(offsetof(struct stub_params, prog) == 32, "stub entry reads offset 32");
_Static_assert(sizeof(struct stub_params) <= 4096, "the parameters fill one page at most");

extern const char stub_code_begin[], stub_code_end[];

/* What the stubs' seccomp filter admits beyond its prefix: the calls the Sentry injects. */
struct stub_filter_spec {
	uint64_t ip;		    /* the address after the gadget's syscall instruction */
	uint64_t ip2;		    /* and after the seccomp platform's (stub_systrap_gadget) */
	int memfd;		    /* the one descriptor mmap may name */
	unsigned long thread_flags; /* the clone flags of a stub thread */
	/* The seccomp platform (-1 and 0 under ptrace): the areas' memory file, the doorbell
	 * the handler writes, and the clone flags of a thread it makes itself. */
	int sysfd, doorbell;
	unsigned long systrap_thread_flags;
	/* The factory's filter only (0 in a stub's): the clone flags of a new stub, and where
	 * the stub's own struct sock_fprog lies (the only filter it may install). */
	unsigned long fork_flags;
	uint64_t stub_prog;
	/* The range kept from guests (stub_base 128 MiB aligned; 0 and 0: not known, no address
	 * is pinned): no mapping call may start in it, and under the seccomp platform the
	 * handler's calls name only addresses of their own form in its thread areas. */
	uint64_t stub_base, stub_len;
};

/* A seccomp filter into OUT (room for MAX instructions): only calls from the syscall
 * instruction whose next instruction is at SPEC->ip, and of those only the ones the Sentry
 * injects. Returns its length in instructions or a negative errno (platform/stubfilter.c). */
int stub_filter_build(struct sock_filter *out, size_t max, const struct stub_filter_spec *spec);

#endif
