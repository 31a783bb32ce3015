/* Native asynchronous I/O (sentry/aio.h). A context is its ring's guest address, as in Linux
 * (the id io_setup gives is the ring's address). The ring is the guest's memory: a header
 * {id, nr, head, tail, magic, compat, incompat, header_length} and NR io_event slots; the
 * kernel writes events at tail and user space (or io_getevents) takes them from head. Every
 * request is carried out inside io_submit, through the synchronous call it stands for, so a
 * context holds no requests in flight, io_cancel finds none, and a checkpoint needs only the
 * contexts: what is waiting to be reaped is in the ring, and waiters in io_getevents wait
 * again when retried. */
#include "sentry/aio.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/units.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/sched.h"
#include "sentry/signal.h"
#include "sentry/syscall.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "state/codec.h"
#include "vfs/vfs.h"
#include "vfs/waitq.h"

#define AIO_RING_MAGIC 0xa10a10a1
#define AIO_RING_COMPAT 1
#define AIO_MAX_NR 65536 /* /proc/sys/fs/aio-max-nr */

struct aio_ring_header {
	uint32_t id, nr, head, tail, magic, compat_features, incompat_features, header_length;
};

struct aio_ctx {
	struct aio_ctx *next;
	uintptr_t ring; /* the ring's address: the context's id */
	size_t ring_len;
	uint32_t nr;	 /* io_event slots in the ring */
	uint32_t id;	 /* the header's id: its place among the mm's contexts */
	struct waitq wq; /* io_getevents waiters */
};

/* Event slots in use in the whole sandbox, held against aio-max-nr (EAGAIN past it). */
static uint64_t aio_nr;

static struct aio_ctx *ctx_of(struct mm *mm, uint64_t id)
{
	for (struct aio_ctx *c = mm->aio; c; c = c->next)
		if (c->ring == id)
			return c;
	return NULL;
}

static void ctx_free(struct aio_ctx *c)
{
	waitq_detach_all(&c->wq);
	aio_nr -= c->nr;
	free(c);
}

void aio_mm_release(struct mm *mm)
{
	while (mm->aio) {
		struct aio_ctx *c = mm->aio;
		mm->aio = c->next;
		ctx_free(c);
	}
}

long sys_io_setup(struct task *t, const unsigned long *a)
{
	unsigned int want = arg_uint(a, 0);
	uint64_t cur;

	if (copy_in(t->mm, &cur, a[1], sizeof(cur)))
		return -EFAULT;
	if (cur || want == 0)
		return -EINVAL;
	/* Linux's sizing: at least four per CPU, doubled, then what fills the ring's pages. */
	uint64_t n = want > (unsigned)kernel.cfg.cpus * 4 ? want : (unsigned)kernel.cfg.cpus * 4;
	n *= 2;
	if (n > 0x10000000U / sizeof(struct io_event))
		return -EINVAL;
	size_t len = PAGE_UP(sizeof(struct aio_ring_header) + n * sizeof(struct io_event));
	n = (len - sizeof(struct aio_ring_header)) / sizeof(struct io_event);
	if (aio_nr + n > AIO_MAX_NR || aio_nr + n < aio_nr)
		return -EAGAIN;
	struct aio_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	long addr = mm_map(t->mm, 0, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | VMA_DONTFORK, NULL, 0, 0, "[aio]");
	if (addr < 0) {
		free(c);
		return addr;
	}
	c->ring = (uintptr_t)addr;
	c->ring_len = len;
	c->nr = (uint32_t)n;
	for (struct aio_ctx *o = t->mm->aio; o; o = o->next)
		c->id = o->id >= c->id ? o->id + 1 : c->id;
	struct aio_ring_header h = {c->id,	    c->nr,	     0, 0,
				    AIO_RING_MAGIC, AIO_RING_COMPAT, 0, sizeof(h)};
	uint64_t id = c->ring;
	if (copy_out(t->mm, c->ring, &h, sizeof(h)) || copy_out(t->mm, a[1], &id, sizeof(id))) {
		mm_unmap(t->mm, c->ring, len);
		free(c);
		return -EFAULT;
	}
	c->next = t->mm->aio;
	t->mm->aio = c;
	aio_nr += c->nr;
	return 0;
}

long sys_io_destroy(struct task *t, const unsigned long *a)
{
	struct aio_ctx **pp = &t->mm->aio;

	while (*pp && (*pp)->ring != a[0])
		pp = &(*pp)->next;
	if (!*pp)
		return -EINVAL;
	struct aio_ctx *c = *pp;
	*pp = c->next;
	mm_unmap(t->mm, c->ring, c->ring_len);
	ctx_free(c); /* its waiters find it gone: EINVAL */
	return 0;
}

/* The ring's head and tail, as the guest may have left them; false if it cannot be read. */
static bool ring_ends(struct task *t, struct aio_ctx *c, uint32_t *head, uint32_t *tail)
{
	struct aio_ring_header h;

	if (copy_in(t->mm, &h, c->ring, sizeof(h)))
		return false;
	*head = h.head % c->nr;
	*tail = h.tail % c->nr;
	return true;
}

