/* memfd_create: an anonymous tmpfs file. Each is created in a tmpfs instance that is mounted
 * nowhere and unlinked at once, so it lives exactly as long as its open file description,
 * its data is in the memory file (mmap shares it) and fstat shows a regular file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "sentry/mm.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "vfs/vfs.h"

#define MFD_NAME_MAX 249
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U /* Linux 6.3 */
#define MFD_EXEC 0x0010U
#endif

static struct vfs_dentry *memfd_root;

long sys_memfd_create(struct task *t, const unsigned long *a)
{
	static unsigned long seq;
	char name[MFD_NAME_MAX + 1], path[MFD_NAME_MAX + 48];
	unsigned int flags = arg_uint(a, 1);
	struct vfs_file *f;
	long err;

	const unsigned int known = MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC | MFD_NOEXEC_SEAL;
	if (flags & ~known)
		return syscall_unsupported(t, -EINVAL, "flags %#x", flags & ~known);
	if ((flags & MFD_EXEC) && (flags & MFD_NOEXEC_SEAL))
		return -EINVAL;
	long n = copy_string_in(t->mm, name, a[0], sizeof(name));
	if (n == -ENAMETOOLONG)
		return -EINVAL;
	if (n < 0)
		return n;
	if (!memfd_root && (err = vfs_tmpfs_new(&memfd_root)))
		return err;
	struct vfs_fs_ctx fs = {.root = memfd_root, .cwd = memfd_root, .umask = 0};
	struct vfs_cred cred = task_fs_cred(t);
	/* The name only has to be unique for the instant between create and unlink. */
	snprintf(path, sizeof(path), "/%lu-%s", seq++, name);
	for (char *p = path + 1; *p; p++)
		if (*p == '/')
			*p = '_';
	if ((err = vfs_open_cred(&fs, &cred, NULL, path, O_RDWR | O_CREAT | O_EXCL, 0777, &f)))
		return err;
	vfs_unlink(&fs, &cred, NULL, path);
	/* MFD_NOEXEC_SEAL: not executable, and sealed so (F_SEAL_EXEC), sealing allowed. */
	if (flags & (MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL))
		vfs_file_allow_sealing(f);
	if ((flags & MFD_NOEXEC_SEAL) && (err = vfs_file_seal_noexec(f))) {
		vfs_file_put(f);
		return err;
	}
	return task_install_file(t, f, flags & MFD_CLOEXEC);
}
