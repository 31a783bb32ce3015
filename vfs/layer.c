/* The overlay's upper layer as a host directory (`run --export-upper DIR`, `--upper DIR`): what
 * the sandbox changed in its root filesystem, written out at the end in the form of an OCI
 * image layer — new and changed objects as they are, a deleted name NAME as an empty file
 * `.wh.NAME`, a directory whose lower contents are hidden with a `.wh..wh..opq` file in it — so
 * that the layer can be kept, inspected, or put on top of the rootfs by any tool that knows
 * layers; and such a layer applied to a sandbox's root at its start. Every host object is made
 * beneath a descriptor of its parent, one name at a time and never following a symlink: the
 * names come from the guest. */
#include "vfs/internal.h"
#include "vfs/dirent.h"

#include <dirent.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LAYER_COPY_CHUNK (64 * 1024)
#define LAYER_MAX_DEPTH 256
#define WHITEOUT_PREFIX ".wh."
#define OPAQUE_MARK ".wh..wh..opq"

struct export
{
	int dirfd;	      /* the host directory being filled */
	int depth;	      /* of DIRFD below the top */
	int err;	      /* the first error */
	char *buf;	      /* LAYER_COPY_CHUNK bytes */
	unsigned int skipped; /* devices, FIFOs and sockets: not made on the host */
};

