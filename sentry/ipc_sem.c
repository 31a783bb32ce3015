/* System V semaphores: semget, semop, semtimedop, semctl. A set's values, the pid of each
 * value's last changer and the SEM_UNDO adjustments of each process (by tgid) live in the set.
 * A semop that cannot proceed waits on the set's queue; any change to the set wakes every
 * waiter, which tries its whole array again (atomically, as Linux: all operations or none).
 * Which waiters count in GETNCNT/GETZCNT is read from the blocked tasks themselves (the
 * operation that blocks each), so a waiter is nothing but a task inside semop. */
#include "sentry/ipc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "common/units.h"
#include "sentry/mm.h"
#include "sentry/sched.h"
#include "sentry/syscall.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "state/codec.h"
#include "vfs/waitq.h"

struct sem_undo {
	pid_t tgid;
	struct sem_undo *next;
	short adj[]; /* one per semaphore */
};

struct sem_set {
	struct ipc_obj o;
	int nsems;
	int64_t otime, ctime;
	struct waitq wq; /* semops waiting for a change */
	struct sem_undo *undo;
	unsigned short *val;
	pid_t *pid;
};

static struct ipc_ids sem_ids = {.mni = &ipc_limits.semmni, .last_idx = -1};
static long sem_used; /* semaphores in all sets, against semmns */

static inline struct sem_set *set_of(struct ipc_obj *o)
{
	return (struct sem_set *)o;
}

static void set_free(struct sem_set *s)
{
	while (s->undo) {
		struct sem_undo *u = s->undo;
		s->undo = u->next;
		free(u);
	}
	free(s->val);
	free(s->pid);
	free(s);
}

static struct sem_set *set_new(int nsems)
{
	struct sem_set *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->nsems = nsems;
	s->val = calloc(nsems, sizeof(*s->val));
	s->pid = calloc(nsems, sizeof(*s->pid));
	if (!s->val || !s->pid) {
		set_free(s);
		return NULL;
	}
	return s;
}

static void destroy(struct sem_set *s)
{
	ipc_remove(&sem_ids, &s->o);
	sem_used -= s->nsems;
	/* Its waiters retry, find no set and answer EIDRM. */
	waitq_detach_all(&s->wq);
	set_free(s);
}

static long sem_create(struct task *t, int32_t key, int flg, long nsems)
{
	if (nsems == 0)
		return -EINVAL;
	if (sem_used + nsems > ipc_limits.semmns)
		return -ENOSPC;
	if (sem_ids.in_use >= ipc_limits.semmni)
		return -ENOSPC;
	struct sem_set *s = set_new((int)nsems);
	if (!s)
		return -ENOMEM;
	int err = ipc_add(&sem_ids, &s->o, t, key, flg);
	if (err) {
		set_free(s);
		return err;
	}
	s->ctime = ipc_now();
	sem_used += nsems;
	return ipc_id(&s->o);
}

static int sem_more(struct ipc_obj *o, long nsems)
{
	return nsems > set_of(o)->nsems ? -EINVAL : 0;
}

long sys_semget(struct task *t, const unsigned long *a)
{
	int nsems = arg_int(a, 1);

	if (nsems < 0 || nsems > ipc_limits.semmsl)
		return -EINVAL;
	return ipc_get(t, &sem_ids, (int32_t)arg_int(a, 0), arg_int(a, 2), sem_create, sem_more,
		       nsems);
}

static struct sem_undo *undo_of(struct sem_set *s, pid_t tgid, bool create)
{
	for (struct sem_undo *u = s->undo; u; u = u->next)
		if (u->tgid == tgid)
			return u;
	if (!create)
		return NULL;
	struct sem_undo *u = calloc(1, sizeof(*u) + s->nsems * sizeof(short));
	if (u) {
		u->tgid = tgid;
		u->next = s->undo;
		s->undo = u;
	}
	return u;
}

