/* System V message queues: msgget, msgsnd, msgrcv, msgctl. A queue is a list of messages in
 * the Sentry's heap, bounded by msg_qbytes. A sender that finds it full and a receiver that
 * finds no message of its type wait on the queue's one wait queue; every send, receive and
 * change wakes them all to try again. */
#include "sentry/ipc.h"

#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/stat.h>

#include "sentry/caps.h"
#include "sentry/mm.h"
#include "sentry/sched.h"
#include "sentry/syscall.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "state/codec.h"
#include "vfs/waitq.h"

#ifndef MSG_COPY
#define MSG_COPY 040000
#endif

struct msg {
	long type;
	size_t len;
	struct msg *next;
	char text[];
};

struct msg_queue {
	struct ipc_obj o;
	struct msg *head, **tail;
	uint64_t qbytes, cbytes, qnum;
	int64_t stime, rtime, ctime;
	pid_t lspid, lrpid;
	struct waitq wq;
};

static struct ipc_ids msg_ids = {.mni = &ipc_limits.msgmni, .last_idx = -1};
static uint64_t msg_all_bytes, msg_all_count; /* MSG_INFO's msgtql and msgmap */

static inline struct msg_queue *queue_of(struct ipc_obj *o)
{
	return (struct msg_queue *)o;
}

static struct msg_queue *queue_new(void)
{
	struct msg_queue *q = calloc(1, sizeof(*q));

	if (q) {
		q->tail = &q->head;
		q->qbytes = ipc_limits.msgmnb;
	}
	return q;
}

static void queue_free(struct msg_queue *q)
{
	while (q->head) {
		struct msg *m = q->head;
		q->head = m->next;
		msg_all_bytes -= m->len;
		msg_all_count--;
		free(m);
	}
	free(q);
}

static void enqueue(struct msg_queue *q, struct msg *m)
{
	m->next = NULL;
	*q->tail = m;
	q->tail = &m->next;
	q->qnum++;
	q->cbytes += m->len;
	msg_all_bytes += m->len;
	msg_all_count++;
}

static void unlink_msg(struct msg_queue *q, struct msg **pp)
{
	struct msg *m = *pp;

	*pp = m->next;
	if (q->tail == &m->next)
		q->tail = pp;
	q->qnum--;
	q->cbytes -= m->len;
	msg_all_bytes -= m->len;
	msg_all_count--;
}

static long msg_create(struct task *t, int32_t key, int flg, long arg)
{
	(void)arg;
	if (msg_ids.in_use >= ipc_limits.msgmni)
		return -ENOSPC;
	struct msg_queue *q = queue_new();
	if (!q)
		return -ENOMEM;
	int err = ipc_add(&msg_ids, &q->o, t, key, flg);
	if (err) {
		queue_free(q);
		return err;
	}
	q->ctime = ipc_now();
	return ipc_id(&q->o);
}

long sys_msgget(struct task *t, const unsigned long *a)
{
	return ipc_get(t, &msg_ids, (int32_t)arg_int(a, 0), arg_int(a, 1), msg_create, NULL, 0);
}

/* Blocks T on Q's queue, or answers as a wait that cannot happen now would. */
static long wait_queue(struct task *t, struct msg_queue *q)
{
	if (t->blk.interrupted)
		return -EINTR;
	int err = task_wait_queue(t, &q->wq, 0);
	if (err)
		return err;
	/* Restarted only when no handler ran (signal(7)). */
	t->blk.intr_ret = -ERESTARTNOHAND;
	return task_block(t);
}

long sys_msgsnd(struct task *t, const unsigned long *a)
{
	int id = arg_int(a, 0), flg = arg_int(a, 3);
	uintptr_t msgp = a[1];
	long sz = (long)a[2];
	long type;

	if (sz > ipc_limits.msgmax || sz < 0 || id < 0)
		return -EINVAL;
	if (copy_in(t->mm, &type, msgp, sizeof(type)))
		return -EFAULT;
	if (type < 1)
		return -EINVAL;
	struct msg *m = malloc(sizeof(*m) + sz);
	if (!m)
		return -ENOMEM;
	m->type = type;
	m->len = sz;
	if (copy_in(t->mm, m->text, msgp + sizeof(long), sz)) {
		free(m);
		return -EFAULT;
	}
	struct ipc_obj *o = ipc_find_id(&msg_ids, id);
	long err = !o ? (t->blk.retry ? -EIDRM : -EINVAL) : ipc_perm_check(t, o, IPC_W);
	if (err) {
		free(m);
		return err;
	}
	struct msg_queue *q = queue_of(o);
	/* It fits while the bytes and the number of messages both stay within msg_qbytes. */
	if (q->cbytes + sz > q->qbytes || q->qnum + 1 > q->qbytes) {
		free(m);
		if (flg & IPC_NOWAIT)
			return -EAGAIN;
		return wait_queue(t, q);
	}
	enqueue(q, m);
	q->lspid = t->tgid;
	q->stime = ipc_now();
	waitq_wake(&q->wq, 0);
	return 0;
}

