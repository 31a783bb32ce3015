/* Syscalls that change the filesystem tree or a file's attributes: mkdir, mknod, unlink,
 * rmdir, rename, link, symlink, chmod, chown, truncate, fallocate, the utime family, creat,
 * statfs, the sync family and chroot. Each fetches its arguments, resolves dirfds, and calls
 * the VFS write side (vfs/namei.c) with the task's credentials. */
#include <errno.h>
#include <sys/mount.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <unistd.h>
#include <utime.h>

#include "common/units.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "vfs/vfs.h"

/* The credentials file operations are checked against: the effective ids (there is no
 * separate fsuid yet). */
static struct vfs_cred cred_of(struct task *t)
{
	return task_fs_cred(t);
}

/* The file behind FD for the f*() attribute calls: O_PATH files are refused, as on Linux. */
static long do_mkdirat(struct task *t, int dirfd, uintptr_t path_addr, mode_t mode)
{
	struct vfs_cred cred = cred_of(t);
	struct vfs_dentry *start;
	char path[PATH_MAX];
	long err = arg_path_at(t, dirfd, path_addr, 0, path, &start);

	if (err)
		return err;
	return vfs_mkdir(t->fs, &cred, start, path, mode & 07777 & ~t->fs->umask);
}

long sys_mkdir(struct task *t, const unsigned long *a)
{
	return do_mkdirat(t, AT_FDCWD, a[0], arg_uint(a, 1));
}

long sys_mkdirat(struct task *t, const unsigned long *a)
{
	return do_mkdirat(t, arg_int(a, 0), a[1], arg_uint(a, 2));
}

static long do_mknodat(struct task *t, int dirfd, uintptr_t path_addr, mode_t mode, dev_t dev)
{
	struct vfs_cred cred = cred_of(t);
	struct vfs_dentry *start;
	char path[PATH_MAX];
	long err = arg_path_at(t, dirfd, path_addr, 0, path, &start);

	if (err)
		return err;
	return vfs_mknod(t->fs, &cred, start, path,
			 (mode & S_IFMT) | (mode & 07777 & ~t->fs->umask), dev);
}

long sys_mknod(struct task *t, const unsigned long *a)
{
	return do_mknodat(t, AT_FDCWD, a[0], arg_uint(a, 1), arg_uint(a, 2));
}

long sys_mknodat(struct task *t, const unsigned long *a)
{
	return do_mknodat(t, arg_int(a, 0), a[1], arg_uint(a, 2), arg_uint(a, 3));
}

static long do_unlinkat(struct task *t, int dirfd, uintptr_t path_addr, int flags)
{
	struct vfs_cred cred = cred_of(t);
	struct vfs_dentry *start;
	char path[PATH_MAX];
	long err;

	if (flags & ~AT_REMOVEDIR)
		return -EINVAL;
	err = arg_path_at(t, dirfd, path_addr, 0, path, &start);
	if (err)
		return err;
	if (flags & AT_REMOVEDIR)
		return vfs_rmdir(t->fs, &cred, start, path);
	return vfs_unlink(t->fs, &cred, start, path);
}

long sys_unlink(struct task *t, const unsigned long *a)
{
	return do_unlinkat(t, AT_FDCWD, a[0], 0);
}

long sys_unlinkat(struct task *t, const unsigned long *a)
{
	return do_unlinkat(t, arg_int(a, 0), a[1], arg_int(a, 2));
}

long sys_rmdir(struct task *t, const unsigned long *a)
{
	return do_unlinkat(t, AT_FDCWD, a[0], AT_REMOVEDIR);
}

static long do_renameat2(struct task *t, int ofd, uintptr_t opath_addr, int nfd,
			 uintptr_t npath_addr, unsigned int flags)
{
	struct vfs_cred cred = cred_of(t);
	struct vfs_dentry *ostart, *nstart;
	char opath[PATH_MAX], npath[PATH_MAX];
	long err;

	if ((err = arg_path_at(t, ofd, opath_addr, 0, opath, &ostart)) ||
	    (err = arg_path_at(t, nfd, npath_addr, 0, npath, &nstart)))
		return err;
	return vfs_rename(t->fs, &cred, ostart, opath, nstart, npath, flags);
}