/* Tries SOPS on S as one atomic operation, into VAL and ADJ (copies of the set's values and of
 * the caller's adjustments, or NULL). Returns 0, -ERANGE, or 1 with *BLOCKING the index of
 * the operation that must wait. */
static int try_ops(const struct sembuf *sops, int nsops, unsigned short *val, short *adj,
		   int *blocking)
{
	for (int i = 0; i < nsops; i++) {
		int n = sops[i].sem_num, op = sops[i].sem_op, v = val[n];
		if ((op == 0 && v != 0) || v + op < 0) {
			*blocking = i;
			return 1;
		}
		if (v + op > SEM_VMX)
			return -ERANGE;
		if (adj && (sops[i].sem_flg & SEM_UNDO)) {
			int u = adj[n] - op;
			if (u < -SEM_AEM - 1 || u > SEM_AEM)
				return -ERANGE;
			adj[n] = (short)u;
		}
		val[n] = (unsigned short)(v + op);
	}
	return 0;
}

/* semop with SOPS copied in: the timeout, the set, the attempt, and the wait. */
static long semop_try(struct task *t, int id, const struct sembuf *sops, size_t nsops,
		      uintptr_t utime)
{
	bool undo = false, alter = false;
	int max = 0;

	if (utime && !t->blk.retry) {
		struct timespec ts;
		if (copy_in(t->mm, &ts, utime, sizeof(ts)))
			return -EFAULT;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= NSEC_PER_SEC)
			return -EINVAL;
		t->blk.deadline = ts_add(mono_now(), ts);
	}
	for (size_t i = 0; i < nsops; i++) {
		if (sops[i].sem_num > max)
			max = sops[i].sem_num;
		undo |= sops[i].sem_flg & SEM_UNDO;
		alter |= sops[i].sem_op != 0;
	}
	struct ipc_obj *o = ipc_find_id(&sem_ids, id);
	if (!o)
		return t->blk.retry ? -EIDRM : -EINVAL;
	struct sem_set *s = set_of(o);
	if (max >= s->nsems)
		return -EFBIG;
	int err = ipc_perm_check(t, o, alter ? IPC_W : IPC_R);
	if (err)
		return err;
	struct sem_undo *u = NULL;
	if (undo && !(u = undo_of(s, t->tgid, true)))
		return -ENOMEM;

	unsigned short *v = malloc(s->nsems * sizeof(*v));
	short *adj = u ? malloc(s->nsems * sizeof(*adj)) : NULL;
	if (!v || (u && !adj)) {
		free(v);
		free(adj);
		return -ENOMEM;
	}
	memcpy(v, s->val, s->nsems * sizeof(*v));
	if (u)
		memcpy(adj, u->adj, s->nsems * sizeof(*adj));
	int blocking, r = try_ops(sops, (int)nsops, v, adj, &blocking);
	if (r == 0) {
		memcpy(s->val, v, s->nsems * sizeof(*v));
		if (u)
			memcpy(u->adj, adj, s->nsems * sizeof(*adj));
		for (size_t i = 0; i < nsops; i++)
			s->pid[sops[i].sem_num] = t->tgid;
		s->otime = ipc_now();
		if (alter)
			waitq_wake(&s->wq, 0);
	}
	free(v);
	free(adj);
	if (r <= 0)
		return r;
	if (sops[blocking].sem_flg & IPC_NOWAIT)
		return -EAGAIN;
	if (t->blk.interrupted)
		return -EINTR;
	if (utime && (t->blk.timed_out || ts_cmp(mono_now(), t->blk.deadline) >= 0))
		return -EAGAIN;
	if ((err = task_wait_queue(t, &s->wq, 0)))
		return err;
	if (utime)
		task_wait_until(t, &t->blk.deadline);
	/* Never restarted, whatever SA_RESTART says (signal(7)). */
	t->blk.intr_ret = -EINTR;
	return task_block(t);
}

