/* The syscall argument accessors (sysarg.h): descriptors, paths and their start directories,
 * versioned structs and iovec arrays, fetched from a task under Linux's rules. The handlers
 * in sys_*.c and the other syscall files use these instead of copies of their own. */
#include "sentry/sysarg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "platform/platform.h"
#include "sentry/fdtable.h"
#include "sentry/mm.h"
#include "sentry/task.h"
#include "vfs/vfs.h"

struct vfs_file *arg_file(struct task *t, int fd)
{
	return fdtable_peek(t->files, fd);
}

struct vfs_file *arg_file_nopath(struct task *t, int fd)
{
	struct vfs_file *f = fdtable_peek(t->files, fd);

	return f && !(f->flags & O_PATH) ? f : NULL;
}

long arg_path(struct task *t, uintptr_t addr, char *path)
{
	long n = copy_string_in(t->mm, path, addr, PATH_MAX);

	return n < 0 ? n : 0;
}

/* Where the walk of PATH from DIRFD starts (arg_path_at). */
static long start_dir(struct task *t, int dirfd, const char *path, int flags,
		      struct vfs_dentry **start)
{
	struct vfs_file *f;

	*start = NULL;
	if (path[0] == 0)
		return -ENOENT;
	if ((path[0] == '/' && !(flags & ARG_IN_ROOT)) || dirfd == AT_FDCWD)
		return 0;
	if (!(f = arg_file(t, dirfd)))
		return -EBADF;
	if (!f->dentry || !vfs_is_dir(f->dentry))
		return -ENOTDIR;
	*start = f->dentry;
	return 0;
}

long arg_path_at(struct task *t, int dirfd, uintptr_t addr, int flags, char *path,
		 struct vfs_dentry **start)
{
	long err = arg_path(t, addr, path);

	*start = NULL;
	return err ? err : start_dir(t, dirfd, path, flags, start);
}

/* An empty path with AT_EMPTY_PATH: DIRFD itself. */
static long empty_path(struct task *t, int dirfd, struct vfs_dentry **out,
		       struct vfs_file **empty_file)
{
	struct vfs_file *f;

	if (dirfd == AT_FDCWD) {
		*out = vfs_dentry_get(t->fs->cwd);
		return 0;
	}
	if (!(f = arg_file(t, dirfd)))
		return -EBADF;
	if (f->dentry)
		*out = vfs_dentry_get(f->dentry);
	else if (empty_file)
		*empty_file = f;
	else
		return -ENOENT;
	return 0;
}

long arg_lookup(struct task *t, int dirfd, uintptr_t addr, int flags, struct vfs_dentry **out,
		struct vfs_file **empty_file)
{
	char path[PATH_MAX];
	struct vfs_dentry *start;
	long err;

	*out = NULL;
	if (empty_file)
		*empty_file = NULL;
	if (!addr && (flags & ARG_NULL_IS_EMPTY) && (flags & AT_EMPTY_PATH))
		path[0] = 0;
	else if ((err = arg_path(t, addr, path)))
		return err;
	if (path[0] == 0 && (flags & AT_EMPTY_PATH))
		return empty_path(t, dirfd, out, empty_file);
	if ((err = start_dir(t, dirfd, path, 0, &start)))
		return err;
	struct vfs_cred cred = task_fs_cred(t);
	return vfs_lookup_cred(t->fs, &cred, start, path,
			       (flags & AT_SYMLINK_NOFOLLOW) ? 0 : VFS_LOOKUP_FOLLOW, out);
}

long arg_struct(struct task *t, void *dst, size_t ksize, uintptr_t src, size_t usize, size_t min)
{
	unsigned char buf[256];

	if (usize < min)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	/* What lies beyond our struct first, as Linux checks it. */
	for (size_t off = ksize, n; off < usize; off += n) {
		n = usize - off < sizeof(buf) ? usize - off : sizeof(buf);
		if (copy_in(t->mm, buf, src + off, n))
			return -EFAULT;
		for (size_t i = 0; i < n; i++)
			if (buf[i])
				return -E2BIG;
	}
	memset(dst, 0, ksize);
	return copy_in(t->mm, dst, src, usize < ksize ? usize : ksize) ? -EFAULT : 0;
}

long arg_iovec(struct task *t, uintptr_t addr, unsigned int cnt, struct iovec **iov)
{
	uintptr_t top = platform_user_top();
	size_t total = 0;
	struct iovec *v;

	*iov = NULL;
	if (cnt > ARG_IOV_MAX)
		return -EINVAL;
	if (cnt == 0)
		return 0;
	if (!(v = malloc(cnt * sizeof(*v))))
		return -ENOMEM;
	if (copy_in(t->mm, v, addr, cnt * sizeof(*v))) {
		free(v);
		return -EFAULT;
	}
	/* Every length is checked before any address, as Linux reads the array. */
	for (unsigned int i = 0; i < cnt; i++)
		if (v[i].iov_len > SSIZE_MAX) {
			free(v);
			return -EINVAL;
		}
	for (unsigned int i = 0; i < cnt; i++) {
		uintptr_t base = (uintptr_t)v[i].iov_base;
		if (base > top || v[i].iov_len > top - base) {
			free(v);
			return -EFAULT;
		}
		if (v[i].iov_len > ARG_RW_MAX - total)
			v[i].iov_len = ARG_RW_MAX - total;
		total += v[i].iov_len;
	}
	*iov = v;
	return (long)total;
}

int arg_iovec_map(struct mm *mm, const struct iovec *giov, size_t cnt, size_t limit, int flags,
		  struct iovec *iov, int max, size_t *total)
{
	int n = 0;

	*total = 0;
	for (size_t i = 0; i < cnt && n < max && *total < limit; i++) {
		size_t len = giov[i].iov_len;
		if (len == 0)
			continue;
		if (len > limit - *total)
			len = limit - *total;
		int got = mm_iovecs(mm, (uintptr_t)giov[i].iov_base, len, flags & ARG_IOV_WRITE,
				    iov + n, max - n);
		if (got < 0)
			return n && !(flags & ARG_IOV_WHOLE) ? n : got;
		for (int k = 0; k < got; k++)
			*total += iov[n + k].iov_len;
		n += got;
	}
	return n;
}

int arg_iovec_advance(struct iovec *iov, int n, size_t skip)
{
	int i = 0;

	while (i < n && skip >= iov[i].iov_len)
		skip -= iov[i++].iov_len;
	if (i < n) {
		iov[i].iov_base = (char *)iov[i].iov_base + skip;
		iov[i].iov_len -= skip;
	}
	memmove(iov, iov + i, (n - i) * sizeof(*iov));
	return n - i;
}
