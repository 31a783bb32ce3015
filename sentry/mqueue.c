/* POSIX message queues (sentry/mqueue.h). A queue is a named object of the sandbox (Linux's
 * IPC namespace), outliving its descriptors until mq_unlink and its last close. Messages are
 * kept in the Sentry's heap, highest priority first and in order of arrival within one
 * priority; the limits are those /proc/sys/fs/mqueue shows. Blocking sends and receives
 * wait on the queue's wait queue and are retried (DESIGN.md §4), so a task blocked in one is
 * saved as "inside mq_timedsend" and waits again after a restore. */
#include "sentry/mqueue.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <mqueue.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "sentry/caps.h"
#include "sentry/clock.h"
#include "sentry/fdtable.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/sched.h"
#include "sentry/signal.h"
#include "sentry/syscall.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "state/codec.h"
#include "vfs/save.h"
#include "vfs/vfs.h"
#include "vfs/waitq.h"

/* /proc/sys/fs/mqueue's values (fs-proc/sysctl.c shows the same), and the hard ceilings a
 * holder of CAP_SYS_RESOURCE may go up to (Linux's HARD_MSGMAX, HARD_MSGSIZEMAX). */
#define MQ_MSG_DEFAULT 10
#define MQ_MSGSIZE_DEFAULT 8192
#define MQ_MSG_MAX 10
#define MQ_MSGSIZE_MAX 8192
#define MQ_QUEUES_MAX 256
#define MQ_HARD_MSGMAX 65536
#define MQ_HARD_MSGSIZEMAX (16 << 20)
#define MQ_PRIO_LIMIT 32768 /* MQ_PRIO_MAX */
/* A queue's inode size, as Linux gives it (FILENT_SIZE). */
#define MQ_FILE_SIZE 80

struct mq_msg {
	struct mq_msg *next;
	unsigned int prio;
	size_t len;
	char data[];
};

struct mqueue {
	struct mqueue *next; /* in the sandbox's list */
	char name[NAME_MAX + 1];
	bool linked; /* still has its name (not mq_unlink'ed) */
	int opens;   /* open files of it */
	mode_t mode;
	uid_t uid;
	gid_t gid;
	long maxmsg, msgsize, curmsgs;
	unsigned long qsize; /* bytes of message text queued */
	struct mq_msg *msgs;
	struct timespec atime, mtime, ctime;
	/* mq_notify: the registered process (0: none) and what it asked for. */
	pid_t notify_pid;
	struct timespec notify_start; /* the process's start time: a reused pid is not it */
	int notify_kind;	      /* SIGEV_NONE or SIGEV_SIGNAL */
	int notify_signo;
	union sigval notify_value;
	struct waitq wq;
};

static struct mqueue *queues;
static int nqueues;

static const struct vfs_file_ops mq_ops;

static struct mqueue *mq_of(struct vfs_file *f)
{
	return f && f->ops == &mq_ops ? f->priv : NULL;
}

static struct mqueue *mq_find(const char *name)
{
	for (struct mqueue *q = queues; q; q = q->next)
		if (q->linked && !strcmp(q->name, name))
			return q;
	return NULL;
}

static void mq_free(struct mqueue *q)
{
	for (struct mqueue **p = &queues; *p; p = &(*p)->next)
		if (*p == q) {
			*p = q->next;
			break;
		}
	nqueues--;
	while (q->msgs) {
		struct mq_msg *m = q->msgs;
		q->msgs = m->next;
		free(m);
	}
	waitq_detach_all(&q->wq);
	free(q);
}

/* A queue goes once it has neither its name nor an open file. */
static void mq_maybe_free(struct mqueue *q)
{
	if (!q->linked && q->opens == 0)
		mq_free(q);
}

static struct timespec real_now(void)
{
	struct timespec ts;

	clock_now(CLOCK_REALTIME, &ts);
	return ts;
}

/* The queue name argument: as Linux's lookup in the mqueue root, a name with a '/', "." or
 * ".." is EACCES, an empty one ENOENT and a longer one than NAME_MAX ENAMETOOLONG. */
