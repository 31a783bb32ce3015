/*
 * t_fs_links: hard links (link/linkat: one inode, link counts, AT_SYMLINK_FOLLOW or not,
 * EEXIST, EPERM for directories) and symbolic links (symlink/symlinkat, readlink/readlinkat,
 * lstat versus stat, relative targets resolved from the link's directory, dangling links, a
 * trailing slash following the link, the 40-link limit and loops giving ELOOP).
 */
#include "check.h"
#include "scratch.h"
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

static void make_file(const char *path, const char *text)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int holds(const char *path, const char *text)
{
	char buf[128];
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf));
	close(fd);
	return n == (ssize_t)strlen(text) && memcmp(buf, text, n) == 0;
}

static void test_hard_links(void)
{
	struct stat a, b;

	make_file("f", "shared");
	CHECK_EQ(link("f", "g"), 0);
	CHECK_EQ(stat("f", &a), 0);
	CHECK_EQ(stat("g", &b), 0);
	CHECK_EQ(a.st_ino, b.st_ino);
	CHECK_EQ(a.st_dev, b.st_dev);
	CHECK_EQ(a.st_nlink, 2);
	CHECK_EQ(b.st_nlink, 2);
	/* A write through one name is read through the other. */
	int fd = open("g", O_WRONLY | O_APPEND);
	CHECK_EQ(write(fd, "+", 1), 1);
	close(fd);
	CHECK(holds("f", "shared+"));

	CHECK_EQ(mkdir("d", 0755), 0);
	int dfd = open("d", O_RDONLY | O_DIRECTORY);
	CHECK_EQ(linkat(AT_FDCWD, "f", dfd, "h", 0), 0);
	CHECK_EQ(stat("f", &a), 0);
	CHECK_EQ(a.st_nlink, 3);
	CHECK_EQ(unlink("g"), 0);
	CHECK_EQ(fstatat(dfd, "h", &b, 0), 0);
	CHECK_EQ(b.st_nlink, 2);
	CHECK_EQ(b.st_ino, a.st_ino);
	maybe_save();
	CHECK_EQ(stat("d/h", &b), 0);
	CHECK_EQ(b.st_nlink, 2);
	CHECK_EQ(b.st_ino, a.st_ino);
	CHECK(holds("d/h", "shared+"));
	close(dfd);

	CHECK_ERR(link("f", "d/h"), EEXIST);
	CHECK_ERR(link("f", "f"), EEXIST);
	CHECK_ERR(link("d", "dlink"), EPERM);
	CHECK_ERR(link("missing", "x"), ENOENT);
	CHECK_ERR(link("f", "missing/x"), ENOENT);
	CHECK_ERR(link("f", "f/x"), ENOTDIR);
	CHECK_ERR(link("f", "newdir/"), ENOENT);
	CHECK_ERR(link("", "x"), ENOENT);
	CHECK_ERR(linkat(AT_FDCWD, "f", AT_FDCWD, "x", 0x4), EINVAL);
	CHECK_ERR(linkat(9999, "f", AT_FDCWD, "x", 0), EBADF);
	CHECK_EQ(unlink("d/h"), 0);
	CHECK_EQ(stat("f", &a), 0);
	CHECK_EQ(a.st_nlink, 1);
}

