/* The OOM killer of a sandbox started with --memory (sentry/oom.h). Linux's choice, as in
 * mm/oom_kill.c's oom_badness: the resident pages of each process, plus oom_score_adj
 * thousandths of the bound, with -1000 meaning never; the sandbox's init goes last (Linux
 * spares the global init, and the sandbox ends with its init). The victim's private memory is
 * punched out at once, as Linux's OOM reaper does, so the task that met the bound can go on
 * before the victim has finished dying. */
#include "sentry/oom.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "mem/memfile.h"
#include "sentry/control.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/signal.h"
#include "sentry/task.h"

/* Processes killed so far: the memory cgroup's oom_kill count, for `events`. */
static uint64_t kills;

uint64_t oom_kill_count(void)
{
	return kills;
}

static struct task *mm_holder(struct task *l)
{
	if (l->mm)
		return l;
	for_each_thread_of(l, t)
		if (t->mm)
			return t;
	return NULL;
}

static struct task *choose(void)
{
	uint64_t limit_pages = memfile_limit() / PAGE_SIZE;
	struct task *victim = NULL, *init = NULL;
	long long best = 0;

	for_each_process(l) {
		struct task *h = mm_holder(l);
		if (l->zombie || l->exited || l->oom_victim || !h || l->oom_score_adj == -1000)
			continue;
		if (l->tgid == 1) {
			init = l;
			continue;
		}
		long long points = (long long)(mm_resident(h->mm) / PAGE_SIZE) +
				   (long long)l->oom_score_adj * (long long)limit_pages / 1000;
		if (points < 1)
			points = 1; /* still killable, as in Linux */
		if (!victim || points > best) {
			victim = l;
			best = points;
		}
	}
	return victim ? victim : init;
}

/* Whether the task whose syscall is served is a chosen victim's. kernel.current may name a
 * task of an earlier event, so it is only compared, never followed, until found alive. */
static bool current_is_victim(void)
{
	for_each_task(t)
		if (t == kernel.current)
			return t->group_leader && t->group_leader->oom_victim;
	return false;
}

bool oom_kill(void)
{
	/* A dying victim's own syscall met the bound again: it gets no room, nobody else dies. */
	if (current_is_victim())
		return false;
	struct task *v = choose();

	if (!v)
		return false;
	struct mm *mm = mm_holder(v)->mm;
	uint64_t rss = mm_resident(mm), vm = mm_virtual(mm), before = memfile_used();
	fprintf(stderr,
		"minisentry: out of memory (--memory %llu MiB): killed process %d (%s) "
		"total-vm:%llukB, rss:%llukB, UID:%u oom_score_adj:%d\n",
		(unsigned long long)(memfile_limit() >> 20), v->tgid, v->comm,
		(unsigned long long)(vm >> 10), (unsigned long long)(rss >> 10), v->uid,
		v->oom_score_adj);
	v->oom_victim = true;
	kills++;
	control_notify("oom");
	signal_send_process_forced(v, SIGKILL, NULL);
	mm_reap(mm);
	return memfile_used() < before;
}

bool oom_fault(struct task *t, uintptr_t addr)
{
	if (!memfile_limit() || !mm_in_memory_file(t->mm, addr))
		return false;
	/* Another thread of a victim already chosen kills no one else. */
	bool freed = !t->group_leader->oom_victim && oom_kill();
	if (t->group_leader->oom_victim) {
		/* Chosen (now or before): the SIGKILL queued is what it takes now. */
		if (signal_deliver(t, 0, false))
			kernel_resume(t);
		return true;
	}
	if (!freed)
		return false; /* nothing to kill: the fault is the guest's SIGBUS */
	kernel_resume(t);     /* the faulting instruction again, with room for it */
	return true;
}