static long mq_name(struct task *t, uintptr_t addr, char *name)
{
	char path[PATH_MAX];
	long r = arg_path(t, addr, path);

	if (r < 0)
		return r;
	if (strlen(path) > NAME_MAX)
		return -ENAMETOOLONG;
	if (!path[0])
		return -ENOENT;
	if (strchr(path, '/') || !strcmp(path, ".") || !strcmp(path, ".."))
		return -EACCES;
	strcpy(name, path);
	return 0;
}

/* Whether T may access Q as MAY (4 read, 2 write), as a file of Q's mode and owner. */
static bool mq_permitted(struct task *t, const struct mqueue *q, int may)
{
	struct vfs_cred c = task_fs_cred(t);
	unsigned int bits;

	if (caps_has(t, CAP_DAC_OVERRIDE))
		return true;
	if (c.uid == q->uid)
		bits = (q->mode >> 6) & 7;
	else if (vfs_cred_in_group(&c, q->gid))
		bits = (q->mode >> 3) & 7;
	else
		bits = q->mode & 7;
	return (bits & (unsigned int)may) == (unsigned int)may;
}

/* --- the file ------------------------------------------------------------------------------ */

/* "QSIZE:... NOTIFY:... SIGNO:... NOTIFY_PID:...", as Linux's queue file reads. */
static int mq_status(const struct mqueue *q, char *buf, size_t size)
{
	bool sig = q->notify_pid && q->notify_kind == SIGEV_SIGNAL;

	return snprintf(buf, size, "QSIZE:%-10lu NOTIFY:%-5d SIGNO:%-5d NOTIFY_PID:%-6d\n",
			q->qsize, q->notify_pid ? q->notify_kind : 0, sig ? q->notify_signo : 0,
			q->notify_pid);
}

static ssize_t mq_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct mqueue *q = f->priv;
	char buf[128];
	int len = mq_status(q, buf, sizeof(buf));
	off_t at = pos ? *pos : 0;
	size_t done = 0;

	for (int i = 0; i < iovcnt && at + (off_t)done < len; i++) {
		size_t n = iov[i].iov_len;
		if (n > (size_t)(len - at - (off_t)done))
			n = (size_t)(len - at - (off_t)done);
		memcpy(iov[i].iov_base, buf + at + done, n);
		done += n;
	}
	if (pos)
		*pos += (off_t)done;
	q->atime = real_now();
	return (ssize_t)done;
}

static uint32_t mq_poll(struct vfs_file *f, struct waitq **wq)
{
	struct mqueue *q = f->priv;
	uint32_t m = 0;

	*wq = &q->wq;
	if (q->curmsgs)
		m |= POLLIN | POLLRDNORM;
	if (q->curmsgs < q->maxmsg)
		m |= POLLOUT | POLLWRNORM;
	return m;
}

static int mq_stat(struct vfs_file *f, struct stat *st)
{
	struct mqueue *q = f->priv;

	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFREG | q->mode;
	st->st_nlink = q->linked;
	st->st_uid = q->uid;
	st->st_gid = q->gid;
	st->st_size = MQ_FILE_SIZE;
	st->st_blksize = 4096;
	st->st_atim = q->atime;
	st->st_mtim = q->mtime;
	st->st_ctim = q->ctime;
	/* Distinct per queue, never the Sentry's own address. */
	st->st_ino = 0;
	for (struct mqueue *p = queues; p; p = p->next, st->st_ino++)
		if (p == q)
			break;
	st->st_ino += 2;
	return 0;
}

static void mq_release(struct vfs_file *f)
{
	struct mqueue *q = f->priv;

	q->opens--;
	mq_maybe_free(q);
}

static const struct vfs_file_ops mq_ops = {
    .read = mq_read,
    .getattr = mq_stat,
    .poll = mq_poll,
    .release = mq_release,
};

void mqueue_on_close(struct task *t, struct vfs_file *f)
{
	struct mqueue *q = mq_of(f);

	if (q && q->notify_pid == t->tgid)
		q->notify_pid = 0;
}

static struct vfs_file *mq_file_new(struct mqueue *q, int flags)
{
	struct vfs_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->ops = &mq_ops;
	f->refs = 1;
	f->flags = flags;
	f->priv = q;
	f->seekable = true; /* its status line reads with pread too */
	q->opens++;
	return f;
}

/* --- the calls ----------------------------------------------------------------------------- */

