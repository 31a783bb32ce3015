/* eventfd: a 64-bit counter as a file (man eventfd). Writes add to it and reads take it (or
 * one, with EFD_SEMAPHORE); neither ever blocks here: they return -EAGAIN and the syscall
 * layer waits on the queue poll gives it. Each change wakes the queue with what it made
 * possible: POLLIN after a write, POLLOUT after a read. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

#include "vfs/internal.h"
#include "vfs/save.h"
#include "vfs/vfs.h"
#include "vfs/waitq.h"

/* The counter never exceeds this; UINT64_MAX itself only marks an overflow (POLLERR), which
 * in Linux only the kernel's own eventfd_signal can cause. */
#define EVENTFD_MAX (UINT64_MAX - 1)

struct eventfd {
	uint64_t count;
	bool semaphore;
	struct waitq wq;
};

static const struct vfs_file_ops efd_ops;

static size_t iov_total(const struct iovec *iov, int n)
{
	size_t t = 0;

	for (int i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

/* Moves the 8-byte value between V and the first bytes of IOV, however they are split. */
static void iov_move8(const struct iovec *iov, int n, uint64_t *v, bool to_iov)
{
	char *p = (char *)v;
	size_t left = sizeof(*v);

	for (int i = 0; i < n && left; i++) {
		size_t chunk = iov[i].iov_len < left ? iov[i].iov_len : left;
		if (to_iov)
			memcpy(iov[i].iov_base, p, chunk);
		else
			memcpy(p, iov[i].iov_base, chunk);
		p += chunk;
		left -= chunk;
	}
}

static ssize_t efd_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct eventfd *e = f->priv;
	uint64_t v;

	(void)pos;
	if (iov_total(iov, iovcnt) < sizeof(v))
		return -EINVAL;
	if (e->count == 0)
		return -EAGAIN;
	v = e->semaphore ? 1 : e->count;
	e->count -= v;
	iov_move8(iov, iovcnt, &v, true);
	waitq_wake(&e->wq, POLLOUT);
	return sizeof(v);
}

static ssize_t efd_write(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct eventfd *e = f->priv;
	uint64_t v;

	(void)pos;
	if (iov_total(iov, iovcnt) < sizeof(v))
		return -EINVAL;
	iov_move8(iov, iovcnt, &v, false);
	if (v == UINT64_MAX)
		return -EINVAL;
	if (v > EVENTFD_MAX - e->count)
		return -EAGAIN;
	e->count += v;
	waitq_wake(&e->wq, POLLIN);
	return sizeof(v);
}

static uint32_t efd_poll(struct vfs_file *f, struct waitq **wq)
{
	struct eventfd *e = f->priv;
	uint32_t m = 0;

	*wq = &e->wq;
	if (e->count > 0)
		m |= POLLIN;
	if (e->count == UINT64_MAX)
		m |= POLLERR;
	if (e->count < EVENTFD_MAX)
		m |= POLLOUT;
	return m;
}

/* A task still blocked on a closed eventfd is woken: its retry finds the descriptor gone. */
static void efd_release(struct vfs_file *f)
{
	struct eventfd *e = f->priv;

	waitq_detach_all(&e->wq);
	free(e);
}

static const struct vfs_file_ops efd_ops = {
    .read = efd_read,
    .write = efd_write,
    .getattr = vfs_anon_getattr,
    .poll = efd_poll,
    .release = efd_release,
};

int vfs_eventfd_new(unsigned int initval, int flags, struct vfs_file **out)
{
	struct eventfd *e;
	struct vfs_file *f;

	if (flags & ~(EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC))
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	f = calloc(1, sizeof(*f));
	if (!e || !f) {
		free(e);
		free(f);
		return -ENOMEM;
	}
	e->count = initval;
	e->semaphore = flags & EFD_SEMAPHORE;
	f->ops = &efd_ops;
	f->refs = 1;
	f->flags = O_RDWR | (flags & EFD_NONBLOCK ? O_NONBLOCK : 0);
	f->priv = e;
	*out = f;
	return 0;
}

bool vfs_is_eventfd(struct vfs_file *f)
{
	return f->ops == &efd_ops;
}

uint64_t vfs_eventfd_count(struct vfs_file *f)
{
	return ((struct eventfd *)f->priv)->count;
}

/* Checkpoint: the counter and the semaphore mode (EFD_NONBLOCK is the file's O_NONBLOCK). Who
 * waits is not saved: blocked tasks wait again when their syscall is retried. */
static int efd_save(struct enc *e, struct vfs_file *f)
{
	struct eventfd *efd = f->priv;

	enc_u64(e, efd->count);
	enc_bool(e, efd->semaphore);
	return 0;
}

static int efd_load(struct dec *d, struct vfs_file *f)
{
	struct eventfd *e;
	uint64_t count = dec_u64(d);
	bool semaphore = dec_bool(d);

	if (!dec_ok(d))
		return -EINVAL;
	if (!(e = calloc(1, sizeof(*e))))
		return dec_fail(d, "out of memory");
	e->count = count;
	e->semaphore = semaphore;
	f->priv = e;
	return 0;
}

const struct vfs_file_kind vfs_eventfd_kind = {
    .name = "eventfd",
    .ops = &efd_ops,
    .save = efd_save,
    .load = efd_load,
};
