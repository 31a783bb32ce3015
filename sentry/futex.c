/* futex(2): WAIT/WAKE and their bitset forms, REQUEUE and CMP_REQUEUE, WAKE_OP, and the
 * priority-inheritance locks (LOCK_PI, LOCK_PI2, TRYLOCK_PI, UNLOCK_PI; the requeues to PI
 * are ENOSYS). A waiter is a task parked on the queue of the word's key; a wake marks it and
 * its retried FUTEX_WAIT returns 0. The robust lists of dying threads are walked here too
 * (futex_robust_release). */
#include "sentry/futex.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "common/units.h"
#include "sentry/mm.h"
#include "sentry/sched.h"
#include "sentry/signal.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "vfs/waitq.h"

/* What identifies a futex word, as Linux's futex keys: in shared memory its place in the memory
 * file, whoever maps it where; in private memory its address in its address space (private
 * memory moves in the memory file when a fork's copy-on-write copies it, and a parent's and a
 * child's words at one address are different words). OFF has FKEY_PRIVATE set for the
 * second kind, so a task's saved key (futex_key) says which it is. */
#define FKEY_PRIVATE (1ULL << 63)

struct fkey {
	const struct mm *mm; /* private memory: its address space; shared memory: NULL */
	uint64_t off;
};

struct fqueue {
	struct fkey key;
	struct waitq wq;
	struct fqueue *next;
};

static struct fqueue *queues;

static int key_of(struct mm *mm, uintptr_t addr, struct fkey *key)
{
	if (addr & 3)
		return -EINVAL;
	struct vma *v = vma_find(&mm->vmas, addr);
	if (!v || (v->flags & VMA_RESERVED))
		return -EFAULT;
	if (v->flags & MAP_SHARED) {
		key->mm = NULL;
		key->off = v->mf_off + (addr - v->start);
	} else {
		key->mm = mm;
		key->off = addr | FKEY_PRIVATE;
	}
	return 0;
}

static bool key_eq(struct fkey a, struct fkey b)
{
	return a.mm == b.mm && a.off == b.off;
}

/* Drops the queues nobody waits on. */
static void prune(void)
{
	for (struct fqueue **pp = &queues; *pp;) {
		if ((*pp)->wq.head) {
			pp = &(*pp)->next;
			continue;
		}
		struct fqueue *dead = *pp;
		*pp = dead->next;
		free(dead);
	}
}

/* The queue of KEY. With CREATE, empty queues are pruned first: the caller must not hold a
 * queue pointer across the call. */
static struct fqueue *queue_of(struct fkey key, bool create)
{
	if (create)
		prune();
	for (struct fqueue *q = queues; q; q = q->next)
		if (key_eq(q->key, key))
			return q;
	if (!create)
		return NULL;
	struct fqueue *q = calloc(1, sizeof(*q));
	if (q) {
		q->key = key;
		q->next = queues;
		queues = q;
	}
	return q;
}

/* The word being woken, for mark_woken: a futex_waitv waiter learns from it which of its words
 * woke it (a FUTEX_WAIT waiter, woken, never looks at the key again). */
static struct fkey waking_key;

static void mark_woken(struct task *t)
{
	t->blk.futex_woken = true;
	t->blk.futex_key = waking_key.off;
}

static int wake_key(struct fkey key, int n, uint32_t bits)
{
	struct fqueue *q = queue_of(key, false);

	waking_key = key;
	return q ? task_waitq_wake_n(&q->wq, n, bits, mark_woken) : 0;
}

int futex_wake_addr(struct mm *mm, uintptr_t addr, int n)
{
	struct fkey key;

	return key_of(mm, addr, &key) ? 0 : wake_key(key, n, FUTEX_BITSET_MATCH_ANY);
}

/* The robust list's walk, as Linux's exit_robust_list: at most this many entries (a list
 * made circular by a guest ends there). */
#define ROBUST_LIST_LIMIT 2048

/* The lock word at UADDR of a dying owner TID (handle_futex_death): -1 stops the walk. */
static int robust_death(struct mm *mm, uintptr_t uaddr, pid_t tid, bool pi, bool pending)
{
	uint32_t uval;

	if ((uaddr & 3) || copy_in(mm, &uval, uaddr, sizeof(uval)))
		return -1;
	for (;;) {
		uint32_t owner = uval & FUTEX_TID_MASK;
		/* Died between taking the lock's queue slot and the lock: a waiter may have been
		 * woken for it and lost the wake-up with it. */
		if (pending && !pi && !owner) {
			futex_wake_addr(mm, uaddr, 1);
			return 0;
		}
		if (owner != (uint32_t)tid)
			return 0;
		uint32_t seen = uval;
		int r = mm_cmpxchg_u32(mm, uaddr, &seen, (uval & FUTEX_WAITERS) | FUTEX_OWNER_DIED);
		if (r == -EAGAIN) {
			uval = seen; /* a waiter changed it meanwhile: look again */
			continue;
		}
		if (r)
			return -1;
		if (!pi && (uval & FUTEX_WAITERS))
			futex_wake_addr(mm, uaddr, 1);
		return 0;
	}
}