long sys_rename(struct task *t, const unsigned long *a)
{
	return do_renameat2(t, AT_FDCWD, a[0], AT_FDCWD, a[1], 0);
}

long sys_renameat(struct task *t, const unsigned long *a)
{
	return do_renameat2(t, arg_int(a, 0), a[1], arg_int(a, 2), a[3], 0);
}

long sys_renameat2(struct task *t, const unsigned long *a)
{
	return do_renameat2(t, arg_int(a, 0), a[1], arg_int(a, 2), a[3], arg_uint(a, 4));
}

static long do_linkat(struct task *t, int ofd, uintptr_t opath_addr, int nfd, uintptr_t npath_addr,
		      int flags)
{
	struct vfs_cred cred = cred_of(t);
	struct vfs_dentry *old, *nstart;
	char npath[PATH_MAX];
	long err;

	if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	if ((flags & AT_EMPTY_PATH) && t->euid != 0)
		return -ENOENT; /* Linux wants CAP_DAC_READ_SEARCH for it */
	err = arg_lookup(t, ofd, opath_addr,
			 (flags & AT_EMPTY_PATH) | ARG_NULL_IS_EMPTY |
			     (flags & AT_SYMLINK_FOLLOW ? 0 : AT_SYMLINK_NOFOLLOW),
			 &old, NULL);
	if (err)
		return err;
	err = arg_path_at(t, nfd, npath_addr, 0, npath, &nstart);
	if (!err)
		err = vfs_link(t->fs, &cred, old, nstart, npath);
	vfs_dentry_put(old);
	return err;
}

long sys_link(struct task *t, const unsigned long *a)
{
	return do_linkat(t, AT_FDCWD, a[0], AT_FDCWD, a[1], 0);
}

long sys_linkat(struct task *t, const unsigned long *a)
{
	return do_linkat(t, arg_int(a, 0), a[1], arg_int(a, 2), a[3], arg_int(a, 4));
}

static long do_symlinkat(struct task *t, uintptr_t target_addr, int dirfd, uintptr_t path_addr)
{
	struct vfs_cred cred = cred_of(t);
	char target[PATH_MAX], path[PATH_MAX];
	struct vfs_dentry *start;
	long err;

	if ((err = arg_path(t, target_addr, target)) ||
	    (err = arg_path_at(t, dirfd, path_addr, 0, path, &start)))
		return err;
	return vfs_symlink(t->fs, &cred, target, start, path);
}

long sys_symlink(struct task *t, const unsigned long *a)
{
	return do_symlinkat(t, a[0], AT_FDCWD, a[1]);
}

long sys_symlinkat(struct task *t, const unsigned long *a)
{
	return do_symlinkat(t, a[0], arg_int(a, 1), a[2]);
}

static long chmod_dentry(struct task *t, struct vfs_dentry *d, mode_t mode)
{
	struct vfs_cred cred = cred_of(t);
	long err = vfs_chmod(d, &cred, mode);

	vfs_dentry_put(d);
	return err;
}

long sys_chmod(struct task *t, const unsigned long *a)
{
	struct vfs_dentry *d;
	long err = arg_lookup(t, AT_FDCWD, a[0], 0, &d, NULL);

	return err ? err : chmod_dentry(t, d, arg_uint(a, 1));
}

long sys_fchmodat(struct task *t, const unsigned long *a)
{
	struct vfs_dentry *d;
	long err = arg_lookup(t, arg_int(a, 0), a[1], 0, &d, NULL);

	return err ? err : chmod_dentry(t, d, arg_uint(a, 2));
}

