/* Open file descriptions: vfs_open (the open(2) decisions, checked in the order Linux checks
 * them so errors match), the get/put pair, and lseek. A file's operations come from its
 * inode's filesystem; O_PATH files get the stub table here, since they are never opened on
 * the host. Creating and truncating go through the filesystem's write-side inode operations;
 * a filesystem without them is read-only and answers -EROFS. */
#include "vfs/internal.h"
#include "vfs/inotify.h"
#include "vfs/save.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The kernel's O_LARGEFILE, which it forces on for 64-bit opens and F_GETFL reports; glibc
 * defines O_LARGEFILE as 0 on x86_64. */
#define VFS_O_LARGEFILE 0100000

/* Flags that only matter while opening; Linux drops them from the file's F_GETFL flags. */
#define VFS_OPEN_ONLY_FLAGS (O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC)

struct vfs_file *vfs_file_get(struct vfs_file *f)
{
	f->refs++;
	return f;
}

/* F->ops is NULL for a file whose open failed: there is nothing to release then. Epolls
 * watching F drop their items first, as Linux's do when a file's last reference goes. */
void vfs_file_put(struct vfs_file *f)
{
	if (!f || --f->refs > 0)
		return;
	if (f->epoll_links)
		vfs_epoll_file_released(f);
	if (f->fasync) {
		waitq_remove(&f->fasync->w);
		free(f->fasync);
	}
	if (f->ops && f->dentry)
		vfs_notify_close(f);
	if (f->ops && f->ops->release)
		f->ops->release(f);
	if (f->dentry)
		vfs_dentry_put(f->dentry);
	free(f);
}

static ssize_t path_file_rw(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	(void)f, (void)iov, (void)iovcnt, (void)pos;
	return -EBADF;
}

static ssize_t path_file_getdents64(struct vfs_file *f, void *buf, size_t size, off_t *pos)
{
	(void)f, (void)buf, (void)size, (void)pos;
	return -EBADF;
}

static long path_file_ioctl(struct vfs_file *f, unsigned int cmd, void *arg)
{
	(void)f, (void)cmd, (void)arg;
	return -EBADF;
}

static int path_file_getattr(struct vfs_file *f, struct stat *st)
{
	return vfs_stat(f->dentry, st);
}

static int path_file_host_fd(struct vfs_file *f)
{
	(void)f;
	return -1;
}

static ssize_t path_file_pread_kernel(struct vfs_file *f, void *buf, size_t len, off_t off)
{
	(void)f, (void)buf, (void)len, (void)off;
	return -EBADF;
}

ssize_t vfs_dir_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	(void)f, (void)iov, (void)iovcnt, (void)pos;
	return -EISDIR;
}

ssize_t vfs_dir_write(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	(void)f, (void)iov, (void)iovcnt, (void)pos;
	return -EBADF; /* a directory is never open for writing */
}

ssize_t vfs_dir_pread_kernel(struct vfs_file *f, void *buf, size_t len, off_t off)
{
	(void)f, (void)buf, (void)len, (void)off;
	return -EISDIR;
}

/* An O_PATH file: usable for fstat and as a dirfd, nothing else. */
static const struct vfs_file_ops path_file_ops = {
    .read = path_file_rw,
    .write = path_file_rw,
    .getdents64 = path_file_getdents64,
    .ioctl = path_file_ioctl,
    .getattr = path_file_getattr,
    .host_fd = path_file_host_fd,
    .pread_kernel = path_file_pread_kernel,
};

/* An O_PATH file is its dentry and flags, which vfs_file_save writes. */
const struct vfs_file_kind vfs_path_file_kind = {
    .name = "path",
    .ops = &path_file_ops,
    .save = vfs_file_save_none,
    .load = vfs_file_load_none,
};

/* A new file on D (taking a reference of its own) with F_GETFL flags FLAGS. */
static struct vfs_file *file_alloc(struct vfs_dentry *d, int flags)
{
	struct vfs_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->refs = 1;
	f->flags = flags;
	f->dentry = vfs_dentry_get(d);
	return f;
}

static int open_path_file(struct vfs_dentry *d, int flags, struct vfs_file **out)
{
	struct vfs_file *f = file_alloc(d, flags & (O_PATH | O_DIRECTORY | O_NOFOLLOW));

	if (!f)
		return -ENOMEM;
	f->ops = &path_file_ops;
	*out = f;
	return 0;
}

