/* The host-directory filesystem: the read-only lower layer of the rootfs, and bind mounts
 * (read-only, or writable: their changes go to the host tree). Each inode holds an
 * O_PATH|O_NOFOLLOW descriptor of its host object, and the host is only ever asked to open or
 * change one name beneath such a descriptor, with openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS)
 * and the *at calls: it never resolves a guest path or follows a symlink. Opening for I/O
 * re-opens that one name and checks it is still the object that was looked up. */
#include "vfs/internal.h"
#include "vfs/dirent.h"
#include "vfs/save.h"
#include "state/codec.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
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
	bool rw; /* a writable bind mount's: changes reach the host tree */
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

/* Opens (or with O_CREAT|O_EXCL creates, with MODE) the single component NAME beneath DIRFD,
 * never following a symlink. */
static int hostfs_openat2_mode(int dirfd, const char *name, int flags, mode_t mode)
{
	struct open_how how = {
	    .flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
	    .mode = flags & O_CREAT ? mode : 0,
	    .resolve = HOSTFS_RESOLVE,
	};
	long fd;

	do
		fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : (int)fd;
}

static int hostfs_openat2(int dirfd, const char *name, int flags)
{
	return hostfs_openat2_mode(dirfd, name, flags, 0);
}

static const struct vfs_inode_ops hostfs_inode_ops, hostfs_rw_inode_ops;

/* Wraps O_PATH descriptor FD (owned from here on, closed on failure) as a new inode, writable
 * when RW. */
static int hostfs_inode_new(int fd, bool rw, struct vfs_inode **out)
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
	hi->vfs.ops = rw ? &hostfs_rw_inode_ops : &hostfs_inode_ops;
	hi->rw = rw;
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
	err = hostfs_inode_new(fd, hostfs_i(dir)->rw, out);
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

/* Only a writable bind mount's files are opened for writing (hostfs_open refuses the rest); a
 * directory's descriptor is read-only on the host too, so its write fails there. */
