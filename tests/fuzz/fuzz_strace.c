/* Fuzz target: the --strace decoder (sentry/strace.c, sentry/strace_args.c). Each input is one
 * finished syscall as the tracer sees it: its number (any, known or not), six argument
 * registers (each raw, or a pointer into readable, read-only, inaccessible or unmapped guest
 * memory: see fuzz_addr), its result, and the guest memory the string arguments and
 * structures are read from. strace_print formats it as --strace would print it, driven by the
 * syscall table's argument formats, after strace_enter or a block when the input says so; the
 * lines go to /dev/null. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sentry/syscall.h"
#include "sentry/task.h"
#include "tests/fuzz/sandbox.h"

static struct task *task;
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_kernel_init();
	fuzz_mount_tree();
	if (!(task = fuzz_task_new()) || !(devnull = fopen("/dev/null", "w")))
		abort();
	fuzz_guest_map(task);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size, 0};
	size_t got;

	/* Numbers past the table and negative ones too. */
	task->sc.nr = (int16_t)(fuzz_u32(&in) & 0xffff) % 700;
	for (int i = 0; i < 6; i++)
		task->sc.args[i] = fuzz_addr(&in);
	long ret = (long)fuzz_u64(&in);
	uint8_t flags = fuzz_u8(&in);
	const uint8_t *mem = fuzz_bytes(&in, FUZZ_AREA_LEN, &got);
	fuzz_guest_fill(task, mem, got);
	task->exited = flags & 1;
	if (flags & 2) /* an errno */
		ret = -(long)(ret % 4096);
	FILE *saved = stderr;
	stderr = devnull;
	if (flags & 4) /* as the dispatcher: the entry part formatted before the handler */
		strace_enter(task);
	if (flags & 8) /* the call blocked first: its line left open, then ended */
		strace_print(task, -ESENTRY_BLOCK);
	if (flags & 16) { /* another task's line or signal in between: `<... resumed>` */
		siginfo_t si = {.si_signo = (int)(ret & 63), .si_code = (int)(ret >> 8 & 7) - 6};
		strace_signal(task, &si);
	}
	strace_print(task, ret);
	stderr = saved;
	task->exited = false;
	return 0;
}
