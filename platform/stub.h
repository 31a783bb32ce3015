/* Private to platform/: the layout of the stub page (code page, then a parameter page). */
#ifndef PLATFORM_STUB_H
#define PLATFORM_STUB_H

#include <stddef.h>
#include <stdint.h>
#include <linux/filter.h>

#define STUB_GADGET_OFFSET 0 /* "syscall; int3" */
#define STUB_ENTRY_OFFSET 16
#define STUB_MAX_FILTER 128

struct stub_params {
	uint64_t low_start, low_len;   /* everything below the stub page */
	uint64_t high_start, high_len; /* everything above it */
	struct sock_fprog prog;	       /* points at filter, inside the stub page */
	struct sock_filter filter[STUB_MAX_FILTER];
};

_Static_assert(offsetof(struct stub_params, high_start) == 16, "stub entry reads offset 16");
_Static_assert(offsetof(struct stub_params, prog) == 32, "stub entry reads offset 32");

extern const char stub_code_begin[], stub_code_end[];

/* The stubs' seccomp filter into OUT (room for MAX instructions): only calls from the syscall
 * instruction whose next instruction is at IP, and of those only the ones the Sentry injects
 * (mmap of descriptor MEMFD, threads made with clone flags THREAD_FLAGS). Returns its length
 * in instructions or a negative errno (platform/stubfilter.c). */
int stub_filter_build(struct sock_filter *out, size_t max, uint64_t ip, int memfd,
		      unsigned long thread_flags);

#endif
