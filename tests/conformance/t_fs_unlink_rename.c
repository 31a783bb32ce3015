/*
 * t_fs_unlink_rename: unlink/unlinkat (AT_REMOVEDIR) and what survives them (an open file
 * stays readable and writable with no name), rename/renameat/renameat2 (RENAME_NOREPLACE,
 * RENAME_EXCHANGE) of files and directories, and the errno cases Linux gives: ENOENT, EISDIR,
 * ENOTDIR, ENOTEMPTY, EEXIST, EINVAL for a directory moved into itself, EBUSY for "." and "..".
 */
#include "check.h"
#include "scratch.h"
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

/* musl has no renameat2 wrapper and no <linux/fs.h>. */
#define RENAME_NOREPLACE_ 1
#define RENAME_EXCHANGE_ 2

static long renameat2_(int olddfd, const char *oldp, int newdfd, const char *newp, unsigned flags)
{
	return syscall(SYS_renameat2, olddfd, oldp, newdfd, newp, flags);
}

/* Creates path holding text; returns its inode number. */
static ino_t make_file(const char *path, const char *text)
{
	struct stat st;
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	CHECK_EQ(fstat(fd, &st), 0);
	close(fd);
	return st.st_ino;
}

/* 1 when path holds exactly text. */
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

static ino_t ino_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 ? st.st_ino : 0;
}

static long nlink_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 ? (long)st.st_nlink : -1;
}

static void test_unlink(void)
{
	make_file("u1", "one");
	CHECK_EQ(unlink("u1"), 0);
	CHECK_ERR(access("u1", F_OK), ENOENT);
	CHECK_ERR(unlink("u1"), ENOENT);
	CHECK_ERR(unlink("missing/u1"), ENOENT);
	CHECK_ERR(unlink(""), ENOENT);

	CHECK_EQ(mkdir("ud", 0755), 0);
	CHECK_ERR(unlink("ud"), EISDIR);
	CHECK_ERR(unlinkat(AT_FDCWD, "ud", 0), EISDIR);
	make_file("uf", "f");
	CHECK_ERR(unlinkat(AT_FDCWD, "uf", AT_REMOVEDIR), ENOTDIR);
	CHECK_ERR(unlinkat(AT_FDCWD, "uf", 0x1), EINVAL);
	CHECK_ERR(unlink("uf/"), ENOTDIR);
	CHECK_ERR(unlink("uf/x"), ENOTDIR);
	CHECK_ERR(unlink("."), EISDIR);

	/* unlinkat relative to a directory fd. */
	make_file("ud/inner", "i");
	int dfd = open("ud", O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	CHECK_EQ(unlinkat(dfd, "inner", 0), 0);
	CHECK_ERR(access("ud/inner", F_OK), ENOENT);
	CHECK_EQ(mkdirat(dfd, "sub", 0755), 0);
	CHECK_EQ(unlinkat(dfd, "sub", AT_REMOVEDIR), 0);
	CHECK_ERR(unlinkat(dfd, "sub", AT_REMOVEDIR), ENOENT);
	close(dfd);
	CHECK_EQ(unlinkat(AT_FDCWD, "ud", AT_REMOVEDIR), 0);

	/* Removing a symlink leaves its target. */
	CHECK_EQ(symlink("uf", "ul"), 0);
	CHECK_EQ(unlink("ul"), 0);
	CHECK(holds("uf", "f"));
	CHECK_EQ(symlink("missing", "dangling"), 0);
	CHECK_EQ(unlink("dangling"), 0);
	CHECK_EQ(unlink("uf"), 0);
}

static void test_open_file_survives_unlink(void)
{
	struct stat st;
	char buf[32];
	int fd = open("ghost", O_CREAT | O_RDWR, 0644);

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "still here", 10), 10);
	int fd2 = open("ghost", O_RDONLY);
	CHECK_EQ(unlink("ghost"), 0);
	CHECK_ERR(open("ghost", O_RDONLY), ENOENT);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_nlink, 0);
	CHECK_EQ(st.st_size, 10);
	maybe_save();
	/* Both descriptors still reach the nameless file, across a save too. */
	CHECK_EQ(pwrite(fd, "!", 1, 10), 1);
	CHECK_EQ(pread(fd2, buf, sizeof(buf), 0), 11);
	CHECK_EQ(memcmp(buf, "still here!", 11), 0);
	CHECK_EQ(fstat(fd2, &st), 0);
	CHECK_EQ(st.st_nlink, 0);
	/* A new file of the same name is a different file. */
	CHECK(make_file("ghost", "new") != st.st_ino);
	CHECK(holds("ghost", "new"));
	CHECK_EQ(pread(fd2, buf, sizeof(buf), 0), 11);
	close(fd);
	close(fd2);
	CHECK_EQ(unlink("ghost"), 0);
}

