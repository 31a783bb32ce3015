/* Host descriptors wrapped as files: the sandbox's stdin/stdout/stderr, each a tty, a pipe or
 * a file. Reads never block the Sentry: with no input ready they return -EAGAIN and the caller
 * waits for host_fd() in its epoll loop, then retries. The host descriptor's own offset is
 * the file's offset (it is shared with the host processes that handed it over), so read,
 * write and lseek go to it and F->pos is unused. A checkpoint saves which of the Sentry's
 * descriptors 0-2 a file wraps; a restore wraps the restoring Sentry's own. */
#include "vfs/internal.h"
#include "vfs/save.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct hostfd_file {
	int fd;	    /* -1: restored without a host descriptor to wrap (EBADF) */
	bool owned; /* closed with the file */
	int std_fd; /* the Sentry's descriptor 0, 1 or 2 that FD is a dup of, or -1 */
};

static int hostfd_fd(struct vfs_file *f)
{
	return ((struct hostfd_file *)f->priv)->fd;
}

/* read(2)/write(2) use the host offset; pread64/pwrite64 pass an offset of their own. */
static bool hostfd_at_host_offset(struct vfs_file *f, off_t *pos)
{
	return !pos || pos == &f->pos;
}

static ssize_t hostfd_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct pollfd pfd = {.fd = hostfd_fd(f), .events = POLLIN};
	bool host_offset = hostfd_at_host_offset(f, pos);
	ssize_t n;
	int r;

	if (pfd.fd < 0)
		return -EBADF;
	do
		r = poll(&pfd, 1, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -EAGAIN;
	do
		n = host_offset ? readv(pfd.fd, iov, iovcnt) : preadv(pfd.fd, iov, iovcnt, *pos);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (!host_offset)
		*pos += n;
	return n;
}

/* Writes may block the Sentry (a full pipe, a stopped terminal): stdio output is expected to
 * drain. */
static ssize_t hostfd_write(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	bool host_offset = hostfd_at_host_offset(f, pos);
	int fd = hostfd_fd(f);
	ssize_t n;

	do
		n = host_offset ? writev(fd, iov, iovcnt) : pwritev(fd, iov, iovcnt, *pos);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (!host_offset)
		*pos += n;
	return n;
}

static ssize_t hostfd_getdents64(struct vfs_file *f, void *buf, size_t size, off_t *pos)
{
	(void)f, (void)buf, (void)size, (void)pos;
	return -ENOTDIR;
}

/* Only the terminal queries pass through; nothing lets the guest change the host's tty. */
static long hostfd_ioctl(struct vfs_file *f, unsigned int cmd, void *arg)
{
	switch (cmd) {
	case TCGETS:
	case TIOCGWINSZ:
	case TCSETS:
	case TCSETSW:
	case TCSETSF:
	case TIOCSWINSZ:
	case FIONREAD:
	case TIOCOUTQ:
		/* Structure and int arguments: ARG is the Sentry's copy. */
		return ioctl(hostfd_fd(f), cmd, arg) < 0 ? -errno : 0;
	case TCFLSH:
	case TCXONC:
	case TCSBRK:
		/* By-value arguments: ARG holds the value. */
		return ioctl(hostfd_fd(f), cmd, *(long *)arg) < 0 ? -errno : 0;
	default:
		return -ENOTTY;
	}
}

/* A host descriptor opened through a node of the tree (/dev/tty) stats as that node, as on
 * Linux, where the file's inode is the one opened; stdio stats as the host object. */
static int hostfd_getattr(struct vfs_file *f, struct stat *st)
{
	if (f->dentry)
		return vfs_stat(f->dentry, st);
	return fstat(hostfd_fd(f), st) < 0 ? -errno : 0;
}

static int hostfd_host_fd(struct vfs_file *f)
{
	return hostfd_fd(f);
}

/* Readiness from a poll(2) with timeout 0. There is no Sentry wait queue: the host descriptor
 * itself is what the syscall layer watches. */
