/* What a container runtime reads and changes of a running sandbox where runc uses the
 * container's cgroups: its usage (`events`: CPU, memory, tasks, OOM kills) and its --pids
 * bound (`update`). The memory bound changes through the memory file's own tmpfs (the control
 * socket's update request, sentry/control.c), since only a client with the privilege over it
 * can resize it. */
#include "sentry/resources.h"

#include <errno.h>
#include <time.h>

#include "common/limits.h"
#include "common/units.h"
#include "mem/memfile.h"
#include "sentry/kernel.h"
#include "sentry/oom.h"
#include "sentry/task.h"

static uint64_t ns_of(struct timespec ts)
{
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

void kernel_usage(struct kernel_usage *u)
{
	struct timespec self;

	*u = (struct kernel_usage){0};
	/* A reaped process's time is in its reaper's children's time, so each counts once. */
	for_each_process(l)
		u->cpu_user_ns += ns_of(process_cpu_time(l)) + ns_of(l->cchild_time);
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &self) == 0)
		u->cpu_kernel_ns = ns_of(self);
	u->tasks = task_count();
	u->pids_limit = kernel.cfg.pids > 0 ? (uint64_t)kernel.cfg.pids : DEFAULT_PIDS;
	u->memory_used = memfile_used();
	u->memory_limit = memfile_limit();
	u->oom_kills = oom_kill_count();
	u->frozen = kernel.frozen;
}

int kernel_set_pids(uint64_t n)
{
	if (n < 1 || n > PIDS_MAX)
		return -EINVAL;
	kernel.cfg.pids = (int)n;
	return 0;
}
