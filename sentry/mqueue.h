/* POSIX message queues (mq_overview(7)): named queues of prioritised messages, sandbox-wide
 * as Linux keeps them per IPC namespace, opened as files (mq_open) that poll, read a status
 * line and survive a checkpoint. The queues themselves live in the "kernel" section, the
 * descriptors as files of kind "mqueue" naming their queue. */
#ifndef SENTRY_MQUEUE_H
#define SENTRY_MQUEUE_H

struct enc;
struct dec;
struct task;
struct vfs_file;

/* A close of a descriptor of F by T (Linux's flush): a notification T's process registered
 * on F's queue is dropped. */
void mqueue_on_close(struct task *t, struct vfs_file *f);

/* Checkpoint: every queue, linked or held open only, with its messages and notification. */
int mqueue_save(struct enc *e);
int mqueue_load(struct dec *d);
/* Drops every queue (teardown). */
void mqueue_clear(void);

int mqueue_register_kind(void);

#endif
