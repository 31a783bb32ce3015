/* Pipes: a ring buffer in the Sentry shared by a read end and a write end. Readiness changes
 * wake the pipe's wait queue; the syscall layer blocks and retries on -EAGAIN. Writes of at
 * most PIPE_BUF bytes are atomic. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>

#include "common/units.h"
#include "vfs/internal.h"
#include "vfs/save.h"
#include "vfs/vfs.h"
#include "vfs/waitq.h"

#define PIPE_DEFAULT (64 * 1024)
#define PIPE_MAX_SIZE (1024 * 1024) /* /proc/sys/fs/pipe-max-size */

struct pipe {
	char *buf;
	size_t cap, head, len; /* data is [head, head+len) modulo cap */
	int readers, writers;
	struct waitq wq;
	ino_t ino;
	struct timespec created;
	struct vfs_pseudo_inode pi; /* an anonymous pipe's pipefs inode (vfs/pseudo.c) */
	void **slot; /* a FIFO's: the inode's pointer to this pipe, cleared when it goes */
	/* Checkpoint: the CK_FILE id of the end saved with the pipe, in the last checkpoint
	 * that saved one (a hint, checked against the checkpoint's table). */
	uint64_t saved_as;
};

static const struct vfs_file_ops pipe_ops;
static ino_t next_ino = 4026531840u; /* st_ino of anonymous pipes, as Linux's pipefs numbers */
#define PIPEFS_DEV 0xc		     /* Linux's pipefs device */
#define PIPEFS_MAGIC 0x50495045

