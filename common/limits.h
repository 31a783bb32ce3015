/* common/limits.h — the sandbox's fixed limits, one name each. Like every header in common/
 * it sits below every layer (the Sentry, procfs and sysfs all size CPU masks by it) and
 * includes nothing. */
#ifndef COMMON_LIMITS_H
#define COMMON_LIMITS_H

/* The most CPUs a sandbox shows its guest (--cpus 1..MAX_CPUS). Every CPU mask the Sentry
 * keeps or prints is CPU_MASK_WORDS words; a checkpoint saves a task's affinity as that many,
 * so changing it changes the image format. */
#define MAX_CPUS 512
#define CPU_MASK_WORDS (MAX_CPUS / 64)

#endif