long sys_fchmod(struct task *t, const unsigned long *a)
{
	struct vfs_file *f = arg_file_nopath(t, arg_int(a, 0));
	struct vfs_cred cred = cred_of(t);

	/* A pipe's or socket's inode is its pipefs or sockfs one (vfs_file_chmod). */
	return f ? vfs_file_chmod(f, &cred, arg_uint(a, 1)) : -EBADF;
}

static long chown_dentry(struct task *t, struct vfs_dentry *d, uid_t uid, gid_t gid)
{
	struct vfs_cred cred = cred_of(t);
	long err = vfs_chown(d, &cred, uid, gid);

	vfs_dentry_put(d);
	return err;
}

long sys_chown(struct task *t, const unsigned long *a)
{
	struct vfs_dentry *d;
	long err = arg_lookup(t, AT_FDCWD, a[0], 0, &d, NULL);

	return err ? err : chown_dentry(t, d, arg_uint(a, 1), arg_uint(a, 2));
}

long sys_lchown(struct task *t, const unsigned long *a)
{
	struct vfs_dentry *d;
	long err = arg_lookup(t, AT_FDCWD, a[0], AT_SYMLINK_NOFOLLOW, &d, NULL);

	return err ? err : chown_dentry(t, d, arg_uint(a, 1), arg_uint(a, 2));
}

long sys_fchownat(struct task *t, const unsigned long *a)
{
	int flags = arg_int(a, 4);
	struct vfs_dentry *d;
	long err;

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	err = arg_lookup(t, arg_int(a, 0), a[1], flags | ARG_NULL_IS_EMPTY, &d, NULL);
	return err ? err : chown_dentry(t, d, arg_uint(a, 2), arg_uint(a, 3));
}

long sys_fchown(struct task *t, const unsigned long *a)
{
	struct vfs_file *f = arg_file_nopath(t, arg_int(a, 0));
	struct vfs_cred cred = cred_of(t);

	return f ? vfs_file_chown(f, &cred, arg_uint(a, 1), arg_uint(a, 2)) : -EBADF;
}

long sys_truncate(struct task *t, const unsigned long *a)
{
	struct vfs_cred cred = cred_of(t);
	struct vfs_dentry *d;
	long err;

	if (arg_long(a, 1) < 0)
		return -EINVAL;
	err = arg_lookup(t, AT_FDCWD, a[0], 0, &d, NULL);
	if (err)
		return err;
	struct stat st;
	if (!vfs_stat(d, &st) && S_ISREG(st.st_mode))
		err = task_fsize_check(t, st.st_size, arg_long(a, 1));
	if (!err)
		err = vfs_truncate(d, &cred, arg_long(a, 1));
	vfs_dentry_put(d);
	return err;
}

long sys_ftruncate(struct task *t, const unsigned long *a)
{
	struct vfs_file *f = arg_file(t, arg_int(a, 0));

	struct stat st;
	long err;

	if (!f)
		return -EBADF;
	if (arg_long(a, 1) >= 0 && (f->flags & O_ACCMODE) != O_RDONLY && f->ops->getattr &&
	    !f->ops->getattr(f, &st) && S_ISREG(st.st_mode) &&
	    (err = task_fsize_check(t, st.st_size, arg_long(a, 1))))
		return err;
	return vfs_ftruncate(f, arg_long(a, 1));
}

long sys_fallocate(struct task *t, const unsigned long *a)
{
	struct vfs_file *f = arg_file(t, arg_int(a, 0));

	off_t off = arg_long(a, 2), len = arg_long(a, 3);
	struct stat st;
	long err;

	if (!f)
		return -EBADF;
	if (!(arg_int(a, 1) & FALLOC_FL_KEEP_SIZE) && off >= 0 && len > 0 &&
	    off <= INT64_MAX - len && (f->flags & O_ACCMODE) != O_RDONLY && f->ops->getattr &&
	    !f->ops->getattr(f, &st) && S_ISREG(st.st_mode) &&
	    (err = task_fsize_check(t, st.st_size, off + len)))
		return err;
	return vfs_fallocate(f, arg_int(a, 1), off, len);
}