static long semop_common(struct task *t, int id, uintptr_t usops, size_t nsops, uintptr_t utime)
{
	if (id < 0 || nsops < 1)
		return -EINVAL;
	if (nsops > (size_t)ipc_limits.semopm)
		return -E2BIG;
	struct sembuf *sops = malloc(nsops * sizeof(*sops));
	if (!sops)
		return -ENOMEM;
	long r = -EFAULT;
	if (!copy_in(t->mm, sops, usops, nsops * sizeof(*sops)))
		r = semop_try(t, id, sops, nsops, utime);
	free(sops);
	return r;
}

long sys_semop(struct task *t, const unsigned long *a)
{
	return semop_common(t, arg_int(a, 0), a[1], a[2], 0);
}

long sys_semtimedop(struct task *t, const unsigned long *a)
{
	return semop_common(t, arg_int(a, 0), a[1], a[2], a[3]);
}

/* How many tasks wait on semaphore N of S for it to grow (ZERO false) or to be zero: each
 * blocked semop counts for the one operation that blocks it, as on Linux. */
static int waiters(struct sem_set *s, int n, bool zero)
{
	int id = ipc_id(&s->o), count = 0;

	for_each_task(w) {
		if (!w->blk.blocked || !w->mm ||
		    (w->sc.nr != SYS_semop && w->sc.nr != SYS_semtimedop) ||
		    (int)w->sc.args[0] != id || w->sc.args[2] < 1 || w->sc.args[2] > SEM_OPM_MAX)
			continue;
		size_t nsops = w->sc.args[2];
		struct sembuf *sops = malloc(nsops * sizeof(*sops));
		unsigned short *v = malloc(s->nsems * sizeof(*v));
		int blocking;
		if (sops && v && !copy_in(w->mm, sops, w->sc.args[1], nsops * sizeof(*sops))) {
			bool ok = true;
			for (size_t i = 0; i < nsops; i++)
				ok &= sops[i].sem_num < s->nsems;
			memcpy(v, s->val, s->nsems * sizeof(*v));
			if (ok && try_ops(sops, (int)nsops, v, NULL, &blocking) == 1 &&
			    sops[blocking].sem_num == n && (sops[blocking].sem_op == 0) == zero)
				count++;
		}
		free(sops);
		free(v);
	}
	return count;
}

/* SETVAL and SETALL: the adjustments of the values set are void. */
static void clear_adj(struct sem_set *s, int n)
{
	for (struct sem_undo *u = s->undo; u; u = u->next)
		if (n < 0)
			memset(u->adj, 0, s->nsems * sizeof(short));
		else
			u->adj[n] = 0;
}

static void fill_ds(const struct sem_set *s, struct semid_ds *ds)
{
	memset(ds, 0, sizeof(*ds));
	ipc_fill_perm(&s->o, &ds->sem_perm);
	ds->sem_otime = s->otime;
	ds->sem_ctime = s->ctime;
	ds->sem_nsems = s->nsems;
}

static long sem_info(struct task *t, int cmd, uintptr_t buf)
{
	struct seminfo si = {.semmap = ipc_limits.semmns,
			     .semmni = ipc_limits.semmni,
			     .semmns = ipc_limits.semmns,
			     .semmnu = ipc_limits.semmns,
			     .semmsl = ipc_limits.semmsl,
			     .semopm = ipc_limits.semopm,
			     .semume = ipc_limits.semopm,
			     .semusz = 20, /* sizeof(struct sem_undo) on Linux */
			     .semvmx = SEM_VMX,
			     .semaem = SEM_AEM};
	int max = ipc_max_idx(&sem_ids);

	if (cmd == SEM_INFO) {
		si.semusz = sem_ids.in_use;
		si.semaem = (int)sem_used;
	}
	if (copy_out(t->mm, buf, &si, sizeof(si)))
		return -EFAULT;
	return max < 0 ? 0 : max;
}

