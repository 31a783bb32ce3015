/* t_xattr_fadvise: extended attributes and posix_fadvise answer as Linux does. A filesystem
 * may keep no extended attributes (minisentry's keep none, so in the sandbox this is the only
 * answer): then a listing is empty and getting or setting one is EOPNOTSUPP; if it keeps them
 * (natively, as the host's filesystem decides), what was set is read back and a missing one is
 * ENODATA. Either way the object is looked up first (ENOENT, EBADF, and l* calls do not follow
 * a symlink), names are checked (ERANGE) and so are a set's flags (EINVAL); a file and a
 * symlink made before a checkpoint answer the same after the restore. posix_fadvise takes any
 * valid advice on a file, refuses a pipe (ESPIPE), a bad descriptor (EBADF) and bad advice or
 * length (EINVAL). */
#include "check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

static char path[64], link_path[64];

static void test_xattrs(void)
{
	char value[16], list[256], longname[300];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0);
	CHECK_EQ(symlink(path, link_path), 0);
	maybe_save(); /* a new file, open, and a symlink to it */

	/* A set either works or the filesystem keeps none, as the sandbox's do. */
	errno = 0;
	int set = setxattr(path, "user.k", "v1", 2, 0);
	if (in_sandbox())
		CHECK_EQ(set, -1);
	CHECK(set == 0 || errno == EOPNOTSUPP);
	if (set == 0) {
		CHECK_EQ(getxattr(path, "user.k", value, sizeof(value)), 2);
		CHECK_EQ(fgetxattr(fd, "user.k", value, sizeof(value)), 2);
		CHECK(memcmp(value, "v1", 2) == 0);
		CHECK_ERR(getxattr(path, "user.missing", value, sizeof(value)), ENODATA);
		CHECK_ERR(setxattr(path, "user.k", "v2", 2, XATTR_CREATE), EEXIST);
		CHECK(listxattr(path, list, sizeof(list)) >= 7); /* "user.k\0" */
		CHECK_EQ(removexattr(path, "user.k"), 0);
	} else {
		CHECK_ERR(getxattr(path, "user.k", value, sizeof(value)), EOPNOTSUPP);
		CHECK_ERR(lgetxattr(link_path, "security.selinux", value, sizeof(value)),
			  EOPNOTSUPP);
		CHECK_ERR(fgetxattr(fd, "user.k", value, sizeof(value)), EOPNOTSUPP);
		CHECK_ERR(fsetxattr(fd, "user.k", "v", 1, 0), EOPNOTSUPP);
		CHECK_ERR(removexattr(path, "user.k"), EOPNOTSUPP);
		CHECK_EQ(listxattr(path, list, sizeof(list)), 0);
		CHECK_EQ(llistxattr(link_path, list, sizeof(list)), 0);
		CHECK_EQ(flistxattr(fd, list, sizeof(list)), 0);
	}

	/* The object first. */
	CHECK_ERR(getxattr("/nonexistent/x", "user.k", value, sizeof(value)), ENOENT);
	CHECK_ERR(syscall(SYS_getxattr, NULL, "user.k", value, sizeof(value)), EFAULT);
	CHECK_ERR(listxattr("/nonexistent/x", list, sizeof(list)), ENOENT);
	CHECK_ERR(fgetxattr(-1, "user.k", value, sizeof(value)), EBADF);
	CHECK_ERR(flistxattr(9999, list, sizeof(list)), EBADF);
	CHECK_ERR(fsetxattr(9999, "user.k", "v", 1, 0), EBADF);
	/* Names and flags. */
	memset(longname, 'a', sizeof(longname) - 1);
	memcpy(longname, "user.", 5);
	longname[sizeof(longname) - 1] = '\0';
	CHECK_ERR(getxattr(path, longname, value, sizeof(value)), ERANGE);
	CHECK_ERR(getxattr(path, "", value, sizeof(value)), ERANGE);
	CHECK_ERR(setxattr(path, longname, "v", 1, 0), ERANGE);
	CHECK_ERR(setxattr(path, "user.k", "v", 1, 0x100), EINVAL);

	close(fd);
	CHECK_EQ(unlink(link_path), 0);
	CHECK_EQ(unlink(path), 0);
}

static void test_fadvise(void)
{
	int fd = open("/etc/passwd", O_RDONLY), p[2];

	CHECK(fd >= 0);
	for (int advice = POSIX_FADV_NORMAL; advice <= POSIX_FADV_NOREUSE; advice++)
		CHECK_EQ(posix_fadvise(fd, 0, 0, advice), 0);
	CHECK_EQ(posix_fadvise(fd, 100, 4096, POSIX_FADV_WILLNEED), 0);
	/* posix_fadvise returns the error rather than setting errno. */
	CHECK_EQ(posix_fadvise(fd, 0, 0, 99), EINVAL);
	CHECK_EQ(posix_fadvise(fd, 0, -1, POSIX_FADV_NORMAL), EINVAL);
	CHECK_EQ(posix_fadvise(9999, 0, 0, POSIX_FADV_NORMAL), EBADF);
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(posix_fadvise(p[0], 0, 0, POSIX_FADV_NORMAL), ESPIPE);
	close(p[0]);
	close(p[1]);
	close(fd);
}

int main(void)
{
	snprintf(path, sizeof(path), "/tmp/t_xattr.%d", getpid());
	snprintf(link_path, sizeof(link_path), "/tmp/t_xattr.%d.link", getpid());
	test_xattrs();
	test_fadvise();
	return check_done();
}