void futex_robust_release(struct mm *mm, uintptr_t head, pid_t tid)
{
	struct {
		uint64_t next;
		int64_t futex_offset;
		uint64_t pending;
	} h;

	if (!head || !mm || copy_in(mm, &h, head, sizeof(h)))
		return;
	uintptr_t entry = h.next & ~1UL, pending = h.pending & ~1UL;
	bool pi = h.next & 1;
	for (int limit = ROBUST_LIST_LIMIT; entry != head && limit > 0; limit--) {
		uint64_t next;
		int rc = copy_in(mm, &next, entry, sizeof(next));
		if (entry != pending &&
		    robust_death(mm, entry + (uintptr_t)h.futex_offset, tid, pi, false))
			return;
		if (rc)
			return;
		entry = next & ~1UL;
		pi = next & 1;
	}
	if (pending)
		robust_death(mm, pending + (uintptr_t)h.futex_offset, tid, h.pending & 1, true);
}

/* A requeued waiter waits on another word than its syscall names: a retry of its wait (after a
 * restore) must queue it there again. */
static struct fkey requeue_key;

static void mark_requeued(struct task *t)
{
	t->blk.futex_key = requeue_key.off;
	t->blk.futex_requeued = true;
}

static long futex_wait(struct task *t, uintptr_t uaddr, uint32_t val, uintptr_t utime,
		       uint32_t bits, bool absolute, bool realtime)
{
	struct fkey key;
	long err;

	if (!bits)
		return -EINVAL;
	if ((err = key_of(t->mm, uaddr, &key)))
		return err;
	if (t->blk.retry && t->blk.futex_requeued) {
		key.off = t->blk.futex_key;
		key.mm = key.off & FKEY_PRIVATE ? t->mm : NULL;
	}
	if (!t->blk.retry) {
		uint32_t cur;
		t->blk.futex_requeued = false;
		if (copy_in(t->mm, &cur, uaddr, sizeof(cur)))
			return -EFAULT;
		if (cur != val)
			return -EAGAIN;
		t->blk.futex_woken = false;
		t->blk.futex_timed = utime != 0;
		if (utime) {
			struct timespec ts;
			if (copy_in(t->mm, &ts, utime, sizeof(ts)))
				return -EFAULT;
			if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= NSEC_PER_SEC)
				return -EINVAL;
			if (absolute) {
				struct timespec now;
				clock_now(realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, &now);
				t->blk.deadline = ts_add(mono_now(), ts_sub(ts, now));
			} else {
				t->blk.deadline = ts_add(mono_now(), ts);
			}
		}
	} else if (t->blk.futex_woken) {
		t->blk.futex_woken = false;
		return 0;
	} else if (t->blk.timed_out ||
		   (t->blk.futex_timed && ts_cmp(mono_now(), t->blk.deadline) >= 0)) {
		return -ETIMEDOUT;
	}
	struct fqueue *q = queue_of(key, true);
	if (!q)
		return -ENOMEM;
	if ((err = task_wait_queue(t, &q->wq, bits)))
		return err;
	if (t->blk.futex_timed)
		task_wait_until(t, &t->blk.deadline);
	t->blk.intr_ret = t->blk.futex_timed ? -ERESTARTNOHAND : -ERESTARTSYS;
	return task_block(t);
}

static long futex_requeue(struct task *t, uintptr_t uaddr, int nwake, int nreq, uintptr_t uaddr2,
			  const uint32_t *cmp)
{
	struct fkey k1, k2;
	long err;

	if (nwake < 0 || nreq < 0)
		return -EINVAL;
	if ((err = key_of(t->mm, uaddr, &k1)) || (err = key_of(t->mm, uaddr2, &k2)))
		return err;
	if (cmp) {
		uint32_t cur;
		if (copy_in(t->mm, &cur, uaddr, sizeof(cur)))
			return -EFAULT;
		if (cur != *cmp)
			return -EAGAIN;
	}
	int woken = wake_key(k1, nwake, FUTEX_BITSET_MATCH_ANY);
	if (!nreq || key_eq(k1, k2) || !queue_of(k1, false))
		return woken;
	struct fqueue *to = queue_of(k2, true); /* before FROM: creating prunes */
	struct fqueue *from = queue_of(k1, false);
	if (!to)
		return -ENOMEM;
	requeue_key = k2;
	return woken + (from ? task_waitq_requeue(&from->wq, &to->wq, nreq, mark_requeued) : 0);
}