long sys_semctl(struct task *t, const unsigned long *a)
{
	int id = arg_int(a, 0), n = arg_int(a, 1), cmd = arg_int(a, 2);
	unsigned long arg = a[3];
	struct semid_ds ds;
	struct ipc_obj *o;
	struct sem_set *s;
	int err;

	switch (cmd) {
	case IPC_INFO:
	case SEM_INFO:
		return sem_info(t, cmd, arg);
	case SEM_STAT:
	case SEM_STAT_ANY:
		if (id < 0 || id >= sem_ids.cap || !(o = sem_ids.v[id]))
			return -EINVAL;
		if (cmd == SEM_STAT && (err = ipc_perm_check(t, o, IPC_R)))
			return err;
		fill_ds(set_of(o), &ds);
		return copy_out(t->mm, arg, &ds, sizeof(ds)) ? -EFAULT : ipc_id(o);
	case IPC_SET:
		if (copy_in(t->mm, &ds, arg, sizeof(ds)))
			return -EFAULT;
		/* fall through */
	case IPC_RMID:
		if (!(o = ipc_find_id(&sem_ids, id)))
			return -EINVAL;
		if ((err = ipc_owner_check(t, o)))
			return err;
		if (cmd == IPC_SET) {
			ipc_set_perm(o, &ds.sem_perm);
			set_of(o)->ctime = ipc_now();
		} else {
			destroy(set_of(o));
		}
		return 0;
	case IPC_STAT:
	case GETALL:
	case GETVAL:
	case GETPID:
	case GETNCNT:
	case GETZCNT:
	case SETVAL:
	case SETALL:
		break;
	default:
		return -EINVAL;
	}
	if (!(o = ipc_find_id(&sem_ids, id)))
		return -EINVAL;
	s = set_of(o);
	if ((err = ipc_perm_check(t, o, cmd == SETVAL || cmd == SETALL ? IPC_W : IPC_R)))
		return err;
	if ((cmd == GETVAL || cmd == GETPID || cmd == GETNCNT || cmd == GETZCNT || cmd == SETVAL) &&
	    (n < 0 || n >= s->nsems))
		return -EINVAL;
	switch (cmd) {
	case IPC_STAT:
		fill_ds(s, &ds);
		return copy_out(t->mm, arg, &ds, sizeof(ds)) ? -EFAULT : 0;
	case GETVAL:
		return s->val[n];
	case GETPID:
		return s->pid[n];
	case GETNCNT:
		return waiters(s, n, false);
	case GETZCNT:
		return waiters(s, n, true);
	case GETALL:
		return copy_out(t->mm, arg, s->val, s->nsems * sizeof(*s->val)) ? -EFAULT : 0;
	case SETVAL: {
		int v = (int)arg; /* the union's int */
		if (v < 0 || v > SEM_VMX)
			return -ERANGE;
		s->val[n] = (unsigned short)v;
		s->pid[n] = t->tgid;
		clear_adj(s, n);
		break;
	}
	case SETALL: {
		unsigned short *v = malloc(s->nsems * sizeof(*v));
		if (!v)
			return -ENOMEM;
		if (copy_in(t->mm, v, arg, s->nsems * sizeof(*v))) {
			free(v);
			return -EFAULT;
		}
		for (int i = 0; i < s->nsems; i++)
			if (v[i] > SEM_VMX) {
				free(v);
				return -ERANGE;
			}
		memcpy(s->val, v, s->nsems * sizeof(*v));
		free(v);
		for (int i = 0; i < s->nsems; i++)
			s->pid[i] = t->tgid;
		clear_adj(s, -1);
		break;
	}
	}
	s->ctime = ipc_now();
	waitq_wake(&s->wq, 0);
	return 0;
}

