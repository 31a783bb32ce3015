/* The freezer of a sandbox: what runc's `pause` and `resume` do with a container's cgroup
 * freezer, done by the Sentry for its guest (sentry/freeze.c). */
#ifndef SENTRY_FREEZE_H
#define SENTRY_FREEZE_H

#include <stdbool.h>

/* Stops every guest thread and keeps the guest stopped until kernel_thaw: 0, or a negative
 * errno (the guest then runs on). Freezing a frozen sandbox does nothing. */
int kernel_freeze(void);
/* Lets a frozen guest run again, with what happened meanwhile (signals, finished syscalls). */
void kernel_thaw(void);
bool kernel_frozen(void);

#endif
