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

/* The most tasks (threads included) a sandbox may hold at once when `run --pids` says
 * nothing: enough for a parallel build, few enough that a fork bomb cannot exhaust the host's
 * processes or memory (every guest thread is a host thread). PIDS_MAX bounds --pids, as
 * Linux's pid_max does. */
#define DEFAULT_PIDS 1024
#define PIDS_MAX 32768
/* --memory: at least MEMORY_MIN bytes; without the option, the host's RAM divided by
 * DEFAULT_MEMORY_SHARE (half of it), so that a memory hog in a sandbox started with no
 * options meets the OOM killer long before the host's own. */
#define MEMORY_MIN (16ULL << 20)
#define DEFAULT_MEMORY_SHARE 2

#endif