static void test_rename_files(void)
{
	char buf[16];
	ino_t a = make_file("ra", "AAA");

	CHECK_EQ(rename("ra", "rb"), 0);
	CHECK_ERR(access("ra", F_OK), ENOENT);
	CHECK_EQ(ino_of("rb"), a);
	CHECK(holds("rb", "AAA"));
	/* Renaming onto itself, or between two links of one file, does nothing. */
	CHECK_EQ(rename("rb", "rb"), 0);
	CHECK(holds("rb", "AAA"));
	CHECK_EQ(link("rb", "rb_link"), 0);
	CHECK_EQ(rename("rb", "rb_link"), 0);
	CHECK_EQ(ino_of("rb"), a);
	CHECK_EQ(ino_of("rb_link"), a);
	CHECK_EQ(nlink_of("rb"), 2);
	CHECK_EQ(unlink("rb_link"), 0);

	/* Over an existing file: the target is replaced, but an open fd keeps the old one. */
	ino_t c = make_file("rc", "CCC");
	int fd = open("rc", O_RDONLY);
	CHECK_EQ(rename("rb", "rc"), 0);
	CHECK_EQ(ino_of("rc"), a);
	CHECK(holds("rc", "AAA"));
	struct stat st;
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_ino, c);
	CHECK_EQ(st.st_nlink, 0);
	CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 3);
	CHECK_EQ(memcmp(buf, "CCC", 3), 0);
	close(fd);

	/* An open fd follows a renamed file. */
	fd = open("rc", O_RDWR);
	CHECK_EQ(rename("rc", "rd"), 0);
	CHECK_EQ(write(fd, "X", 1), 1);
	close(fd);
	CHECK(holds("rd", "XAA"));

	/* renameat across directory fds. */
	CHECK_EQ(mkdir("d1", 0755), 0);
	CHECK_EQ(mkdir("d2", 0755), 0);
	int d1 = open("d1", O_RDONLY | O_DIRECTORY), d2 = open("d2", O_RDONLY | O_DIRECTORY);
	CHECK_EQ(renameat(AT_FDCWD, "rd", d1, "moved"), 0);
	CHECK(holds("d1/moved", "XAA"));
	CHECK_EQ(renameat(d1, "moved", d2, "moved2"), 0);
	CHECK_EQ(ino_of("d2/moved2"), a);
	CHECK_EQ(renameat(d2, "moved2", AT_FDCWD, "back"), 0);
	CHECK_ERR(renameat(d1, "nothing", d2, "x"), ENOENT);
	CHECK_ERR(renameat(9999, "back", d2, "x"), EBADF);
	close(d1);
	close(d2);

	/* A symlink is renamed itself, not its target. */
	CHECK_EQ(symlink("back", "sl"), 0);
	CHECK_EQ(rename("sl", "sl2"), 0);
	struct stat lst;
	CHECK_EQ(lstat("sl2", &lst), 0);
	CHECK(S_ISLNK(lst.st_mode));
	CHECK(holds("sl2", "XAA"));
	CHECK_EQ(unlink("sl2"), 0);
}

