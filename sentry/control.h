/* The control socket of a named sandbox (`run --id NAME`), the client side of `checkpoint` and
 * `list`, and the save-restore test (DESIGN.md §7–8). */
#ifndef SENTRY_CONTROL_H
#define SENTRY_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>

struct task;

/* The syscall number of tests/conformance/check.h's maybe_save(): never valid on Linux. Its
 * first argument is 0, or SAVE_RESTORE_TEST_EARLY from check.h's constructor: an early point
 * (before main) where only the slots variant checkpoints, its golden image. */
#define SAVE_RESTORE_TEST_SYSCALL (-1 - 0x5a5)
#define SAVE_RESTORE_TEST_EARLY 0x5a5601d
/* The slots variant's pool lies beside its golden image, named for it with this suffix. */
#define SRT_POOL_SUFFIX ".slots"

/* Listens on NAME's socket, watched by epoll set EPFD. Prints the error itself. */
int control_listen(const char *name, int epfd);
/* The same in two steps, for a Sentry that reaches no path (a warm slot's: sentry/warm.c):
 * control_bind, in its client, makes NAME's listening socket (its inode in *INO; a descriptor,
 * or a negative errno with the error printed); control_adopt, in the Sentry, serves it. */
int control_bind(const char *name, unsigned long long *ino);
int control_adopt(const char *name, int fd, int epfd);
/* The host pid a ping reports as the process its callers wait on (0: the launcher's). */
void control_set_caller_pid(int pid);
/* True while the loop must watch the control socket. */
bool control_active(void);
/* Handles an epoll event whose data is PTR; false if it is not the control socket's. */
bool control_handle_event(void *ptr);
/* Stops listening and removes the socket (a confined Sentry leaves that to its launcher). */
void control_close(void);
/* The launcher, once its Sentry is gone: removes NAME's socket if it is still the one that
 * Sentry made (inode INO). */
void control_forget(const char *name, unsigned long long ino);

/* The save-restore test: checkpoints the sandbox from inside task T's syscall, tears it down
 * and replaces the Sentry with one restored from the image. Returns only on failure (the
 * sandbox then ends with status 125). */
long control_save_restore_test(struct task *t);
/* The command line that restores the save-restore test's IMAGE with CFG's options, into ARGV
 * (room for MAX entries, at least CONTROL_RESTORE_ARGV_MAX(number of bind mounts)). */
#define CONTROL_RESTORE_ARGV_MAX(nbinds) (20 + 2 * (nbinds))
struct kernel_config;
int control_restore_argv(const struct kernel_config *cfg, const char *image, char **argv, int max);
/* Removes image directory DIR (the save-restore test's own images). */
void control_remove_image(const char *dir);
/* The slots variant: before the restore of golden image IMAGE through pool DIR, the pool
 * (of one slot) is made if it is not there; 0, or 1 with the reason said. Once the chain
 * ends, the pool and its golden image go (control_srt_slots_remove, in the last Sentry). */
int control_srt_make_pool(const char *image, const char *dir);
void control_srt_slots_remove(const char *dir);

/* A process of sandbox-started-with-exec TGID ended with wait status STATUS: its exec client
 * gets the exit status (kernel_exit_group calls it for every process that ends). */
void control_exec_exited(pid_t tgid, int status);

/* The client of an exec request to the sandbox whose control socket is PATH: starts the
 * process S describes (its stdio: host descriptors) and waits for it to end; its exit status
 * (128+N for signal N), or 126 and a message when it could not start. Once it runs, a byte is
 * written to PID_FD (if >= 0), which is then closed. */
struct kernel_spawn;
int control_exec(const char *path, const struct kernel_spawn *s, int pid_fd);

/* What `minisentry checkpoint` asks for besides the image directory. */
struct control_checkpoint_opts {
	bool leave_running, force;
	const char *codec;  /* "zlib", "zstd", or NULL for the default */
	const char *parent; /* --parent IMAGE, or NULL */
	bool quiet;	    /* no line on success */
	/* --image-key: a MAC made with KEY (KEY_LEN bytes, sent over the control socket). */
	const uint8_t *key;
	size_t key_len;
	const char *base; /* --base IMAGE (a full image, usually --golden), or NULL */
	bool golden;	  /* --golden: the mappable form, named by its content */
};

/* The CLI: `minisentry checkpoint` and `minisentry list`. Exit statuses. */
int control_checkpoint(const char *name, const char *dir, const struct control_checkpoint_opts *o);
int control_list(void);
/* The socket path of NAME into BUF; false if NAME is not a valid sandbox name. */
bool control_socket_path(const char *name, char *buf, size_t size);

/* The OCI runtime's pause, resume, events and update, as clients of the sandbox whose control
 * socket is PATH: 0, or -1 with ERR (ESIZE bytes) saying why in one line. */
int control_freeze(const char *path, bool freeze, char *err, size_t esize);
/* 1 if the sandbox at PATH is paused, 0 if it runs, -1 if it does not answer. */
int control_frozen(const char *path);
struct kernel_usage;
int control_stats(const char *path, struct kernel_usage *u, char *err, size_t esize);
/* A connection on which the sandbox writes a line per event ("oom") until it ends, or -1. */
int control_events(const char *path, char *err, size_t esize);
/* The --pids bound N, and the memory bound BYTES (a page multiple, at least MEMORY_MIN; the
 * bound now in *NOW): they take effect at once. */
int control_set_pids(const char *path, uint64_t n, char *err, size_t esize);
int control_set_memory(const char *path, uint64_t bytes, uint64_t *now, char *err, size_t esize);
/* In the Sentry: EVENT happened ("oom"); every connection that asked for events is told. */
void control_notify(const char *event);

#endif