static uint32_t ring_used(uint32_t head, uint32_t tail, uint32_t nr)
{
	return (tail + nr - head) % nr;
}

/* Puts EV at the ring's tail, tells RESFD's eventfd (if any) and wakes io_getevents. */
static void complete(struct task *t, struct aio_ctx *c, const struct io_event *ev,
		     struct vfs_file *resfd)
{
	uint32_t head, tail;

	if (!ring_ends(t, c, &head, &tail) ||
	    copy_out(t->mm, c->ring + sizeof(struct aio_ring_header) + tail * sizeof(*ev), ev,
		     sizeof(*ev)))
		return; /* the guest unmapped its ring: the event has nowhere to go */
	tail = (tail + 1) % c->nr;
	copy_out(t->mm, c->ring + offsetof(struct aio_ring_header, tail), &tail, sizeof(tail));
	if (resfd) {
		uint64_t one = 1;
		struct iovec iov = {&one, sizeof(one)};
		resfd->ops->write(resfd, &iov, 1, NULL);
	}
	waitq_wake(&c->wq, POLLIN);
}

/* Carries out one request through the call it stands for: its result, or a negative errno
 * for an iocb io_submit refuses itself (which then goes no further). *RES gets the event's
 * result. */
static long submit_one(struct task *t, struct aio_ctx *c, uintptr_t user_iocb)
{
	struct iocb cb;

	if (copy_in(t->mm, &cb, user_iocb, sizeof(cb)))
		return -EFAULT;
	if (cb.aio_reserved2 || (ssize_t)cb.aio_nbytes < 0)
		return -EINVAL;
	if (cb.aio_flags & ~(uint32_t)(IOCB_FLAG_RESFD | IOCB_FLAG_IOPRIO))
		return -EINVAL;
	uint32_t head, tail;
	if (!ring_ends(t, c, &head, &tail))
		return -EFAULT;
	if (ring_used(head, tail, c->nr) >= c->nr - 1)
		return -EAGAIN; /* no slot for its completion until some are reaped */
	struct vfs_file *resfd = NULL;
	if (cb.aio_flags & IOCB_FLAG_RESFD) {
		resfd = arg_file_nopath(t, (int)cb.aio_resfd);
		if (!resfd)
			return -EBADF;
		if (!vfs_is_eventfd(resfd))
			return -EINVAL;
	}
	struct vfs_file *f = arg_file_nopath(t, (int)cb.aio_fildes);
	if (!f)
		return -EBADF;
	int mode = f->flags & O_ACCMODE;
	unsigned long args[6] = {cb.aio_fildes, cb.aio_buf, cb.aio_nbytes,
				 (unsigned long)cb.aio_offset};
	long res;
	switch (cb.aio_lio_opcode) {
	case IOCB_CMD_PREAD:
	case IOCB_CMD_PREADV:
	case IOCB_CMD_PWRITE:
	case IOCB_CMD_PWRITEV: {
		bool read =
		    cb.aio_lio_opcode == IOCB_CMD_PREAD || cb.aio_lio_opcode == IOCB_CMD_PREADV;
		if (mode == (read ? O_WRONLY : O_RDONLY))
			return -EBADF;
		if (cb.aio_rw_flags &
		    ~(uint32_t)(RWF_HIPRI | RWF_DSYNC | RWF_SYNC | RWF_NOWAIT | RWF_APPEND))
			return -EOPNOTSUPP;
		switch (cb.aio_lio_opcode) {
		case IOCB_CMD_PREAD:
			res = sys_pread64(t, args);
			break;
		case IOCB_CMD_PWRITE:
			res = sys_pwrite64(t, args);
			break;
		case IOCB_CMD_PREADV:
			res = sys_preadv(t, (unsigned long[6]){cb.aio_fildes, cb.aio_buf,
							       cb.aio_nbytes,
							       (unsigned long)cb.aio_offset, 0});
			break;
		default:
			res = sys_pwritev(t, (unsigned long[6]){cb.aio_fildes, cb.aio_buf,
								cb.aio_nbytes,
								(unsigned long)cb.aio_offset, 0});
			break;
		}
		break;
	}
	case IOCB_CMD_FSYNC:
	case IOCB_CMD_FDSYNC:
		if (cb.aio_buf || cb.aio_offset || cb.aio_nbytes || cb.aio_rw_flags)
			return -EINVAL;
		res = cb.aio_lio_opcode == IOCB_CMD_FSYNC ? sys_fsync(t, args)
							  : sys_fdatasync(t, args);
		break;
	case IOCB_CMD_POLL:
		return syscall_unsupported(t, -EINVAL, "IOCB_CMD_POLL");
	default:
		return -EINVAL;
	}
	if (res == -ESENTRY_BLOCK) {
		/* A file that would make the call wait: the request fails, as a non-blocking one
		 * would, rather than holding io_submit. */
		task_cancel_wait(t);
		res = -EAGAIN;
	}
	struct io_event ev = {.data = cb.aio_data, .obj = user_iocb, .res = res};
	complete(t, c, &ev, resfd);
	return 0;
}