/* TIMES is NULL for "both now". */
static long utimens_at(struct task *t, int dirfd, uintptr_t path_addr, const struct timespec *times,
		       int flags)
{
	struct vfs_cred cred = cred_of(t);
	struct vfs_dentry *d;
	long err;

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	/* utimensat(fd, NULL, ...) names FD itself (Linux's own extension). */
	err = arg_lookup(t, dirfd, path_addr,
			 flags | (path_addr ? 0 : AT_EMPTY_PATH) | ARG_NULL_IS_EMPTY, &d, NULL);
	if (err)
		return err;
	err = vfs_utimens(d, &cred, times);
	vfs_dentry_put(d);
	return err;
}

long sys_utimensat(struct task *t, const unsigned long *a)
{
	struct timespec ts[2];

	if (a[2] && copy_in(t->mm, ts, a[2], sizeof(ts)))
		return -EFAULT;
	if (!a[1] && (a[3] & AT_SYMLINK_NOFOLLOW))
		return -EINVAL;
	if (!a[1] && arg_int(a, 0) == AT_FDCWD)
		return -EFAULT;
	return utimens_at(t, arg_int(a, 0), a[1], a[2] ? ts : NULL, arg_int(a, 3));
}

/* The timeval forms: microseconds within range, or -EINVAL. */
static long utimes_at(struct task *t, int dirfd, uintptr_t path_addr, uintptr_t tv_addr)
{
	struct timeval tv[2];
	struct timespec ts[2];

	if (!tv_addr)
		return utimens_at(t, dirfd, path_addr, NULL, 0);
	if (copy_in(t->mm, tv, tv_addr, sizeof(tv)))
		return -EFAULT;
	for (int i = 0; i < 2; i++) {
		if (tv[i].tv_usec < 0 || tv[i].tv_usec >= USEC_PER_SEC)
			return -EINVAL;
		ts[i].tv_sec = tv[i].tv_sec;
		ts[i].tv_nsec = tv[i].tv_usec * NSEC_PER_USEC;
	}
	return utimens_at(t, dirfd, path_addr, ts, 0);
}

long sys_futimesat(struct task *t, const unsigned long *a)
{
	return utimes_at(t, arg_int(a, 0), a[1], a[2]);
}

long sys_utimes(struct task *t, const unsigned long *a)
{
	return utimes_at(t, AT_FDCWD, a[0], a[1]);
}

long sys_utime(struct task *t, const unsigned long *a)
{
	struct utimbuf ub;
	struct timespec ts[2];

	if (!a[1])
		return utimens_at(t, AT_FDCWD, a[0], NULL, 0);
	if (copy_in(t->mm, &ub, a[1], sizeof(ub)))
		return -EFAULT;
	ts[0] = (struct timespec){.tv_sec = ub.actime};
	ts[1] = (struct timespec){.tv_sec = ub.modtime};
	return utimens_at(t, AT_FDCWD, a[0], ts, 0);
}

#define K_ST_VALID 0x20 /* the kernel's: f_flags is filled in (not in libc's headers) */

static long statfs_out(struct task *t, struct vfs_dentry *d, uintptr_t buf)
{
	struct statfs sfs;
	long err = vfs_statfs(d, &sfs);
	unsigned long ms = vfs_mount_flags(d);

	vfs_dentry_put(d);
	if (err)
		return err;
	/* Linux's: valid, the mount's flags, and relatime as every mount is (mountinfo). */
	sfs.f_flags = K_ST_VALID | ST_RELATIME | (ms & MS_RDONLY ? ST_RDONLY : 0) |
		      (ms & MS_NOSUID ? ST_NOSUID : 0) | (ms & MS_NODEV ? ST_NODEV : 0) |
		      (ms & MS_NOEXEC ? ST_NOEXEC : 0);
	return copy_out(t->mm, buf, &sfs, sizeof(sfs));
}

