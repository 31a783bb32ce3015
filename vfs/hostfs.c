/* The host-directory filesystem, the read-only lower layer of the rootfs. Each inode holds an
 * O_PATH|O_NOFOLLOW descriptor of its host object, and the host is only ever asked to open
 * one name beneath such a descriptor, with openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS): it
 * never resolves a guest path or follows a symlink. Opening for I/O re-opens that one name,
 * read-only, and checks it is still the object that was looked up. */
#include "vfs/internal.h"
#include "vfs/dirent.h"
#include "vfs/save.h"
#include "state/codec.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HOSTFS_RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

/* Largest host getdents64 batch read per call. */
#define HOSTFS_DIRBUF 32768

struct hostfs_inode {
	struct vfs_inode vfs;
	/* The directory this was looked up in (a reference; NULL for the root) and the name,
	 * which opening a regular file re-opens: the inode does not depend on a dentry, so an
	 * overlay can use it as its lower layer. */
	struct hostfs_inode *parent;
	char *name;
	int fd;	   /* O_PATH|O_NOFOLLOW descriptor of the host object */
	dev_t dev; /* identity of the object looked up, checked when its name is re-opened */
	ino_t ino;
};

/* An open host file or directory: a read-only descriptor of its own. */
struct hostfs_file {
	int fd;
	struct hostfs_inode *hi; /* a reference */
};

static struct hostfs_inode *hostfs_i(struct vfs_inode *ino)
{
	return ino->priv;
}

static int hostfs_fd(struct vfs_file *f)
{
	return ((struct hostfs_file *)f->priv)->fd;
}

/* Opens the single component NAME beneath DIRFD, never following a symlink. */
static int hostfs_openat2(int dirfd, const char *name, int flags)
{
	struct open_how how = {
	    .flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
	    .resolve = HOSTFS_RESOLVE,
	};
	long fd;

	do
		fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : (int)fd;
}

static const struct vfs_inode_ops hostfs_inode_ops;

/* Wraps O_PATH descriptor FD (owned from here on, closed on failure) as a new inode. */
static int hostfs_inode_new(int fd, struct vfs_inode **out)
{
	struct hostfs_inode *hi;
	struct stat st;
	int err;

	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out_close;
	}
	hi = calloc(1, sizeof(*hi));
	if (!hi) {
		err = -ENOMEM;
		goto out_close;
	}
	hi->vfs.ops = &hostfs_inode_ops;
	hi->vfs.refs = 1;
	hi->vfs.mode = st.st_mode;
	hi->vfs.priv = hi;
	hi->fd = fd;
	hi->dev = st.st_dev;
	hi->ino = st.st_ino;
	*out = &hi->vfs;
	return 0;

out_close:
	close(fd);
	return err;
}

static int hostfs_lookup(struct vfs_inode *dir, const char *name, struct vfs_inode **out)
{
	struct hostfs_inode *hi;
	char *copy;
	int fd, err;

	if (strchr(name, '/'))
		return -EINVAL;
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	fd = hostfs_openat2(hostfs_i(dir)->fd, name, O_PATH);
	if (fd < 0) {
		free(copy);
		return fd;
	}
	err = hostfs_inode_new(fd, out);
	if (err) {
		free(copy);
		return err;
	}
	hi = hostfs_i(*out);
	hi->name = copy;
	hi->parent = hostfs_i(vfs_inode_get(dir));
	return 0;
}

static int hostfs_getattr(struct vfs_inode *ino, struct stat *st)
{
	return fstat(hostfs_i(ino)->fd, st) < 0 ? -errno : 0;
}

static ssize_t hostfs_readlink(struct vfs_inode *ino, char *buf, size_t size)
{
	ssize_t n = readlinkat(hostfs_i(ino)->fd, "", buf, size);

	return n < 0 ? -errno : n;
}

static void hostfs_release(struct vfs_inode *ino)
{
	struct hostfs_inode *hi = hostfs_i(ino);

	close(hi->fd);
	if (hi->parent)
		vfs_inode_put(&hi->parent->vfs);
	free(hi->name);
	free(hi);
}

static int hostfs_statfs(struct vfs_inode *ino, struct statfs *buf)
{
	return fstatfs(hostfs_i(ino)->fd, buf) < 0 ? -errno : 0;
}

/* File operations shared by host files and directories. Both are opened read-only. */

static ssize_t hostfs_file_write(struct vfs_file *f, const struct iovec *iov, int iovcnt,
				 off_t *pos)
{
	(void)f, (void)iov, (void)iovcnt, (void)pos;
	return -EBADF;
}