static void test_linkat_symlink_follow(void)
{
	struct stat target, sl, l1, l2;

	CHECK_EQ(symlink("f", "sl"), 0);
	CHECK_EQ(stat("f", &target), 0);
	CHECK_EQ(lstat("sl", &sl), 0);
	/* Without AT_SYMLINK_FOLLOW (and with link(2)) the new name is for the link itself. */
	CHECK_EQ(linkat(AT_FDCWD, "sl", AT_FDCWD, "l_nofollow", 0), 0);
	CHECK_EQ(lstat("l_nofollow", &l1), 0);
	CHECK(S_ISLNK(l1.st_mode));
	CHECK_EQ(l1.st_ino, sl.st_ino);
	CHECK_EQ(l1.st_nlink, 2);
	CHECK_EQ(linkat(AT_FDCWD, "sl", AT_FDCWD, "l_follow", AT_SYMLINK_FOLLOW), 0);
	CHECK_EQ(lstat("l_follow", &l2), 0);
	CHECK(S_ISREG(l2.st_mode));
	CHECK_EQ(l2.st_ino, target.st_ino);
	CHECK_EQ(l2.st_nlink, 2);
	CHECK_EQ(unlink("l_nofollow"), 0);
	CHECK_EQ(unlink("l_follow"), 0);
	CHECK_EQ(symlink("missing", "dangling"), 0);
	CHECK_ERR(linkat(AT_FDCWD, "dangling", AT_FDCWD, "x", AT_SYMLINK_FOLLOW), ENOENT);
	CHECK_EQ(link("dangling", "dangling2"), 0);
	CHECK_EQ(unlink("dangling2"), 0);

	/* AT_EMPTY_PATH links the descriptor's file (we run as root) unless it has no name. */
	int fd = open("f", O_RDONLY);
	CHECK_EQ(linkat(fd, "", AT_FDCWD, "l_empty_path", AT_EMPTY_PATH), 0);
	CHECK_EQ(lstat("l_empty_path", &l1), 0);
	CHECK_EQ(l1.st_ino, target.st_ino);
	CHECK_EQ(unlink("l_empty_path"), 0);
	CHECK_ERR(linkat(fd, "", AT_FDCWD, "x", 0), ENOENT);
	close(fd);
	make_file("gone", "g");
	fd = open("gone", O_RDONLY);
	CHECK_EQ(unlink("gone"), 0);
	CHECK_ERR(linkat(fd, "", AT_FDCWD, "revived", AT_EMPTY_PATH), ENOENT);
	close(fd);
}

