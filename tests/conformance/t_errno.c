/*
 * t_errno: the common error paths of the file syscalls: ENOENT, ENOTDIR, EBADF (read on a
 * closed fd, write on a read-only one), EFAULT (raw read into a bad pointer, bad and null
 * path pointers), ENAMETOOLONG (a 256-byte component, a path longer than PATH_MAX), ELOOP
 * (O_NOFOLLOW on a symlink), EISDIR (read on a directory). The descriptor's checks follow a
 * save point: its access mode (EBADF for a write) and offset are what the restore gave back.
 */
#include "check.h"
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

int main(void)
{
	char buf[64];
	char name[PATH_MAX + 64];
	struct stat st;

	CHECK_ERR(syscall(SYS_open, "/nonexistent", O_RDONLY), ENOENT);
	CHECK_ERR(syscall(SYS_open, "/nonexistent/x", O_RDONLY), ENOENT);
	CHECK_ERR(syscall(SYS_open, "/etc/passwd/x", O_RDONLY), ENOTDIR);
	CHECK_ERR(syscall(SYS_openat, AT_FDCWD, "/etc/hostname/", O_RDONLY), ENOTDIR);

	int fd = open("/etc/passwd", O_RDONLY);
	CHECK(fd >= 0);
	maybe_save(); /* a read-only descriptor */
	/* The kernel reports EFAULT; the read position is unchanged. */
	CHECK_ERR(syscall(SYS_read, fd, BAD_PTR, 16), EFAULT);
	CHECK_ERR(syscall(SYS_read, fd, (void *)0xffff800000000000UL, 16), EFAULT);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 0);
	CHECK_ERR(syscall(SYS_pread64, fd, BAD_PTR, 16, 0), EFAULT);
	CHECK_ERR(syscall(SYS_write, fd, "x", 1), EBADF);
	CHECK_EQ(close(fd), 0);
	CHECK_ERR(syscall(SYS_read, fd, buf, sizeof(buf)), EBADF);
	CHECK_ERR(syscall(SYS_read, -1, buf, sizeof(buf)), EBADF);
	CHECK_ERR(syscall(SYS_read, 1 << 30, buf, sizeof(buf)), EBADF);

	CHECK_ERR(syscall(SYS_open, BAD_PTR, O_RDONLY), EFAULT);
	CHECK_ERR(syscall(SYS_open, NULL, O_RDONLY), EFAULT);
	/* A null path is a bad pointer for the attribute calls too (only utimensat takes none). */
	struct statfs_buf {
		char b[256];
	} sfs;
	CHECK_ERR(syscall(SYS_statfs, NULL, &sfs), EFAULT);
	CHECK_ERR(syscall(SYS_chmod, NULL, 0644), EFAULT);
	CHECK_ERR(syscall(SYS_truncate, NULL, 0), EFAULT);
	CHECK_ERR(syscall(SYS_newfstatat, AT_FDCWD, NULL, &sfs, 0), EFAULT);

	/* A 255-byte component is legal (and missing); 256 bytes is too long. */
	name[0] = '/';
	memset(name + 1, 'a', 255);
	name[256] = '\0';
	CHECK_ERR(syscall(SYS_open, name, O_RDONLY), ENOENT);
	name[256] = 'a';
	name[257] = '\0';
	CHECK_ERR(syscall(SYS_open, name, O_RDONLY), ENAMETOOLONG);
	CHECK_ERR(syscall(SYS_access, name, F_OK), ENAMETOOLONG);

	/* A whole path of PATH_MAX bytes or more (without its NUL) is too long. */
	for (int i = 0; i < PATH_MAX + 8; i += 2) {
		name[i] = '/';
		name[i + 1] = '.';
	}
	name[PATH_MAX + 8] = '\0';
	CHECK_ERR(syscall(SYS_open, name, O_RDONLY), ENAMETOOLONG);
	CHECK_ERR(syscall(SYS_stat, name, &st), ENAMETOOLONG);
	/* Just under PATH_MAX, the same "/./././." path resolves to "/". */
	name[PATH_MAX - 2] = '\0';
	fd = syscall(SYS_open, name, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	close(fd);

	CHECK_ERR(syscall(SYS_open, "/bin/sh", O_RDONLY | O_NOFOLLOW), ELOOP);
	CHECK_ERR(syscall(SYS_openat, AT_FDCWD, "/bin/cat", O_RDONLY | O_NOFOLLOW), ELOOP);

	fd = open("/etc", O_RDONLY);
	CHECK(fd >= 0);
	CHECK_ERR(syscall(SYS_read, fd, buf, sizeof(buf)), EISDIR);
	close(fd);
	return check_done();
}