/* The message msgrcv takes for TYPE and FLG: the first one (0), the first of TYPE (or of
 * another type, MSG_EXCEPT), the first of the lowest type at most -TYPE; MSG_COPY's is the
 * TYPE'th (none for a negative TYPE). Returns its link, or NULL. */
static struct msg **find(struct msg_queue *q, long type, int flg)
{
	struct msg **best = NULL;
	long n = 0;

	for (struct msg **pp = &q->head; *pp; pp = &(*pp)->next) {
		struct msg *m = *pp;
		if (flg & MSG_COPY) {
			if (n++ == type)
				return pp;
		} else if (type == 0) {
			return pp;
		} else if (type > 0) {
			if ((m->type == type) != !!(flg & MSG_EXCEPT))
				return pp;
		} else if (m->type <= -type && (!best || m->type < (*best)->type)) {
			best = pp;
		}
	}
	return best;
}

long sys_msgrcv(struct task *t, const unsigned long *a)
{
	int id = arg_int(a, 0), flg = arg_int(a, 4);
	uintptr_t msgp = a[1];
	long sz = (long)a[2], type = (long)a[3];

	if (id < 0 || sz < 0)
		return -EINVAL;
	if (type == LONG_MIN)
		type = LONG_MIN + 1; /* as Linux: its negation must be a long */
	if (flg & MSG_COPY) {
		if ((flg & MSG_EXCEPT) || !(flg & IPC_NOWAIT))
			return -EINVAL;
	}
	struct ipc_obj *o = ipc_find_id(&msg_ids, id);
	if (!o)
		return t->blk.retry ? -EIDRM : -EINVAL;
	long err = ipc_perm_check(t, o, IPC_R);
	if (err)
		return err;
	struct msg_queue *q = queue_of(o);
	struct msg **pp = find(q, type, flg);
	if (!pp) {
		if (flg & IPC_NOWAIT)
			return -ENOMSG;
		return wait_queue(t, q);
	}
	struct msg *m = *pp;
	if ((size_t)sz < m->len && !(flg & MSG_NOERROR))
		return -E2BIG;
	size_t n = (size_t)sz < m->len ? (size_t)sz : m->len;
	if (flg & MSG_COPY) {
		if (copy_out(t->mm, msgp, &m->type, sizeof(long)) ||
		    copy_out(t->mm, msgp + sizeof(long), m->text, n))
			return -EFAULT;
		return (long)n;
	}
	unlink_msg(q, pp);
	q->lrpid = t->tgid;
	q->rtime = ipc_now();
	waitq_wake(&q->wq, 0);
	/* As on Linux, a message taken off the queue is gone even if it cannot be written. */
	err = copy_out(t->mm, msgp, &m->type, sizeof(long)) ||
		      copy_out(t->mm, msgp + sizeof(long), m->text, n)
		  ? -EFAULT
		  : (long)n;
	free(m);
	return err;
}

static void fill_ds(const struct msg_queue *q, struct msqid_ds *ds)
{
	memset(ds, 0, sizeof(*ds));
	ipc_fill_perm(&q->o, &ds->msg_perm);
	ds->msg_stime = q->stime;
	ds->msg_rtime = q->rtime;
	ds->msg_ctime = q->ctime;
	ds->__msg_cbytes = q->cbytes;
	ds->msg_qnum = q->qnum;
	ds->msg_qbytes = q->qbytes;
	ds->msg_lspid = q->lspid;
	ds->msg_lrpid = q->lrpid;
}

static long msg_info(struct task *t, int cmd, uintptr_t buf)
{
	struct msginfo mi = {.msgpool = (int)((long)ipc_limits.msgmni * ipc_limits.msgmnb / 1024),
			     .msgmap = ipc_limits.msgmnb,
			     .msgmax = ipc_limits.msgmax,
			     .msgmnb = ipc_limits.msgmnb,
			     .msgmni = ipc_limits.msgmni,
			     .msgssz = 16,
			     .msgtql = ipc_limits.msgmnb,
			     .msgseg = 0xffff};
	int max = ipc_max_idx(&msg_ids);

	if (cmd == MSG_INFO) {
		mi.msgpool = msg_ids.in_use;
		mi.msgmap = (int)msg_all_count;
		mi.msgtql = (int)msg_all_bytes;
	}
	if (copy_out(t->mm, buf, &mi, sizeof(mi)))
		return -EFAULT;
	return max < 0 ? 0 : max;
}