static void test_symlinks(void)
{
	char buf[64];
	struct stat st, lst;

	CHECK_EQ(symlink("f", "s1"), 0);
	CHECK_EQ(lstat("s1", &lst), 0);
	CHECK(S_ISLNK(lst.st_mode));
	CHECK_EQ(lst.st_mode & 07777, 0777);
	CHECK_EQ(lst.st_size, 1);
	CHECK_EQ(stat("s1", &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK(st.st_ino != lst.st_ino);
	CHECK(holds("s1", "shared+"));

	/* readlink returns the bytes without a NUL; a short buffer truncates silently. */
	memset(buf, 'x', sizeof(buf));
	CHECK_EQ(symlink("some/longer/../target", "s2"), 0);
	CHECK_EQ(readlink("s2", buf, sizeof(buf)), 21);
	CHECK_EQ(memcmp(buf, "some/longer/../target", 21), 0);
	CHECK_EQ(buf[21], 'x');
	CHECK_EQ(readlink("s2", buf, 4), 4);
	CHECK_EQ(memcmp(buf, "some", 4), 0);
	CHECK_ERR(syscall(SYS_readlink, "s2", buf, 0), EINVAL); /* musl's wrapper returns 0 */
	CHECK_ERR(readlink("f", buf, sizeof(buf)), EINVAL);
	CHECK_ERR(readlink("d", buf, sizeof(buf)), EINVAL);
	CHECK_ERR(readlink("missing", buf, sizeof(buf)), ENOENT);
	CHECK_ERR(readlink("s2/", buf, sizeof(buf)), ENOENT); /* follows, then misses */
	int dfd = open(".", O_RDONLY | O_DIRECTORY);
	CHECK_EQ(readlinkat(dfd, "s1", buf, sizeof(buf)), 1);
	CHECK_EQ(buf[0], 'f');
	CHECK_EQ(symlinkat("../f", dfd, "d/up"), 0);
	close(dfd);

	/* A relative target is resolved from the link's directory, not the cwd. */
	CHECK(holds("d/up", "shared+"));
	char abs[128];
	snprintf(abs, sizeof(abs), "%s/f", scratch_dir);
	CHECK_EQ(symlink(abs, "d/abs"), 0);
	CHECK(holds("d/abs", "shared+"));
	CHECK_EQ(readlink("d/abs", buf, sizeof(buf)), (ssize_t)strlen(abs));

	/* Links in the middle of a path, and a trailing slash following a link to a directory. */
	CHECK_EQ(symlink("d", "to_d"), 0);
	CHECK(holds("to_d/up", "shared+"));
	CHECK_EQ(lstat("to_d", &lst), 0);
	CHECK(S_ISLNK(lst.st_mode));
	CHECK_EQ(lstat("to_d/", &lst), 0);
	CHECK(S_ISDIR(lst.st_mode));
	CHECK_ERR(lstat("s1/", &lst), ENOTDIR);
	CHECK_ERR(stat("s1/x", &st), ENOTDIR);

	/* Dangling links: lstat works, stat and open do not. */
	CHECK_EQ(lstat("dangling", &lst), 0);
	CHECK(S_ISLNK(lst.st_mode));
	CHECK_ERR(stat("dangling", &st), ENOENT);
	CHECK_ERR(open("dangling", O_RDONLY), ENOENT);
	CHECK_ERR(access("dangling", F_OK), ENOENT);
	CHECK_EQ(faccessat(AT_FDCWD, "dangling", F_OK, AT_SYMLINK_NOFOLLOW), 0);

	CHECK_ERR(symlink("f", "s1"), EEXIST);
	CHECK_ERR(symlink("f", "f"), EEXIST);
	CHECK_ERR(symlink("f", "dangling"), EEXIST);
	CHECK_ERR(symlink("", "empty_target"), ENOENT);
	CHECK_ERR(symlink("f", "missing/x"), ENOENT);
	CHECK_ERR(symlink("f", ""), ENOENT);
	CHECK_ERR(symlinkat("f", 9999, "x"), EBADF);
	/* The target is stored as given: it need not exist and may be long. */
	char longtarget[1000];
	memset(longtarget, 'a', sizeof(longtarget) - 1);
	longtarget[sizeof(longtarget) - 1] = '\0';
	CHECK_EQ(symlink(longtarget, "longlink"), 0);
	char back[1100];
	CHECK_EQ(readlink("longlink", back, sizeof(back)), 999);
	CHECK_EQ(memcmp(back, longtarget, 999), 0);
	CHECK_EQ(lstat("longlink", &lst), 0);
	CHECK_EQ(lst.st_size, 999);
	/* Followed, its single 999-byte component is longer than NAME_MAX. */
	CHECK_ERR(stat("longlink", &st), ENAMETOOLONG);
}

static void test_symlink_limits(void)
{
	char name[32], target[32];
	struct stat st;

	/* chain0 -> chain1 -> ... -> chain40 -> f: 41 links to follow from chain0. */
	for (int i = 0; i <= 40; i++) {
		snprintf(name, sizeof(name), "chain%d", i);
		if (i == 40)
			snprintf(target, sizeof(target), "f");
		else
			snprintf(target, sizeof(target), "chain%d", i + 1);
		CHECK_EQ(symlink(target, name), 0);
	}
	CHECK_EQ(stat("chain1", &st), 0); /* 40 links: the limit */
	CHECK(S_ISREG(st.st_mode));
	CHECK_ERR(stat("chain0", &st), ELOOP); /* 41 */
	CHECK_ERR(open("chain0", O_RDONLY), ELOOP);
	CHECK_EQ(lstat("chain0", &st), 0);

	CHECK_EQ(symlink("self", "self"), 0);
	CHECK_EQ(symlink("loop_b", "loop_a"), 0);
	CHECK_EQ(symlink("loop_a", "loop_b"), 0);
	CHECK_ERR(stat("self", &st), ELOOP);
	CHECK_ERR(stat("loop_a", &st), ELOOP);
	CHECK_ERR(stat("loop_a/x", &st), ELOOP);
	CHECK_ERR(open("loop_b", O_CREAT | O_WRONLY, 0644), ELOOP);
	int fd = open("f", O_RDONLY | O_NOFOLLOW); /* O_NOFOLLOW only refuses links */
	CHECK(fd >= 0);
	close(fd);
	CHECK_ERR(open("s1", O_RDONLY | O_NOFOLLOW), ELOOP);
	CHECK_EQ(lstat("loop_a", &st), 0);
	CHECK(S_ISLNK(st.st_mode));
	CHECK_EQ(unlink("self"), 0);
}

int main(void)
{
	scratch_enter("t_fs_links");

	test_hard_links();
	test_linkat_symlink_follow();
	test_symlinks();
	test_symlink_limits();

	scratch_leave();
	return check_done();
}