long sys_statfs(struct task *t, const unsigned long *a)
{
	struct vfs_dentry *d;
	long err = arg_lookup(t, AT_FDCWD, a[0], 0, &d, NULL);

	return err ? err : statfs_out(t, d, a[1]);
}

long sys_fstatfs(struct task *t, const unsigned long *a)
{
	struct vfs_file *f = arg_file(t, arg_int(a, 0));

	if (!f)
		return -EBADF;
	if (!f->dentry) {
		/* pipefs, sockfs, anon_inodefs: what Linux's simple_statfs says, ST_VALID. */
		struct statfs sfs;
		long err = vfs_file_statfs_pseudo(f, &sfs);
		if (err == -ENOSYS)
			return syscall_unsupported(t, -ENOSYS, "a host descriptor's filesystem");
		if (err)
			return err;
		sfs.f_flags = K_ST_VALID;
		return copy_out(t->mm, a[1], &sfs, sizeof(sfs));
	}
	return statfs_out(t, vfs_dentry_get(f->dentry), a[1]);
}

/* Everything lives in memory or on the read-only host tree: there is nothing to flush. */
/* The type of the object F is open on (0 if it cannot say): a host file handed in as stdout
 * is a regular file too. */
static mode_t file_mode(struct vfs_file *f)
{
	struct stat st;

	if (f->dentry && f->dentry->inode)
		return f->dentry->inode->mode;
	return f->ops->getattr && f->ops->getattr(f, &st) == 0 ? st.st_mode : 0;
}

static long sync_fd(struct task *t, int fd)
{
	struct vfs_file *f = arg_file_nopath(t, fd);

	if (!f)
		return -EBADF;
	/* Only files and directories have an fsync: pipes, FIFOs, sockets, devices and
	 * anonymous files are EINVAL. */
	mode_t mode = file_mode(f);
	if (!S_ISREG(mode) && !S_ISDIR(mode))
		return -EINVAL;
	return 0;
}

long sys_fsync(struct task *t, const unsigned long *a)
{
	return sync_fd(t, arg_int(a, 0));
}

long sys_fdatasync(struct task *t, const unsigned long *a)
{
	return sync_fd(t, arg_int(a, 0));
}

/* The sandbox's files live in memory or are read-only host files: there is nothing to write
 * back, so only the checks are Linux's (in its order: descriptor, flags, range, file type). */
long sys_sync_file_range(struct task *t, const unsigned long *a)
{
	struct vfs_file *f = arg_file_nopath(t, arg_int(a, 0));
	int64_t off = (int64_t)a[1], n = (int64_t)a[2];
	unsigned int flags = (unsigned int)a[3];
	mode_t mode;

	if (!f)
		return -EBADF;
	if (flags & ~(unsigned int)(SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
				    SYNC_FILE_RANGE_WAIT_AFTER))
		return -EINVAL;
	if (off < 0 || n < 0 || off > INT64_MAX - n)
		return -EINVAL;
	mode = file_mode(f);
	if (!S_ISREG(mode) && !S_ISBLK(mode) && !S_ISDIR(mode) && !S_ISLNK(mode))
		return -ESPIPE;
	return 0;
}

long sys_sync(struct task *t, const unsigned long *a)
{
	(void)t, (void)a;
	return 0;
}

long sys_syncfs(struct task *t, const unsigned long *a)
{
	return arg_file_nopath(t, arg_int(a, 0)) ? 0 : -EBADF;
}

long sys_chroot(struct task *t, const unsigned long *a)
{
	struct vfs_cred cred = cred_of(t);
	struct vfs_dentry *d;
	long err = arg_lookup(t, AT_FDCWD, a[0], 0, &d, NULL);

	if (err)
		return err;
	if (!vfs_is_dir(d))
		err = -ENOTDIR;
	else if (!(err = vfs_permission(d, &cred, X_OK)) && t->euid != 0)
		err = -EPERM;
	if (err) {
		vfs_dentry_put(d);
		return err;
	}
	vfs_dentry_put(t->fs->root);
	t->fs->root = d;
	return 0;
}

