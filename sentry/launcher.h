/* Private to sentry/confine.c (and sentry/warm.c, whose restore client stands where a launcher
 * would): the launcher, the one process of `run` and `restore` that stays in the host's
 * namespaces (docs/security.md, "The launcher"). */
#ifndef SENTRY_LAUNCHER_H
#define SENTRY_LAUNCHER_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct kernel_config;

struct launcher_maps {
	const char *uid_map, *gid_map; /* written into the Sentry's user namespace */
	bool deny_setgroups;	       /* an unprivileged map needs setgroups denied first */
};

/* What the Sentry keeps of its launcher. */
struct launcher_link {
	pid_t launcher_pid; /* the launcher's host pid (not visible from the Sentry's namespace) */
	int restart_fd;	    /* write end: notes to the launcher */
	int maps_fd;	    /* read end: a byte once the id maps are written */
};

/* Forks the Sentry with namespace flags NSFLAGS and the id MAPS. Returns 0 in the Sentry (pid 1
 * of its PID namespace, LINK filled in) at once, while the launcher writes the maps: it holds
 * every capability in its namespaces already, and waits for the maps only where it needs them
 * (launcher_maps_written). The launcher returns only a negative errno when the
 * Sentry could not be started (the message printed); otherwise it waits for the Sentry,
 * passes the signals it gets on, and exits as the Sentry did, or, once the Sentry asked for
 * it, execs `restore` of SRT_IMAGE (CFG --save-restore-test). */
int launcher_start(unsigned long nsflags, const struct launcher_maps *maps,
		   const struct kernel_config *cfg, const char *srt_image,
		   struct launcher_link *link);

/* The launcher writes a byte to FD (and closes it) once its Sentry has loaded the image of a
 * restore: an OCI restore returns only then, as runc's does once CRIU is done. */
void launcher_set_ready_fd(int fd);

/* What the launcher does with signal SIG (info SI) that came to it, for Sentry SENTRY (a host
 * pid), and its death of a signal: also what a warm slot's restore client does, which stands
 * where a launcher would (sentry/warm.c). */
void launcher_pass_on(pid_t sentry, int sig, const siginfo_t *si);
void launcher_die_of(int sig) __attribute__((noreturn));

/* In the Sentry: waits until the launcher has written the id maps (it exits if the launcher
 * could not: the launcher says why). */
void launcher_maps_written(struct launcher_link *link);

#endif