/* Linux's may_open and the checks before it, for an existing D. A file just created by this
 * open skips the permission check (open(O_CREAT|O_WRONLY, 0444) works once). */
static int may_open(struct vfs_dentry *d, const struct vfs_cred *cred, int flags, bool created)
{
	bool write = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
	int mask = ((flags & O_ACCMODE) != O_WRONLY ? R_OK : 0) | (write ? W_OK : 0);

	if ((flags & O_CREAT) && vfs_is_dir(d))
		return -EISDIR;
	if ((flags & O_DIRECTORY) && !vfs_is_dir(d))
		return -ENOTDIR;
	switch (d->inode->mode & S_IFMT) {
	case S_IFLNK:
		return -ELOOP;
	case S_IFDIR:
		if (write)
			return -EISDIR;
		break;
	case S_IFREG:
		if (write && vfs_inode_rdonly(d->inode))
			return -EROFS;
		break;
	default:
		break; /* devices, fifos and sockets: the filesystem's open decides */
	}
	if (created)
		return 0;
	if ((flags & O_ACCMODE) == 3)
		mask = R_OK | W_OK; /* Linux's "ioctl only" mode still needs both */
	return vfs_inode_permission(d->inode, cred, mask);
}

/* The last component LAST of an O_CREAT path, in DIR: the existing dentry, or a regular file
 * created where the filesystem allows (-EROFS where it does not), and *CREATED says so. A
 * name with something mounted on it is what is mounted there. */
static int creat_last(struct vfs_walk *w, struct vfs_dentry *dir, const struct vfs_last *last,
		      int flags, mode_t mode, struct vfs_dentry **out, bool *created)
{
	struct vfs_dentry *d;
	int err;

	if (last->type != VFS_LAST_NORM || last->trailing_slash) {
		/* ".." is still a step, which the walk's restrictions may refuse (Linux's
		 * handle_dots comes before do_open). */
		if (last->type == VFS_LAST_DOTDOT && (err = vfs_walk_path(w, dir, "..", &d, NULL)))
			return err;
		if (last->type == VFS_LAST_DOTDOT)
			vfs_dentry_put(d);
		/* "." or "dir/" exists: O_EXCL says so first, as Linux's do_open does. */
		return (flags & O_EXCL) && last->type != VFS_LAST_NORM ? -EEXIST : -EISDIR;
	}
	err = vfs_may_lookup_cred(dir, w->cred);
	if (!err)
		err = vfs_dentry_child(dir, last->name, &d);
	if (err == -ENOENT) {
		err = vfs_create_in(dir, w->cred, last->name, mode);
		if (!err)
			err = vfs_dentry_child(dir, last->name, &d);
		*created = !err;
	}
	if (err)
		return err;
	err = vfs_walk_enter(w, &d);
	if (!err && (flags & O_EXCL) && !*created)
		err = -EEXIST;
	if (err) {
		vfs_dentry_put(d);
		return err;
	}
	*out = d;
	return 0;
}

/* O_CREAT: walk to the parent, then look at the last name without following it, as Linux
 * does; an existing symlink is followed (unless O_NOFOLLOW) by walking its target the same
 * way, in the same walk (the symlink budget and RESOLVE restrictions carry over). A magic
 * link is the result itself, as without O_CREAT: vfs_open opens the object it names. */
static int open_creat_lookup(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred,
			     struct vfs_dentry *start, const char *path, int flags, mode_t mode,
			     int resolve, struct vfs_dentry **out, bool *created)
{
	struct vfs_dentry *base = start ? vfs_dentry_get(start) : NULL, *dir, *d;
	char *target = NULL; /* a final symlink's target */
	const char *p = path;
	struct vfs_last last;
	struct vfs_walk w;
	int err;

	vfs_walk_begin(&w, fs, cred, start, resolve | VFS_LOOKUP_FOLLOW);
	for (;;) {
		err = vfs_walk_path(&w, base, p, &dir, &last);
		if (base)
			vfs_dentry_put(base);
		base = NULL;
		if (err)
			break;
		err = creat_last(&w, dir, &last, flags, mode, &d, created);
		if (err) {
			vfs_dentry_put(dir);
			break;
		}
		if (!S_ISLNK(d->inode->mode) || (flags & O_NOFOLLOW)) {
			*out = d;
			vfs_dentry_put(dir);
			break;
		}
		if (!target && !(target = malloc(PATH_MAX)))
			err = -ENOMEM;
		if (!err)
			err = vfs_walk_follow(&w, dir, d, target, &base, &p);
		vfs_dentry_put(dir);
		if (!err && !p) {
			/* A magic link the walk may follow: the caller opens its object. */
			vfs_dentry_put(base);
			*out = d;
			break;
		}
		vfs_dentry_put(d);
		if (err)
			break;
	}
	free(target);
	vfs_walk_end(&w);
	return err;
}

