/* The stub page's code: the syscall gadget the Sentry injects through, and the entry that a
 * freshly forked stub jumps to. The entry unmaps everything but the stub page, installs the
 * stub's seccomp filter and traps to the tracer; from then on the process holds nothing of
 * the Sentry. Position-independent: it is copied to wherever the stub page lands. */
#include "platform/stub.h"
#include "platform/systrap.h"

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
	/* --- the seccomp platform (platform/systrap.c) ---------------------------------------
	 * Its one syscall instruction, called: every call the stub makes on its own goes
	 * through here, so the filter can tell the stub's calls from the guest's by address. */
	".balign 16\n"
	".globl stub_systrap_gadget\n"
	"stub_systrap_gadget:\n"
	"	syscall\n"
	"	ret\n"
	/* The handler of SIGSYS (a guest syscall), the faults and SIGPARK, on the thread's
	 * alternate stack, which lies in its area: rbx = the area, found from the stack. It posts
	 * the event, rings the Sentry's doorbell and waits on the area's state word, running the
	 * calls the Sentry asks for meanwhile, until the Sentry lets it return; the Sentry has
	 * read and rewritten the frame (registers, FPU state) by then. */
	".balign 16\n"
	".globl stub_systrap_handler\n"
	"stub_systrap_handler:\n"
	"	mov %rsp, %rbx\n"
	"	and $-" SYSTRAP_AREA_STR ", %rbx\n"
	"	testl $" SYSTRAP_F_EXIT_STR ", " A_FLAGS "(%rbx)\n"
	"	jnz 5f\n"
	"	mov %edi, " A_SIG "(%rbx)\n"
	"	mov %rsi, " A_INFO "(%rbx)\n"
	"	mov %rdx, " A_UCTX "(%rbx)\n"
	"	rdfsbase %rax\n"
	"	mov %rax, " A_FS "(%rbx)\n"
	"	rdgsbase %rax\n"
	"	mov %rax, " A_GS "(%rbx)\n"
	"	movl $" SYSTRAP_EVENT_STR ", " A_STATE "(%rbx)\n"
	"	mfence\n"
	"	lea (stub_code_begin + " SYSTRAP_GLOBAL_OFF_STR ")(%rip), %r12\n"
	"	cmpl $0, " G_SENTRY_SLEEPING "(%r12)\n"
	"	je 2f\n"
	"	mov $1, %eax\n" /* write(doorbell, &one, 8): the Sentry may be asleep */
	"	mov " A_DOORBELL "(%rbx), %edi\n"
	"	lea " A_ONE "(%rbx), %rsi\n"
	"	mov $8, %edx\n"
	"	call stub_systrap_gadget\n"
	"2:	testl $" SYSTRAP_F_EXIT_STR ", " A_FLAGS "(%rbx)\n"
	"	jnz 5f\n"
	"	mov " A_STATE "(%rbx), %r14d\n"
	"	test %r14d, %r14d\n" /* SYSTRAP_RUNNING */
	"	jz 4f\n"
	"	cmp $" SYSTRAP_CMD_STR ", %r14d\n"
	"	je 3f\n"
	/* A blocked syscall's answer is far off; a spin would only keep the CPU from the
	 * thread that is to make it ready. */
	"	cmp $" SYSTRAP_PARKED_STR ", %r14d\n"
	"	je 8f\n"
	/* On another CPU than the Sentry's, an answer comes sooner than a wake-up would. */
	"	mov " G_SENTRY_CPU "(%r12), %r13d\n"
	"	test %r13d, %r13d\n"
	"	js 8f\n"
	"	rdtscp\n"
	"	and $0xfff, %ecx\n"
	"	cmp %r13d, %ecx\n"
	"	je 8f\n"
	"	mov $" SYSTRAP_SPIN_STR ", %r13d\n"
	"9:	pause\n"
	"	cmp " A_STATE "(%rbx), %r14d\n"
	"	jne 2b\n"
	"	dec %r13d\n"
	"	jnz 9b\n"
	"8:	movl $1, " A_STUB_SLEEPING "(%rbx)\n"
	"	mfence\n"
	"	cmp " A_STATE "(%rbx), %r14d\n"
	"	jne 1f\n"
	"	mov %r14d, %edx\n" /* futex(&state, FUTEX_WAIT, state, NULL) */
	"	lea " A_STATE "(%rbx), %rdi\n"
	"	xor %esi, %esi\n"
	"	xor %r10d, %r10d\n"
	"	mov $202, %eax\n"
	"	call stub_systrap_gadget\n"
	"1:	movl $0, " A_STUB_SLEEPING "(%rbx)\n"
	"	jmp 2b\n"
	"3:	mov " A_NR "(%rbx), %rax\n" /* the Sentry's call */
	"	mov " A_ARG0 "(%rbx), %rdi\n"
	"	mov " A_ARG1 "(%rbx), %rsi\n"
	"	mov " A_ARG2 "(%rbx), %rdx\n"
	"	mov " A_ARG3 "(%rbx), %r10\n"
	"	mov " A_ARG4 "(%rbx), %r8\n"
	"	mov " A_ARG5 "(%rbx), %r9\n"
	"	call stub_systrap_gadget\n"
	"	mov %rax, " A_RESULT "(%rbx)\n"
	"	movl $" SYSTRAP_CMD_DONE_STR ", " A_STATE "(%rbx)\n"
	"	mfence\n"
	"	cmpl $0, " A_SENTRY_WAITING "(%rbx)\n"
	"	je 2b\n"
	"	lea " A_STATE "(%rbx), %rdi\n" /* futex(&state, FUTEX_WAKE, 1) */
	"	mov $1, %esi\n"
	"	mov $1, %edx\n"
	"	mov $202, %eax\n"
	"	call stub_systrap_gadget\n"
	"	jmp 2b\n"
	"4:	testl $" SYSTRAP_F_SETFS_STR ", " A_FLAGS "(%rbx)\n"
	"	jz 6f\n"
	"	mov " A_SETFS "(%rbx), %rax\n"
	"	wrfsbase %rax\n"
	"6:	testl $" SYSTRAP_F_SETGS_STR ", " A_FLAGS "(%rbx)\n"
	"	jz 7f\n"
	"	mov " A_SETGS "(%rbx), %rax\n"
	"	wrgsbase %rax\n"
	"7:	lock andl $~(" SYSTRAP_F_SETFS_STR "|" SYSTRAP_F_SETGS_STR "), " A_FLAGS "(%rbx)\n"
	"	ret\n"		 /* to stub_systrap_restorer */
	"5:	mov $60, %eax\n" /* exit(0): the Sentry released this thread */
	"	xor %edi, %edi\n"
	"	call stub_systrap_gadget\n"
	"	ud2\n"
	/* The handlers' sa_restorer: rt_sigreturn with the stack exactly as the handler's ret
	 * left it, so a jump, not a call. */
	".balign 16\n"
	".globl stub_systrap_restorer\n"
	"stub_systrap_restorer:\n"
	"	mov $15, %eax\n"
	"	jmp stub_systrap_gadget\n"
	/* A new thread of a stub (clone's child, its stack the top of its area) takes its area
	 * as its alternate stack, unblocks every signal (a clone made in the handler inherits a
	 * full mask, and a trap raised while blocked would kill the process) and traps; a stub's
	 * first thread comes straight to stub_systrap_park when the Sentry detaches from it. The
	 * trap is its first event: the Sentry then gives it its registers. */
	".balign 16\n"
	".globl stub_systrap_thread_start\n"
	"stub_systrap_thread_start:\n"
	"	mov %rsp, %rbx\n"
	"	sub $1, %rbx\n"
	"	and $-" SYSTRAP_AREA_STR ", %rbx\n"
	"	sub $32, %rsp\n"
	"	lea " SYSTRAP_STACK_OFF_STR "(%rbx), %rax\n" /* stack_t {sp, flags, size} */
	"	mov %rax, 0(%rsp)\n"
	"	movq $0, 8(%rsp)\n"
	"	movq $" SYSTRAP_STACK_LEN_STR ", 16(%rsp)\n"
	"	mov %rsp, %rdi\n"
	"	xor %esi, %esi\n"
	"	mov $131, %eax\n" /* sigaltstack(&ss, NULL) */
	"	call stub_systrap_gadget\n"
	"	movq $-1, 24(%rsp)\n"
	"	mov $1, %edi\n" /* rt_sigprocmask(SIG_UNBLOCK, &all, NULL, 8) */
	"	lea 24(%rsp), %rsi\n"
	"	xor %edx, %edx\n"
	"	mov $8, %r10d\n"
	"	mov $14, %eax\n"
	"	call stub_systrap_gadget\n"
	".globl stub_systrap_park\n"
	"stub_systrap_park:\n"
	"	int3\n"
	"	jmp stub_systrap_park\n"
	"stub_code_end:\n"
	".popsection\n");
