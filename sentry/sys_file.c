/* File syscalls: fetch and check arguments, resolve descriptors and paths, then call the VFS.
 * Data moves between files and guest memory through iovecs into the memory file, so a read
 * from a host file lands in guest memory without a bounce buffer. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "sentry/fdtable.h"
#include "sentry/fasync.h"
#include "sentry/locks.h"
#include "sentry/mm.h"
#include "sentry/sched.h"
#include "sentry/signal.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "vfs/inotify.h"
#include "vfs/dirent.h"
#include "vfs/vfs.h"

#define IOV_PIECES 64
#define OPEN_HOW_SIZE_VER0 24 /* the first struct open_how */

/* Parks T until F is ready for EVENTS (a host descriptor or the file's wait queue); -EAGAIN
 * when there is nothing to wait for. */
static long wait_for_file(struct task *t, struct vfs_file *f, uint32_t events)
{
	struct waitq *wq = NULL;
	long err;

	if (vfs_is_unix_socket(f) || vfs_sock_ops(f)) {
		/* Its SO_RCVTIMEO/SO_SNDTIMEO ends the wait as if it could not wait at all. */
		err = sock_wait_io(t, f, events);
		return err == -ETIMEDOUT ? -EAGAIN : err;
	}
	if (f->ops->host_fd && f->ops->host_fd(f) >= 0)
		err = task_wait_host_fd(t, f->ops->host_fd(f), events);
	else if (f->ops->poll && (f->ops->poll(f, &wq), wq))
		err = task_wait_queue(t, wq, events | POLLHUP | POLLERR);
	else
		return -EAGAIN;
	return err ? err : task_block(t);
}

/* Whether F may be read (IS_READ) or written: -EBADF when it is not open for it, -EINVAL
 * when it is but the file has no such operation. Linux checks this before the iovecs. */
static long io_allowed(struct vfs_file *f, bool is_read)
{
	if ((f->flags & O_ACCMODE) == (is_read ? O_WRONLY : O_RDONLY) || (f->flags & O_PATH))
		return -EBADF;
	if (is_read ? !f->ops->read : !f->ops->write)
		return -EINVAL;
	return 0;
}

/* RLIMIT_FSIZE for a write of TOTAL bytes to F at *POS: how many bytes may be written (all
 * of them when the limit does not apply), or -EFBIG with SIGXFSZ sent when not one byte may,
 * as Linux checks regular files only. */
static long fsize_allowed(struct task *t, struct vfs_file *f, const off_t *pos, size_t total)
{
	rlim_t lim = t->rlim[RLIMIT_FSIZE].rlim_cur;
	struct stat st;

	if (lim == RLIM_INFINITY || !pos || !f->ops->getattr || f->ops->getattr(f, &st) ||
	    !S_ISREG(st.st_mode))
		return (long)total;
	uint64_t start = (f->flags & O_APPEND) ? (uint64_t)st.st_size : (uint64_t)*pos;
	if (start >= lim) {
		siginfo_t si = {.si_signo = SIGXFSZ, .si_code = SI_KERNEL};
		signal_send_thread(t, SIGXFSZ, &si);
		return -EFBIG;
	}
	return lim - start < total ? (long)(lim - start) : (long)total;
}

/* Shortens IOV (N pieces) to MAX bytes; the new number of pieces. */
static int iov_trim(struct iovec *iov, int n, size_t max)
{
	for (int i = 0; i < n; i++) {
		if (iov[i].iov_len >= max) {
			iov[i].iov_len = max;
			return i + 1;
		}
		max -= iov[i].iov_len;
	}
	return n;
}

/* Moves data between F and guest memory in up to IOV_PIECES pieces per call. A blocking
 * write to a stream that only partly fits keeps what it wrote in t->blk.io_done across retries,
 * so the retry continues where it stopped. */
static long do_io(struct task *t, struct vfs_file *f, const struct iovec *giov, int giovcnt,
		  off_t *pos, bool is_read)
{
	struct iovec iov[IOV_PIECES];
	size_t total, done = t->blk.retry && !is_read ? t->blk.io_done : 0;
	long err = io_allowed(f, is_read);

	if (err)
		return err;
	int n = arg_iovec_map(t->mm, giov, giovcnt, ARG_RW_MAX, is_read ? ARG_IOV_WRITE : 0, iov,
			      IOV_PIECES, &total);
	if (n <= 0)
		return n;
	n = arg_iovec_advance(iov, n, done);
	if (!is_read && total > done) {
		long room = fsize_allowed(t, f, pos, total - done);
		if (room < 0)
			return room;
		n = iov_trim(iov, n, room);
	}
	long r = t->blk.retry && !is_read ? vfs_unix_woken_send_error(f) : 0;
	if (r)
		return done ? (long)done : r;
	r = is_read ? f->ops->read(f, iov, n, pos) : f->ops->write(f, iov, n, pos);
	if (r > 0 && !is_read && !pos && !(f->flags & O_NONBLOCK) && done + r < total) {
		done += r;
		r = -EAGAIN; /* the rest must wait for room */
	} else if (r >= 0) {
		if (is_read)
			t->rchar += r, t->syscr++;
		else
			t->wchar += r, t->syscw++;
		if (r > 0)
			(is_read ? vfs_notify_access : vfs_notify_modify)(f);
		return done + r;
	}
	/* Pipes, FIFOs, host pipes and stream sockets raise SIGPIPE with EPIPE. */
	if (r == -EPIPE && !is_read && (!vfs_is_unix_socket(f) || vfs_unix_sends_sigpipe(f))) {
		siginfo_t si = {.si_signo = SIGPIPE, .si_code = SI_USER};
		si.si_pid = t->tgid;
		si.si_uid = t->uid;
		signal_send_thread(t, SIGPIPE, &si);
	}
	if (r == -EAGAIN && !(f->flags & O_NONBLOCK)) {
		t->blk.io_done = done;
		/* A signal ends a partial write with what it wrote. */
		t->blk.intr_ret = done ? (int)done : -ERESTARTSYS;
		long b = wait_for_file(t, f, is_read ? POLLIN : POLLOUT);
		if (b != -EAGAIN)
			return b;
	}
	return done ? (long)done : r;
}

