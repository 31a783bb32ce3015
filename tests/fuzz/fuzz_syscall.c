/* Fuzz target: the syscall handlers themselves, coverage-guided, the in-process companion of
 * the guest fuzzer sysfuzz.c. Each input is a short program: guest memory, then calls, each by
 * one of the live tasks (fork and clone make more) with a syscall number and six arguments
 * (raw values, small integers, descriptors, AT_FDCWD, or pointers into readable, read-only,
 * inaccessible or unmapped memory: fuzz_addr). A call goes through the kernel's own path
 * (kernel_retry_syscall: dispatch, then signal delivery or the return value) and woken tasks
 * are run as the event loop runs them. Every input starts from a fresh tree and one process. */
#include <stdint.h>
#include <string.h>
#include <sys/user.h>

#include "sentry/kernel.h"
#include "sentry/sched.h"
#include "sentry/syscall.h"
#include "sentry/task.h"
#include "tests/fuzz/sandbox.h"

#define MAX_CALLS 24

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_kernel_init();
	return 0;
}

static unsigned long argument(struct fuzz_in *in)
{
	uint8_t cls = fuzz_u8(in);

	switch (cls % 8) {
	case 0:
	case 1:
	case 2:
		return fuzz_addr(in);
	case 3:
		return (unsigned long)((long)fuzz_u8(in) - 16);
	case 4:
		return fuzz_u8(in) % 16; /* a descriptor */
	case 5:
		return (unsigned long)-100; /* AT_FDCWD */
	case 6:
		return 1UL << (fuzz_u8(in) % 64);
	default:
		return fuzz_u64(in);
	}
}

/* The live task the input picks to make the next call (NULL when none can). */
static struct task *pick(uint8_t who)
{
	int n = 0;

	for_each_task(t)
		n += t->pt && !t->blk.blocked && !t->zombie && !t->exited && !t->thread_gone;
	if (!n)
		return NULL;
	who %= n;
	for_each_task(t)
		if (t->pt && !t->blk.blocked && !t->zombie && !t->exited && !t->thread_gone &&
		    !who--)
			return t;
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size, 0};
	struct user_regs_struct regs = {0};
	size_t got;

	fuzz_mount_tree();
	struct task *init = fuzz_task_new();
	if (!init)
		__builtin_trap();
	fuzz_guest_map(init);
	const uint8_t *mem = fuzz_bytes(&in, fuzz_u32(&in) % 8192, &got);
	fuzz_guest_fill(init, mem, got);
	/* A stack in the read-write area, for signal frames. */
	regs.rsp = FUZZ_RW_BASE + FUZZ_AREA_LEN - 512;
	regs.rip = FUZZ_RO_BASE;
	platform_set_regs(init->pt, &regs);
	for (int i = 0; i < MAX_CALLS && in.off < in.len && !kernel.done; i++) {
		struct task *t = pick(fuzz_u8(&in));
		if (!t)
			break;
		uint32_t nr = fuzz_u32(&in) & 0xffff;
		t->sc = (struct platform_syscall){.nr = nr % SYSCALL_MAX, .native = true};
		for (int k = 0; k < 6; k++)
			t->sc.args[k] = argument(&in);
		platform_get_regs(t->pt, &regs);
		t->sc.ip = regs.rip;
		t->sc.sp = regs.rsp;
		t->blk.retry = false;
		t->blk.timed_out = false;
		kernel_retry_syscall(t);
		sched_run_woken();
		kernel_free_dead();
	}
	kernel.done = false;
	fuzz_teardown();
	return 0;
}
