/* The stub page's code: the syscall gadget the Sentry injects through, and the entry that a
 * freshly forked stub jumps to. The entry unmaps everything but the stub page, installs the
 * stub's seccomp filter and traps to the tracer; from then on the process holds nothing of
 * the Sentry. Position-independent: it is copied to wherever the stub page lands. */
#include "platform/stub.h"

/* Offsets into struct stub_params are fixed by _Static_asserts in stub.h. */
__asm__(".pushsection .text\n"
	".globl stub_code_begin\n"
	".globl stub_code_end\n"
	".balign 16\n"
	"stub_code_begin:\n"
	/* STUB_GADGET_OFFSET: every injected syscall runs here and traps back. */
	"	syscall\n"
	"	int3\n"
	".balign 16\n"
	/* STUB_ENTRY_OFFSET: rdi = struct stub_params *. No stack is used. */
	"	mov %rdi, %rbx\n"
	"	mov $11, %eax\n" /* munmap(low_start, low_len) */
	"	mov 0(%rbx), %rdi\n"
	"	mov 8(%rbx), %rsi\n"
	"	syscall\n"
	"	mov $11, %eax\n" /* munmap(high_start, high_len) */
	"	mov 16(%rbx), %rdi\n"
	"	mov 24(%rbx), %rsi\n"
	"	syscall\n"
	"	mov $317, %eax\n" /* seccomp(SECCOMP_SET_MODE_FILTER, 0, &prog) */
	"	mov $1, %edi\n"
	"	xor %esi, %esi\n"
	"	lea 32(%rbx), %rdx\n"
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jnz 1f\n"
	"	int3\n"		  /* ready: the tracer takes over from this stop */
	"1:	mov $231, %eax\n" /* exit_group(127): the filter could not be installed */
	"	mov $127, %edi\n"
	"	syscall\n"
	"stub_code_end:\n"
	".popsection\n");