/* mount(2) of a fresh tmpfs, proc or sysfs; other filesystem types are not known (ENODEV),
 * and bind, move and remount mounts are not offered yet (EOPNOTSUPP). */
long sys_mount(struct task *t, const unsigned long *a)
{
	char target[PATH_MAX], type[64];
	unsigned long flags = a[3];
	struct vfs_dentry *mp, *root;
	long err;

	if (t->euid != 0)
		return -EPERM;
	if ((err = arg_path(t, a[1], target)))
		return err;
	unsigned long other = flags & (MS_BIND | MS_MOVE | MS_REMOUNT | MS_SHARED | MS_PRIVATE |
				       MS_SLAVE | MS_UNBINDABLE);
	if (other)
		return syscall_unsupported(t, -EOPNOTSUPP, "flags %#lx", other);
	if (!a[2])
		return -EINVAL;
	if ((err = copy_string_in(t->mm, type, a[2], sizeof(type))) < 0)
		return err == -ENAMETOOLONG ? -ENODEV : err;
	int (*make)(struct vfs_dentry **) = NULL;
	if (!strcmp(type, "tmpfs"))
		make = vfs_tmpfs_new;
	else if (!strcmp(type, "proc"))
		make = kernel_new_procfs;
	else if (!strcmp(type, "sysfs"))
		make = kernel_new_sysfs;
	else
		return syscall_unsupported(t, -ENODEV, "filesystem type %s", type);
	if ((err = vfs_lookup(t->fs, NULL, target, VFS_LOOKUP_FOLLOW, &mp)))
		return err;
	err = -ENOTDIR;
	if (vfs_is_dir(mp) && !(err = make(&root))) {
		char source[64] = "none";
		if (a[0] && copy_string_in(t->mm, source, a[0], sizeof(source)) < 0)
			strcpy(source, "none");
		err = vfs_mount_fs(mp, root, type, source, flags, NULL);
		vfs_dentry_put(root);
	}
	vfs_dentry_put(mp);
	return err;
}

long sys_umount2(struct task *t, const unsigned long *a)
{
	char target[PATH_MAX];
	int flags = arg_int(a, 1);
	struct vfs_dentry *d;
	long err;

	if (t->euid != 0)
		return -EPERM;
	if (flags & ~(MNT_FORCE | MNT_DETACH | MNT_EXPIRE | UMOUNT_NOFOLLOW))
		return -EINVAL;
	if ((err = arg_path(t, a[0], target)))
		return err;
	if ((err = vfs_lookup(t->fs, NULL, target,
			      (flags & UMOUNT_NOFOLLOW) ? 0 : VFS_LOOKUP_FOLLOW, &d)))
		return err;
	/* The sandbox's own root cannot go. */
	err = d == t->fs->root ? -EINVAL : vfs_umount_at(d, flags & MNT_DETACH);
	vfs_dentry_put(d);
	return err;
}

/* Extended attributes. No filesystem of the sandbox keeps any, so the calls answer as Linux
 * does on a filesystem without xattr support: a listing is empty, getting, setting and
 * removing one is EOPNOTSUPP (which ls, cp -a and tar take as "none here"). The arguments are
 * checked as Linux checks them first: the object (ENOENT, EBADF...), the name (ERANGE when
 * empty or longer than 255 bytes), a set's flags (EINVAL) and size (E2BIG). */

#define XATTR_NAME_LEN_MAX 255
#define XATTR_VALUE_SIZE_MAX 65536
#define XATTR_CREATE_FLAG 0x1
#define XATTR_REPLACE_FLAG 0x2

static long xattr_name(struct task *t, uintptr_t addr)
{
	char name[XATTR_NAME_LEN_MAX + 2];
	long n = copy_string_in(t->mm, name, addr, sizeof(name));

	if (n == -ENAMETOOLONG || n == 0 || n > XATTR_NAME_LEN_MAX)
		return -ERANGE;
	return n < 0 ? n : 0;
}