long sys_io_submit(struct task *t, const unsigned long *a)
{
	long nr = arg_long(a, 1);
	struct aio_ctx *c = ctx_of(t->mm, a[0]);

	if (nr < 0)
		return -EINVAL;
	if (!c)
		return -EINVAL;
	if (nr > (long)c->nr)
		nr = (long)c->nr;
	for (long i = 0; i < nr; i++) {
		uint64_t user_iocb;
		long err =
		    copy_in(t->mm, &user_iocb, a[2] + i * sizeof(user_iocb), sizeof(user_iocb))
			? -EFAULT
			: submit_one(t, c, user_iocb);
		if (err)
			return i ? i : err;
	}
	return nr;
}

long sys_io_getevents(struct task *t, const unsigned long *a)
{
	long min_nr = arg_long(a, 1), nr = arg_long(a, 2);
	struct aio_ctx *c = ctx_of(t->mm, a[0]);

	if (min_nr > nr || min_nr < 0 || nr < 0)
		return -EINVAL;
	if (!c)
		return -EINVAL;
	bool timed = a[4] != 0;
	if (timed && !t->blk.retry) {
		struct timespec ts;
		if (copy_in(t->mm, &ts, a[4], sizeof(ts)))
			return -EFAULT;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
			return -EINVAL;
		t->blk.deadline = ts_add(mono_now(), ts);
	}
	uint32_t head, tail;
	if (!ring_ends(t, c, &head, &tail))
		return -EFAULT;
	long avail = ring_used(head, tail, c->nr);
	bool expired = timed && (t->blk.timed_out || ts_cmp(mono_now(), t->blk.deadline) >= 0);
	if (avail < min_nr && !expired && !t->blk.interrupted) {
		t->blk.intr_ret = -EINTR; /* io_getevents is never restarted */
		if (task_wait_queue(t, &c->wq, POLLIN))
			return -ENOMEM;
		if (timed)
			task_wait_until(t, &t->blk.deadline);
		return task_block(t);
	}
	if (avail < min_nr && t->blk.interrupted)
		return -EINTR;
	long n = avail < nr ? avail : nr;
	for (long i = 0; i < n; i++) {
		struct io_event ev;
		uint32_t at = (head + (uint32_t)i) % c->nr;
		if (copy_in(t->mm, &ev, c->ring + sizeof(struct aio_ring_header) + at * sizeof(ev),
			    sizeof(ev)) ||
		    copy_out(t->mm, a[3] + i * sizeof(ev), &ev, sizeof(ev))) {
			n = i;
			break;
		}
	}
	if (!n && avail && nr)
		return -EFAULT;
	head = (head + (uint32_t)n) % c->nr;
	copy_out(t->mm, c->ring + offsetof(struct aio_ring_header, head), &head, sizeof(head));
	return n;
}

long sys_io_cancel(struct task *t, const unsigned long *a)
{
	uint32_t key;

	if (copy_in(t->mm, &key, a[1] + offsetof(struct iocb, aio_key), sizeof(key)))
		return -EFAULT;
	if (key != 0) /* KIOCB_KEY */
		return -EINVAL;
	if (!ctx_of(t->mm, a[0]))
		return -EINVAL;
	return -EINVAL; /* every request completed when it was submitted: none to cancel */
}

/* --- checkpoint ---------------------------------------------------------------------------- */

void aio_save(struct enc *e, const struct mm *mm)
{
	uint64_t n = 0;

	for (const struct aio_ctx *c = mm->aio; c; c = c->next)
		n++;
	enc_u64(e, n);
	for (const struct aio_ctx *c = mm->aio; c; c = c->next) {
		enc_u64(e, c->ring);
		enc_u64(e, c->ring_len);
		enc_u32(e, c->nr);
		enc_u32(e, c->id);
	}
}

int aio_load(struct dec *d, struct mm *mm)
{
	uint64_t n = dec_max(d, AIO_MAX_NR, "aio contexts");

	for (uint64_t i = 0; i < n && dec_ok(d); i++) {
		struct aio_ctx *c = calloc(1, sizeof(*c));
		if (!c)
			return dec_fail(d, "out of memory");
		c->ring = dec_u64(d);
		c->ring_len = dec_u64(d);
		c->nr = dec_u32(d);
		c->id = dec_u32(d);
		if (!dec_ok(d) || c->nr < 2 || c->nr > AIO_MAX_NR || (c->ring & (PAGE_SIZE - 1)) ||
		    c->ring_len != PAGE_UP(sizeof(struct aio_ring_header) +
					   (uint64_t)c->nr * sizeof(struct io_event))) {
			free(c);
			return dec_fail(d, "bad aio context");
		}
		c->next = mm->aio;
		mm->aio = c;
		aio_nr += c->nr;
	}
	return dec_ok(d) ? 0 : -EINVAL;
}