static int create_beneath(int dirfd, const char *name, int flags, mode_t mode)
{
	struct open_how how = {
	    .flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
	    .mode = flags & O_CREAT ? mode : 0,
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

/* The permission bits and times of ST on host descriptor FD (past the Sentry's umask). */
static void set_attrs(int fd, const struct stat *st)
{
	char path[32];
	struct timespec ts[2] = {st->st_atim, st->st_mtim};

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	fchmodat(AT_FDCWD, path, st->st_mode & 07777, 0);
	utimensat(AT_FDCWD, path, ts, 0);
}

static int export_file(struct export *x, const char *name, struct vfs_inode *ino,
		       const struct stat *st)
{
	struct vfs_file *f = calloc(1, sizeof(*f));
	off_t off = 0;
	int fd, err;

	if (!f)
		return -ENOMEM;
	f->refs = 1;
	f->flags = O_RDONLY;
	f->seekable = true;
	if ((err = ino->ops->open(ino, f, O_RDONLY))) {
		free(f);
		return err;
	}
	fd = create_beneath(x->dirfd, name, O_CREAT | O_EXCL | O_WRONLY, 0600);
	if (fd < 0) {
		vfs_file_put(f);
		return fd;
	}
	for (;;) {
		ssize_t n = f->ops->pread_kernel(f, x->buf, LAYER_COPY_CHUNK, off);
		if (n <= 0) {
			err = (int)n;
			break;
		}
		if (pwrite(fd, x->buf, (size_t)n, off) != n) {
			err = -errno ? -errno : -EIO;
			break;
		}
		off += n;
	}
	if (!err && ftruncate(fd, st->st_size))
		err = -errno;
	if (!err)
		set_attrs(fd, st);
	close(fd);
	vfs_file_put(f);
	return err;
}

static int export_dir(struct export *x, struct vfs_inode *dir);

static int export_entry(const char *name, struct vfs_inode *ino, void *arg)
{
	struct export *x = arg;
	char wh[NAME_MAX + 1], target[4096];
	struct stat st;
	int fd, err;

	if (!ino) {
		/* A whiteout: a name of the lower layer deleted. */
		if (strlen(name) + sizeof(WHITEOUT_PREFIX) > sizeof(wh))
			return x->err = -ENAMETOOLONG;
		snprintf(wh, sizeof(wh), WHITEOUT_PREFIX "%s", name);
		fd = create_beneath(x->dirfd, wh, O_CREAT | O_EXCL | O_WRONLY, 0600);
		if (fd < 0)
			return x->err = fd;
		close(fd);
		return 0;
	}
	if ((err = ino->ops->getattr(ino, &st)))
		return x->err = err;
	switch (st.st_mode & S_IFMT) {
	case S_IFREG:
		err = export_file(x, name, ino, &st);
		break;
	case S_IFLNK: {
		ssize_t n = ino->ops->readlink(ino, target, sizeof(target) - 1);
		if (n < 0) {
			err = (int)n;
			break;
		}
		target[n] = 0;
		err = symlinkat(target, x->dirfd, name) ? -errno : 0;
		break;
	}
	case S_IFDIR: {
		if (x->depth >= LAYER_MAX_DEPTH)
			return x->err = -ELOOP;
		if (mkdirat(x->dirfd, name, 0700))
			return x->err = -errno;
		fd = create_beneath(x->dirfd, name, O_RDONLY | O_DIRECTORY, 0);
		if (fd < 0)
			return x->err = fd;
		int parent = x->dirfd;
		x->dirfd = fd;
		x->depth++;
		err = export_dir(x, ino);
		x->depth--;
		x->dirfd = parent;
		if (!err)
			set_attrs(fd, &st);
		close(fd);
		break;
	}
	default:
		x->skipped++;
		return 0;
	}
	if (err)
		x->err = err;
	return err;
}

static int export_dir(struct export *x, struct vfs_inode *dir)
{
	if (memfs_is_opaque(dir)) {
		int fd = create_beneath(x->dirfd, OPAQUE_MARK, O_CREAT | O_EXCL | O_WRONLY, 0600);
		if (fd < 0)
			return x->err = fd;
		close(fd);
	}
	memfs_foreach(dir, export_entry, x);
	return x->err;
}

int vfs_upper_export(int dirfd, unsigned int *skipped)
{
	struct vfs_inode *root = ovl_root_inode(), *upper;
	struct export x = {.dirfd = dirfd};
	struct stat st;

	if (!root || !(upper = ovl_upper(root)))
		return -ENOENT;
	if (!(x.buf = malloc(LAYER_COPY_CHUNK)))
		return -ENOMEM;
	export_dir(&x, upper);
	if (!x.err && upper->ops->getattr(upper, &st) == 0)
		set_attrs(dirfd, &st);
	free(x.buf);
	if (skipped)
		*skipped = x.skipped;
	return x.err;
}

/* --- applying a layer ---------------------------------------------------------------------- */

struct import {
	struct vfs_fs_ctx fs;
	char *buf; /* LAYER_COPY_CHUNK bytes */
	unsigned int skipped;
};

static int remove_tree(struct import *im, const char *path, int depth);

/* Removes every entry of guest directory PATH (whiteouts are left where the lower layer had
 * names). */
static int empty_dir(struct import *im, const char *path, int depth)
{
	struct vfs_file *f;
	off_t pos = 0;
	bool removed = false;
	char *names;
	int err;

	if (!(names = malloc(LAYER_COPY_CHUNK)))
		return -ENOMEM;
	if ((err = vfs_open(&im->fs, NULL, path, O_RDONLY | O_DIRECTORY, 0, &f))) {
		free(names);
		return err;
	}
	for (;;) {
		ssize_t n = f->ops->getdents64(f, names, LAYER_COPY_CHUNK, &pos);
		if (n < 0) {
			err = (int)n;
			break;
		}
		if (n == 0) {
			/* Entries removed while reading: read again until a pass removes none. */
			if (!removed)
				break;
			removed = false;
			pos = 0;
			continue;
		}
		for (ssize_t off = 0; off < n;) {
			struct vfs_dirent64 *de = (struct vfs_dirent64 *)(names + off);
			char child[PATH_MAX];
			off += de->d_reclen;
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if ((size_t)snprintf(child, sizeof(child), "%s/%s", path, de->d_name) >=
			    sizeof(child)) {
				err = -ENAMETOOLONG;
				break;
			}
			if ((err = remove_tree(im, child, depth + 1)))
				break;
			removed = true;
		}
		if (err)
			break;
	}
	vfs_file_put(f);
	free(names);
	return err;
}

/* Removes guest PATH whatever it is (a directory with everything in it); ENOENT is fine. */
static int remove_tree(struct import *im, const char *path, int depth)
{
	struct vfs_dentry *d;
	int err;

	if (depth > LAYER_MAX_DEPTH)
		return -ELOOP;
	err = vfs_lookup(&im->fs, NULL, path, 0, &d);
	if (err)
		return err == -ENOENT ? 0 : err;
	bool dir = vfs_is_dir(d);
	vfs_dentry_put(d);
	if (!dir)
		return vfs_unlink(&im->fs, NULL, NULL, path);
	if ((err = empty_dir(im, path, depth)))
		return err;
	return vfs_rmdir(&im->fs, NULL, NULL, path);
}

/* Owner, mode and times of host object ST on guest PATH. */
static void copy_attrs(struct import *im, const char *path, const struct stat *st, bool follow)
{
	struct vfs_dentry *d;
	struct timespec ts[2] = {st->st_atim, st->st_mtim};

	if (vfs_lookup(&im->fs, NULL, path, follow ? VFS_LOOKUP_FOLLOW : 0, &d))
		return;
	vfs_chown(d, NULL, st->st_uid, st->st_gid);
	if (!S_ISLNK(st->st_mode))
		vfs_chmod(d, NULL, st->st_mode & 07777);
	vfs_utimens(d, NULL, ts);
	vfs_dentry_put(d);
}

static int import_file(struct import *im, int dirfd, const char *name, const char *path,
		       const struct stat *st)
{
	struct vfs_file *f;
	off_t pos = 0;
	int fd, err;

	if ((fd = create_beneath(dirfd, name, O_RDONLY, 0)) < 0)
		return fd;
	err = vfs_open(&im->fs, NULL, path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600, &f);
	if (err) {
		close(fd);
		return err;
	}
	for (;;) {
		ssize_t n = read(fd, im->buf, LAYER_COPY_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : 0;
			break;
		}
		struct iovec iov = {im->buf, (size_t)n};
		ssize_t w = f->ops->write(f, &iov, 1, &pos);
		if (w != n) {
			err = w < 0 ? (int)w : -EIO;
			break;
		}
	}
	close(fd);
	vfs_file_put(f);
	if (!err)
		copy_attrs(im, path, st, false);
	return err;
}

static int import_dir(struct import *im, int dirfd, const char *path, int depth);

/* One entry NAME of host directory DIRFD onto guest directory PATH. */
static int import_entry(struct import *im, int dirfd, const char *path, const char *name, int depth)
{
	char guest[PATH_MAX], target[PATH_MAX];
	struct vfs_dentry *d;
	struct stat st;
	int err;

	if (!strcmp(name, OPAQUE_MARK))
		return 0; /* done first, by import_dir */
	bool whiteout = !strncmp(name, WHITEOUT_PREFIX, strlen(WHITEOUT_PREFIX));
	const char *real = whiteout ? name + strlen(WHITEOUT_PREFIX) : name;
	if (!*real || !strcmp(real, ".") || !strcmp(real, ".."))
		return 0;
	if ((size_t)snprintf(guest, sizeof(guest), "%s/%s", strcmp(path, "/") ? path : "", real) >=
	    sizeof(guest))
		return -ENAMETOOLONG;
	if (whiteout)
		return remove_tree(im, guest, depth);
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	/* What is there already and is of another kind goes first. */
	if (vfs_lookup(&im->fs, NULL, guest, 0, &d) == 0) {
		bool same = S_ISDIR(st.st_mode) && vfs_is_dir(d);
		vfs_dentry_put(d);
		if (!same && (err = remove_tree(im, guest, depth)))
			return err;
	}
	switch (st.st_mode & S_IFMT) {
	case S_IFDIR: {
		err = vfs_mkdir(&im->fs, NULL, NULL, guest, 0700);
		if (err && err != -EEXIST)
			return err;
		int fd = create_beneath(dirfd, name, O_RDONLY | O_DIRECTORY, 0);
		if (fd < 0)
			return fd;
		err = import_dir(im, fd, guest, depth + 1);
		close(fd);
		if (!err)
			copy_attrs(im, guest, &st, true);
		return err;
	}
	case S_IFREG:
		return import_file(im, dirfd, name, guest, &st);
	case S_IFLNK: {
		ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = 0;
		if ((err = vfs_symlink(&im->fs, NULL, target, NULL, guest)))
			return err;
		copy_attrs(im, guest, &st, false);
		return 0;
	}
	default:
		im->skipped++;
		return 0;
	}
}

static int import_dir(struct import *im, int dirfd, const char *path, int depth)
{
	struct dirent *de;
	struct stat st;
	int err = 0, fd;
	DIR *d;

	if (depth > LAYER_MAX_DEPTH)
		return -ELOOP;
	/* An opaque directory hides all that is below it: the lower names go first. */
	if (fstatat(dirfd, OPAQUE_MARK, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (err = empty_dir(im, path, depth)))
		return err;
	if ((fd = dup(dirfd)) < 0)
		return -errno;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return -errno;
	}
	while (!err && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			err = import_entry(im, dirfd, path, de->d_name, depth);
	closedir(d);
	return err;
}

int vfs_upper_import(struct vfs_dentry *root, int dirfd, unsigned int *skipped)
{
	struct import im = {.fs = {.root = root, .cwd = root, .umask = 0}};
	int err;

	if (!(im.buf = malloc(LAYER_COPY_CHUNK)))
		return -ENOMEM;
	err = import_dir(&im, dirfd, "/", 0);
	free(im.buf);
	if (skipped)
		*skipped = im.skipped;
	return err;
}