/* What a call names: a path (PATH, FOLLOW the last symlink unless an l* call) or, for an f*
 * call (FD >= 0 or BY_FD), a descriptor. */
struct xattr_obj {
	bool by_fd;
	uintptr_t path;
	int fd;
	bool follow;
};

#define XATTR_PATH(ADDR) ((struct xattr_obj){.path = (ADDR), .follow = true})
#define XATTR_LINK(ADDR) ((struct xattr_obj){.path = (ADDR)})
#define XATTR_FD(FD) ((struct xattr_obj){.by_fd = true, .fd = (FD)})

static long xattr_object(struct task *t, struct xattr_obj o)
{
	struct vfs_dentry *d;
	long err;

	if (o.by_fd) {
		return arg_file_nopath(t, o.fd) ? 0 : -EBADF;
	}
	if ((err = arg_lookup(t, AT_FDCWD, o.path, o.follow ? 0 : AT_SYMLINK_NOFOLLOW, &d, NULL)))
		return err;
	vfs_dentry_put(d);
	return 0;
}

static long xattr_get(struct task *t, struct xattr_obj o, uintptr_t name)
{
	long err = xattr_object(t, o);

	return err ? err : (err = xattr_name(t, name)) ? err : -EOPNOTSUPP;
}

static long xattr_set(struct task *t, struct xattr_obj o, uintptr_t name, size_t size, int flags)
{
	long err;

	if (flags & ~(XATTR_CREATE_FLAG | XATTR_REPLACE_FLAG))
		return -EINVAL;
	if ((err = xattr_name(t, name)))
		return err;
	if (size > XATTR_VALUE_SIZE_MAX)
		return -E2BIG;
	return (err = xattr_object(t, o)) ? err : -EOPNOTSUPP;
}

static long xattr_list(struct task *t, struct xattr_obj o)
{
	long err = xattr_object(t, o);

	return err ? err : 0;
}

long sys_getxattr(struct task *t, const unsigned long *a)
{
	return xattr_get(t, XATTR_PATH(a[0]), a[1]);
}
long sys_lgetxattr(struct task *t, const unsigned long *a)
{
	return xattr_get(t, XATTR_LINK(a[0]), a[1]);
}
long sys_fgetxattr(struct task *t, const unsigned long *a)
{
	return xattr_get(t, XATTR_FD(arg_int(a, 0)), a[1]);
}
long sys_setxattr(struct task *t, const unsigned long *a)
{
	return xattr_set(t, XATTR_PATH(a[0]), a[1], a[3], arg_int(a, 4));
}
long sys_lsetxattr(struct task *t, const unsigned long *a)
{
	return xattr_set(t, XATTR_LINK(a[0]), a[1], a[3], arg_int(a, 4));
}
long sys_fsetxattr(struct task *t, const unsigned long *a)
{
	return xattr_set(t, XATTR_FD(arg_int(a, 0)), a[1], a[3], arg_int(a, 4));
}
long sys_listxattr(struct task *t, const unsigned long *a)
{
	return xattr_list(t, XATTR_PATH(a[0]));
}
long sys_llistxattr(struct task *t, const unsigned long *a)
{
	return xattr_list(t, XATTR_LINK(a[0]));
}
long sys_flistxattr(struct task *t, const unsigned long *a)
{
	return xattr_list(t, XATTR_FD(arg_int(a, 0)));
}
/* Removing answers as getting does: the object, the name, then EOPNOTSUPP. */
long sys_removexattr(struct task *t, const unsigned long *a)
{
	return xattr_get(t, XATTR_PATH(a[0]), a[1]);
}
long sys_lremovexattr(struct task *t, const unsigned long *a)
{
	return xattr_get(t, XATTR_LINK(a[0]), a[1]);
}
long sys_fremovexattr(struct task *t, const unsigned long *a)
{
	return xattr_get(t, XATTR_FD(arg_int(a, 0)), a[1]);
}
