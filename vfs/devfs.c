/* devfs: the device nodes a shell and its programs expect in /dev, with Linux's semantics
 * (drivers/char/mem.c, random.c, tty_io.c), as one table of synthetic nodes; ptmx and the
 * pseudo-terminal slaves in pts are vfs/pty.c's. Only the sandbox's terminal touches the
 * host: opening console or pts/0 (or tty, outside a pty's session) wraps a dup of the Sentry's
 * stdin when that is a terminal. Nothing can be created here yet; a tmpfs-backed devfs will
 * allow it. */
#include "vfs/synth.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/random.h>
#include <poll.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "vfs/internal.h"
#include "vfs/pty.h"
#include "vfs/save.h"

/* What the entropy count ioctl reports: a fully seeded pool, as on any running Linux. */
#define DEVFS_ENTROPY_BITS 256

static size_t iov_total(const struct iovec *iov, int iovcnt)
{
	size_t total = 0;

	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	return total;
}

/* Operations every device here shares. Devices keep no offset: lseek always gives 0 (Linux's
 * null_lseek, and noop_llseek on random devices whose offset never moves), reads and writes
 * leave *POS alone, and pread64/pwrite64 work at any offset. */

static ssize_t dev_getdents64(struct vfs_file *f, void *buf, size_t size, off_t *pos)
{
	(void)f, (void)buf, (void)size, (void)pos;
	return -ENOTDIR;
}

static long dev_ioctl(struct vfs_file *f, unsigned int cmd, void *arg)
{
	(void)f, (void)cmd, (void)arg;
	return -ENOTTY;
}

static int dev_host_fd(struct vfs_file *f)
{
	(void)f;
	return -1;
}

static off_t dev_llseek(struct vfs_file *f, off_t off, int whence)
{
	(void)off, (void)whence;
	f->pos = 0;
	return 0;
}

static ssize_t dev_write_swallow(struct vfs_file *f, const struct iovec *iov, int iovcnt,
				 off_t *pos)
{
	(void)f, (void)pos;
	return (ssize_t)iov_total(iov, iovcnt);
}

static ssize_t dev_read_zeros(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	(void)f, (void)pos;
	for (int i = 0; i < iovcnt; i++)
		memset(iov[i].iov_base, 0, iov[i].iov_len);
	return (ssize_t)iov_total(iov, iovcnt);
}

static ssize_t dev_pread_zeros(struct vfs_file *f, void *buf, size_t len, off_t off)
{
	(void)f, (void)off;
	memset(buf, 0, len);
	return (ssize_t)len;
}

/* /dev/null: reads see end of file, writes vanish. */

static ssize_t null_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	(void)f, (void)iov, (void)iovcnt, (void)pos;
	return 0;
}

static ssize_t null_pread_kernel(struct vfs_file *f, void *buf, size_t len, off_t off)
{
	(void)f, (void)buf, (void)len, (void)off;
	return 0;
}

/* null, zero and full have no poll op, as on Linux: poll and select find them always ready,
 * and epoll_ctl refuses them with EPERM. */
static const struct vfs_file_ops null_ops = {
    .read = null_read,
    .write = dev_write_swallow,
    .getdents64 = dev_getdents64,
    .ioctl = dev_ioctl,
    .getattr = vfs_synth_file_getattr,
    .host_fd = dev_host_fd,
    .pread_kernel = null_pread_kernel,
    .llseek = dev_llseek,
};

/* /dev/zero: an endless supply of zeros (a mapping of it is zero-filled memory). */
static const struct vfs_file_ops zero_ops = {
    .read = dev_read_zeros,
    .write = dev_write_swallow,
    .getdents64 = dev_getdents64,
    .ioctl = dev_ioctl,
    .getattr = vfs_synth_file_getattr,
    .host_fd = dev_host_fd,
    .pread_kernel = dev_pread_zeros,
    .llseek = dev_llseek,
};

/* /dev/full: zeros to read, a full disk to write to. */

static ssize_t full_write(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	(void)f, (void)iov, (void)iovcnt, (void)pos;
	return -ENOSPC;
}

static const struct vfs_file_ops full_ops = {
    .read = dev_read_zeros,
    .write = full_write,
    .getdents64 = dev_getdents64,
    .ioctl = dev_ioctl,
    .getattr = vfs_synth_file_getattr,
    .host_fd = dev_host_fd,
    .pread_kernel = dev_pread_zeros,
    .llseek = dev_llseek,
};

/* /dev/random and /dev/urandom: the host's random bytes, through getrandom(2). Since Linux
 * 5.18 both are the same seeded generator, which never blocks once the host has booted.
 * Writes would only stir the host pool: they are accepted and dropped. */

