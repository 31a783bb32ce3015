/* Capabilities (caps.c): each thread's five sets and securebits, kept as Linux keeps them
 * (capabilities(7)) and reported by capget, prctl and /proc/PID/status. The guest's root
 * starts with every capability, as root in a container of its own sees them. */
#ifndef SENTRY_CAPS_H
#define SENTRY_CAPS_H

#include <stdbool.h>
#include <stdint.h>

#define CAPS_LAST_CAP 40 /* CAP_CHECKPOINT_RESTORE; /proc/sys/kernel/cap_last_cap */
#define CAPS_ALL ((UINT64_C(1) << (CAPS_LAST_CAP + 1)) - 1)

struct task;

/* The five sets a process is started with (an OCI process's capabilities), bit N for
 * capability N. */
struct caps_sets {
	uint64_t bounding, effective, permitted, inheritable, ambient;
};

/* S's sets, as given, for a task about to exec its first program; NULL: every capability, as
 * root in a container of its own has them. */
void caps_init(struct task *t, const struct caps_sets *s);
/* Whether T has capability CAP in its effective set. */
bool caps_has(const struct task *t, int cap);
/* After execve of a file without file capabilities (capabilities(7), "Transformation of
 * capabilities during execve()"). */
void caps_on_exec(struct task *t);
/* After a change of T's uids from OLD_R, OLD_E, OLD_S (set*uid): root's sets go as Linux's
 * cap_emulate_setxuid says. */
void caps_on_setuid(struct task *t, unsigned int old_r, unsigned int old_e, unsigned int old_s);
/* The capability options of prctl (PR_CAPBSET_*, PR_CAP_AMBIENT, PR_*_KEEPCAPS,
 * PR_*_SECUREBITS): the result, or -ENOSYS for an option that is not one of them. */
long caps_prctl(struct task *t, int option, const unsigned long *a);

#endif