static size_t iov_total(const struct iovec *iov, int n)
{
	size_t t = 0;

	for (int i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

static ssize_t pipe_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct pipe *p = f->priv;
	size_t want = iov_total(iov, iovcnt), done = 0;

	(void)pos;
	if (want == 0)
		return 0;
	if (p->len == 0)
		return p->writers ? -EAGAIN : 0;
	for (int i = 0; i < iovcnt && p->len; i++) {
		size_t off = 0;
		while (off < iov[i].iov_len && p->len) {
			size_t chunk = p->cap - p->head;
			if (chunk > p->len)
				chunk = p->len;
			if (chunk > iov[i].iov_len - off)
				chunk = iov[i].iov_len - off;
			memcpy((char *)iov[i].iov_base + off, p->buf + p->head, chunk);
			p->head = (p->head + chunk) % p->cap;
			p->len -= chunk;
			off += chunk;
			done += chunk;
		}
	}
	if (p->len == 0)
		p->head = 0;
	waitq_wake(&p->wq, POLLOUT);
	return done;
}

static ssize_t pipe_write(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct pipe *p = f->priv;
	size_t want = iov_total(iov, iovcnt), done = 0, room = p->cap - p->len;

	(void)pos;
	if (!p->readers)
		return -EPIPE;
	if (want == 0)
		return 0;
	if (room == 0 || (want <= PIPE_BUF && room < want))
		return -EAGAIN; /* small writes go in whole or not at all */
	for (int i = 0; i < iovcnt && done < room; i++) {
		size_t off = 0;
		while (off < iov[i].iov_len && p->len < p->cap) {
			size_t tail = (p->head + p->len) % p->cap;
			size_t chunk = (tail >= p->head ? p->cap - tail : p->head - tail);
			if (chunk > iov[i].iov_len - off)
				chunk = iov[i].iov_len - off;
			memcpy(p->buf + tail, (char *)iov[i].iov_base + off, chunk);
			p->len += chunk;
			off += chunk;
			done += chunk;
		}
	}
	waitq_wake(&p->wq, POLLIN);
	return done;
}

static uint32_t pipe_poll(struct vfs_file *f, struct waitq **wq)
{
	struct pipe *p = f->priv;
	uint32_t m = 0;

	*wq = &p->wq;
	if ((f->flags & O_ACCMODE) != O_WRONLY) {
		if (p->len)
			m |= POLLIN | POLLRDNORM;
		if (!p->writers)
			m |= POLLHUP;
	}
	if ((f->flags & O_ACCMODE) != O_RDONLY) {
		if (p->cap - p->len >= PIPE_BUF || (p->cap - p->len > 0 && p->cap < PIPE_BUF))
			m |= POLLOUT | POLLWRNORM;
		if (!p->readers)
			m |= POLLERR;
	}
	return m;
}

static long pipe_ioctl(struct vfs_file *f, unsigned int cmd, void *arg)
{
	struct pipe *p = f->priv;

	if (cmd != FIONREAD)
		return -ENOTTY;
	*(int *)arg = (int)p->len;
	return 0;
}

static int pipe_getattr(struct vfs_file *f, struct stat *st)
{
	struct pipe *p = f->priv;

	/* A FIFO is its inode. */
	if (f->dentry && f->dentry->inode && f->dentry->inode->ops->getattr)
		return f->dentry->inode->ops->getattr(f->dentry->inode, st);

	memset(st, 0, sizeof(*st));
	st->st_dev = PIPEFS_DEV;
	st->st_ino = p->ino;
	st->st_mode = S_IFIFO;
	st->st_nlink = 1;
	st->st_blksize = 4096;
	st->st_atim = st->st_mtim = p->created;
	vfs_pseudo_stat(&p->pi, st);
	return 0;
}

static struct vfs_pseudo_inode *pipe_pseudo_inode(struct vfs_file *f)
{
	return &((struct pipe *)f->priv)->pi;
}

static void pipe_release(struct vfs_file *f)
{
	struct pipe *p = f->priv;

	if ((f->flags & O_ACCMODE) != O_WRONLY)
		p->readers--;
	if ((f->flags & O_ACCMODE) != O_RDONLY)
		p->writers--;
	/* The other end sees EOF or EPIPE now: wake everyone. */
	waitq_wake(&p->wq, 0);
	if (p->readers == 0 && p->writers == 0) {
		waitq_detach_all(&p->wq);
		if (p->slot)
			*p->slot = NULL;
		free(p->buf);
		free(p);
	}
}

static struct vfs_file *pipe_end(struct pipe *p, int accmode, int flags);

/* An open of /proc/PID/fd/N of a pipe: a new end of the same pipe, as a FIFO open would give
 * (Linux opens the pipe's inode through the magic link). */
static int pipe_reopen(struct vfs_file *f, int flags, struct vfs_file **out)
{
	struct pipe *p = f->priv;
	int acc = flags & O_ACCMODE;

	if (acc == O_WRONLY && (flags & O_NONBLOCK) && p->readers == 0)
		return -ENXIO;
	if (!(*out = pipe_end(p, acc, flags)))
		return -ENOMEM;
	if (acc != O_WRONLY)
		p->readers++;
	if (acc != O_RDONLY)
		p->writers++;
	waitq_wake(&p->wq, 0);
	return 0;
}

static const struct vfs_file_ops pipe_ops = {
    .read = pipe_read,
    .write = pipe_write,
    .getattr = pipe_getattr,
    .pseudo_inode = pipe_pseudo_inode,
    .ioctl = pipe_ioctl,
    .poll = pipe_poll,
    .release = pipe_release,
    .reopen = pipe_reopen,
};

static struct vfs_file *pipe_end(struct pipe *p, int accmode, int flags)
{
	struct vfs_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->ops = &pipe_ops;
	f->refs = 1;
	f->flags = accmode | (flags & O_NONBLOCK);
	f->priv = p;
	return f;
}

static struct pipe *pipe_alloc(void)
{
	struct pipe *p = calloc(1, sizeof(*p));

	if (!p || !(p->buf = malloc(PIPE_DEFAULT))) {
		free(p);
		return NULL;
	}
	p->cap = PIPE_DEFAULT;
	p->ino = next_ino++;
	p->created = vfs_now();
	vfs_pseudo_init(&p->pi, PIPEFS_MAGIC, PIPEFS_DEV, 0600, 0, 0, p->created);
	return p;
}

int vfs_fifo_open(void **slot, struct vfs_file *f, int flags)
{
	struct pipe *p = *slot;
	int acc = flags & O_ACCMODE;

	if (!p) {
		if (!(p = pipe_alloc()))
			return -ENOMEM;
		p->slot = slot;
		*slot = p;
	}
	if (acc == O_WRONLY && (flags & O_NONBLOCK) && p->readers == 0) {
		if (p->writers == 0) {
			*slot = NULL;
			free(p->buf);
			free(p);
		}
		return -ENXIO; /* no reader to write to */
	}
	f->ops = &pipe_ops;
	f->priv = p;
	f->seekable = false;
	if (acc != O_WRONLY)
		p->readers++;
	if (acc != O_RDONLY)
		p->writers++;
	waitq_wake(&p->wq, 0); /* an opener waiting for its partner */
	return 0;
}

bool vfs_fifo_waiting(struct vfs_file *f, struct waitq **wq)
{
	struct pipe *p = f->priv;

	if (f->ops != &pipe_ops || !p->slot || (f->flags & O_NONBLOCK))
		return false;
	*wq = &p->wq;
	switch (f->flags & O_ACCMODE) {
	case O_RDONLY:
		return p->writers == 0;
	case O_WRONLY:
		return p->readers == 0;
	default:
		return false;
	}
}

int vfs_pipe_new(int flags, struct vfs_file **rd, struct vfs_file **wr)
{
	struct pipe *p = pipe_alloc();

	if (!p)
		return -ENOMEM;
	*rd = pipe_end(p, O_RDONLY, flags);
	*wr = pipe_end(p, O_WRONLY, flags);
	if (!*rd || !*wr) {
		free(*rd);
		free(*wr);
		free(p->buf);
		free(p);
		return -ENOMEM;
	}
	p->readers = p->writers = 1;
	return 0;
}

bool vfs_is_pipe(struct vfs_file *f)
{
	return f->ops == &pipe_ops;
}

long vfs_pipe_size(struct vfs_file *f, long size)
{
	struct pipe *p = f->priv;

	if (!vfs_is_pipe(f))
		return -EBADF;
	if (size < 0)
		return p->cap;
	if (size > PIPE_MAX_SIZE)
		return -EPERM;
	/* Linux rounds up to a power-of-two number of pages. */
	size_t cap = 4096;
	while (cap < (size_t)size)
		cap *= 2;
	if (cap < p->len)
		return -EBUSY;
	char *nb = malloc(cap);
	if (!nb)
		return -ENOMEM;
	for (size_t i = 0; i < p->len; i++)
		nb[i] = p->buf[(p->head + i) % p->cap];
	free(p->buf);
	p->buf = nb;
	p->cap = cap;
	p->head = 0;
	waitq_wake(&p->wq, POLLOUT);
	return cap;
}

long vfs_pipe_tee(struct vfs_file *in, struct vfs_file *out, size_t len)
{
	struct pipe *src = in->priv, *dst = out->priv;

	if (!vfs_is_pipe(in) || !vfs_is_pipe(out) || src == dst)
		return -EINVAL;
	if ((in->flags & O_ACCMODE) == O_WRONLY || (out->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	if (src->len == 0)
		return src->writers ? -EAGAIN : 0;
	if (!dst->readers)
		return -EPIPE;
	size_t room = dst->cap - dst->len, n = src->len;
	if (n > len)
		n = len;
	if (n > room)
		n = room;
	if (n == 0)
		return -EAGAIN;
	for (size_t i = 0; i < n; i++)
		dst->buf[(dst->head + dst->len + i) % dst->cap] =
		    src->buf[(src->head + i) % src->cap];
	dst->len += n;
	waitq_wake(&dst->wq, POLLIN);
	return n;
}

/* --- checkpoint ---------------------------------------------------------------------------- */

/* Both ends of a pipe (and every open of a FIFO) are files of their own sharing one pipe. The
 * first end saved carries the pipe (PIPE_REC_OWN: capacity, bytes, inode number, creation
 * time); every later one refers to that end (PIPE_REC_SHARED and its CK_FILE id), which is
 * loaded before it, so the ends come back sharing one pipe. Reader and writer counts are not
 * saved: each loaded end counts itself again. */
enum { PIPE_REC_OWN, PIPE_REC_SHARED };

static int pipe_save(struct enc *e, struct vfs_file *f)
{
	struct pipe *p = f->priv;
	uint64_t self = e->refs ? ckpt_refs_id(e->refs, CK_FILE, f) : 0;

	if (!self)
		return enc_fail(e, "a pipe outside a checkpoint");
	/* Files are saved in id order: an end with a smaller id that is on this pipe has been
	 * saved with it already. */
	struct vfs_file *g =
	    p->saved_as && p->saved_as < self ? ckpt_refs_get(e->refs, CK_FILE, p->saved_as) : NULL;
	if (g && g->ops == &pipe_ops && g->priv == p) {
		enc_u8(e, PIPE_REC_SHARED);
		enc_ref(e, CK_FILE, g);
		return 0;
	}
	p->saved_as = self;
	enc_u8(e, PIPE_REC_OWN);
	enc_u64(e, p->cap);
	size_t first = p->cap - p->head < p->len ? p->cap - p->head : p->len;
	enc_u64(e, p->len); /* enc_bytes' layout, from the two halves of the ring */
	enc_raw(e, p->buf + p->head, first);
	enc_raw(e, p->buf, p->len - first);
	enc_u64(e, p->ino);
	enc_i64(e, p->created.tv_sec);
	enc_i64(e, p->created.tv_nsec);
	return 0;
}

static void pipe_attach(struct pipe *p, struct vfs_file *f)
{
	f->ops = &pipe_ops;
	f->priv = p;
	if ((f->flags & O_ACCMODE) != O_WRONLY)
		p->readers++;
	if ((f->flags & O_ACCMODE) != O_RDONLY)
		p->writers++;
}

/* The memfs inode a FIFO file was opened on (hard links and the overlay share it). */
static struct vfs_inode *fifo_inode(struct vfs_file *f)
{
	return f->dentry && f->dentry->inode ? vfs_memfs_inode(f->dentry->inode) : NULL;
}

static int pipe_load_shared(struct dec *d, struct vfs_file *f)
{
	struct vfs_file *g = dec_ref(d, CK_FILE);

	if (!g || g->ops != &pipe_ops || !g->priv || fifo_inode(g) != fifo_inode(f) ||
	    !f->dentry != !g->dentry)
		return dec_fail(d, "a pipe end sharing the pipe of a file that is none");
	pipe_attach(g->priv, f);
	return 0;
}

/* A FIFO end is opened again through its (restored) inode, which puts a new pipe in the
 * inode's slot; that pipe then gets the saved contents. */
static int fifo_reopen(struct dec *d, struct vfs_file *f)
{
	struct vfs_inode *ino = f->dentry->inode;
	int acc = f->flags & O_ACCMODE, err;

	if (!ino || !S_ISFIFO(ino->mode) || !ino->ops->open)
		return dec_fail(d, "a FIFO end on a node that is not a FIFO");
	/* Without O_NONBLOCK: a writer whose reader is gone is restored as it was. */
	if ((err = ino->ops->open(ino, f, acc)) || f->ops != &pipe_ops) {
		f->priv = NULL;
		return dec_fail(d, "cannot reopen a FIFO (%d)", err);
	}
	struct pipe *p = f->priv;
	if (p->readers + p->writers != (acc != O_WRONLY) + (acc != O_RDONLY)) {
		pipe_release(f); /* the FIFO was open already: not a fresh restore */
		f->priv = NULL;
		return dec_fail(d, "a FIFO restored twice");
	}
	return 0;
}

static int pipe_load(struct dec *d, struct vfs_file *f)
{
	if ((f->flags & O_ACCMODE) == O_ACCMODE || (!f->dentry && (f->flags & O_ACCMODE) == O_RDWR))
		return dec_fail(d, "bad pipe end access mode");
	uint8_t form = dec_u8(d);
	if (form == PIPE_REC_SHARED)
		return pipe_load_shared(d, f);
	if (form != PIPE_REC_OWN)
		return dec_fail(d, "bad pipe record");

	size_t cap = dec_max(d, PIPE_MAX_SIZE, "pipe capacity"), len;
	const char *data = dec_bytes(d, &len);
	ino_t ino = dec_u64(d);
	struct timespec created;
	created.tv_sec = dec_i64(d);
	created.tv_nsec = dec_i64(d);
	if (!dec_ok(d) || cap < 4096 || (cap & (cap - 1)) || len > cap || created.tv_nsec < 0 ||
	    created.tv_nsec >= NSEC_PER_SEC)
		return dec_fail(d, "bad pipe record");
	char *buf = malloc(cap);
	if (!buf)
		return dec_fail(d, "out of memory");
	struct pipe *p;
	if (f->dentry) {
		if (fifo_reopen(d, f)) {
			free(buf);
			return -EINVAL;
		}
		p = f->priv;
		free(p->buf);
	} else {
		if (!(p = calloc(1, sizeof(*p)))) {
			free(buf);
			return dec_fail(d, "out of memory");
		}
		pipe_attach(p, f);
	}
	memcpy(buf, data, len);
	p->buf = buf;
	p->cap = cap;
	p->head = 0;
	p->len = len;
	p->ino = ino;
	p->created = created;
	vfs_pseudo_init(&p->pi, PIPEFS_MAGIC, PIPEFS_DEV, 0600, 0, 0, created);
	if (ino >= next_ino && !f->dentry)
		next_ino = ino + 1;
	return 0;
}

const struct vfs_file_kind vfs_pipe_kind = {
    .name = "pipe",
    .ops = &pipe_ops,
    .save = pipe_save,
    .load = pipe_load,
};