static long rw(struct task *t, int fd, uintptr_t buf, size_t len, bool is_read)
{
	struct vfs_file *f = arg_file(t, fd);
	struct iovec one = {(void *)buf, len};

	if (!f)
		return -EBADF;
	return do_io(t, f, &one, 1, f->seekable ? &f->pos : NULL, is_read);
}

static long prw(struct task *t, int fd, uintptr_t buf, size_t len, off_t off, bool is_read)
{
	struct vfs_file *f = arg_file_nopath(t, fd);
	struct iovec one = {(void *)buf, len};

	if (!f)
		return -EBADF;
	if (!f->seekable)
		return -ESPIPE;
	if (off < 0)
		return -EINVAL;
	return do_io(t, f, &one, 1, &off, is_read);
}

/* readv/writev and their positioned forms: OFF < 0 means the file's own offset (preadv2's
 * -1), otherwise the file must be seekable. */
static long rwv_at(struct task *t, int fd, uintptr_t giov_addr, unsigned int cnt, bool is_read,
		   bool positioned, off_t off)
{
	struct vfs_file *f = arg_file(t, fd);
	struct iovec *giov;
	long r;

	if (!f)
		return -EBADF;
	if (positioned && off != -1) {
		if (f->flags & O_PATH)
			return -EBADF;
		if (!f->seekable)
			return -ESPIPE;
		if (off < 0)
			return -EINVAL;
	} else {
		positioned = false;
	}
	if ((r = io_allowed(f, is_read)) || (r = arg_iovec(t, giov_addr, cnt, &giov)) < 0)
		return r;
	if (r > 0)
		r = do_io(t, f, giov, cnt, positioned ? &off : (f->seekable ? &f->pos : NULL),
			  is_read);
	free(giov);
	return r;
}

static long rwv(struct task *t, int fd, uintptr_t giov_addr, unsigned int cnt, bool is_read)
{
	return rwv_at(t, fd, giov_addr, cnt, is_read, false, 0);
}

/* x86_64 passes the offset whole in the fourth argument (the fifth, pos_h, is unused). */
long sys_preadv(struct task *t, const unsigned long *a)
{
	return rwv_at(t, arg_int(a, 0), a[1], arg_uint(a, 2), true, true, arg_long(a, 3));
}

long sys_pwritev(struct task *t, const unsigned long *a)
{
	return rwv_at(t, arg_int(a, 0), a[1], arg_uint(a, 2), false, true, arg_long(a, 3));
}

#define RWF_SUPPORTED (RWF_HIPRI | RWF_DSYNC | RWF_SYNC | RWF_NOWAIT | RWF_APPEND)

long sys_preadv2(struct task *t, const unsigned long *a)
{
	if (a[5] & ~(unsigned long)RWF_SUPPORTED)
		return -EOPNOTSUPP;
	return rwv_at(t, arg_int(a, 0), a[1], arg_uint(a, 2), true, true, arg_long(a, 3));
}

long sys_pwritev2(struct task *t, const unsigned long *a)
{
	if (a[5] & ~(unsigned long)RWF_SUPPORTED)
		return -EOPNOTSUPP;
	return rwv_at(t, arg_int(a, 0), a[1], arg_uint(a, 2), false, true, arg_long(a, 3));
}

long sys_read(struct task *t, const unsigned long *a)
{
	return rw(t, arg_int(a, 0), a[1], a[2], true);
}

long sys_write(struct task *t, const unsigned long *a)
{
	return rw(t, arg_int(a, 0), a[1], a[2], false);
}

long sys_pread64(struct task *t, const unsigned long *a)
{
	return prw(t, arg_int(a, 0), a[1], a[2], arg_long(a, 3), true);
}

long sys_pwrite64(struct task *t, const unsigned long *a)
{
	return prw(t, arg_int(a, 0), a[1], a[2], arg_long(a, 3), false);
}

long sys_readv(struct task *t, const unsigned long *a)
{
	return rwv(t, arg_int(a, 0), a[1], arg_uint(a, 2), true);
}

long sys_writev(struct task *t, const unsigned long *a)
{
	return rwv(t, arg_int(a, 0), a[1], arg_uint(a, 2), false);
}

/* openat(2), and openat2(2) with RESOLVE, the VFS_LOOKUP_ restrictions of its RESOLVE_
 * flags. */