void sem_exit(pid_t tgid)
{
	for (int i = 0; i < sem_ids.cap; i++) {
		struct sem_set *s = (struct sem_set *)sem_ids.v[i];
		if (!s)
			continue;
		for (struct sem_undo **pp = &s->undo; *pp; pp = &(*pp)->next) {
			struct sem_undo *u = *pp;
			if (u->tgid != tgid)
				continue;
			/* Each value moves back by its adjustment, clamped to what a value holds.
			 */
			for (int n = 0; n < s->nsems; n++) {
				if (!u->adj[n])
					continue;
				int v = s->val[n] + u->adj[n];
				s->val[n] = v < 0 ? 0 : v > SEM_VMX ? SEM_VMX : (unsigned short)v;
				s->pid[n] = tgid;
			}
			*pp = u->next;
			free(u);
			waitq_wake(&s->wq, 0);
			break;
		}
	}
}

void sem_proc_lines(FILE *f)
{
	for (int i = 0; i < sem_ids.cap; i++) {
		const struct sem_set *s = (const struct sem_set *)sem_ids.v[i];
		if (s)
			fprintf(f, "%10d %10d  %4o %10u %5u %5u %5u %5u %10lld %10lld\n", s->o.key,
				ipc_id(&s->o), s->o.mode, (unsigned)s->nsems, (unsigned)s->o.uid,
				(unsigned)s->o.gid, (unsigned)s->o.cuid, (unsigned)s->o.cgid,
				(long long)s->otime, (long long)s->ctime);
	}
}

/* --- Checkpoint: values, pids and adjustments; waiters are tasks inside semop. ------------ */

static void save_one(struct enc *e, const struct ipc_obj *o)
{
	const struct sem_set *s = (const struct sem_set *)o;
	uint32_t nundo = 0;

	enc_u32(e, s->nsems);
	enc_i64(e, s->otime);
	enc_i64(e, s->ctime);
	for (int n = 0; n < s->nsems; n++) {
		enc_u32(e, s->val[n]);
		enc_u32(e, s->pid[n]);
	}
	for (struct sem_undo *u = s->undo; u; u = u->next)
		nundo++;
	enc_u32(e, nundo);
	for (struct sem_undo *u = s->undo; u; u = u->next) {
		enc_u32(e, u->tgid);
		for (int n = 0; n < s->nsems; n++)
			enc_u32(e, (uint16_t)u->adj[n]);
	}
}

static struct ipc_obj *load_one(struct dec *d)
{
	uint32_t nsems = dec_u32(d);
	struct sem_set *s;

	if (!dec_ok(d) || nsems < 1 || nsems > SEM_MSL_MAX || !(s = set_new((int)nsems)))
		return NULL;
	s->otime = dec_i64(d);
	s->ctime = dec_i64(d);
	for (uint32_t n = 0; n < nsems; n++) {
		uint32_t v = dec_u32(d);
		s->val[n] = v > SEM_VMX ? 0 : (unsigned short)v;
		s->pid[n] = (pid_t)dec_u32(d);
		if (v > SEM_VMX)
			dec_fail(d, "bad semaphore value");
	}
	uint32_t nundo = dec_u32(d);
	for (uint32_t k = 0; k < nundo && dec_ok(d); k++) {
		struct sem_undo *u = calloc(1, sizeof(*u) + nsems * sizeof(short));
		if (!u) {
			dec_fail(d, "out of memory");
			break;
		}
		u->tgid = (pid_t)dec_u32(d);
		for (uint32_t n = 0; n < nsems; n++)
			u->adj[n] = (short)(uint16_t)dec_u32(d);
		u->next = s->undo;
		s->undo = u;
	}
	if (!dec_ok(d)) {
		set_free(s);
		return NULL;
	}
	sem_used += nsems;
	return &s->o;
}

void sem_save(struct enc *e)
{
	ipc_ids_save(e, &sem_ids, save_one);
}

int sem_load(struct dec *d)
{
	return ipc_ids_load(d, &sem_ids, load_one);
}
