/* The overlay's upper layer as a host directory (`run --export-upper DIR`): what the sandbox
 * changed in its root filesystem, written out at the end in the form of an OCI image layer —
 * new and changed objects as they are, a deleted name NAME as an empty file `.wh.NAME`, a
 * directory whose lower contents are hidden with a `.wh..wh..opq` file in it — so that the
 * layer can be kept, inspected, or put on top of the rootfs by any tool that knows layers.
 * Every host object is made beneath a descriptor of its parent, one name at a time and never
 * following a symlink: the names come from the guest. */
#include "vfs/internal.h"

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
