/* The Sentry's confinement (docs/security.md). `run` and `restore` begin in a launcher that
 * forks the Sentry into new user, mount, PID, network, IPC, UTS and cgroup namespaces and then
 * only waits for it, passing signals on. The Sentry sets itself up (rootfs, memory file, control
 * socket, the stubs' user namespace) and then locks itself in for good: an empty root, no
 * capabilities, resource limits, no_new_privs and its own seccomp allowlist. */
#ifndef SENTRY_CONFINE_H
#define SENTRY_CONFINE_H

#include <stdbool.h>
#include <stdint.h>

struct kernel_config;

enum confine_debug {
	CONFINE_DEBUG_OFF,  /* a host syscall outside the allowlist kills the Sentry */
	CONFINE_DEBUG_TRAP, /* it is named on stderr and fails with ENOSYS */
	CONFINE_DEBUG_LOG,  /* it runs, and the kernel logs it (audit, dmesg) */
	CONFINE_DEBUG_NONE, /* no allowlist at all, the rest of the confinement as usual: only to
			     * measure what the filter costs (bench/run.sh) */
};

/* The environment variable tests set instead of --debug-host-syscalls: "1" (or "trap") and
 * "log" as above; "none" (no option has it) leaves the allowlist out. */
#define CONFINE_DEBUG_ENV "MINISENTRY_DEBUG_HOST_SYSCALLS"

struct confine_opts {
	bool unsafe_off; /* --unsafe-no-confine: none of this (benchmarks of the cost only) */
	enum confine_debug debug;
	const char *selftest; /* --selftest-confinement=PROBES (tests) */
};

/* Step 1, first of all in run and restore: forks the Sentry into its namespaces and returns 0
 * in it, as pid 1 of the new PID namespace. The launcher itself never returns from here unless
 * the Sentry could not be started (a negative errno, the message printed): it waits, passes
 * signals on, and exits as the Sentry did. CFG is what a save-restore restart needs. */
int confine_launch(const struct confine_opts *o, const struct kernel_config *cfg);
bool confine_active(void);
/* Whether a thread made now starts as locked in as the Sentry will ever be: confine_lock's
 * filter and capabilities are per thread, and a thread made before it would keep them (with
 * the locked one able to write its memory). True when not confined. */
bool confine_locked_or_off(void);

/* Waits until the launcher has written our id maps (confine_prepare_stubs does too): the
 * bounded memory's tmpfs cannot create a file for an unmapped owner. */
void confine_maps_ready(void);

/* Step 2, before the first stub: the stubs' user namespace, and the hook that moves every new
 * stub into it (platform_set_stub_hook). */
int confine_prepare_stubs(void);

/* Into the sandbox's network namespace now rather than at the lock (confine_lock joins it
 * otherwise): before the Sentry makes a socket that outlives the lock, its control socket, so
 * that every socket it serves is the new namespace's. Prints what failed. */
int confine_join_network(void);

/* The path through which the Sentry reads root filesystem ROOTFS from now on: a detached,
 * read-only, nosuid, nodev mount of it, as /proc/self/fd/N, made on the first call (before
 * confine_lock) and the same on every later one; ROOTFS itself when not confined. NULL with
 * errno set on failure. */
const char *confine_rootfs(const char *rootfs);

/* A bind mount's host object HOST (a directory or a file), opened before confine_lock: a
 * detached copy of its mount tree, nosuid, nodev, noexec, nosymfollow and read-only when RO,
 * so a descriptor beneath it reaches nothing outside; an O_PATH descriptor when not confined.
 * A descriptor, or a negative errno. */
int confine_open_bind(const char *host, bool ro);

/* Step 3, once set-up is done: pivots into an empty root, sets the resource limits, gives up
 * every capability and installs the seccomp allowlist. Prints what failed. */
int confine_lock(void);

/* --save-restore-test: the directory (descriptor and name) its images are written to, and the
 * restart from one once it is written: the launcher runs `restore` in place of this Sentry
 * (never returns). */
int confine_srt_dirfd(void);
const char *confine_srt_name(void);
/* Removes directory PATH and the files in it, if it lies in that directory (the slots
 * variant's golden image and pool, once its chain ends); else nothing. */
void confine_srt_remove(const char *path);
void confine_srt_restart(void) __attribute__((noreturn));

/* The control socket's inode, told to the launcher, which removes the socket file once the
 * Sentry is gone (a confined Sentry cannot). */
void confine_note_socket(unsigned long long ino);

/* A restore's image is loaded: the launcher writes a byte to the descriptor given to
 * confine_set_ready_fd (before confine_launch; the Sentry itself does not keep it). */
void confine_set_ready_fd(int fd);
void confine_note_loaded(void);

/* The Sentry ends with STATUS, its sandbox gone (or going, with nothing left to change the
 * status): the launcher exits with it at once, without waiting for the kernel to tear the
 * Sentry's namespaces down. Said once; later calls do nothing. */
void confine_exiting(int status);

/* For the self-test: the rootfs descriptor (-1 if none) and the launcher's host pid. */
int confine_rootfs_fd(void);
int confine_launcher_pid(void);

/* The seccomp allowlist of the Sentry itself (sentry/hostpolicy.c). */
int hostpolicy_install(enum confine_debug debug, bool host_network);
/* The name of host syscall NR (for the debug report), or NULL. */
const char *hostpolicy_syscall_name(long nr);

/* --selftest-confinement: the locked Sentry tries what a compromised one would (sentry/
 * selftest.c): PROBES is a comma-separated list of open, kill, inet, ptrace, mount, unshare,
 * caps and exec, or all. Each attempt is reported on stdout; returns the exit status (0: all
 * refused). */
int confine_selftest(const char *probes);

#endif
