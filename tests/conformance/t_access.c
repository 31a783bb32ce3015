/*
 * t_access: access/faccessat: F_OK and R_OK on existing files and directories, X_OK on the
 * busybox binary and through the /bin/sh symlink; ENOENT for missing names, ENOTDIR for a
 * file used as a directory, EINVAL for an unknown mode, EBADF for a bad dirfd. A directory fd
 * opened before a checkpoint still resolves names after the restore.
 */
#include "check.h"
#include <fcntl.h>

int main(void)
{
	CHECK_EQ(syscall(SYS_access, "/etc/passwd", F_OK), 0);
	CHECK_EQ(syscall(SYS_access, "/etc/passwd", R_OK), 0);
	CHECK_EQ(syscall(SYS_access, "/etc", R_OK | X_OK), 0);
	CHECK_EQ(syscall(SYS_access, "/", F_OK), 0);
	CHECK_EQ(syscall(SYS_access, "/bin/busybox", X_OK), 0);
	CHECK_EQ(syscall(SYS_access, "/bin/sh", R_OK | X_OK), 0);
	CHECK_EQ(access("/etc/group", R_OK), 0);

	int dfd = open("/etc", O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	maybe_save(); /* the directory fd the *at calls below resolve from */
	CHECK_EQ(syscall(SYS_faccessat, dfd, "passwd", R_OK), 0);
	CHECK_EQ(syscall(SYS_faccessat, AT_FDCWD, "/etc/hostname", F_OK), 0);
	CHECK_EQ(faccessat(dfd, "group", F_OK, 0), 0);
	CHECK_ERR(syscall(SYS_faccessat, dfd, "missing", F_OK), ENOENT);
	CHECK_ERR(syscall(SYS_faccessat, 999, "passwd", F_OK), EBADF);
	/* An absolute path ignores the dirfd. */
	CHECK_EQ(syscall(SYS_faccessat, 999, "/etc/passwd", F_OK), 0);
	int file = open("/etc/passwd", O_RDONLY);
	CHECK(file >= 0);
	CHECK_ERR(syscall(SYS_faccessat, file, "x", F_OK), ENOTDIR);
	close(file);
	close(dfd);

	CHECK_ERR(syscall(SYS_access, "/etc/missing", F_OK), ENOENT);
	CHECK_ERR(syscall(SYS_access, "/missing/passwd", F_OK), ENOENT);
	CHECK_ERR(syscall(SYS_access, "/etc/passwd/", F_OK), ENOTDIR);
	CHECK_ERR(syscall(SYS_access, "/etc/passwd/x", R_OK), ENOTDIR);
	CHECK_ERR(syscall(SYS_access, "", F_OK), ENOENT);
	CHECK_ERR(syscall(SYS_access, "/etc/passwd", 0x100), EINVAL);
	CHECK_ERR(syscall(SYS_access, BAD_PTR, F_OK), EFAULT);
	CHECK_ERR(access("/etc/missing", R_OK), ENOENT);
	return check_done();
}