static long hostfs_file_ioctl(struct vfs_file *f, unsigned int cmd, void *arg)
{
	(void)f, (void)cmd, (void)arg;
	return -ENOTTY;
}

/* Through the dentry when there is one, so an overlay file stats as the overlay shows it. */
static int hostfs_file_getattr(struct vfs_file *f, struct stat *st)
{
	if (f->dentry)
		return vfs_stat(f->dentry, st);
	return fstat(hostfs_fd(f), st) < 0 ? -errno : 0;
}

/* Host files and directories are always ready: nothing to wait on. */
static int hostfs_file_host_fd(struct vfs_file *f)
{
	(void)f;
	return -1;
}

static void hostfs_file_release(struct vfs_file *f)
{
	struct hostfs_file *hf = f->priv;

	close(hf->fd);
	vfs_inode_put(&hf->hi->vfs);
	free(hf);
}

/* Regular files. */

static ssize_t hostfs_reg_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	ssize_t n;

	do
		n = pos ? preadv(hostfs_fd(f), iov, iovcnt, *pos)
			: readv(hostfs_fd(f), iov, iovcnt);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (pos)
		*pos += n;
	return n;
}

static ssize_t hostfs_reg_getdents64(struct vfs_file *f, void *buf, size_t size, off_t *pos)
{
	(void)f, (void)buf, (void)size, (void)pos;
	return -ENOTDIR;
}

