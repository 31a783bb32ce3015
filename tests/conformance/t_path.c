/*
 * t_path: path resolution: "." and ".." components (".." at the root stays there), repeated
 * slashes, trailing slashes (allowed on directories, ENOTDIR on files), symlinks followed in
 * the last and in the middle of a path, absolute paths ignoring the dirfd, and relative paths
 * needing a valid one; relative paths start at the cwd and at a directory fd, both kept
 * across a checkpoint and restore.
 */
#include "check.h"
#include <fcntl.h>
#include <sys/stat.h>

static int same(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
		return 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int opens(const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

int main(void)
{
	CHECK(same("/etc/passwd", "/etc/../etc/./passwd"));
	CHECK(same("/etc/passwd", "//etc///passwd"));
	CHECK(same("/etc/passwd", "/../../etc/passwd"));
	CHECK(same("/etc/passwd", "/./etc/.././etc/passwd"));
	CHECK(same("/", "/.."));
	CHECK(same("/", "/etc/.."));
	CHECK(same("/", "/etc/../.."));
	CHECK(same("/etc", "/etc/"));
	CHECK(same("/etc", "/etc/."));
	CHECK(same("/etc", "/etc//."));
	CHECK(same("/bin/busybox", "/bin/sh"));
	CHECK(same("/bin/busybox", "/bin/../bin/sh"));
	CHECK(!same("/etc", "/bin"));

	CHECK(opens("/etc/passwd", O_RDONLY));
	CHECK(opens("/etc/", O_RDONLY | O_DIRECTORY));
	CHECK(opens("/etc/.", O_RDONLY));
	CHECK(opens("/bin/sh", O_RDONLY));
	CHECK_ERR(open("/etc/passwd/", O_RDONLY), ENOTDIR);
	CHECK_ERR(open("/etc/passwd/.", O_RDONLY), ENOTDIR);
	CHECK_ERR(open("/etc/passwd/..", O_RDONLY), ENOTDIR);
	CHECK_ERR(open("/etc/missing/..", O_RDONLY), ENOENT);
	CHECK_ERR(open("/bin/sh/", O_RDONLY), ENOTDIR);

	/* Symlinks followed through the last component: /bin/sh reads as the busybox ELF. */
	int fd = open("/bin/sh", O_RDONLY);
	CHECK(fd >= 0);
	char magic[4];
	CHECK_EQ(read(fd, magic, 4), 4);
	CHECK(memcmp(magic, "\177ELF", 4) == 0);
	close(fd);

	/* O_NOFOLLOW only concerns the last component; O_PATH|O_NOFOLLOW opens the link. */
	CHECK_ERR(open("/bin/sh", O_RDONLY | O_NOFOLLOW), ELOOP);
	CHECK(opens("/bin/../etc/passwd", O_RDONLY | O_NOFOLLOW));

	/* Absolute paths ignore the dirfd, even an invalid one. */
	fd = syscall(SYS_openat, 12345, "/etc/passwd", O_RDONLY);
	CHECK(fd >= 0);
	close(fd);
	CHECK_ERR(syscall(SYS_openat, 12345, "etc/passwd", O_RDONLY), EBADF);

	/* Relative to a directory fd, ".." climbs out of it. */
	int dfd = open("/etc", O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	CHECK_EQ(chdir("/bin"), 0);
	maybe_save(); /* a directory fd, and a cwd that is not the root */
	CHECK(same("sh", "/bin/busybox"));
	CHECK(same("../etc/passwd", "/etc/passwd"));
	CHECK(same(".", "/bin"));
	CHECK(same("..", "/"));
	fd = openat(dfd, "../bin/busybox", O_RDONLY);
	CHECK(fd >= 0);
	close(fd);
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	struct stat a, b;
	CHECK_EQ(fstat(fd, &a), 0);
	CHECK_EQ(fstat(dfd, &b), 0);
	CHECK_EQ(a.st_ino, b.st_ino);
	close(fd);
	close(dfd);

	/* With cwd "/", relative paths resolve from the root. */
	CHECK_EQ(chdir("/"), 0);
	CHECK(same("etc/passwd", "/etc/passwd"));
	CHECK(same("./etc/../etc/passwd", "/etc/passwd"));
	CHECK(same("..", "/"));
	return check_done();
}