static long do_openat(struct task *t, int dirfd, uintptr_t path_addr, int flags, mode_t mode,
		      int resolve)
{
	int in_root = resolve & VFS_LOOKUP_IN_ROOT ? ARG_IN_ROOT : 0;
	char path[PATH_MAX];
	struct vfs_dentry *start;
	struct vfs_file *f;
	long err;

	if (!(t->blk.retry && t->blk.pending_open) &&
	    (err = arg_path_at(t, dirfd, path_addr, in_root, path, &start)))
		return err;
	if (t->blk.retry && t->blk.pending_open) {
		/* A FIFO open waiting for its partner. */
		f = t->blk.pending_open;
		t->blk.pending_open = NULL;
		if (t->blk.interrupted) {
			vfs_file_put(f);
			return -ERESTARTSYS;
		}
	} else {
		struct vfs_cred cred = task_fs_cred(t);
		if ((err = vfs_open_resolve(t->fs, &cred, start, path, flags, mode & ~t->fs->umask,
					    resolve, &f)))
			return err;
	}
	struct waitq *wq;
	if (vfs_fifo_waiting(f, &wq)) {
		t->blk.pending_open = f;
		if ((err = task_wait_queue(t, wq, 0))) {
			t->blk.pending_open = NULL;
			vfs_file_put(f);
			return err;
		}
		return task_block(t);
	}
	return task_install_file(t, f, flags & O_CLOEXEC);
}

long sys_open(struct task *t, const unsigned long *a)
{
	return do_openat(t, AT_FDCWD, a[0], arg_int(a, 1), arg_uint(a, 2), 0);
}

long sys_creat(struct task *t, const unsigned long *a)
{
	return do_openat(t, AT_FDCWD, a[0], O_CREAT | O_WRONLY | O_TRUNC, arg_uint(a, 1), 0);
}

long sys_openat(struct task *t, const unsigned long *a)
{
	return do_openat(t, arg_int(a, 0), a[1], arg_int(a, 2), arg_uint(a, 3), 0);
}

long sys_close(struct task *t, const unsigned long *a)
{
	struct vfs_file *f = arg_file(t, arg_int(a, 0));

	if (f)
		task_file_closing(t, f);
	return fdtable_close(t->files, arg_int(a, 0));
}

#define CLOSE_RANGE_UNSHARE_FLAG 0x2
#define CLOSE_RANGE_CLOEXEC_FLAG 0x4

/* close_range(2): closes (or with CLOSE_RANGE_CLOEXEC marks close-on-exec) every descriptor
 * from FIRST to LAST, after giving the caller a table of its own with CLOSE_RANGE_UNSHARE. */
long sys_close_range(struct task *t, const unsigned long *a)
{
	unsigned int first = arg_uint(a, 0), last = arg_uint(a, 1);
	unsigned int flags = arg_uint(a, 2);

	if ((flags & ~(CLOSE_RANGE_UNSHARE_FLAG | CLOSE_RANGE_CLOEXEC_FLAG)) || first > last)
		return -EINVAL;
	if ((flags & CLOSE_RANGE_UNSHARE_FLAG) && t->files->refs > 1) {
		struct fdtable *own = fdtable_copy(t->files);
		if (!own)
			return -ENOMEM;
		fdtable_put(t->files);
		t->files = own;
	}
	for (long fd = first; fd <= last && fd < t->files->n; fd++) {
		struct fd_entry *e = fdtable_entry(t->files, (int)fd);
		if (!e)
			continue;
		if (flags & CLOSE_RANGE_CLOEXEC_FLAG) {
			e->cloexec = true;
		} else {
			task_file_closing(t, e->file);
			fdtable_close(t->files, (int)fd);
		}
	}
	return 0;
}

long sys_lseek(struct task *t, const unsigned long *a)
{
	struct vfs_file *f = arg_file(t, arg_int(a, 0));

	if (!f)
		return -EBADF;
	return vfs_lseek(f, arg_long(a, 1), arg_int(a, 2));
}

/* The attributes of what DIRFD, PATH_ADDR and FLAGS name, and (MNT_ID not NULL) the id of the
 * mount it lies in. */
static long stat_at_mount(struct task *t, int dirfd, uintptr_t path_addr, int flags,
			  struct stat *st, int *mnt_id)
{
	struct vfs_dentry *d;
	struct vfs_file *f;
	long err;

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT | AT_STATX_SYNC_TYPE))
		return -EINVAL;
	if ((err = arg_lookup(t, dirfd, path_addr, flags, &d, &f)))
		return err;
	if (f) {
		if (mnt_id)
			*mnt_id = vfs_mount_id(f->dentry);
		return f->ops->getattr ? f->ops->getattr(f, st) : -EBADF;
	}
	if (mnt_id)
		*mnt_id = vfs_mount_id(d);
	err = vfs_stat(d, st);
	vfs_dentry_put(d);
	return err;
}

static long stat_at(struct task *t, int dirfd, uintptr_t path_addr, int flags, struct stat *st)
{
	return stat_at_mount(t, dirfd, path_addr, flags, st, NULL);
}

long sys_fstat(struct task *t, const unsigned long *a)
{
	struct vfs_file *f = arg_file(t, arg_int(a, 0));
	struct stat st;
	long err;

	if (!f)
		return -EBADF;
	if (!f->ops->getattr)
		return -EBADF;
	if ((err = f->ops->getattr(f, &st)))
		return err;
	return copy_out(t->mm, a[1], &st, sizeof(st));
}

static long stat_to_guest(struct task *t, int dirfd, uintptr_t path, int flags, uintptr_t buf)
{
	struct stat st;
	long err = stat_at(t, dirfd, path, flags, &st);

	return err ? err : copy_out(t->mm, buf, &st, sizeof(st));
}

long sys_stat(struct task *t, const unsigned long *a)
{
	return stat_to_guest(t, AT_FDCWD, a[0], 0, a[1]);
}