static ssize_t hostfs_reg_pread_kernel(struct vfs_file *f, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(hostfs_fd(f), (char *)buf + done, len - done, off + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return done ? (ssize_t)done : -errno;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static const struct vfs_file_ops hostfs_reg_ops = {
    .read = hostfs_reg_read,
    .write = hostfs_file_write,
    .getdents64 = hostfs_reg_getdents64,
    .ioctl = hostfs_file_ioctl,
    .getattr = hostfs_file_getattr,
    .host_fd = hostfs_file_host_fd,
    .pread_kernel = hostfs_reg_pread_kernel,
    .release = hostfs_file_release,
};

/* Directories. */

/* The host's records pass through a private buffer rather than being read into BUF and
 * parsed there: BUF is guest memory, which another guest thread may change under us. *POS is
 * the host's d_off cookie of the next record; each call seeks the host directory to it. The
 * rootfs root's ".." is reported as the root itself, not the host directory above it. */
static ssize_t hostfs_dir_getdents64(struct vfs_file *f, void *buf, size_t size, off_t *pos)
{
	struct hostfs_inode *hi = ((struct hostfs_file *)f->priv)->hi;
	bool is_root = !hi->parent;
	size_t chunk = size < HOSTFS_DIRBUF ? size : HOSTFS_DIRBUF, done = 0;
	int fd = hostfs_fd(f);
	ssize_t err = 0;
	char *tmp;

	if (lseek(fd, *pos, SEEK_SET) < 0)
		return -errno;
	tmp = malloc(chunk ? chunk : 1);
	if (!tmp)
		return -ENOMEM;
	do {
		size_t want = size - done < chunk ? size - done : chunk;
		long n = syscall(SYS_getdents64, fd, tmp, want);
		long off;

		if (n < 0) {
			/* EINVAL: the next record does not fit in what is left of BUF. */
			if (errno != EINVAL || done == 0)
				err = -errno;
			break;
		}
		if (n == 0)
			break;
		for (off = 0; off < n;) {
			struct vfs_dirent64 *de = (struct vfs_dirent64 *)(tmp + off);

			if (is_root && strcmp(de->d_name, "..") == 0)
				de->d_ino = hi->ino;
			memcpy((char *)buf + done, de, de->d_reclen);
			done += de->d_reclen;
			*pos = de->d_off;
			off += de->d_reclen;
		}
	} while (done < size);
	free(tmp);
	return err ? err : (ssize_t)done;
}

static const struct vfs_file_ops hostfs_dir_ops = {
    .read = vfs_dir_read,
    .write = hostfs_file_write,
    .getdents64 = hostfs_dir_getdents64,
    .ioctl = hostfs_file_ioctl,
    .getattr = hostfs_file_getattr,
    .host_fd = hostfs_file_host_fd,
    .pread_kernel = vfs_dir_pread_kernel,
    .release = hostfs_file_release,
};

/* A directory re-opens itself through "."; a regular file re-opens its name beneath its
 * parent (O_NONBLOCK so that a name swapped for a FIFO meanwhile cannot hang the Sentry), and
 * the result must be the object that was looked up. */
static int hostfs_open(struct vfs_inode *ino, struct vfs_file *f, int flags)
{
	struct hostfs_inode *hi = hostfs_i(ino);
	const struct vfs_file_ops *ops;
	struct hostfs_file *hf;
	struct stat st;
	int fd, err;

	if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
		return -EROFS;
	switch (ino->mode & S_IFMT) {
	case S_IFDIR:
		fd = hostfs_openat2(hi->fd, ".", O_RDONLY | O_DIRECTORY);
		ops = &hostfs_dir_ops;
		break;
	case S_IFREG:
		if (!hi->parent)
			return -EIO;
		fd = hostfs_openat2(hi->parent->fd, hi->name, O_RDONLY | O_NONBLOCK);
		ops = &hostfs_reg_ops;
		break;
	case S_IFLNK:
		return -ELOOP;
	case S_IFCHR:
	case S_IFBLK:
		return -EACCES; /* as on a nodev mount: devices come from devfs */
	default:
		return -ENXIO; /* host FIFOs and sockets are not connected to the sandbox */
	}
	if (fd < 0)
		return fd;

	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out_close;
	}
	if (st.st_dev != hi->dev || st.st_ino != hi->ino) {
		err = -ESTALE;
		goto out_close;
	}
	hf = malloc(sizeof(*hf));
	if (!hf) {
		err = -ENOMEM;
		goto out_close;
	}
	hf->fd = fd;
	hf->hi = hostfs_i(vfs_inode_get(ino));
	f->priv = hf;
	f->ops = ops;
	return 0;

out_close:
	close(fd);
	return err;
}

static const struct vfs_inode_ops hostfs_inode_ops = {
    .lookup = hostfs_lookup,
    .getattr = hostfs_getattr,
    .readlink = hostfs_readlink,
    .open = hostfs_open,
    .release = hostfs_release,
    .statfs = hostfs_statfs,
};

int vfs_mount_host_root(const char *host_dir, struct vfs_dentry **root)
{
	struct vfs_inode *ino;
	int fd, err;

	fd = open(host_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = hostfs_inode_new(fd, &ino);
	if (err)
		return err;
	err = vfs_dentry_new_root(ino, root);
	if (err)
		vfs_inode_put(ino);
	return err;
}

/* Checkpoint and restore. A host object is found again by its path under the host root, as
 * the lower layer is the same host directory on restore. */

int hostfs_path_of(struct vfs_inode *ino, char **path)
{
	struct hostfs_inode *hi;
	size_t len = 0, at;
	char *p;

	if (ino->ops != &hostfs_inode_ops)
		return -EINVAL;
	for (hi = hostfs_i(ino); hi->parent; hi = hi->parent)
		len += strlen(hi->name) + 1;
	p = malloc(len + 1);
	if (!p)
		return -ENOMEM;
	at = len;
	p[at] = '\0';
	for (hi = hostfs_i(ino); hi->parent; hi = hi->parent) {
		size_t n = strlen(hi->name);

		at -= n;
		memcpy(p + at, hi->name, n);
		if (at)
			p[--at] = '/';
	}
	*path = p;
	return 0;
}

int hostfs_walk(struct vfs_inode *root, const char *path, struct vfs_inode **out)
{
	struct vfs_inode *cur = vfs_inode_get(root), *next;
	char name[NAME_MAX + 1];
	int r;

	if (root->ops != &hostfs_inode_ops) {
		vfs_inode_put(cur);
		return -EINVAL;
	}
	while ((r = vfs_path_next(&path, name)) > 0) {
		r = S_ISDIR(cur->mode) ? hostfs_lookup(cur, name, &next) : -ENOTDIR;
		vfs_inode_put(cur);
		if (r)
			return r;
		cur = next;
	}
	if (r < 0) {
		vfs_inode_put(cur);
		return r;
	}
	*out = cur;
	return 0;
}

/* Open host files keep nothing but their offset (a directory's is the host's d_off cookie,
 * valid for the same directory opened again); the restore opens the object again through its
 * dentry. A file opened before its object was copied up reads the copy after a restore. */
const struct vfs_file_kind hostfs_reg_kind = {
    .name = "hostfs-reg",
    .ops = &hostfs_reg_ops,
    .save = vfs_file_save_none,
    .load = vfs_file_reopen,
};

const struct vfs_file_kind hostfs_dir_kind = {
    .name = "hostfs-dir",
    .ops = &hostfs_dir_ops,
    .save = vfs_file_save_none,
    .load = vfs_file_reopen,
};

bool hostfs_is_inode(struct vfs_inode *ino)
{
	return ino->ops == &hostfs_inode_ops;
}