static int open_truncate(struct vfs_dentry *d)
{
	struct vfs_setattr attr = {.valid = VFS_ATTR_SIZE | VFS_ATTR_MTIME | VFS_ATTR_CTIME};

	attr.mtime = attr.ctime = vfs_now();
	return vfs_setattr_dentry(d, &attr);
}

/* O_TMPFILE would create an unnamed file in the directory: never possible here. */
/* O_TMPFILE: a file created in the directory and unlinked at once, so it has no name and
 * goes with its last descriptor. Filesystems that cannot create files refuse (EOPNOTSUPP,
 * or EROFS for the read-only host tree). */
static int open_tmpfile(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred,
			struct vfs_dentry *start, const char *path, int flags, mode_t mode,
			int resolve, struct vfs_file **out)
{
	static unsigned long seq;
	struct vfs_dentry *d;
	char name[48];
	int err;

	if ((flags & (O_TMPFILE | O_CREAT)) != O_TMPFILE || (flags & O_ACCMODE) == O_RDONLY)
		return -EINVAL;
	err = vfs_lookup_cred(fs, cred, start, path,
			      resolve | VFS_LOOKUP_FOLLOW | VFS_LOOKUP_DIRECTORY, &d);
	if (err)
		return err;
	snprintf(name, sizeof(name), ".minisentry-tmpfile-%lu", seq++);
	int open_flags = (flags & ~O_TMPFILE) | O_CREAT | O_EXCL;
	err = vfs_open_cred(fs, cred, d, name, open_flags, mode, out);
	if (!err) {
		vfs_unlink(fs, cred, d, name);
		/* Without O_EXCL, linkat(fd, "", ..., AT_EMPTY_PATH) may name it later. */
		if (!(flags & O_EXCL) && (*out)->dentry)
			memfs_set_linkable(vfs_memfs_inode((*out)->dentry->inode));
	}
	vfs_dentry_put(d);
	return err;
}

int vfs_open(const struct vfs_fs_ctx *fs, struct vfs_dentry *start, const char *path, int flags,
	     mode_t mode, struct vfs_file **out)
{
	return vfs_open_cred(fs, NULL, start, path, flags, mode, out);
}

int vfs_open_cred(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred,
		  struct vfs_dentry *start, const char *path, int flags, mode_t mode,
		  struct vfs_file **out)
{
	return vfs_open_resolve(fs, cred, start, path, flags, mode, 0, out);
}

int vfs_open_resolve(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred,
		     struct vfs_dentry *start, const char *path, int flags, mode_t mode,
		     int resolve, struct vfs_file **out)
{
	int lookup_flags = resolve | (flags & O_NOFOLLOW ? 0 : VFS_LOOKUP_FOLLOW) |
			   (flags & O_DIRECTORY ? VFS_LOOKUP_DIRECTORY : 0);
	bool created = false;
	struct vfs_dentry *d;
	struct vfs_file *f;
	int err;

	if (flags & O_PATH) {
		err = vfs_lookup_cred(fs, cred, start, path, lookup_flags, &d);
		if (err)
			return err;
		err = open_path_file(d, flags, out);
		goto out_d;
	}
	if ((flags & O_TMPFILE) == O_TMPFILE)
		return open_tmpfile(fs, cred, start, path, flags, mode, resolve, out);
	if ((flags & (O_CREAT | O_DIRECTORY)) == (O_CREAT | O_DIRECTORY))
		return -EINVAL;

	if (flags & O_CREAT)
		err = open_creat_lookup(fs, cred, start, path, flags, mode, resolve, &d, &created);
	else
		err = vfs_lookup_cred(
		    fs, cred, start, path,
		    lookup_flags | (lookup_flags & VFS_LOOKUP_FOLLOW ? VFS_LOOKUP_MAGIC_LAST : 0),
		    &d);
	if (err)
		return err;
	if (S_ISLNK(d->inode->mode) && !(flags & O_NOFOLLOW)) {
		/* A magic link: open the object it names. */
		struct vfs_dentry *obj;
		struct vfs_file *anon;
		err = d->inode->ops->magic_dentry(d->inode, &obj);
		vfs_dentry_put(d);
		if (err)
			return err;
		anon = vfs_anon_file(obj);
		if (anon) {
			err = anon->ops->reopen ? anon->ops->reopen(anon, flags, out) : -ENXIO;
			vfs_dentry_put(obj);
			return err;
		}
		d = obj;
		if ((flags & O_DIRECTORY) && !vfs_is_dir(d)) {
			err = -ENOTDIR;
			goto out_d;
		}
	}
	err = may_open(d, cred, flags, created);
	if (err)
		goto out_d;

	f = file_alloc(d, (flags & ~VFS_OPEN_ONLY_FLAGS) | VFS_O_LARGEFILE);
	if (!f) {
		err = -ENOMEM;
		goto out_d;
	}
	f->seekable = true; /* the filesystem's open clears it for streams */
	err = d->inode->ops->open(d->inode, f, flags);
	if (!err)
		vfs_notify_open(f); /* before the truncation's IN_MODIFY, as Linux */
	/* Truncation follows the open, as Linux's handle_truncate: an overlay file is copied up
	 * by the open for writing first. */
	if (!err && (flags & O_TRUNC) && S_ISREG(d->inode->mode) && !created)
		err = open_truncate(d);
	if (err) {
		vfs_file_put(f);
		goto out_d;
	}
	*out = f;
out_d:
	vfs_dentry_put(d);
	return err;
}

