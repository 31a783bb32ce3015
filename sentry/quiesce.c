/* Quiescing the sandbox before a checkpoint: every running guest thread is stopped, and one
 * caught entering a syscall is put back before its syscall instruction, so no task is ever
 * saved half-way into a syscall (docs/checkpoint.md, "Quiesce"). */
#include "sentry/checkpoint.h"

#include <errno.h>

#include "platform/platform.h"
#include "sentry/kernel.h"
#include "sentry/signal.h"
#include "sentry/task.h"

/* A thread caught entering a syscall while it was being stopped is put back onto its syscall
 * instruction, as Linux does for a restart: resumed (now or after a restore) it makes the
 * syscall again, so no task is ever saved half-way into one. */
static int rewind_syscall(struct task *t)
{
	struct user_regs_struct regs;
	int err = platform_get_regs(t->pt, &regs);

	if (err)
		return err;
	regs.rax = regs.orig_rax;
	regs.rip -= 2;
	regs.orig_rax = -1;
	return platform_set_regs(t->pt, &regs);
}

int kernel_quiesce(void)
{
	int running = 0;

	for_each_task(t)
		if (t->running && t->pt && platform_interrupt(t->pt) == 0)
			running++;
	while (running > 0) {
		struct platform_event ev;
		int r = platform_wait(&ev, true);
		if (r == -EINTR)
			continue;
		if (r)
			return r;
		struct task *t = task_by_host_tid(ev.tid);
		if (!t) {
			if (ev.kind != PEV_EXITED)
				platform_continue_stray(ev.tid);
			continue;
		}
		if (!t->running)
			continue;
		t->running = false;
		running--;
		switch (ev.kind) {
		case PEV_SYSCALL:
			if ((r = rewind_syscall(t)))
				return r;
			break;
		case PEV_SIGNAL:
			/* A fault is raised again by the same instruction when the thread goes on;
			 * a host signal aimed at a stub is never the guest's. */
		case PEV_STOP:
			break;
		case PEV_EXITED:
			t->pt->tid = -1;
			kernel_exit_group(t, ev.sig ? ev.sig : ev.exit_status << 8);
			break;
		}
	}
	kernel_free_dead();
	return 0;
}

void kernel_unquiesce(void)
{
	for_each_task(t)
		if (t->pt && !t->running && !t->blk.blocked && !t->parked &&
		    signal_deliver(t, 0, false))
			kernel_resume(t);
}
