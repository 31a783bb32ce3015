/*
 * t_open_read: open/openat/read/close on files of the rootfs: sequential reads in small
 * chunks give the same bytes as one large read, EOF reads 0, the lowest free descriptor is
 * reused, openat resolves relative to a directory fd, and the open flags that cannot apply
 * (O_DIRECTORY on a file, write access to a directory) fail.
 */
#include "check.h"
#include <fcntl.h>

int main(void)
{
	char whole[8192], part[8192];
	int fd = open("/etc/passwd", O_RDONLY);

	CHECK(fd >= 3);
	ssize_t n = read(fd, whole, sizeof(whole));
	CHECK(n > 0 && n < (ssize_t)sizeof(whole));
	CHECK(strncmp(whole, "root:", 5) == 0);
	CHECK_EQ(read(fd, part, sizeof(part)), 0);
	CHECK_EQ(read(fd, part, sizeof(part)), 0);
	CHECK_EQ(syscall(SYS_close, fd), 0);
	CHECK_ERR(syscall(SYS_close, fd), EBADF);
	CHECK_ERR(read(fd, part, 1), EBADF);

	/* Reading 7 bytes at a time through the raw syscall reassembles the file. */
	fd = syscall(SYS_openat, AT_FDCWD, "/etc/passwd", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 3);
	ssize_t got = 0, r;
	while ((r = syscall(SYS_read, fd, part + got, 7)) > 0) {
		CHECK(r <= 7);
		got += r;
		if (got == 14)
			maybe_save();
	}
	CHECK_EQ(r, 0);
	CHECK_EQ(got, n);
	CHECK(memcmp(part, whole, n) == 0);
	CHECK_EQ(syscall(SYS_read, fd, part, 0), 0);

	/* The lowest free descriptor is handed out. */
	int fd2 = open("/etc/group", O_RDONLY);
	int fd3 = open("/etc/hostname", O_RDONLY);
	CHECK(fd2 > fd && fd3 > fd2);
	CHECK_EQ(close(fd2), 0);
	int fd4 = open("/etc/hostname", O_RDONLY);
	CHECK_EQ(fd4, fd2);
	char host[256];
	ssize_t hn = read(fd4, host, sizeof(host));
	CHECK(hn > 0);
	CHECK_EQ(read(fd3, part, sizeof(part)), hn);
	CHECK(memcmp(part, host, hn) == 0);
	close(fd3);
	close(fd4);

	/* openat relative to a directory fd. */
	int dfd = open("/etc", O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	int rel = openat(dfd, "passwd", O_RDONLY);
	CHECK(rel >= 0);
	CHECK_EQ(read(rel, part, sizeof(part)), n);
	CHECK(memcmp(part, whole, n) == 0);
	close(rel);
	CHECK_ERR(openat(dfd, "nonexistent", O_RDONLY), ENOENT);
	CHECK_ERR(openat(fd, "passwd", O_RDONLY), ENOTDIR);
	CHECK_ERR(openat(12345, "passwd", O_RDONLY), EBADF);
	close(dfd);
	close(fd);

	CHECK_ERR(open("/etc/passwd", O_RDONLY | O_DIRECTORY), ENOTDIR);
	CHECK_ERR(open("/etc", O_WRONLY), EISDIR);
	CHECK_ERR(open("/etc", O_RDWR), EISDIR);
	CHECK_ERR(open("/etc/nonexistent", O_RDONLY), ENOENT);
	CHECK_ERR(syscall(SYS_close, -1), EBADF);
	CHECK_ERR(syscall(SYS_close, 100000), EBADF);
	/* A directory opens read-only without O_DIRECTORY, but read() on it is EISDIR. */
	dfd = open("/", O_RDONLY);
	CHECK(dfd >= 0);
	CHECK_ERR(read(dfd, part, sizeof(part)), EISDIR);
	close(dfd);
	return check_done();
}