static long futex_wake_op(struct task *t, uintptr_t uaddr, int n1, int n2, uintptr_t uaddr2,
			  uint32_t encoded)
{
	int op = (encoded >> 28) & 0xf, cmp = (encoded >> 24) & 0xf;
	int oparg = ((int)(encoded << 8)) >> 20, cmparg = ((int)(encoded << 20)) >> 20;
	struct fkey k1, k2;
	uint32_t old, new;
	long err;

	if ((err = key_of(t->mm, uaddr, &k1)) || (err = key_of(t->mm, uaddr2, &k2)))
		return err;
	if (op & FUTEX_OP_OPARG_SHIFT) {
		if (oparg < 0 || oparg > 31)
			return -EINVAL;
		oparg = 1 << oparg;
		op &= ~FUTEX_OP_OPARG_SHIFT;
	}
	if (copy_in(t->mm, &old, uaddr2, sizeof(old)))
		return -EFAULT;
	switch (op) {
	case FUTEX_OP_SET:
		new = oparg;
		break;
	case FUTEX_OP_ADD:
		new = old + oparg;
		break;
	case FUTEX_OP_OR:
		new = old | oparg;
		break;
	case FUTEX_OP_ANDN:
		new = old & ~oparg;
		break;
	case FUTEX_OP_XOR:
		new = old ^ oparg;
		break;
	default:
		return -ENOSYS;
	}
	if (copy_out(t->mm, uaddr2, &new, sizeof(new)))
		return -EFAULT;
	int woken = wake_key(k1, n1, FUTEX_BITSET_MATCH_ANY);
	bool hit;
	switch (cmp) {
	case FUTEX_OP_CMP_EQ:
		hit = (int)old == cmparg;
		break;
	case FUTEX_OP_CMP_NE:
		hit = (int)old != cmparg;
		break;
	case FUTEX_OP_CMP_LT:
		hit = (int)old < cmparg;
		break;
	case FUTEX_OP_CMP_LE:
		hit = (int)old <= cmparg;
		break;
	case FUTEX_OP_CMP_GT:
		hit = (int)old > cmparg;
		break;
	case FUTEX_OP_CMP_GE:
		hit = (int)old >= cmparg;
		break;
	default:
		return -ENOSYS;
	}
	if (hit)
		woken += wake_key(k2, n2, FUTEX_BITSET_MATCH_ANY);
	return woken;
}

/* --- priority inheritance --------------------------------------------------------------------
 * The PI operations keep their protocol on the word (the owner's tid, FUTEX_WAITERS while the
 * kernel has waiters, FUTEX_OWNER_DIED after a robust owner died): LOCK_PI takes a free word
 * or queues, UNLOCK_PI hands the word to the first waiter. The host scheduler gives guest
 * threads no priorities, so there is nothing to inherit: waiters are served in order. */

static struct task *pi_next_owner;

static void mark_pi_owner(struct task *t)
{
	t->blk.futex_woken = true;
	pi_next_owner = t;
}

static bool has_waiters(struct fkey key)
{
	struct fqueue *q = queue_of(key, false);

	return q && q->wq.head;
}

/* The owner a word names, if it is a live thread of the sandbox. */
static bool owner_lives(uint32_t tid)
{
	struct task *o = task_by_tid((pid_t)tid);

	return o && !o->exited && !o->zombie && !(o == o->group_leader && o->thread_gone);
}

