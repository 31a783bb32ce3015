/* inotify_init, inotify_init1, inotify_add_watch and inotify_rm_watch: argument checks in
 * Linux's order, path resolution with the caller's credentials, then vfs/inotify.c, which
 * keeps the instances and watches and hears of the VFS's operations. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/inotify.h>

#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "vfs/inotify.h"
#include "vfs/vfs.h"

/* Every bit inotify_add_watch knows (Linux's ALL_INOTIFY_BITS): a mask with none is EINVAL. */
#define INOTIFY_KNOWN_BITS                                                                         \
	(IN_ALL_EVENTS | IN_UNMOUNT | IN_Q_OVERFLOW | IN_IGNORED | IN_ONLYDIR | IN_DONT_FOLLOW |   \
	 IN_EXCL_UNLINK | IN_MASK_ADD | IN_MASK_CREATE | IN_ISDIR | IN_ONESHOT)

long sys_inotify_init1(struct task *t, const unsigned long *a)
{
	int flags = arg_int(a, 0);
	struct vfs_file *f;
	long err;

	if (flags & ~(IN_CLOEXEC | IN_NONBLOCK))
		return -EINVAL;
	/* Limits count per real user, as Linux's ucounts do. */
	if ((err =
		 vfs_inotify_new(flags & IN_NONBLOCK ? O_NONBLOCK : 0, task_real_cred(t).uid, &f)))
		return err;
	return task_install_file(t, f, flags & IN_CLOEXEC);
}

long sys_inotify_init(struct task *t, const unsigned long *a)
{
	const unsigned long none[6] = {0};

	(void)a;
	return sys_inotify_init1(t, none);
}

long sys_inotify_add_watch(struct task *t, const unsigned long *a)
{
	uint32_t mask = arg_uint(a, 2);
	struct vfs_cred cred = task_fs_cred(t);
	struct vfs_file *f;
	struct vfs_dentry *d;
	char path[PATH_MAX];
	long err;

	if ((mask & IN_MASK_ADD) && (mask & IN_MASK_CREATE))
		return -EINVAL;
	if (!(mask & INOTIFY_KNOWN_BITS))
		return -EINVAL;
	if (!(f = arg_file_nopath(t, arg_int(a, 0))))
		return -EBADF;
	if (!vfs_is_inotify(f))
		return -EINVAL;
	if ((err = arg_path(t, a[1], path)))
		return err;
	if (!path[0])
		return -ENOENT;
	err = vfs_lookup_cred(t->fs, &cred, NULL, path,
			      (mask & IN_DONT_FOLLOW ? 0 : VFS_LOOKUP_FOLLOW) |
				  (mask & IN_ONLYDIR ? VFS_LOOKUP_DIRECTORY : 0),
			      &d);
	if (err)
		return err;
	/* Watching needs read permission on the object (inotify_find_inode). */
	err = vfs_permission(d, &cred, R_OK);
	if (!err)
		err = vfs_inotify_add_watch(f, d, mask);
	vfs_dentry_put(d);
	return err;
}

long sys_inotify_rm_watch(struct task *t, const unsigned long *a)
{
	struct vfs_file *f = arg_file_nopath(t, arg_int(a, 0));

	if (!f)
		return -EBADF;
	if (!vfs_is_inotify(f))
		return -EINVAL;
	return vfs_inotify_rm_watch(f, arg_int(a, 1));
}