/* The attributes of a new queue: ATTR's (checked as Linux's mqueue_attr_ok), or the defaults. */
static long new_attr(struct task *t, uintptr_t addr, long *maxmsg, long *msgsize)
{
	struct mq_attr a;

	*maxmsg = MQ_MSG_DEFAULT;
	*msgsize = MQ_MSGSIZE_DEFAULT;
	if (!addr)
		return 0;
	if (copy_in(t->mm, &a, addr, sizeof(a)))
		return -EFAULT;
	if (a.mq_maxmsg <= 0 || a.mq_msgsize <= 0)
		return -EINVAL;
	if (caps_has(t, CAP_SYS_RESOURCE)) {
		if (a.mq_maxmsg > MQ_HARD_MSGMAX || a.mq_msgsize > MQ_HARD_MSGSIZEMAX)
			return -EINVAL;
	} else if (a.mq_maxmsg > MQ_MSG_MAX || a.mq_msgsize > MQ_MSGSIZE_MAX) {
		return -EINVAL;
	}
	*maxmsg = a.mq_maxmsg;
	*msgsize = a.mq_msgsize;
	return 0;
}

long sys_mq_open(struct task *t, const unsigned long *a)
{
	int oflag = arg_int(a, 1);
	char name[NAME_MAX + 1];
	long r = mq_name(t, a[0], name);

	if (r)
		return r;
	int acc = oflag & O_ACCMODE;
	struct mqueue *q = mq_find(name);
	if (q) {
		if ((oflag & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
			return -EEXIST;
		/* Only an existing queue refuses O_ACCMODE; a new one opened so can be neither
		 * read nor written (Linux's open mode 3). */
		if (acc == O_ACCMODE)
			return -EINVAL;
		int may = acc == O_RDONLY ? 4 : acc == O_WRONLY ? 2 : 6;
		if (!mq_permitted(t, q, may))
			return -EACCES;
	} else {
		if (!(oflag & O_CREAT))
			return -ENOENT;
		long maxmsg, msgsize;
		if ((r = new_attr(t, a[3], &maxmsg, &msgsize)))
			return r;
		if (nqueues >= MQ_QUEUES_MAX && !caps_has(t, CAP_SYS_RESOURCE))
			return -ENOSPC;
		if (!(q = calloc(1, sizeof(*q))))
			return -ENOMEM;
		strcpy(q->name, name);
		q->linked = true;
		q->mode = arg_uint(a, 2) & ~t->fs->umask & 07777;
		q->uid = t->euid;
		q->gid = t->egid;
		q->maxmsg = maxmsg;
		q->msgsize = msgsize;
		q->atime = q->mtime = q->ctime = real_now();
		q->next = queues;
		queues = q;
		nqueues++;
	}
	struct vfs_file *f = mq_file_new(q, acc | (oflag & O_NONBLOCK));
	if (!f) {
		mq_maybe_free(q);
		return -ENOMEM;
	}
	return task_install_file(t, f, oflag & O_CLOEXEC);
}

long sys_mq_unlink(struct task *t, const unsigned long *a)
{
	char name[NAME_MAX + 1];
	long r = mq_name(t, a[0], name);

	if (r)
		return r;
	struct mqueue *q = mq_find(name);
	if (!q)
		return -ENOENT;
	/* The queues' directory is sticky (mode 1777): only the owner removes a queue. */
	if (t->euid != q->uid && !caps_has(t, CAP_FOWNER))
		return -EPERM;
	q->linked = false;
	q->ctime = real_now();
	mq_maybe_free(q);
	return 0;
}

/* The queue descriptor FD names, open for reading (WRITE false) or writing; NULL (EBADF, as
 * Linux answers) for anything else. */
static struct vfs_file *mq_arg(struct task *t, int fd, bool write)
{
	struct vfs_file *f = arg_file_nopath(t, fd);

	if (!mq_of(f))
		return NULL;
	int mode = f->flags & O_ACCMODE;
	if (mode == O_RDWR || mode == (write ? O_WRONLY : O_RDONLY))
		return f;
	return NULL;
}

/* The absolute CLOCK_REALTIME timeout at ADDR (if any) as the monotonic deadline the
 * scheduler keeps, in t->blk.deadline. */
static long mq_deadline(struct task *t, uintptr_t addr)
{
	struct timespec ts;

	if (!addr)
		return 0;
	if (copy_in(t->mm, &ts, addr, sizeof(ts)))
		return -EFAULT;
	if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
		return -EINVAL;
	t->blk.deadline = ts_add(mono_now(), ts_sub(ts, real_now()));
	return 0;
}

/* Waits for EVENTS on Q (until the deadline when TIMED): the syscall is retried. */
static long mq_wait(struct task *t, struct mqueue *q, uint32_t events, bool timed)
{
	if (timed && (t->blk.timed_out || ts_cmp(mono_now(), t->blk.deadline) >= 0))
		return -ETIMEDOUT;
	/* A signal restarts the call (SA_RESTART) or ends it with EINTR. */
	t->blk.intr_ret = -ERESTARTSYS;
	if (task_wait_queue(t, &q->wq, events))
		return -ENOMEM;
	if (timed)
		task_wait_until(t, &t->blk.deadline);
	return task_block(t);
}

/* Whether a task is blocked receiving from Q: a message sent then is for it, not for a
 * notification (Linux hands it over directly). Only asked when a notification is registered. */
static bool mq_has_receiver(const struct mqueue *q)
{
	for_each_task(t)
		if (t->blk.blocked && t->sc.nr == SYS_mq_timedreceive && t->files &&
		    mq_of(fdtable_peek(t->files, (int)t->sc.args[0])) == q)
			return true;
	return false;
}

/* The registered process is told of a message that arrived in an empty queue, and the
 * registration goes (mq_notify(3)). */
static void mq_notify_now(struct mqueue *q, struct task *sender)
{
	pid_t pid = q->notify_pid;
	struct task *p = pid ? task_by_tid(pid) : NULL;

	q->notify_pid = 0;
	if (!p || p->group_leader != p || p->exited || p->zombie ||
	    ts_cmp(p->start_time, q->notify_start) != 0 || q->notify_kind != SIGEV_SIGNAL)
		return;
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	si.si_signo = q->notify_signo;
	si.si_code = SI_MESGQ;
	si.si_value = q->notify_value;
	si.si_pid = sender->tgid;
	si.si_uid = sender->uid;
	signal_send_process(p, q->notify_signo, &si);
}

long sys_mq_timedsend(struct task *t, const unsigned long *a)
{
	size_t len = a[2];
	unsigned int prio = arg_uint(a, 3);
	bool timed = a[4] != 0;
	long r;

	if (prio >= MQ_PRIO_LIMIT)
		return -EINVAL;
	if (!t->blk.retry && (r = mq_deadline(t, a[4])))
		return r;
	struct vfs_file *f = mq_arg(t, arg_int(a, 0), true);
	if (!f)
		return -EBADF;
	struct mqueue *q = f->priv;
	if (len > (size_t)q->msgsize)
		return -EMSGSIZE;
	if (q->curmsgs >= q->maxmsg) {
		if (f->flags & O_NONBLOCK)
			return -EAGAIN;
		return mq_wait(t, q, POLLOUT, timed);
	}
	struct mq_msg *m = malloc(sizeof(*m) + len);
	if (!m)
		return -ENOMEM;
	if (len && copy_in(t->mm, m->data, a[1], len)) {
		free(m);
		return -EFAULT;
	}
	m->len = len;
	m->prio = prio;
	struct mq_msg **p = &q->msgs;
	while (*p && (*p)->prio >= prio)
		p = &(*p)->next;
	m->next = *p;
	*p = m;
	q->curmsgs++;
	q->qsize += len;
	q->mtime = q->ctime = real_now();
	if (q->curmsgs == 1 && q->notify_pid && !mq_has_receiver(q))
		mq_notify_now(q, t);
	waitq_wake(&q->wq, POLLIN);
	return 0;
}

long sys_mq_timedreceive(struct task *t, const unsigned long *a)
{
	size_t len = a[2];
	bool timed = a[4] != 0;
	long r;

	if (!t->blk.retry && (r = mq_deadline(t, a[4])))
		return r;
	struct vfs_file *f = mq_arg(t, arg_int(a, 0), false);
	if (!f)
		return -EBADF;
	struct mqueue *q = f->priv;
	if (len < (size_t)q->msgsize)
		return -EMSGSIZE;
	if (!q->curmsgs) {
		if (f->flags & O_NONBLOCK)
			return -EAGAIN;
		return mq_wait(t, q, POLLIN, timed);
	}
	struct mq_msg *m = q->msgs;
	q->msgs = m->next;
	q->curmsgs--;
	q->qsize -= m->len;
	q->atime = q->ctime = real_now();
	waitq_wake(&q->wq, POLLOUT);
	/* The message is taken even when it cannot be written out, as in Linux. */
	r = (long)m->len;
	if ((m->len && copy_out(t->mm, a[1], m->data, m->len)) ||
	    (a[3] && copy_out(t->mm, a[3], &m->prio, sizeof(m->prio))))
		r = -EFAULT;
	free(m);
	return r;
}

long sys_mq_notify(struct task *t, const unsigned long *a)
{
	struct sigevent ev;

	if (a[1]) {
		if (copy_in(t->mm, &ev, a[1], sizeof(ev)))
			return -EFAULT;
		if (ev.sigev_notify == SIGEV_THREAD)
			return syscall_unsupported(t, -ENOSYS, "SIGEV_THREAD");
		if (ev.sigev_notify != SIGEV_NONE && ev.sigev_notify != SIGEV_SIGNAL)
			return -EINVAL;
		if (ev.sigev_notify == SIGEV_SIGNAL && (ev.sigev_signo <= 0 || ev.sigev_signo > 64))
			return -EINVAL;
	}
	struct vfs_file *f = arg_file_nopath(t, arg_int(a, 0));
	struct mqueue *q = mq_of(f);
	if (!q)
		return -EBADF;
	if (!a[1]) {
		if (q->notify_pid == t->tgid)
			q->notify_pid = 0;
		return 0;
	}
	if (q->notify_pid) {
		/* A registration whose process is gone does not hold the queue. */
		struct task *p = task_by_tid(q->notify_pid);
		if (p && p->group_leader == p && !p->exited && !p->zombie &&
		    !ts_cmp(p->start_time, q->notify_start))
			return -EBUSY;
	}
	q->notify_pid = t->tgid;
	q->notify_start = t->group_leader->start_time;
	q->notify_kind = ev.sigev_notify;
	q->notify_signo = ev.sigev_signo;
	q->notify_value = ev.sigev_value;
	return 0;
}

long sys_mq_getsetattr(struct task *t, const unsigned long *a)
{
	struct mq_attr set, old;
	struct vfs_file *f;

	if (a[1]) {
		if (copy_in(t->mm, &set, a[1], sizeof(set)))
			return -EFAULT;
		if (set.mq_flags & ~(long)O_NONBLOCK)
			return -EINVAL;
	}
	if (!(f = arg_file_nopath(t, arg_int(a, 0))) || !mq_of(f))
		return -EBADF;
	struct mqueue *q = f->priv;
	memset(&old, 0, sizeof(old));
	old.mq_flags = f->flags & O_NONBLOCK;
	old.mq_maxmsg = q->maxmsg;
	old.mq_msgsize = q->msgsize;
	old.mq_curmsgs = q->curmsgs;
	if (a[1]) {
		f->flags = (f->flags & ~O_NONBLOCK) | (int)(set.mq_flags & O_NONBLOCK);
		q->atime = q->ctime = real_now();
	}
	if (a[2] && copy_out(t->mm, a[2], &old, sizeof(old)))
		return -EFAULT;
	return 0;
}

/* --- checkpoint ---------------------------------------------------------------------------- */

#define MQ_SAVE_MAX 65536

/* A queue is named in a file record by its place in the list, which the load rebuilds in the
 * same order. */
static uint32_t mq_index(const struct mqueue *q)
{
	uint32_t i = 0;

	for (struct mqueue *p = queues; p && p != q; p = p->next)
		i++;
	return i;
}

int mqueue_save(struct enc *e)
{
	enc_u64(e, (uint64_t)nqueues);
	for (struct mqueue *q = queues; q; q = q->next) {
		enc_str(e, q->name);
		enc_bool(e, q->linked);
		enc_u32(e, q->mode);
		enc_u32(e, q->uid);
		enc_u32(e, q->gid);
		enc_u64(e, (uint64_t)q->maxmsg);
		enc_u64(e, (uint64_t)q->msgsize);
		enc_timespec(e, q->atime);
		enc_timespec(e, q->mtime);
		enc_timespec(e, q->ctime);
		enc_u32(e, (uint32_t)q->notify_pid);
		enc_timespec(e, q->notify_start);
		enc_u32(e, (uint32_t)q->notify_kind);
		enc_u32(e, (uint32_t)q->notify_signo);
		enc_u64(e, (uint64_t)(uintptr_t)q->notify_value.sival_ptr);
		enc_u64(e, (uint64_t)q->curmsgs);
		for (struct mq_msg *m = q->msgs; m; m = m->next) {
			enc_u32(e, m->prio);
			enc_bytes(e, m->data, m->len);
		}
	}
	return 0;
}

void mqueue_clear(void)
{
	while (queues)
		mq_free(queues);
}

int mqueue_load(struct dec *d)
{
	uint32_t n = (uint32_t)dec_max(d, MQ_SAVE_MAX, "message queue count");
	struct mqueue **tail = &queues;

	mqueue_clear();
	for (uint32_t i = 0; i < n && dec_ok(d); i++) {
		struct mqueue *q = calloc(1, sizeof(*q));
		if (!q)
			return dec_fail(d, "out of memory");
		*tail = q;
		tail = &q->next;
		nqueues++;
		dec_str_buf(d, q->name, sizeof(q->name));
		q->linked = dec_bool(d);
		q->mode = dec_u32(d) & 07777;
		q->uid = dec_u32(d);
		q->gid = dec_u32(d);
		q->maxmsg = (long)dec_max(d, MQ_HARD_MSGMAX, "queue length");
		q->msgsize = (long)dec_max(d, MQ_HARD_MSGSIZEMAX, "message size");
		q->atime = dec_timespec(d);
		q->mtime = dec_timespec(d);
		q->ctime = dec_timespec(d);
		q->notify_pid = (pid_t)dec_u32(d);
		q->notify_start = dec_timespec(d);
		q->notify_kind = (int)dec_u32(d);
		q->notify_signo = (int)dec_u32(d);
		q->notify_value.sival_ptr = (void *)(uintptr_t)dec_u64(d);
		uint64_t msgs = dec_max(d, (uint64_t)q->maxmsg, "queued messages");
		struct mq_msg **mt = &q->msgs;
		for (uint64_t k = 0; k < msgs && dec_ok(d); k++) {
			unsigned int prio = dec_u32(d);
			size_t len;
			const void *data = dec_bytes(d, &len);
			if (!dec_ok(d) || len > (size_t)q->msgsize || prio >= MQ_PRIO_LIMIT)
				return dec_fail(d, "bad message queue record");
			struct mq_msg *m = malloc(sizeof(*m) + len);
			if (!m)
				return dec_fail(d, "out of memory");
			m->next = NULL;
			m->prio = prio;
			m->len = len;
			memcpy(m->data, data, len);
			*mt = m;
			mt = &m->next;
			q->curmsgs++;
			q->qsize += len;
		}
		if (dec_ok(d) && (!q->maxmsg || !q->msgsize))
			return dec_fail(d, "bad message queue record");
	}
	return dec_ok(d) ? 0 : dec_fail(d, "bad message queue record");
}

/* The file: its queue's place in the list (the "kernel" section, loaded before the files). */
static int mq_file_save(struct enc *e, struct vfs_file *f)
{
	enc_u32(e, mq_index(f->priv));
	return 0;
}

static int mq_file_load(struct dec *d, struct vfs_file *f)
{
	uint32_t i = dec_u32(d);
	struct mqueue *q = queues;

	while (q && i--)
		q = q->next;
	if (!dec_ok(d) || !q)
		return dec_fail(d, "bad message queue file record");
	f->priv = q;
	q->opens++;
	return 0;
}

static const struct vfs_file_kind mq_kind = {
    .name = "mqueue",
    .ops = &mq_ops,
    .save = mq_file_save,
    .load = mq_file_load,
};

int mqueue_register_kind(void)
{
	return vfs_file_kind_register(&mq_kind);
}
