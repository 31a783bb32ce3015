/* The kernel: global state of one sandbox and its event loop. The Sentry is single-threaded;
 * everything here is touched only from the loop, so nothing is locked. */
#ifndef SENTRY_KERNEL_H
#define SENTRY_KERNEL_H

#include <stdbool.h>
#include <sys/types.h>

#include "platform/platform.h"

struct task;
struct vfs_dentry;

struct kernel_config {
	const char *rootfs;
	char **argv; /* guest argv; argv[0] is the path run */
	char **envp;
	const char *cwd;
	int cpus;
	bool strace;
	enum platform_placement placement;
};

struct kernel {
	struct kernel_config cfg;
	struct task *tasks;
	struct task *dead; /* exited this event; freed by the loop */
	pid_t next_pid;
	struct vfs_dentry *root;
	int epfd;
	int nblocked_fd; /* tasks waiting on host descriptors */
	bool done;
	int exit_status; /* minisentry run's exit status once init is gone */
};

extern struct kernel kernel;

/* Sets up the sandbox and runs it until init exits; returns run's exit status, or a negative
 * errno before the guest started (the message is already printed). */
int kernel_run(const struct kernel_config *cfg);

/* Ends the thread group of T with wait status STATUS (exit code << 8, or a signal number). */
void kernel_exit_group(struct task *t, int status);

#endif