static ssize_t fill_random(void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = getrandom((char *)buf + done, len - done, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return done ? (ssize_t)done : -errno;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static ssize_t random_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	size_t done = 0;

	(void)f, (void)pos;
	for (int i = 0; i < iovcnt; i++) {
		ssize_t n = fill_random(iov[i].iov_base, iov[i].iov_len);

		if (n < 0)
			return done ? (ssize_t)done : n;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static ssize_t random_pread_kernel(struct vfs_file *f, void *buf, size_t len, off_t off)
{
	(void)f, (void)off;
	return fill_random(buf, len);
}

static long random_ioctl(struct vfs_file *f, unsigned int cmd, void *arg)
{
	(void)f;
	if (cmd != RNDGETENTCNT)
		return -EINVAL; /* what random_ioctl answers for the rest */
	*(int *)arg = DEVFS_ENTROPY_BITS;
	return 0;
}

/* Linux's random_poll: readable once the generator is seeded, which it always is here. */
static uint32_t random_poll(struct vfs_file *f, struct waitq **wq)
{
	(void)f;
	*wq = NULL;
	return POLLIN | POLLRDNORM;
}

static const struct vfs_file_ops random_ops = {
    .read = random_read,
    .write = dev_write_swallow,
    .getdents64 = dev_getdents64,
    .ioctl = random_ioctl,
    .getattr = vfs_synth_file_getattr,
    .host_fd = dev_host_fd,
    .pread_kernel = random_pread_kernel,
    .poll = random_poll,
    .llseek = dev_llseek,
};

/* urandom has no poll op on current Linux (epoll_ctl gives EPERM), random has. */
static const struct vfs_file_ops urandom_ops = {
    .read = random_read,
    .write = dev_write_swallow,
    .getdents64 = dev_getdents64,
    .ioctl = random_ioctl,
    .getattr = vfs_synth_file_getattr,
    .host_fd = dev_host_fd,
    .pread_kernel = random_pread_kernel,
    .llseek = dev_llseek,
};

/* /dev/console and /dev/pts/0: the sandbox's terminal, the Sentry's stdin if that is a
 * terminal. Without one, Linux's tty open fails with ENXIO. The file wraps its own dup of the
 * descriptor, so closing it leaves the Sentry's stdin open. */
static int host_tty_open(struct vfs_inode *ino, struct vfs_file *f, int flags)
{
	int fd, err;

	(void)ino, (void)flags;
	if (!isatty(STDIN_FILENO))
		return -ENXIO;
	fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	err = vfs_host_fd_attach(f, fd, true);
	if (err)
		close(fd);
	else
		vfs_host_fd_set_stdio(f, STDIN_FILENO); /* a restore opens its own terminal */
	return err;
}

/* /dev/tty: the caller's controlling terminal, a pseudo-terminal's slave (vfs/pty.c) when one
 * controls its session, else the sandbox's terminal. */
static int tty_open(struct vfs_inode *ino, struct vfs_file *f, int flags)
{
	int err = vfs_pty_open_ctty(f, flags);

	return err == -ENOENT ? host_tty_open(ino, f, flags) : err;
}

/* /dev/pts: the terminal the sandbox was given is its pseudo-terminal 0, as a container
 * engine's `-t` shows its pty to the container (docker, runsc: /dev/pts/0, 136:0). The node
 * is always there, so that an image taken with a terminal restores without one (its files
 * are then the host objects they are restored onto); without a terminal it opens as ENXIO. */
static const struct vfs_synth_node pts_nodes[] = {
    {.name = "0", .mode = S_IFCHR | 0620, .dev_major = 136, .dev_minor = 0, .open = host_tty_open},
    /* devpts's own ptmx (docker's ptmxmode=666); pairs' slaves are its dynamic part */
    {.name = "ptmx", .mode = S_IFCHR | 0666, .dev_major = 5, .dev_minor = 2, .open = vfs_ptmx_open},
};

static const struct vfs_synth_node devfs_nodes[] = {
    VFS_SYNTH_CHR("null", 0666, 1, 3, &null_ops),
    VFS_SYNTH_CHR("zero", 0666, 1, 5, &zero_ops),
    VFS_SYNTH_CHR("full", 0666, 1, 7, &full_ops),
    VFS_SYNTH_CHR("random", 0666, 1, 8, &random_ops),
    VFS_SYNTH_CHR("urandom", 0666, 1, 9, &urandom_ops),
    {.name = "tty", .mode = S_IFCHR | 0666, .dev_major = 5, .dev_minor = 0, .open = tty_open},
    {.name = "console",
     .mode = S_IFCHR | 0600,
     .dev_major = 5,
     .dev_minor = 1,
     .open = host_tty_open},
    {.name = "ptmx", .mode = S_IFCHR | 0666, .dev_major = 5, .dev_minor = 2, .open = vfs_ptmx_open},
    VFS_SYNTH_LNK("fd", "/proc/self/fd"),
    VFS_SYNTH_LNK("stdin", "/proc/self/fd/0"),
    VFS_SYNTH_LNK("stdout", "/proc/self/fd/1"),
    VFS_SYNTH_LNK("stderr", "/proc/self/fd/2"),
    {.name = "pts",
     .mode = S_IFDIR | 0755,
     .children = pts_nodes,
     .nchildren = sizeof(pts_nodes) / sizeof(pts_nodes[0]),
     .dynamic = &vfs_devpts_dynamic},
    VFS_SYNTH_EMPTY_DIR("shm", 01777),
};

/* Devices keep no state: a restored file opens its device node again. (tty and console files
 * wrap a host descriptor, and are saved as such.) */
#define DEVFS_KIND(KIND, NAME, OPS)                                                                \
	const struct vfs_file_kind KIND = {                                                        \
	    .name = (NAME),                                                                        \
	    .ops = (OPS),                                                                          \
	    .save = vfs_file_save_none,                                                            \
	    .load = vfs_file_reopen,                                                               \
	}

DEVFS_KIND(devfs_null_kind, "dev-null", &null_ops);
DEVFS_KIND(devfs_zero_kind, "dev-zero", &zero_ops);
DEVFS_KIND(devfs_full_kind, "dev-full", &full_ops);
DEVFS_KIND(devfs_random_kind, "dev-random", &random_ops);
DEVFS_KIND(devfs_urandom_kind, "dev-urandom", &urandom_ops);

int vfs_devfs_new(struct vfs_dentry **root)
{
	return vfs_synth_new("devtmpfs", 0755, devfs_nodes,
			     sizeof(devfs_nodes) / sizeof(devfs_nodes[0]), root);
}