off_t vfs_lseek(struct vfs_file *f, off_t off, int whence)
{
	bool dir = f->dentry && vfs_is_dir(f->dentry);
	struct stat st;
	off_t base, res;
	int err;

	if (f->flags & O_PATH)
		return -EBADF;
	if (whence < SEEK_SET || whence > SEEK_HOLE)
		return -EINVAL; /* before ESPIPE, as ksys_lseek checks */
	if (f->ops->llseek)
		return f->ops->llseek(f, off, whence);
	if (!f->seekable)
		return -ESPIPE;

	switch (whence) {
	case SEEK_SET:
		base = 0;
		break;
	case SEEK_CUR:
		base = f->pos;
		break;
	case SEEK_END:
	case SEEK_DATA:
	case SEEK_HOLE:
		/* A directory's offset is a cookie, not a byte count: it has no end to seek to. */
		if (dir)
			return -EINVAL;
		err = f->ops->getattr(f, &st);
		if (err)
			return err;
		if (whence == SEEK_END) {
			base = st.st_size;
			break;
		}
		/* No holes are reported: the data runs from anywhere to the end of the file. */
		if (off < 0 || off >= st.st_size)
			return -ENXIO;
		f->pos = whence == SEEK_DATA ? off : st.st_size;
		return f->pos;
	default:
		return -EINVAL;
	}
	if (__builtin_add_overflow(base, off, &res) || res < 0)
		return -EINVAL;
	f->pos = res;
	return res;
}

/* D opened for reading as the Sentry, in *F. */
static int dentry_open_kernel(struct vfs_dentry *d, struct vfs_file **f)
{
	int err;

	if (!d->inode || !S_ISREG(d->inode->mode))
		return -EINVAL;
	if (!(*f = file_alloc(d, O_RDONLY | VFS_O_LARGEFILE)))
		return -ENOMEM;
	(*f)->seekable = true;
	if ((err = d->inode->ops->open(d->inode, *f, O_RDONLY))) {
		(*f)->ops = NULL; /* nothing to release */
		vfs_file_put(*f);
		return err;
	}
	return 0;
}

ssize_t vfs_dentry_copy_to_fd(struct vfs_dentry *d, int to_fd, off_t to_off, size_t len, off_t off)
{
	struct vfs_file *f;
	int err = dentry_open_kernel(d, &f);

	if (err)
		return err;
	ssize_t n = f->ops->copy_to_fd ? f->ops->copy_to_fd(f, to_fd, to_off, len, off) : -ENOTSUP;
	vfs_file_put(f);
	return n;
}

ssize_t vfs_dentry_pread(struct vfs_dentry *d, void *buf, size_t len, off_t off)
{
	struct vfs_file *f;
	size_t done = 0;
	int err = dentry_open_kernel(d, &f);

	if (err)
		return err;
	while (done < len && f->ops->pread_kernel) {
		ssize_t n = f->ops->pread_kernel(f, (char *)buf + done, len - done, off + done);
		if (n < 0) {
			vfs_file_put(f);
			return n;
		}
		if (n == 0)
			break;
		done += n;
	}
	vfs_file_put(f);
	return done;
}