static uint32_t hostfd_poll(struct vfs_file *f, struct waitq **wq)
{
	struct pollfd pfd = {
	    .fd = hostfd_fd(f),
	    .events = POLLIN | POLLPRI | POLLOUT | POLLRDHUP | POLLRDNORM | POLLRDBAND |
		      POLLWRNORM | POLLWRBAND,
	};
	int r;

	*wq = NULL;
	if (pfd.fd < 0)
		return POLLERR | POLLHUP; /* nothing to wait for */
	do
		r = poll(&pfd, 1, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return POLLERR;
	return (uint16_t)pfd.revents;
}

static ssize_t hostfd_pread_kernel(struct vfs_file *f, void *buf, size_t len, off_t off)
{
	ssize_t n;

	do
		n = pread(hostfd_fd(f), buf, len, off);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static void hostfd_release(struct vfs_file *f)
{
	struct hostfd_file *hf = f->priv;

	if (hf->owned && hf->fd >= 0)
		close(hf->fd);
	free(hf);
}

static off_t hostfd_llseek(struct vfs_file *f, off_t off, int whence)
{
	off_t r = lseek(hostfd_fd(f), off, whence);

	return r < 0 ? -errno : r;
}

/* Whether an open with FLAGS asks for no more than access mode GIVEN. */
static bool access_within(int flags, int given)
{
	bool rd = (flags & O_ACCMODE) != O_WRONLY;
	bool wr = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);

	return (!rd || given != O_WRONLY) && (!wr || given != O_RDONLY);
}

/* An open of /proc/PID/fd/N of a host descriptor: a new open of the same host object (the
 * host's own magic link), so the new description has its own flags and, for files, offset.
 * O_TRUNC truncates a file the sandbox was given for writing, as `> /dev/stdout` does on
 * Linux. */
static int hostfd_reopen(struct vfs_file *f, int flags, struct vfs_file **out)
{
	struct hostfd_file *hf = f->priv;
	char path[64];

	if (hf->fd < 0)
		return -ENXIO;
	/* Never more than the sandbox was handed: a guest that got a read-only stdin may not
	 * reopen it for writing (nor truncate it), whatever the host file's own mode allows. */
	int given = fcntl(hf->fd, F_GETFL);
	if (given < 0)
		return -errno;
	if (!access_within(flags, given & O_ACCMODE))
		return -EACCES;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", hf->fd);
	int fd = open(path, (flags & (O_ACCMODE | O_NONBLOCK | O_APPEND | O_TRUNC)) | O_CLOEXEC |
				O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (!(*out = vfs_file_host_fd(fd, flags & (O_ACCMODE | O_NONBLOCK | O_APPEND), true))) {
		close(fd);
		return -ENOMEM;
	}
	((struct hostfd_file *)(*out)->priv)->std_fd = hf->std_fd;
	return 0;
}

static const struct vfs_file_ops hostfd_ops = {
    .reopen = hostfd_reopen,
    .read = hostfd_read,
    .write = hostfd_write,
    .getdents64 = hostfd_getdents64,
    .ioctl = hostfd_ioctl,
    .getattr = hostfd_getattr,
    .host_fd = hostfd_host_fd,
    .poll = hostfd_poll,
    .pread_kernel = hostfd_pread_kernel,
    .release = hostfd_release,
    .llseek = hostfd_llseek,
};

int vfs_host_fd_attach(struct vfs_file *f, int fd, bool owned)
{
	struct hostfd_file *hf = malloc(sizeof(*hf));

	if (!hf)
		return -ENOMEM;
	hf->fd = fd;
	hf->owned = owned;
	hf->std_fd = -1;
	f->ops = &hostfd_ops;
	f->seekable = lseek(fd, 0, SEEK_CUR) >= 0;
	f->priv = hf;
	return 0;
}

struct vfs_file *vfs_file_host_fd(int fd, int flags, bool owned)
{
	struct vfs_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	if (vfs_host_fd_attach(f, fd, owned)) {
		free(f);
		return NULL;
	}
	f->refs = 1;
	f->flags = flags;
	return f;
}

int vfs_file_host_stdio(int std_fd, int flags, struct vfs_file **out)
{
	int fd = fcntl(std_fd, F_DUPFD_CLOEXEC, 3);

	if (fd < 0)
		return -errno;
	if (!(*out = vfs_file_host_fd(fd, flags, true))) {
		close(fd);
		return -ENOMEM;
	}
	((struct hostfd_file *)(*out)->priv)->std_fd = std_fd;
	return 0;
}

void vfs_host_fd_set_stdio(struct vfs_file *f, int std_fd)
{
	((struct hostfd_file *)f->priv)->std_fd = std_fd;
}

/* --- checkpoint ---------------------------------------------------------------------------- */

/* The record is the number (0, 1 or 2) of the Sentry descriptor the file wrapped a dup of. A
 * restore wraps a new dup of that descriptor of the restoring process (whose stdio the guest's
 * becomes); if the restoring process has it closed, the file still loads, detached: reads,
 * writes and fstat give EBADF, and poll reports POLLERR|POLLHUP so nothing waits for it.
 * The offset and seekability are the new descriptor's. Other host descriptors cannot be
 * saved. */
static int hostfd_save(struct enc *e, struct vfs_file *f)
{
	struct hostfd_file *hf = f->priv;

	if (hf->std_fd < 0)
		return enc_fail(e, "a host descriptor that is not the sandbox's stdio");
	enc_u32(e, (uint32_t)hf->std_fd);
	return 0;
}

static int hostfd_load(struct dec *d, struct vfs_file *f)
{
	uint32_t std_fd = dec_u32(d);
	int fd;

	if (!dec_ok(d) || std_fd > 2)
		return dec_fail(d, "bad host stdio record");
	fd = fcntl((int)std_fd, F_DUPFD_CLOEXEC, 3);
	if (vfs_host_fd_attach(f, fd, true)) {
		if (fd >= 0)
			close(fd);
		return dec_fail(d, "out of memory");
	}
	if (fd < 0)
		f->seekable = false;
	((struct hostfd_file *)f->priv)->std_fd = (int)std_fd;
	/* A terminal's file is its device node's (/dev/pts/0, /dev/tty); restored onto
	 * something else, it is that host object again. */
	if (f->dentry && (fd < 0 || !isatty(fd))) {
		vfs_dentry_put(f->dentry);
		f->dentry = NULL;
	}
	return 0;
}

const struct vfs_file_kind vfs_hostfd_kind = {
    .name = "hostfd",
    .ops = &hostfd_ops,
    .save = hostfd_save,
    .load = hostfd_load,
};
