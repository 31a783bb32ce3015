/*
 * t_readlink: readlink/readlinkat return the target's length without a terminating NUL,
 * truncate silently to the buffer, resolve relative to a directory fd; a non-link is EINVAL,
 * a zero-sized buffer EINVAL, a missing path ENOENT, a bad buffer EFAULT.
 */
#include "check.h"
#include <fcntl.h>
#include <sys/stat.h>

int main(void)
{
	char buf[256];
	struct stat lst;

	memset(buf, 'X', sizeof(buf));
	long n = syscall(SYS_readlink, "/bin/sh", buf, sizeof(buf));
	CHECK(n > 0 && n < (long)sizeof(buf));
	CHECK_EQ(buf[n], 'X');
	buf[n] = '\0';
	CHECK(strstr(buf, "busybox") != NULL);
	CHECK_EQ(lstat("/bin/sh", &lst), 0);
	CHECK_EQ(lst.st_size, n);

	/* Truncation: exactly bufsiz bytes, no NUL. */
	char small[4];
	memset(small, 'X', sizeof(small));
	if (n > 3) {
		CHECK_EQ(syscall(SYS_readlink, "/bin/sh", small, 3), 3);
		CHECK(memcmp(small, buf, 3) == 0);
		CHECK_EQ(small[3], 'X');
	}

	int dfd = open("/bin", O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	maybe_save(); /* the directory fd readlinkat resolves from */
	char at[256];
	CHECK_EQ(syscall(SYS_readlinkat, dfd, "sh", at, sizeof(at)), n);
	CHECK(memcmp(at, buf, n) == 0);
	CHECK_EQ(readlinkat(AT_FDCWD, "/bin/sh", at, sizeof(at)), n);
	CHECK_EQ(readlink("/bin/sh", at, sizeof(at)), n);
	CHECK(memcmp(at, buf, n) == 0);
	/* An empty path names the fd itself, which is not a link. */
	CHECK_ERR(syscall(SYS_readlinkat, dfd, "", at, sizeof(at)), ENOENT);
	CHECK_ERR(syscall(SYS_readlinkat, dfd, "busybox", at, sizeof(at)), EINVAL);
	close(dfd);

	CHECK_ERR(syscall(SYS_readlink, "/etc/passwd", at, sizeof(at)), EINVAL);
	CHECK_ERR(syscall(SYS_readlink, "/etc", at, sizeof(at)), EINVAL);
	CHECK_ERR(syscall(SYS_readlink, "/bin/sh", at, 0), EINVAL);
	CHECK_ERR(syscall(SYS_readlink, "/etc/nonexistent", at, sizeof(at)), ENOENT);
	CHECK_ERR(syscall(SYS_readlink, "/etc/passwd/x", at, sizeof(at)), ENOTDIR);
	CHECK_ERR(syscall(SYS_readlink, "/bin/sh", BAD_PTR, sizeof(at)), EFAULT);
	return check_done();
}