static long futex_lock_pi(struct task *t, uintptr_t uaddr, uintptr_t utime, bool trylock,
			  bool realtime)
{
	struct fkey key;
	uint32_t tid = (uint32_t)t->tid;
	long err;

	if ((err = key_of(t->mm, uaddr, &key)))
		return err;
	if (!t->blk.retry) {
		t->blk.futex_woken = false;
		t->blk.futex_timed = utime != 0 && !trylock;
		if (t->blk.futex_timed) {
			struct timespec ts, now;
			if (copy_in(t->mm, &ts, utime, sizeof(ts)))
				return -EFAULT;
			if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= NSEC_PER_SEC)
				return -EINVAL;
			clock_now(realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, &now);
			t->blk.deadline = ts_add(mono_now(), ts_sub(ts, now));
		}
	}
	uint32_t uval;
	if (copy_in(t->mm, &uval, uaddr, sizeof(uval)))
		return -EFAULT;
	for (;;) {
		uint32_t owner = uval & FUTEX_TID_MASK;
		if (t->blk.futex_woken && owner == tid)
			return 0; /* handed over by UNLOCK_PI */
		if (owner == tid)
			return -EDEADLK;
		if (!owner) {
			/* Free (or its robust owner died): ours, keeping OWNER_DIED for the
			 * caller to see and WAITERS for the others. */
			uint32_t want = tid | (uval & FUTEX_OWNER_DIED) |
					(has_waiters(key) ? FUTEX_WAITERS : 0);
			err = mm_cmpxchg_u32(t->mm, uaddr, &uval, want);
			if (err == -EAGAIN)
				continue;
			return err;
		}
		if (!owner_lives(owner))
			return -ESRCH;
		if (trylock)
			return -EAGAIN;
		if (uval & FUTEX_WAITERS)
			break;
		err = mm_cmpxchg_u32(t->mm, uaddr, &uval, uval | FUTEX_WAITERS);
		if (err == -EAGAIN)
			continue;
		if (err)
			return err;
		break;
	}
	if (t->blk.timed_out || (t->blk.futex_timed && ts_cmp(mono_now(), t->blk.deadline) >= 0))
		return -ETIMEDOUT;
	struct fqueue *q = queue_of(key, true);
	if (!q)
		return -ENOMEM;
	if ((err = task_wait_queue(t, &q->wq, FUTEX_BITSET_MATCH_ANY)))
		return err;
	if (t->blk.futex_timed)
		task_wait_until(t, &t->blk.deadline);
	t->blk.intr_ret = -ERESTARTNOINTR; /* the lock is tried again after a handler */
	return task_block(t);
}

static long futex_unlock_pi(struct task *t, uintptr_t uaddr)
{
	struct fkey key;
	uint32_t uval;
	long err;

	if ((err = key_of(t->mm, uaddr, &key)))
		return err;
	if (copy_in(t->mm, &uval, uaddr, sizeof(uval)))
		return -EFAULT;
	for (;;) {
		if ((uval & FUTEX_TID_MASK) != (uint32_t)t->tid)
			return -EPERM;
		pi_next_owner = NULL;
		struct fqueue *q = queue_of(key, false);
		if (q)
			task_waitq_wake_n(&q->wq, 1, FUTEX_BITSET_MATCH_ANY, mark_pi_owner);
		uint32_t want = 0;
		if (pi_next_owner)
			want =
			    (uint32_t)pi_next_owner->tid | (has_waiters(key) ? FUTEX_WAITERS : 0);
		err = mm_cmpxchg_u32(t->mm, uaddr, &uval, want);
		if (err != -EAGAIN)
			return err;
		/* The word changed under us (a waiter set FUTEX_WAITERS): the woken one, if any,
		 * finds the lock still ours when it retries, and queues again. */
		if (pi_next_owner)
			pi_next_owner->blk.futex_woken = false;
	}
}

/* futex_waitv(2): waits on up to 128 32-bit words at once and returns the index of the one
 * that woke it. The timeout is absolute on CLOCK_MONOTONIC or CLOCK_REALTIME. */
#define FUTEX_WAITV_MAX 128
#define FUTEX2_SIZE_U32 0x02
#define FUTEX2_PRIVATE 128

struct guest_waitv {
	uint64_t val;
	uint64_t uaddr;
	uint32_t flags;
	uint32_t reserved;
};

