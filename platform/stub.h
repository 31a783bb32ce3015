/* Private to platform/: the layout of the stub page (code page, then a parameter page) and the
 * seccomp filters of the stub factory and of the stubs it forks. */
#ifndef PLATFORM_STUB_H
#define PLATFORM_STUB_H

#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/filter.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* How guest threads are made in a stub: a plain host thread, whatever the guest asked for
 * (what is shared is the Sentry's business). The stub's filter admits only these flags. */
#define STUB_THREAD_FLAGS                                                                          \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM)

/* A new stub is a fork of the factory traced from its birth, with the factory's ptrace options
 * (CLONE_PTRACE: no fork event stop in the factory, as PTRACE_O_TRACEFORK would add). Its exit
 * signal goes nowhere: the factory ignores SIGCHLD, so once the Sentry has reaped it as its
 * tracer it is gone. */
#define STUB_FORK_FLAGS (CLONE_PTRACE | SIGCHLD)

/* A thread the seccomp platform's handler makes (in the handler, so no ptrace here): its tid
 * is written into its area at its start and cleared at its exit. */
#define SYSTRAP_THREAD_FLAGS                                                                       \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |        \
	 CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID)

#define STUB_GADGET_OFFSET 0 /* "syscall; int3" */
#define STUB_ENTRY_OFFSET 16
#define STUB_MAX_FILTER 240

/* A stub's message to the Sentry (platform/stubfd.c): its userfaultfd, at the descriptor
 * number the Sentry chose, over the socket every stub inherits. Built once in the parameter
 * page, which no stub can write: the stub's sendmsg names this message and no other. */
#define STUB_FDMSG_FDS 1
struct stub_fdmsg {
	struct msghdr hdr;
	struct iovec iov;
	uint64_t control[3]; /* CMSG_SPACE(STUB_FDMSG_FDS * sizeof(int)), aligned */
	char byte[8];	     /* the one byte sent */
};

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
	struct stub_fdmsg fdmsg;
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
	/* The stubs' end of the socket the Sentry receives their descriptors on: sendmsg only on
	 * it, and only the parameter page's message. */
	int fdsock;
};

/* A seccomp filter into OUT (room for MAX instructions): only calls from the syscall
 * instruction whose next instruction is at SPEC->ip, and of those only the ones the Sentry
 * injects. Returns its length in instructions or a negative errno (platform/stubfilter.c).
 * The allowlist is the one the build compiled (gen/stubfilter_bpf.h) with SPEC's descriptors
 * and addresses put in: SPEC's flags must be the ones above, its stub_base 4 GiB aligned. */
int stub_filter_build(struct sock_filter *out, size_t max, const struct stub_filter_spec *spec);
/* The same, compiled now with libseccomp: what the build's programs must equal (the unit test
 * compares them). */
int stub_filter_compile(struct sock_filter *out, size_t max, const struct stub_filter_spec *spec);

/* The allowlist alone, compiled with libseccomp and written as BPF to descriptor FD: 0 or a
 * negative errno (platform/stubfilter_rules.c). */
int stub_filter_allowlist(const struct stub_filter_spec *spec, int fd);

/* What the build compiles the allowlist with in place of each value a start knows only then:
 * numbers no other comparison of the program uses, replaced in the program's jumps. */
#define STUB_PH_MEMFD 0x7a5e0001U
#define STUB_PH_SYSFD 0x7a5e0002U
#define STUB_PH_DOORBELL 0x7a5e0003U
#define STUB_PH_BASE_HI 0x7a5e0004U /* the stub's base, 4 GiB aligned: its high half */
#define STUB_PH_LEN 0x7a5e0005U	    /* the stub's length (below 4 GiB) */
#define STUB_PH_PROG_LO 0x7a5e0006U /* stub_prog */
#define STUB_PH_PROG_HI 0x7a5e0007U
#define STUB_PH_FDSOCK 0x7a5e0008U

/* Where the parameter page's message lies in a stub whose page starts at BASE. */
#define STUB_PARAMS_OFFSET 4096UL
#define STUB_FDMSG_ADDR(base)                                                                      \
	((base) + STUB_PARAMS_OFFSET + offsetof(struct stub_params, fdmsg) +                       \
	 offsetof(struct stub_fdmsg, hdr))

#endif