static void test_rename_dirs(void)
{
	struct stat a, b;

	/* Moving a directory to another parent: ".." and the link counts follow. */
	CHECK_EQ(mkdir("d1/sub", 0755), 0);
	make_file("d1/sub/f", "in sub");
	CHECK_EQ(nlink_of("d1"), 3);
	CHECK_EQ(nlink_of("d2"), 2);
	CHECK_EQ(rename("d1/sub", "d2/sub"), 0);
	CHECK_EQ(nlink_of("d1"), 2);
	CHECK_EQ(nlink_of("d2"), 3);
	CHECK(holds("d2/sub/f", "in sub"));
	CHECK_EQ(stat("d2/sub/..", &a), 0);
	CHECK_EQ(stat("d2", &b), 0);
	CHECK_EQ(a.st_ino, b.st_ino);

	/* Over an empty directory it replaces it; over a non-empty one, ENOTEMPTY. */
	CHECK_EQ(mkdir("empty", 0755), 0);
	CHECK_EQ(rename("d2/sub", "empty"), 0);
	CHECK(holds("empty/f", "in sub"));
	CHECK_EQ(nlink_of("d2"), 2);
	CHECK_EQ(mkdir("d2/x", 0755), 0);
	CHECK_ERR(rename("empty", "d2"), ENOTEMPTY);
	CHECK_ERR(rename("d1", "d2"), ENOTEMPTY);
	CHECK_EQ(rename("d1", "d2/x"), 0);
	CHECK_ERR(access("d1", F_OK), ENOENT);

	/* Into its own subtree: EINVAL; "." and "..": EBUSY. */
	CHECK_ERR(rename("d2", "d2/x/inside"), EINVAL);
	CHECK_ERR(rename("d2", "d2/new"), EINVAL);
	CHECK_ERR(rename(".", "dot"), EBUSY);
	CHECK_ERR(rename("d2/x/..", "dotdot"), EBUSY);
	CHECK_ERR(rename("empty", "d2/."), EBUSY);

	/* Kinds must match: file over directory EISDIR, directory over file ENOTDIR. */
	make_file("file", "F");
	CHECK_EQ(mkdir("edir", 0755), 0);
	CHECK_ERR(rename("file", "edir"), EISDIR);
	CHECK_ERR(rename("edir", "file"), ENOTDIR);
	CHECK_ERR(rename("file", "newname/"), ENOTDIR);
	CHECK_ERR(rename("file/", "newname"), ENOTDIR);
	CHECK_EQ(rename("edir/", "edir2/"), 0);
	CHECK_ERR(rename("missing", "x"), ENOENT);
	CHECK_ERR(rename("file", "missing/x"), ENOENT);
	CHECK_ERR(rename("file", "file/x"), ENOTDIR);
	CHECK_ERR(rename("", "x"), ENOENT);
	CHECK(holds("file", "F"));
}

static void test_renameat2(void)
{
	ino_t p = make_file("p", "PPP"), q = make_file("q", "QQ");

	CHECK_ERR(renameat2_(AT_FDCWD, "p", AT_FDCWD, "q", RENAME_NOREPLACE_), EEXIST);
	CHECK(holds("p", "PPP"));
	CHECK_EQ(renameat2_(AT_FDCWD, "p", AT_FDCWD, "p2", RENAME_NOREPLACE_), 0);
	CHECK_EQ(ino_of("p2"), p);
	CHECK_EQ(renameat2_(AT_FDCWD, "p2", AT_FDCWD, "p", 0), 0);

	/* RENAME_EXCHANGE swaps two names atomically, of any kinds. */
	CHECK_EQ(renameat2_(AT_FDCWD, "p", AT_FDCWD, "q", RENAME_EXCHANGE_), 0);
	CHECK_EQ(ino_of("p"), q);
	CHECK_EQ(ino_of("q"), p);
	CHECK(holds("p", "QQ"));
	CHECK(holds("q", "PPP"));
	CHECK_EQ(mkdir("xd", 0755), 0);
	make_file("xd/inside", "I");
	ino_t xd = ino_of("xd");
	CHECK_EQ(renameat2_(AT_FDCWD, "xd", AT_FDCWD, "q", RENAME_EXCHANGE_), 0);
	CHECK_EQ(ino_of("q"), xd);
	CHECK_EQ(ino_of("xd"), p);
	CHECK(holds("q/inside", "I"));
	CHECK(holds("xd", "PPP"));
	CHECK_ERR(renameat2_(AT_FDCWD, "p", AT_FDCWD, "nothing", RENAME_EXCHANGE_), ENOENT);
	CHECK_ERR(renameat2_(AT_FDCWD, "nothing", AT_FDCWD, "p", RENAME_EXCHANGE_), ENOENT);
	CHECK_ERR(renameat2_(AT_FDCWD, "p", AT_FDCWD, "q", RENAME_EXCHANGE_ | RENAME_NOREPLACE_),
		  EINVAL);
	CHECK_ERR(renameat2_(AT_FDCWD, "p", AT_FDCWD, "q", 0x100), EINVAL);
	CHECK_ERR(renameat2_(AT_FDCWD, "q", AT_FDCWD, "q/inside", RENAME_EXCHANGE_), EINVAL);
}

int main(void)
{
	scratch_enter("t_fs_unlink_rename");

	test_unlink();
	test_open_file_survives_unlink();
	test_rename_files();
	test_rename_dirs();
	test_renameat2();

	scratch_leave();
	return check_done();
}
