/* The freezer (runc's pause and resume): every guest thread is stopped as a checkpoint's
 * quiesce stops them, and kernel_resume holds each task the Sentry would let run until the
 * thaw, as Linux's cgroup freezer keeps a container's processes in the refrigerator. The
 * Sentry itself goes on serving events meanwhile: a syscall that completes (a sleep's
 * deadline, data on a descriptor) gets its result and its task stays stopped; signals, the
 * guest's timers' included, are queued and delivered at the thaw. SIGTERM and SIGHUP, which
 * end the sandbox, wait for the thaw too, as a signal to a paused runc container's init
 * waits for `resume`; SIGKILL (the launcher's death) needs no Sentry to act. */
#include "sentry/freeze.h"

#include "sentry/checkpoint.h"
#include "sentry/kernel.h"

int kernel_freeze(void)
{
	if (kernel.frozen)
		return 0;
	/* Before the quiesce: what it stops, and what any event then finishes, stays stopped. */
	kernel.frozen = true;
	int err = kernel_quiesce();
	if (err) {
		kernel.frozen = false;
		kernel_unquiesce();
	}
	return err;
}

void kernel_thaw(void)
{
	if (!kernel.frozen)
		return;
	kernel.frozen = false;
	/* Every stopped task that is neither blocked nor held by a group stop: the ones the
	 * freeze stopped, and the ones whose syscall finished while frozen. */
	kernel_unquiesce();
	if (kernel.thaw_signal) {
		/* What the signal's arrival would have done (kernel.c's act_on_host_signal). */
		kernel.done = true;
		kernel.exit_status = 128 + kernel.thaw_signal;
		kernel.thaw_signal = 0;
	}
}

bool kernel_frozen(void)
{
	return kernel.frozen;
}
