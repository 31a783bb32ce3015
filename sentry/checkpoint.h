/* The Sentry's part of a checkpoint (sentry/checkpoint.c): quiescing, the kernel record, tasks,
 * filesystem contexts and signal handler tables, and starting the restored tasks. The image
 * itself is assembled by state/ (state/state.h). */
#ifndef SENTRY_CHECKPOINT_H
#define SENTRY_CHECKPOINT_H

#include <stdbool.h>
#include <stdint.h>

struct enc;
struct dec;
struct task;

struct kernel_restore_opts {
	const char *rootfs; /* instead of the image's */
	bool force;	    /* use a rootfs whose fingerprint differs */
};

/* Stops every running guest thread (PTRACE_INTERRUPT) and waits until all are stopped; a
 * thread caught entering a syscall is put back before its syscall instruction. */
int kernel_quiesce(void);
/* Lets the threads kernel_quiesce stopped run again (checkpoint --leave-running, from the
 * control socket's event: no task is inside a syscall then). */
void kernel_unquiesce(void);
/* The task whose own syscall asked for the checkpoint: its image shows that syscall returning
 * RESULT. */
void kernel_ckpt_set_caller(struct task *t, long result);

uint32_t kernel_rootfs_fingerprint(const char *rootfs);

/* The "kernel" section: configuration, clocks, pid allocator; it queues every task. */
int kernel_ckpt_save(struct enc *e);
int kernel_ckpt_load(struct dec *d, const struct kernel_restore_opts *o);
/* The rootfs a restored kernel uses (kernel.cfg.rootfs points at it). */
extern char *kernel_restore_rootfs;
/* The "vfs" section, through vfs_save/vfs_load with the kernel's procfs and sysfs. */
int kernel_vfs_save(struct enc *e);
int kernel_vfs_load(struct dec *d);

/* Kinds (state/codec.h). */
int fsctx_save(struct enc *e, const void *fs);
void *fsctx_load(struct dec *d);
void fsctx_drop(void *fs);
int sighand_save(struct enc *e, const void *sh);
void *sighand_load(struct dec *d);
void sighand_drop(void *sh);
int task_save(struct enc *e, const void *t);
void *task_load(struct dec *d);

/* After every section: links tasks to their parents and leaders and starts them. */
int kernel_restore_finish(char **err);

#endif