long sys_futex_waitv(struct task *t, const unsigned long *a)
{
	static struct guest_waitv wv[FUTEX_WAITV_MAX];
	static struct fkey keys[FUTEX_WAITV_MAX];
	unsigned int n = arg_uint(a, 1);
	int clockid = arg_int(a, 4);
	long err;

	if (a[2])
		return -EINVAL;
	if (!a[0] || !n || n > FUTEX_WAITV_MAX)
		return -EINVAL;
	struct timespec ts;
	if (a[3] && !t->blk.retry) {
		if (clockid != CLOCK_MONOTONIC && clockid != CLOCK_REALTIME)
			return -EINVAL;
		if (copy_in(t->mm, &ts, a[3], sizeof(ts)))
			return -EFAULT;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= NSEC_PER_SEC)
			return -EINVAL;
	}
	if (copy_in(t->mm, wv, a[0], n * sizeof(wv[0])))
		return -EFAULT;
	for (unsigned int i = 0; i < n; i++) {
		if ((wv[i].flags & ~(uint32_t)(FUTEX2_PRIVATE | 3)) || wv[i].reserved ||
		    (wv[i].flags & 3) != FUTEX2_SIZE_U32 || wv[i].val > UINT32_MAX)
			return -EINVAL;
		if ((err = key_of(t->mm, wv[i].uaddr, &keys[i])))
			return err;
	}
	if (!t->blk.retry) {
		for (unsigned int i = 0; i < n; i++) {
			uint32_t cur;
			if (copy_in(t->mm, &cur, wv[i].uaddr, sizeof(cur)))
				return -EFAULT;
			if (cur != wv[i].val)
				return -EAGAIN;
		}
		t->blk.futex_requeued = false;
		t->blk.futex_woken = false;
		t->blk.futex_timed = a[3] != 0;
		if (a[3]) {
			struct timespec now;
			clock_now(clockid, &now);
			t->blk.deadline = ts_add(mono_now(), ts_sub(ts, now));
		}
	} else if (t->blk.futex_woken) {
		t->blk.futex_woken = false;
		for (unsigned int i = 0; i < n; i++)
			if (keys[i].off == t->blk.futex_key)
				return i;
		return 0; /* its word was remapped since: the first stands for it */
	} else if (t->blk.timed_out ||
		   (t->blk.futex_timed && ts_cmp(mono_now(), t->blk.deadline) >= 0)) {
		return -ETIMEDOUT;
	}
	for (unsigned int i = 0; i < n; i++) {
		struct fqueue *q = queue_of(keys[i], true);
		if (!q)
			return -ENOMEM;
		if ((err = task_wait_queue(t, &q->wq, FUTEX_BITSET_MATCH_ANY)))
			return err;
	}
	if (t->blk.futex_timed)
		task_wait_until(t, &t->blk.deadline);
	t->blk.intr_ret = -ERESTARTSYS;
	return task_block(t);
}

long sys_futex(struct task *t, const unsigned long *a)
{
	int op = arg_int(a, 1), cmd = op & FUTEX_CMD_MASK;
	bool realtime = op & FUTEX_CLOCK_REALTIME;
	uint32_t val = arg_uint(a, 2), val3 = arg_uint(a, 5);

	if (realtime && cmd != FUTEX_WAIT_BITSET && cmd != FUTEX_WAIT && cmd != FUTEX_LOCK_PI2)
		return -ENOSYS;
	switch (cmd) {
	case FUTEX_WAIT:
		return futex_wait(t, a[0], val, a[3], FUTEX_BITSET_MATCH_ANY, false, false);
	case FUTEX_WAIT_BITSET:
		return futex_wait(t, a[0], val, a[3], val3, true, realtime);
	case FUTEX_WAKE:
	case FUTEX_WAKE_BITSET: {
		struct fkey key;
		uint32_t bits = cmd == FUTEX_WAKE ? FUTEX_BITSET_MATCH_ANY : val3;
		long err = key_of(t->mm, a[0], &key);
		if (err)
			return err;
		if (!bits)
			return -EINVAL;
		return wake_key(key, (int)val > 0 ? (int)val : 0, bits);
	}
	case FUTEX_REQUEUE:
		return futex_requeue(t, a[0], (int)val, arg_int(a, 3), a[4], NULL);
	case FUTEX_CMP_REQUEUE:
		return futex_requeue(t, a[0], (int)val, arg_int(a, 3), a[4], &val3);
	case FUTEX_WAKE_OP:
		return futex_wake_op(t, a[0], (int)val, arg_int(a, 3), a[4], val3);
	case FUTEX_LOCK_PI: /* its timeout is absolute on CLOCK_REALTIME */
		return futex_lock_pi(t, a[0], a[3], false, true);
	case FUTEX_LOCK_PI2:
		return futex_lock_pi(t, a[0], a[3], false, realtime);
	case FUTEX_TRYLOCK_PI:
		return futex_lock_pi(t, a[0], 0, true, false);
	case FUTEX_UNLOCK_PI:
		return futex_unlock_pi(t, a[0]);
	case FUTEX_WAIT_REQUEUE_PI:
	case FUTEX_CMP_REQUEUE_PI:
		return syscall_unsupported(t, -ENOSYS, "priority-inheritance operation %d", cmd);
	default:
		return -ENOSYS;
	}
}
