/* The sandbox's resources as a container runtime sees a container's cgroups: what it uses
 * (runc's `events`) and the limits that change while it runs (runc's `update`). */
#ifndef SENTRY_RESOURCES_H
#define SENTRY_RESOURCES_H

#include <stdbool.h>
#include <stdint.h>

struct kernel_usage {
	uint64_t cpu_user_ns;	/* the guest's CPU time: its processes', living and reaped */
	uint64_t cpu_kernel_ns; /* the Sentry's own: the sandbox's kernel */
	uint64_t tasks;		/* threads included, as the pids controller counts */
	uint64_t pids_limit;
	uint64_t memory_used;  /* guest memory: the memory file's resident size */
	uint64_t memory_limit; /* its bound (0: none) */
	uint64_t oom_kills;    /* processes the OOM killer has killed */
	bool frozen;
};

void kernel_usage(struct kernel_usage *u);

/* The --pids bound from now on: fork and clone fail with EAGAIN past it; the tasks there are
 * stay (as when pids.max is lowered below pids.current). 1..PIDS_MAX. */
int kernel_set_pids(uint64_t n);

#endif
