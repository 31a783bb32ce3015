/* The sandbox's OOM killer (--memory): when the bounded memory file is full, the process with
 * the highest badness (resident memory, adjusted by oom_score_adj) is killed with SIGKILL, its
 * private memory is reaped at once, and one line on stderr says so, as Linux's memory-cgroup
 * OOM killer does. */
#ifndef SENTRY_OOM_H
#define SENTRY_OOM_H

#include <stdbool.h>
#include <stdint.h>

struct task;

/* Chooses and kills a victim; true when memory was freed (memfile_set_full_hook's hook). */
bool oom_kill(void);

/* A guest fault of T at ADDR with SIGBUS: if it is the bounded memory file refusing a page,
 * runs the OOM killer and lets T retry (or die, if it was chosen) and returns true. */
bool oom_fault(struct task *t, uintptr_t addr);

/* How many processes the OOM killer has killed in this sandbox. */
uint64_t oom_kill_count(void);

#endif