long sys_msgctl(struct task *t, const unsigned long *a)
{
	int id = arg_int(a, 0), cmd = arg_int(a, 1);
	uintptr_t buf = a[2];
	struct msqid_ds ds;
	struct ipc_obj *o;
	int err;

	switch (cmd) {
	case IPC_INFO:
	case MSG_INFO:
		return msg_info(t, cmd, buf);
	case MSG_STAT:
	case MSG_STAT_ANY:
		if (id < 0 || id >= msg_ids.cap || !(o = msg_ids.v[id]))
			return -EINVAL;
		if (cmd == MSG_STAT && (err = ipc_perm_check(t, o, IPC_R)))
			return err;
		fill_ds(queue_of(o), &ds);
		return copy_out(t->mm, buf, &ds, sizeof(ds)) ? -EFAULT : ipc_id(o);
	case IPC_STAT:
		if (!(o = ipc_find_id(&msg_ids, id)))
			return -EINVAL;
		if ((err = ipc_perm_check(t, o, IPC_R)))
			return err;
		fill_ds(queue_of(o), &ds);
		return copy_out(t->mm, buf, &ds, sizeof(ds)) ? -EFAULT : 0;
	case IPC_SET:
		if (copy_in(t->mm, &ds, buf, sizeof(ds)))
			return -EFAULT;
		/* fall through */
	case IPC_RMID:
		if (!(o = ipc_find_id(&msg_ids, id)))
			return -EINVAL;
		if ((err = ipc_owner_check(t, o)))
			return err;
		if (cmd == IPC_RMID) {
			ipc_remove(&msg_ids, o);
			/* Its waiters retry, find no queue and answer EIDRM. */
			waitq_detach_all(&queue_of(o)->wq);
			queue_free(queue_of(o));
			return 0;
		}
		if (ds.msg_qbytes > (msglen_t)ipc_limits.msgmnb && !caps_has(t, CAP_SYS_RESOURCE))
			return -EPERM;
		ipc_set_perm(o, &ds.msg_perm);
		queue_of(o)->qbytes = ds.msg_qbytes;
		queue_of(o)->ctime = ipc_now();
		/* A larger queue may let senders in. */
		waitq_wake(&queue_of(o)->wq, 0);
		return 0;
	default:
		return -EINVAL;
	}
}

void msg_proc_lines(FILE *f)
{
	for (int i = 0; i < msg_ids.cap; i++) {
		const struct msg_queue *q = (const struct msg_queue *)msg_ids.v[i];
		if (q)
			fprintf(f,
				"%10d %10d  %4o  %10lu %10lu %5u %5u %5u %5u %5u %5u %10lld %10lld "
				"%10lld\n",
				q->o.key, ipc_id(&q->o), q->o.mode, (unsigned long)q->cbytes,
				(unsigned long)q->qnum, (unsigned)q->lspid, (unsigned)q->lrpid,
				(unsigned)q->o.uid, (unsigned)q->o.gid, (unsigned)q->o.cuid,
				(unsigned)q->o.cgid, (long long)q->stime, (long long)q->rtime,
				(long long)q->ctime);
	}
}

/* --- Checkpoint: every message; waiters are tasks inside msgsnd or msgrcv. ---------------- */

static void save_one(struct enc *e, const struct ipc_obj *o)
{
	const struct msg_queue *q = (const struct msg_queue *)o;

	enc_u64(e, q->qbytes);
	enc_i64(e, q->stime);
	enc_i64(e, q->rtime);
	enc_i64(e, q->ctime);
	enc_u32(e, q->lspid);
	enc_u32(e, q->lrpid);
	enc_u64(e, q->qnum);
	for (const struct msg *m = q->head; m; m = m->next) {
		enc_i64(e, m->type);
		enc_bytes(e, m->text, m->len);
	}
}

static struct ipc_obj *load_one(struct dec *d)
{
	struct msg_queue *q = queue_new();

	if (!q)
		return NULL;
	q->qbytes = dec_u64(d);
	q->stime = dec_i64(d);
	q->rtime = dec_i64(d);
	q->ctime = dec_i64(d);
	q->lspid = (pid_t)dec_u32(d);
	q->lrpid = (pid_t)dec_u32(d);
	uint64_t n = dec_u64(d);
	for (uint64_t k = 0; k < n && dec_ok(d); k++) {
		long type = dec_i64(d);
		size_t len;
		const void *text = dec_bytes(d, &len);
		if (!dec_ok(d) || type < 1 || len > INT_MAX) {
			dec_fail(d, "bad message");
			break;
		}
		struct msg *m = malloc(sizeof(*m) + len);
		if (!m) {
			dec_fail(d, "out of memory");
			break;
		}
		m->type = type;
		m->len = len;
		memcpy(m->text, text, len);
		enqueue(q, m);
	}
	if (!dec_ok(d)) {
		queue_free(q);
		return NULL;
	}
	return &q->o;
}

void msg_save(struct enc *e)
{
	ipc_ids_save(e, &msg_ids, save_one);
}

int msg_load(struct dec *d)
{
	return ipc_ids_load(d, &msg_ids, load_one);
}