static ssize_t hostfs_file_write(struct vfs_file *f, const struct iovec *iov, int iovcnt,
				 off_t *pos)
{
	int fd = hostfs_fd(f);
	ssize_t done = 0;

	if (!pos) {
		ssize_t n;
		do
			n = writev(fd, iov, iovcnt);
		while (n < 0 && errno == EINTR);
		return n < 0 ? -errno : n;
	}
	/* pwrite64 rather than pwritev: the one the Sentry's allowlist has. */
	for (int i = 0; i < iovcnt; i++) {
		size_t off = 0;
		while (off < iov[i].iov_len) {
			ssize_t n =
			    pwrite(fd, (char *)iov[i].iov_base + off, iov[i].iov_len - off, *pos);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return done ? done : -errno;
			if (n == 0)
				return done;
			off += (size_t)n;
			done += n;
			*pos += n;
		}
	}
	return done;
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

/* In the host kernel: no copy through the Sentry's memory. sendfile writes at TO_FD's own
 * position, which must be the caller's alone. */
static ssize_t hostfs_reg_copy_to_fd(struct vfs_file *f, int to_fd, off_t to_off, size_t len,
				     off_t off)
{
	size_t done = 0;

	if (lseek(to_fd, to_off, SEEK_SET) != to_off)
		return -errno;
	while (done < len) {
		ssize_t n = sendfile(to_fd, hostfs_fd(f), &off, len - done);

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
    .copy_to_fd = hostfs_reg_copy_to_fd,
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

/* The object of HI opened anew with FLAGS through its own descriptor (/proc/self/fd/N names
 * exactly that object, whatever happened to its name): for what has no parent to open it
 * beneath, and for the calls that take no descriptor of an O_PATH one. */
static int hostfs_proc_path(struct hostfs_inode *hi, char *buf, size_t size)
{
	return (size_t)snprintf(buf, size, "/proc/self/fd/%d", hi->fd) < size ? 0 : -ENAMETOOLONG;
}

static int hostfs_reopen(struct hostfs_inode *hi, int flags)
{
	char path[32];
	int fd;

	if (hostfs_proc_path(hi, path, sizeof(path)))
		return -ENAMETOOLONG;
	do
		fd = open(path, flags | O_CLOEXEC | O_NOCTTY);
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

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

	if (((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) && !hi->rw)
		return -EROFS;
	/* Truncation is the VFS's, through setattr, once the file is open. */
	int host_flags = (flags & (O_ACCMODE | O_APPEND)) | O_NONBLOCK;
	switch (ino->mode & S_IFMT) {
	case S_IFDIR:
		fd = hostfs_openat2(hi->fd, ".", O_RDONLY | O_DIRECTORY);
		ops = &hostfs_dir_ops;
		break;
	case S_IFREG:
		/* A bind mount of one file is its own root: re-opened through its descriptor. */
		fd = hi->parent ? hostfs_openat2(hi->parent->fd, hi->name, host_flags)
				: hostfs_reopen(hi, host_flags);
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

/* --- writable bind mounts ------------------------------------------------------------------ */

/* What the VFS asks of a writable host tree, as the *at calls on one name beneath a held
 * directory. New objects belong to the Sentry's host user (which has no capability to give
 * them another owner); their permission bits are set explicitly, past the Sentry's umask. */

static int hostfs_chmod(struct hostfs_inode *hi, mode_t mode)
{
	char path[32];

	if (hostfs_proc_path(hi, path, sizeof(path)))
		return -ENAMETOOLONG;
	return fchmodat(AT_FDCWD, path, mode & 07777, 0) ? -errno : 0;
}

static int hostfs_mknod(struct vfs_inode *dir, const char *name, const struct vfs_node_attr *attr)
{
	struct hostfs_inode *hd = hostfs_i(dir);
	mode_t perm = attr->mode & 07777;
	int fd;

	switch (attr->mode & S_IFMT) {
	case S_IFREG:
		fd = hostfs_openat2_mode(hd->fd, name, O_CREAT | O_EXCL | O_WRONLY, perm);
		if (fd < 0)
			return fd;
		break;
	case S_IFDIR:
		if (mkdirat(hd->fd, name, perm))
			return -errno;
		fd = hostfs_openat2(hd->fd, name, O_PATH);
		if (fd < 0)
			return fd;
		break;
	case S_IFLNK:
		return symlinkat(attr->target, hd->fd, name) ? -errno : 0;
	default:
		return -EPERM; /* devices, FIFOs, sockets: not made on the host */
	}
	char path[32];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int err = fchmodat(AT_FDCWD, path, perm, 0) ? -errno : 0;
	close(fd);
	return err;
}

static int hostfs_link(struct vfs_inode *dir, const char *name, struct vfs_inode *target)
{
	struct hostfs_inode *ht = hostfs_i(target);

	if (target->ops != dir->ops || !ht->parent)
		return -EXDEV;
	return linkat(ht->parent->fd, ht->name, hostfs_i(dir)->fd, name, 0) ? -errno : 0;
}

static int hostfs_unlink(struct vfs_inode *dir, const char *name, struct vfs_inode *victim)
{
	(void)victim;
	return unlinkat(hostfs_i(dir)->fd, name, 0) ? -errno : 0;
}

static int hostfs_rmdir(struct vfs_inode *dir, const char *name, struct vfs_inode *victim)
{
	(void)victim;
	return unlinkat(hostfs_i(dir)->fd, name, AT_REMOVEDIR) ? -errno : 0;
}

/* HI is now NAME in directory DIR: where a regular file is re-opened from. */
static int hostfs_moved(struct hostfs_inode *hi, struct hostfs_inode *dir, const char *name)
{
	char *copy = strdup(name);

	if (!copy)
		return -ENOMEM;
	free(hi->name);
	hi->name = copy;
	if (hi->parent != dir) {
		vfs_inode_get(&dir->vfs);
		if (hi->parent)
			vfs_inode_put(&hi->parent->vfs);
		hi->parent = dir;
	}
	return 0;
}

static int hostfs_rename(struct vfs_inode *odir, const char *oname, struct vfs_inode *src,
			 struct vfs_inode *ndir, const char *nname, struct vfs_inode *tgt,
			 unsigned int flags)
{
	struct hostfs_inode *ho = hostfs_i(odir), *hn = hostfs_i(ndir);

	if (ndir->ops != odir->ops)
		return -EXDEV;
	if (syscall(SYS_renameat2, ho->fd, oname, hn->fd, nname, flags))
		return -errno;
	if (src && src->ops == odir->ops)
		hostfs_moved(hostfs_i(src), hn, nname);
	if (tgt && tgt->ops == odir->ops && (flags & RENAME_EXCHANGE))
		hostfs_moved(hostfs_i(tgt), ho, oname);
	return 0;
}

static int hostfs_setattr(struct vfs_inode *ino, const struct vfs_setattr *a)
{
	struct hostfs_inode *hi = hostfs_i(ino);
	struct stat st;
	char path[32];
	int err;

	if ((a->valid & (VFS_ATTR_UID | VFS_ATTR_GID)) && fstat(hi->fd, &st) == 0 &&
	    (((a->valid & VFS_ATTR_UID) && a->uid != st.st_uid) ||
	     ((a->valid & VFS_ATTR_GID) && a->gid != st.st_gid)))
		return -EPERM; /* the Sentry has no capability to give a host file away */
	if ((a->valid & VFS_ATTR_MODE) && (err = hostfs_chmod(hi, a->mode)))
		return err;
	if (a->valid & VFS_ATTR_SIZE) {
		int fd = hostfs_reopen(hi, O_WRONLY | O_NONBLOCK);
		if (fd < 0)
			return fd;
		err = ftruncate(fd, a->size) ? -errno : 0;
		close(fd);
		if (err)
			return err;
	}
	if (a->valid & (VFS_ATTR_ATIME | VFS_ATTR_MTIME)) {
		struct timespec ts[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_nsec = UTIME_OMIT}};
		if (a->valid & VFS_ATTR_ATIME)
			ts[0] = a->atime;
		if (a->valid & VFS_ATTR_MTIME)
			ts[1] = a->mtime;
		if (hostfs_proc_path(hi, path, sizeof(path)))
			return -ENAMETOOLONG;
		if (utimensat(AT_FDCWD, path, ts, 0))
			return -errno;
	}
	return 0; /* ctime: the host keeps its own */
}

static const struct vfs_inode_ops hostfs_rw_inode_ops = {
    .lookup = hostfs_lookup,
    .getattr = hostfs_getattr,
    .readlink = hostfs_readlink,
    .open = hostfs_open,
    .release = hostfs_release,
    .statfs = hostfs_statfs,
    .mknod = hostfs_mknod,
    .link = hostfs_link,
    .unlink = hostfs_unlink,
    .rmdir = hostfs_rmdir,
    .rename = hostfs_rename,
    .setattr = hostfs_setattr,
};

int vfs_bind_root(int fd, bool rw, struct vfs_dentry **root)
{
	struct vfs_inode *ino;
	int err;

	err = hostfs_inode_new(fd, rw, &ino);
	if (err)
		return err;
	err = vfs_dentry_new_root(ino, root);
	if (err)
		vfs_inode_put(ino);
	return err;
}

int vfs_mount_host_root(const char *host_dir, struct vfs_dentry **root)
{
	struct vfs_inode *ino;
	int fd, err;

	fd = open(host_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = hostfs_inode_new(fd, false, &ino);
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

	if (!hostfs_is_inode(ino))
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

	if (!hostfs_is_inode(root)) {
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
	return ino->ops == &hostfs_inode_ops || ino->ops == &hostfs_rw_inode_ops;
}