long sys_lstat(struct task *t, const unsigned long *a)
{
	return stat_to_guest(t, AT_FDCWD, a[0], AT_SYMLINK_NOFOLLOW, a[1]);
}

long sys_newfstatat(struct task *t, const unsigned long *a)
{
	return stat_to_guest(t, arg_int(a, 0), a[1], arg_int(a, 3), a[2]);
}

long sys_statx(struct task *t, const unsigned long *a)
{
	struct stat st;
	struct statx stx;
	int mnt_id;
	long err;

	if ((a[2] & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE)
		return -EINVAL;
	if (a[3] & STATX__RESERVED)
		return -EINVAL;
	if ((err = stat_at_mount(t, arg_int(a, 0), a[1], arg_int(a, 2), &st, &mnt_id)))
		return err;
	if ((err = vfs_statx_fill(&st, arg_uint(a, 3), &stx)))
		return err;
	/* Linux fills it whatever the mask asked for. */
	stx.stx_mnt_id = (uint64_t)mnt_id;
	stx.stx_mask |= STATX_MNT_ID;
	return copy_out(t->mm, a[4], &stx, sizeof(stx));
}

/* getdents64, or with OLD the old getdents: same entries, same record lengths (vfs/dirent.h). */
static long getdents(struct task *t, const unsigned long *a, bool old)
{
	struct vfs_file *f = arg_file(t, arg_int(a, 0));
	size_t size = a[2];

	if (!f)
		return -EBADF;
	if (!f->ops->getdents64)
		return -ENOTDIR;
	if (size > 65536)
		size = 65536;
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return -ENOMEM;
	long n = f->ops->getdents64(f, buf, size, &f->pos);
	if (n > 0 && old)
		vfs_dirent_to_old(buf, n);
	if (n >= 0)
		vfs_notify_access(f); /* as Linux's iterate_dir, even at the end */
	if (n > 0 && copy_out(t->mm, a[1], buf, n))
		n = -EFAULT;
	free(buf);
	return n;
}

long sys_getdents64(struct task *t, const unsigned long *a)
{
	return getdents(t, a, false);
}

long sys_getdents(struct task *t, const unsigned long *a)
{
	return getdents(t, a, true);
}

static long do_readlinkat(struct task *t, int dirfd, uintptr_t path, uintptr_t buf, long size)
{
	struct vfs_dentry *d;
	char target[PATH_MAX];
	long err;

	if (size <= 0)
		return -EINVAL;
	if ((err = arg_lookup(t, dirfd, path, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH, &d, NULL)))
		return err;
	long n = vfs_readlink(d, target, sizeof(target));
	vfs_dentry_put(d);
	/* An empty path names DIRFD itself, which must then be a symlink. */
	char first;
	if (n == -EINVAL && copy_in(t->mm, &first, path, 1) == 0 && first == 0)
		return -ENOENT;
	if (n < 0)
		return n;
	if (n > size)
		n = size;
	return copy_out(t->mm, buf, target, n) ? -EFAULT : n;
}

long sys_readlink(struct task *t, const unsigned long *a)
{
	return do_readlinkat(t, AT_FDCWD, a[0], a[1], arg_long(a, 2));
}

long sys_readlinkat(struct task *t, const unsigned long *a)
{
	return do_readlinkat(t, arg_int(a, 0), a[1], a[2], arg_long(a, 3));
}

static long do_faccessat(struct task *t, int dirfd, uintptr_t path, int mode, int flags)
{
	struct vfs_dentry *d;
	long err;

	if (mode & ~(F_OK | R_OK | W_OK | X_OK))
		return -EINVAL;
	if (flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	if ((err = arg_lookup(t, dirfd, path, flags, &d, NULL)))
		return err;
	/* access(2) asks with the real ids; AT_EACCESS with the effective ones. */
	struct vfs_cred cred = task_real_cred(t);
	if (flags & AT_EACCESS)
		cred = task_fs_cred(t);
	err = vfs_access_cred(d, &cred, mode);
	vfs_dentry_put(d);
	return err;
}

long sys_access(struct task *t, const unsigned long *a)
{
	return do_faccessat(t, AT_FDCWD, a[0], arg_int(a, 1), 0);
}

long sys_faccessat(struct task *t, const unsigned long *a)
{
	return do_faccessat(t, arg_int(a, 0), a[1], arg_int(a, 2), 0);
}

long sys_faccessat2(struct task *t, const unsigned long *a)
{
	return do_faccessat(t, arg_int(a, 0), a[1], arg_int(a, 2), arg_int(a, 3));
}

long sys_getcwd(struct task *t, const unsigned long *a)
{
	char buf[PATH_MAX];
	int n = vfs_path(t->fs->root, t->fs->cwd, buf, sizeof(buf));

	if (n < 0)
		return n;
	if ((size_t)n > a[1])
		return -ERANGE;
	return copy_out(t->mm, a[0], buf, n) ? -EFAULT : n;
}

static long set_cwd(struct task *t, struct vfs_dentry *d)
{
	long err;

	if (!vfs_is_dir(d)) {
		vfs_dentry_put(d);
		return -ENOTDIR;
	}
	struct vfs_cred cred = task_fs_cred(t);
	if ((err = vfs_permission(d, &cred, X_OK))) {
		vfs_dentry_put(d);
		return err;
	}
	vfs_dentry_put(t->fs->cwd);
	t->fs->cwd = d;
	return 0;
}

long sys_chdir(struct task *t, const unsigned long *a)
{
	char path[PATH_MAX];
	struct vfs_dentry *d;
	long err;

	if ((err = arg_path(t, a[0], path)))
		return err;
	struct vfs_cred cred = task_fs_cred(t);
	if ((err = vfs_lookup_cred(t->fs, &cred, NULL, path, VFS_LOOKUP_FOLLOW, &d)))
		return err;
	return set_cwd(t, d);
}

long sys_fchdir(struct task *t, const unsigned long *a)
{
	struct vfs_file *f = arg_file(t, arg_int(a, 0));

	if (!f)
		return -EBADF;
	if (!f->dentry)
		return -ENOTDIR;
	return set_cwd(t, vfs_dentry_get(f->dentry));
}

/* Whether some process maps memory object MO shared and writable, or able to become so by
 * mprotect (F_SEAL_WRITE's EBUSY, Linux's VM_SHARED|VM_MAYWRITE). */
static bool mapped_writable_shared(const struct mobj *mo)
{
	for_each_task(t) {
		if (!t->mm)
			continue;
		const struct vma_set *s = &t->mm->vmas;
		for (size_t i = 0; i < s->n; i++)
			if (s->v[i].mobj == mo && (s->v[i].flags & MAP_SHARED) &&
			    !(s->v[i].flags & VMA_NO_WRITE))
				return true;
	}
	return false;
}

long sys_fcntl(struct task *t, const unsigned long *a)
{
	int fd = arg_int(a, 0), cmd = arg_int(a, 1);
	struct fd_entry *e = fdtable_entry(t->files, fd);
	const int settable = O_APPEND | O_NONBLOCK | O_ASYNC | O_DIRECT | O_NOATIME;

	if (!e)
		return -EBADF;
	/* An O_PATH descriptor only names a file: the commands on descriptors work, the rest is
	 * EBADF (check_fcntl_cmd). */
	if ((e->file->flags & O_PATH) && cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC &&
	    cmd != F_GETFD && cmd != F_SETFD && cmd != F_GETFL)
		return -EBADF;
	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC: {
		if (arg_long(a, 2) < 0 || arg_long(a, 2) >= task_nofile_limit(t))
			return -EINVAL;
		int nfd = fdtable_install(t->files, vfs_file_get(e->file), cmd == F_DUPFD_CLOEXEC,
					  arg_int(a, 2), task_nofile_limit(t));
		if (nfd < 0)
			vfs_file_put(arg_file(t, fd));
		return nfd;
	}
	case F_GETFD:
		return e->cloexec ? FD_CLOEXEC : 0;
	case F_SETFD:
		e->cloexec = a[2] & FD_CLOEXEC;
		return 0;
	case F_GETFL:
		return e->file->flags;
	case F_GETPIPE_SZ:
		return vfs_pipe_size(e->file, -1);
	case F_SETPIPE_SZ:
		if (arg_long(a, 2) < 0 || arg_long(a, 2) > INT_MAX)
			return -EINVAL;
		return vfs_pipe_size(e->file, arg_long(a, 2));
	case F_SETFL:
		e->file->flags = (e->file->flags & ~settable) | (arg_int(a, 2) & settable);
		return fasync_flags_changed(e->file, fd);
	case F_GET_SEALS:
		return vfs_file_get_seals(e->file);
	case F_ADD_SEALS: {
		/* F_SEAL_WRITE waits for no one: a writable shared mapping of the file is EBUSY. */
		struct mobj *data = vfs_file_tmpfs_data(e->file);
		int seals = vfs_file_get_seals(e->file);
		if (seals >= 0 && (a[2] & F_SEAL_WRITE) && !(seals & F_SEAL_WRITE) &&
		    (e->file->flags & O_ACCMODE) != O_RDONLY && !(seals & F_SEAL_SEAL) && data &&
		    mapped_writable_shared(data))
			return -EBUSY;
		return vfs_file_add_seals(e->file, (unsigned int)a[2]);
	}
	case F_SETOWN:
	case F_GETOWN:
	case F_SETOWN_EX:
	case F_GETOWN_EX:
	case F_SETSIG:
	case F_GETSIG:
		return fasync_fcntl(t, e->file, fd, cmd, a[2]);
	case F_GETLK:
	case F_SETLK:
	case F_SETLKW:
	case F_OFD_GETLK:
	case F_OFD_SETLK:
	case F_OFD_SETLKW:
		return locks_fcntl(t, e->file, cmd, a[2]);
	default:
		return -EINVAL;
	}
}

static long do_dup3(struct task *t, int oldfd, int newfd, int flags)
{
	struct vfs_file *f = arg_file(t, oldfd);

	if (!f)
		return -EBADF;
	if (newfd < 0 || newfd >= task_nofile_limit(t))
		return -EBADF;
	/* The descriptor replaced is closed, even one of the same description. */
	struct vfs_file *old = fdtable_peek(t->files, newfd);
	if (old)
		task_file_closing(t, old);
	return fdtable_install_at(t->files, newfd, vfs_file_get(f), flags & O_CLOEXEC,
				  task_nofile_limit(t));
}

long sys_dup(struct task *t, const unsigned long *a)
{
	struct vfs_file *f = arg_file(t, arg_int(a, 0));

	if (!f)
		return -EBADF;
	int fd = fdtable_install(t->files, vfs_file_get(f), false, 0, task_nofile_limit(t));
	if (fd < 0)
		vfs_file_put(f);
	return fd;
}

long sys_dup2(struct task *t, const unsigned long *a)
{
	if (!arg_file(t, arg_int(a, 0)))
		return -EBADF;
	if (a[0] == a[1])
		return arg_int(a, 1);
	return do_dup3(t, arg_int(a, 0), arg_int(a, 1), 0);
}

long sys_dup3(struct task *t, const unsigned long *a)
{
	if (a[2] & ~(unsigned long)O_CLOEXEC)
		return -EINVAL;
	if (a[0] == a[1])
		return -EINVAL;
	return do_dup3(t, arg_int(a, 0), arg_int(a, 1), arg_int(a, 2));
}

static long do_pipe2(struct task *t, uintptr_t fds_addr, int flags)
{
	struct vfs_file *rd, *wr;
	int fds[2];
	long err;

	if (flags & ~(O_CLOEXEC | O_NONBLOCK | O_DIRECT))
		return -EINVAL;
	if ((err = vfs_pipe_new(flags, &rd, &wr)))
		return err;
	/* The pipefs inode belongs to its maker (fsuid and fsgid: the effective ids here). */
	struct vfs_pseudo_inode *pi = vfs_file_pseudo(rd);
	if (t->euid || t->egid) { /* not root's: a checkpoint must keep it */
		pi->uid = t->euid;
		pi->gid = t->egid;
		pi->changed = true;
	}
	fds[0] = fdtable_install(t->files, rd, flags & O_CLOEXEC, 0, task_nofile_limit(t));
	if (fds[0] < 0) {
		vfs_file_put(rd);
		vfs_file_put(wr);
		return fds[0];
	}
	fds[1] = fdtable_install(t->files, wr, flags & O_CLOEXEC, 0, task_nofile_limit(t));
	if (fds[1] < 0) {
		fdtable_close(t->files, fds[0]);
		vfs_file_put(wr);
		return fds[1];
	}
	if (copy_out(t->mm, fds_addr, fds, sizeof(fds))) {
		fdtable_close(t->files, fds[0]);
		fdtable_close(t->files, fds[1]);
		return -EFAULT;
	}
	return 0;
}

long sys_pipe(struct task *t, const unsigned long *a)
{
	return do_pipe2(t, a[0], 0);
}

long sys_pipe2(struct task *t, const unsigned long *a)
{
	return do_pipe2(t, a[0], arg_int(a, 1));
}

/* posix_fadvise: advice about caching, which the Sentry has nothing to act on (the memory
 * file and the host's page cache hold everything already); the arguments are checked as on
 * Linux. */
long sys_fadvise64(struct task *t, const unsigned long *a)
{
	struct vfs_file *f = arg_file_nopath(t, arg_int(a, 0));
	struct stat st;

	if (!f)
		return -EBADF;
	if (vfs_is_pipe(f) ||
	    (f->ops->getattr && f->ops->getattr(f, &st) == 0 && S_ISFIFO(st.st_mode)))
		return -ESPIPE;
	if (arg_long(a, 2) < 0 || a[3] > POSIX_FADV_NOREUSE)
		return -EINVAL;
	return 0;
}

/* readahead: as posix_fadvise(WILLNEED) with nothing to act on; Linux's checks: a
 * descriptor open for reading (EBADF) on a regular file (EINVAL). */
long sys_readahead(struct task *t, const unsigned long *a)
{
	struct vfs_file *f = arg_file_nopath(t, arg_int(a, 0));
	struct stat st;

	if (!f || (f->flags & O_ACCMODE) == O_WRONLY)
		return -EBADF;
	if (!f->ops->getattr || f->ops->getattr(f, &st) != 0 || !S_ISREG(st.st_mode))
		return -EINVAL;
	return 0;
}

/* --- sendfile, copy_file_range, splice: moving data between two files in the Sentry ------ */

#define XFER_CHUNK 65536

/* A write into a pipe without readers, or a broken stream: EPIPE comes with SIGPIPE. */
static void send_sigpipe(struct task *t)
{
	siginfo_t si = {.si_signo = SIGPIPE, .si_code = SI_USER};

	si.si_pid = t->tgid;
	si.si_uid = t->uid;
	signal_send_thread(t, SIGPIPE, &si);
}

/* Moves up to COUNT bytes from IN (at *IN_OFF, or its own offset when NULL) to OUT (at
 * *OUT_OFF, or its own). Returns bytes moved; when nothing could move because one side would
 * block, parks T on it (blocking files) or returns -EAGAIN. */
static long transfer_data(struct task *t, struct vfs_file *out, off_t *out_off, struct vfs_file *in,
			  off_t *in_off, size_t count, bool nonblock, bool xfsz_when_cut)
{
	static char buf[XFER_CHUNK];
	size_t done = 0;
	ssize_t w;

	if (!in->ops->read || !out->ops->write)
		return -EINVAL;
	if ((in->flags & O_ACCMODE) == O_WRONLY || (out->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	if (t->blk.retry && (w = vfs_unix_woken_send_error(out)))
		return w;
	if (count > 0) {
		long room = fsize_allowed(
		    t, out, out_off ? out_off : (out->seekable ? &out->pos : NULL), count);
		if (room < 0)
			return room;
		/* Linux's sendfile and splice write on in pieces after a short one, and the piece
		 * at the limit raises SIGXFSZ; copy_file_range stops at the short one. */
		if ((size_t)room < count && xfsz_when_cut) {
			siginfo_t si = {.si_signo = SIGXFSZ, .si_code = SI_KERNEL};
			signal_send_thread(t, SIGXFSZ, &si);
		}
		count = room;
	}
	while (done < count) {
		off_t *ipos = in_off ? in_off : (in->seekable ? &in->pos : NULL);
		off_t *opos = out_off ? out_off : (out->seekable ? &out->pos : NULL);
		/* Nothing read may be lost when OUT takes less: what a seekable IN gave beyond it
		 * is given back by moving its offset back; a stream IN is read no more than a
		 * writable OUT is sure to take (POLLOUT promises PIPE_BUF bytes). */
		size_t chunk = ipos ? XFER_CHUNK : PIPE_BUF;
		size_t want = count - done < chunk ? count - done : chunk;
		struct waitq *wq;
		uint32_t ready = out->ops->poll ? out->ops->poll(out, &wq) : POLLOUT;
		if (!(ready & POLLOUT)) {
			/* Full, or broken: a pipe without readers is never writable again. A write
			 * of nothing fails as a real one would (EPIPE) and moves no data; an error
			 * only a real write can tell (POLLERR of a host descriptor) goes on to one.
			 */
			struct iovec none = {buf, 0};
			if ((w = out->ops->write(out, &none, 1, opos)) < 0 && w != -EAGAIN)
				goto write_failed;
			if (!(ready & (POLLERR | POLLHUP)))
				break;
		}
		struct iovec iv = {buf, want};
		ssize_t n = in->ops->read(in, &iv, 1, ipos);
		if (n == 0)
			return done; /* end of input */
		if (n < 0) {
			if (done == 0)
				return n == -EAGAIN && !nonblock && !(in->flags & O_NONBLOCK)
					   ? wait_for_file(t, in, POLLIN)
					   : n;
			break;
		}
		struct iovec ov = {buf, n};
		w = out->ops->write(out, &ov, 1, opos);
		if (w < n) {
			ssize_t back = n - (w > 0 ? w : 0);
			if (ipos == &in->pos)
				vfs_lseek(in, -back, SEEK_CUR);
			else if (ipos)
				*ipos -= back;
		}
		if (w < 0)
			goto write_failed;
		done += w;
		if (w < n)
			break;
	}
	if (done == 0 && count > 0 && !nonblock && !(out->flags & O_NONBLOCK)) {
		long b = wait_for_file(t, out, POLLOUT);
		if (b != -EAGAIN)
			return b;
	}
	return done || count == 0 ? (long)done : -EAGAIN;
write_failed:
	if (w == -EPIPE && !done)
		send_sigpipe(t);
	return done ? (long)done : w;
}

/* transfer_data, with what inotify hears of a read and a write that moved data. */
static long transfer(struct task *t, struct vfs_file *out, off_t *out_off, struct vfs_file *in,
		     off_t *in_off, size_t count, bool nonblock, bool xfsz_when_cut)
{
	long r = transfer_data(t, out, out_off, in, in_off, count, nonblock, xfsz_when_cut);

	if (r > 0) {
		vfs_notify_access(in);
		vfs_notify_modify(out);
	}
	return r;
}

static long offset_arg(struct task *t, uintptr_t addr, off_t *off, off_t **ptr)
{
	*ptr = NULL;
	if (!addr)
		return 0;
	if (copy_in(t->mm, off, addr, sizeof(*off)))
		return -EFAULT;
	if (*off < 0)
		return -EINVAL;
	*ptr = off;
	return 0;
}

long sys_sendfile(struct task *t, const unsigned long *a)
{
	struct vfs_file *out = arg_file(t, arg_int(a, 0)), *in = arg_file(t, arg_int(a, 1));
	off_t off, *offp;
	long r;

	if (!out || !in)
		return -EBADF;
	if ((r = offset_arg(t, a[2], &off, &offp)))
		return r;
	/* The input must be a file that can be read like one: a pipe, FIFO or directory
	 * cannot (do_splice_direct). */
	if (vfs_is_pipe(in) || (in->dentry && vfs_is_dir(in->dentry)))
		return (in->flags & O_ACCMODE) == O_WRONLY ? -EBADF : -EINVAL;
	if (offp && !in->seekable)
		return -ESPIPE;
	if (out->flags & O_APPEND)
		return -EINVAL;
	r = transfer(t, out, NULL, in, offp, a[3] > ARG_RW_MAX ? ARG_RW_MAX : a[3], false, true);
	if (r >= 0 && offp && copy_out(t->mm, a[2], &off, sizeof(off)))
		return -EFAULT;
	return r;
}

long sys_copy_file_range(struct task *t, const unsigned long *a)
{
	struct vfs_file *in = arg_file(t, arg_int(a, 0)), *out = arg_file(t, arg_int(a, 2));
	off_t ioff, ooff, *ip, *op;
	long r;

	if (!out || !in)
		return -EBADF;
	if (a[5])
		return -EINVAL;
	if ((r = offset_arg(t, a[1], &ioff, &ip)) || (r = offset_arg(t, a[3], &ooff, &op)))
		return r;
	if ((in->flags & O_ACCMODE) == O_WRONLY || (out->flags & O_ACCMODE) == O_RDONLY ||
	    (out->flags & O_APPEND))
		return -EBADF;
	if (!in->seekable || !out->seekable)
		return -EINVAL; /* copy_file_range is for regular files */
	size_t count = a[4] > ARG_RW_MAX ? ARG_RW_MAX : a[4];
	if (in->dentry && in->dentry == out->dentry) {
		/* Within one file the ranges must not overlap. */
		off_t is = ip ? *ip : in->pos, os = op ? *op : out->pos;
		if (is < os + (off_t)count && os < is + (off_t)count)
			return -EINVAL;
	}
	r = transfer(t, out, op, in, ip, count, false, false);
	if (r >= 0 && ((ip && copy_out(t->mm, a[1], &ioff, sizeof(ioff))) ||
		       (op && copy_out(t->mm, a[3], &ooff, sizeof(ooff)))))
		return -EFAULT;
	return r;
}

long sys_splice(struct task *t, const unsigned long *a)
{
	struct vfs_file *in = arg_file(t, arg_int(a, 0)), *out = arg_file(t, arg_int(a, 2));
	off_t ioff, ooff, *ip, *op;
	long r;

	if (!out || !in)
		return -EBADF;
	if (!vfs_is_pipe(in) && !vfs_is_pipe(out))
		return -EINVAL; /* one end must be a pipe */
	if (in->dentry && vfs_is_dir(in->dentry))
		return -EINVAL; /* a directory has no splice_read */
	if ((r = offset_arg(t, a[1], &ioff, &ip)) || (r = offset_arg(t, a[3], &ooff, &op)))
		return r;
	if ((ip && vfs_is_pipe(in)) || (op && vfs_is_pipe(out)))
		return -ESPIPE;
	r = transfer(t, out, op, in, ip, a[4] > ARG_RW_MAX ? ARG_RW_MAX : a[4],
		     a[5] & SPLICE_F_NONBLOCK, true);
	if (r >= 0 && ((ip && copy_out(t->mm, a[1], &ioff, sizeof(ioff))) ||
		       (op && copy_out(t->mm, a[3], &ooff, sizeof(ooff)))))
		return -EFAULT;
	return r;
}

long sys_tee(struct task *t, const unsigned long *a)
{
	struct vfs_file *in = arg_file(t, arg_int(a, 0)), *out = arg_file(t, arg_int(a, 1));

	if (!in || !out)
		return -EBADF;
	long r = vfs_pipe_tee(in, out, a[2] > ARG_RW_MAX ? ARG_RW_MAX : a[2]);
	if (r == -EPIPE)
		send_sigpipe(t);
	if (r != -EAGAIN || (a[3] & SPLICE_F_NONBLOCK))
		return r;
	struct waitq *wq;
	/* Wait for data in IN, or for room in OUT. */
	uint32_t ready = in->ops->poll(in, &wq);
	if (ready & POLLIN)
		return wait_for_file(t, out, POLLOUT);
	return wait_for_file(t, in, POLLIN);
}

/* openat2's RESOLVE_ flags and the walk restrictions they become (vfs.h); RESOLVE_CACHED
 * needs none, every lookup here being in the Sentry's memory. */
static const struct {
	uint64_t resolve;
	int lookup;
} resolve_flags[] = {
    {RESOLVE_NO_XDEV, VFS_LOOKUP_NO_XDEV},
    {RESOLVE_NO_MAGICLINKS, VFS_LOOKUP_NO_MAGICLINKS},
    {RESOLVE_NO_SYMLINKS, VFS_LOOKUP_NO_SYMLINKS},
    {RESOLVE_BENEATH, VFS_LOOKUP_BENEATH},
    {RESOLVE_IN_ROOT, VFS_LOOKUP_IN_ROOT},
    {RESOLVE_CACHED, 0},
};

/* The lookup flags for RESOLVE, or -EINVAL for unknown bits. */
static int resolve_to_lookup(uint64_t resolve)
{
	int lookup = 0;

	for (size_t i = 0; i < sizeof(resolve_flags) / sizeof(resolve_flags[0]); i++) {
		if (resolve & resolve_flags[i].resolve)
			lookup |= resolve_flags[i].lookup;
		resolve &= ~resolve_flags[i].resolve;
	}
	return resolve ? -EINVAL : lookup;
}

/* openat2: openat with strict checks of its arguments, in Linux's order (build_open_flags):
 * unknown open or resolve flags, BENEATH with IN_ROOT, and a mode without O_CREAT or
 * O_TMPFILE are EINVAL; RESOLVE_CACHED refuses what would have to create or truncate
 * (EAGAIN), as Linux does before trying. The RESOLVE_ restrictions are applied by the VFS's
 * walk. */
long sys_openat2(struct task *t, const unsigned long *a)
{
	struct open_how how;
	const uint64_t known = O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND |
			       O_NONBLOCK | O_DSYNC | O_ASYNC | O_DIRECT | O_LARGEFILE |
			       O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC | O_PATH |
			       O_TMPFILE | O_SYNC;
	long err;
	int lookup;

	if ((err = arg_struct(t, &how, sizeof(how), a[2], a[3], OPEN_HOW_SIZE_VER0)))
		return err;
	if (how.flags & ~known)
		return -EINVAL;
	lookup = resolve_to_lookup(how.resolve);
	if (lookup < 0)
		return lookup;
	if ((how.resolve & RESOLVE_BENEATH) && (how.resolve & RESOLVE_IN_ROOT))
		return -EINVAL;
	if (how.mode > 07777)
		return -EINVAL;
	if (how.mode && !(how.flags & O_CREAT) && (how.flags & O_TMPFILE) != O_TMPFILE)
		return -EINVAL;
	if ((how.resolve & RESOLVE_CACHED) &&
	    (how.flags & (O_TRUNC | O_CREAT | (O_TMPFILE & ~O_DIRECTORY))))
		return -EAGAIN;
	return do_openat(t, arg_int(a, 0), a[1], (int)how.flags, (mode_t)how.mode, lookup);
}
