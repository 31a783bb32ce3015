/*
 * t_fs_create: creating and opening files in a private directory under /tmp: O_CREAT with
 * O_EXCL and O_TRUNC, creat, the umask applied to new modes, O_APPEND (pwrite appends too),
 * O_DIRECTORY, O_NOFOLLOW, O_PATH descriptors, O_CLOEXEC, O_TMPFILE made visible with linkat,
 * and the errno cases EEXIST, EISDIR, ENOTDIR, ENOENT, ELOOP, ENAMETOOLONG and EINVAL.
 */
#include "check.h"
#include "scratch.h"
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

static mode_t mode_of(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return (mode_t)-1;
	return st.st_mode;
}

static off_t size_of(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return -1;
	return st.st_size;
}

static void test_create_modes_follow_umask(void)
{
	CHECK_EQ(umask(022), 022); /* main set it */
	int fd = open("a", O_CREAT | O_WRONLY, 0666);
	CHECK(fd >= 0);
	CHECK_EQ(mode_of("a"), S_IFREG | 0644);
	struct stat st;
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 0);
	CHECK_EQ(st.st_nlink, 1);
	CHECK_EQ(st.st_uid, geteuid());
	CHECK_EQ(fcntl(fd, F_GETFL) & O_ACCMODE, O_WRONLY);
	close(fd);

	CHECK_EQ(umask(077), 022);
	fd = open("b", O_CREAT | O_RDWR, 0666);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(mode_of("b"), S_IFREG | 0600);
	CHECK_EQ(umask(0), 077);
	/* File-type bits in the mode are ignored; set-id and sticky bits are kept. */
	fd = open("c", O_CREAT | O_WRONLY, S_IFDIR | 0777);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(mode_of("c"), S_IFREG | 0777);
	fd = open("d", O_CREAT | O_WRONLY, 04751);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(mode_of("d"), S_IFREG | 04751);
	/* The mode of an existing file is left alone. */
	fd = open("b", O_CREAT | O_RDWR, 0777);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(mode_of("b"), S_IFREG | 0600);
	umask(022);
}

static void test_excl_and_trunc(void)
{
	char buf[32];
	int fd = open("e", O_CREAT | O_EXCL | O_RDWR, 0644);

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	close(fd);
	CHECK_ERR(open("e", O_CREAT | O_EXCL | O_RDWR, 0644), EEXIST);
	CHECK_ERR(open(".", O_CREAT | O_EXCL | O_RDONLY, 0644), EEXIST);
	/* Without O_TRUNC the data stays; O_CREAT on an existing file just opens it. */
	fd = open("e", O_CREAT | O_RDWR, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(read(fd, buf, sizeof(buf)), 10);
	close(fd);
	CHECK_EQ(size_of("e"), 10);
	fd = open("e", O_WRONLY | O_TRUNC);
	CHECK(fd >= 0);
	CHECK_EQ(size_of("e"), 0);
	CHECK_EQ(write(fd, "xy", 2), 2);
	close(fd);
	CHECK_EQ(size_of("e"), 2);

	/* creat is O_CREAT|O_WRONLY|O_TRUNC. */
	fd = open("e", O_WRONLY | O_APPEND);
	CHECK_EQ(write(fd, "more", 4), 4);
	close(fd);
	CHECK_EQ(size_of("e"), 6);
	fd = creat("e", 0600);
	CHECK(fd >= 0);
	CHECK_EQ(size_of("e"), 0);
	CHECK_EQ(mode_of("e"), S_IFREG | 0644); /* existing: mode unchanged */
	CHECK_EQ(fcntl(fd, F_GETFL) & O_ACCMODE, O_WRONLY);
	CHECK_ERR(read(fd, buf, 1), EBADF);
	close(fd);
	fd = creat("f", 0640);
	CHECK(fd >= 0);
	CHECK_EQ(mode_of("f"), S_IFREG | 0640);
	close(fd);
	fd = syscall(SYS_creat, "g", 0600);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(mode_of("g"), S_IFREG | 0600);
}

static void test_append(void)
{
	char buf[32];
	int fd = open("app", O_CREAT | O_RDWR | O_APPEND, 0644);

	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_APPEND, O_APPEND);
	CHECK_EQ(write(fd, "abc", 3), 3);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(write(fd, "def", 3), 3);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 6);
	/* Linux appends on pwrite to an O_APPEND descriptor, whatever the offset. */
	CHECK_EQ(pwrite(fd, "gh", 2, 1), 2);
	CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 8);
	CHECK_EQ(memcmp(buf, "abcdefgh", 8), 0);
	/* Clearing O_APPEND with F_SETFL makes writes positional again. */
	CHECK_EQ(fcntl(fd, F_SETFL, 0), 0);
	CHECK_EQ(pwrite(fd, "X", 1, 0), 1);
	CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 8);
	CHECK_EQ(memcmp(buf, "Xbcdefgh", 8), 0);
	close(fd);
	/* A second descriptor without O_APPEND writes where it is. */
	int fd2 = open("app", O_WRONLY);
	fd = open("app", O_WRONLY | O_APPEND);
	CHECK_EQ(write(fd2, "12", 2), 2);
	CHECK_EQ(write(fd, "34", 2), 2);
	CHECK_EQ(size_of("app"), 10);
	close(fd);
	close(fd2);
}

static void test_directory_and_errors(void)
{
	char longname[300];

	CHECK_EQ(mkdir("sub", 0755), 0);
	int fd = open("sub", O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	int in = openat(fd, "inner", O_CREAT | O_WRONLY | O_EXCL, 0644);
	CHECK(in >= 0);
	close(in);
	CHECK(S_ISREG(mode_of("sub/inner")));
	close(fd);

	CHECK_ERR(open("a", O_RDONLY | O_DIRECTORY), ENOTDIR);
	CHECK_ERR(open("sub", O_WRONLY), EISDIR);
	CHECK_ERR(open("sub", O_RDWR), EISDIR);
	CHECK_ERR(open("sub", O_CREAT | O_RDONLY, 0644), EISDIR);
	CHECK_ERR(open("sub", O_RDONLY | O_TRUNC), EISDIR);
	CHECK_ERR(open("a/x", O_RDONLY), ENOTDIR);
	CHECK_ERR(open("a/x", O_CREAT | O_WRONLY, 0644), ENOTDIR);
	CHECK_ERR(open("a/", O_RDONLY), ENOTDIR);
	/* A trailing slash names a directory, which O_CREAT cannot make. */
	CHECK_ERR(open("newfile/", O_CREAT | O_WRONLY, 0644), EISDIR);
	CHECK_ERR(access("newfile", F_OK), ENOENT);
	CHECK_ERR(open("missing", O_RDONLY), ENOENT);
	CHECK_ERR(open("missing/x", O_CREAT | O_WRONLY, 0644), ENOENT);
	CHECK_ERR(open("", O_RDONLY), ENOENT);
	CHECK_ERR(open("", O_CREAT | O_WRONLY, 0644), ENOENT);
	CHECK_ERR(syscall(SYS_open, BAD_PTR, O_RDONLY), EFAULT);

	memset(longname, 'n', 256);
	longname[256] = '\0';
	CHECK_ERR(open(longname, O_CREAT | O_WRONLY, 0644), ENAMETOOLONG);
	CHECK_ERR(open(longname, O_RDONLY), ENAMETOOLONG);
	longname[255] = '\0'; /* NAME_MAX itself is fine */
	fd = open(longname, O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(unlink(longname), 0);
}

static void test_symlinks_and_nofollow(void)
{
	struct stat st;
	char buf[16];

	CHECK_EQ(symlink("a", "to_a"), 0);
	CHECK_EQ(symlink("created_through_link", "dangling"), 0);
	CHECK_EQ(symlink("loop2", "loop1"), 0);
	CHECK_EQ(symlink("loop1", "loop2"), 0);
	CHECK_EQ(symlink("sub", "to_sub"), 0);

	int fd = open("to_a", O_RDONLY);
	CHECK(fd >= 0);
	close(fd);
	CHECK_ERR(open("to_a", O_RDONLY | O_NOFOLLOW), ELOOP);
	CHECK_ERR(open("to_a", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
	/* Only the last component is affected by O_NOFOLLOW. */
	fd = open("to_sub/inner", O_RDONLY | O_NOFOLLOW);
	CHECK(fd >= 0);
	close(fd);
	CHECK_ERR(open("loop1", O_RDONLY), ELOOP);
	CHECK_ERR(open("loop1/x", O_RDONLY), ELOOP);
	CHECK_ERR(open("loop1", O_CREAT | O_WRONLY, 0644), ELOOP);

	/* O_CREAT through a dangling link creates the target; with O_EXCL it refuses. */
	CHECK_ERR(open("dangling", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
	CHECK_ERR(access("created_through_link", F_OK), ENOENT);
	fd = open("dangling", O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "via", 3), 3);
	close(fd);
	CHECK_EQ(mode_of("created_through_link"), S_IFREG | 0600);
	CHECK_EQ(size_of("created_through_link"), 3);
	CHECK(S_ISLNK(mode_of("dangling")));

	/* O_PATH|O_NOFOLLOW opens the link itself. */
	fd = open("to_a", O_PATH | O_NOFOLLOW);
	CHECK(fd >= 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK(S_ISLNK(st.st_mode));
	CHECK_EQ(readlinkat(fd, "", buf, sizeof(buf)), 1);
	CHECK_EQ(buf[0], 'a');
	close(fd);
}

static void test_o_path(void)
{
	struct stat st, st2;
	char buf[8];
	int fd = open("e", O_PATH);

	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_PATH, O_PATH);
	CHECK_ERR(read(fd, buf, 1), EBADF);
	CHECK_ERR(write(fd, "x", 1), EBADF);
	/* Raw calls: musl retries a failed fchmod through /proc/self/fd. */
	CHECK_ERR(syscall(SYS_fchmod, fd, 0600), EBADF);
	CHECK_ERR(syscall(SYS_ftruncate, fd, 0), EBADF);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(stat("e", &st2), 0);
	CHECK_EQ(st.st_ino, st2.st_ino);
	CHECK_EQ(fstatat(fd, "", &st2, AT_EMPTY_PATH), 0);
	CHECK_EQ(st.st_ino, st2.st_ino);
	close(fd);

	/* An O_PATH directory works as a dirfd, but cannot be listed. */
	int dfd = open("sub", O_PATH | O_DIRECTORY);
	CHECK(dfd >= 0);
	fd = openat(dfd, "inner", O_RDONLY);
	CHECK(fd >= 0);
	close(fd);
	char dents[256];
	CHECK_ERR(syscall(SYS_getdents64, dfd, dents, sizeof(dents)), EBADF);
	close(dfd);
}

static void test_cloexec(void)
{
	int fd = open("a", O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	int fd2 = open("a", O_RDONLY);
	CHECK_EQ(fcntl(fd2, F_GETFD), 0);
	close(fd2);
	close(fd);
	fd = open("cx", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	close(fd);
}

static void test_tmpfile(void)
{
	struct stat st;
	char buf[16];
	int fd = open(".", O_TMPFILE | O_RDWR, 0600);

	if (fd < 0) {
		CHECK_FAIL_("open(\".\", O_TMPFILE | O_RDWR) failed: errno %d (%s)", errno,
			    strerror(errno));
	} else {
		CHECK_EQ(fstat(fd, &st), 0);
		CHECK(S_ISREG(st.st_mode));
		CHECK_EQ(st.st_nlink, 0);
		CHECK_EQ(write(fd, "anon", 4), 4);
		CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 4);
		/* linkat with AT_EMPTY_PATH gives it a name (we run as root). */
		CHECK_EQ(linkat(fd, "", AT_FDCWD, "named_tmp", AT_EMPTY_PATH), 0);
		CHECK_EQ(fstat(fd, &st), 0);
		CHECK_EQ(st.st_nlink, 1);
		CHECK_EQ(size_of("named_tmp"), 4);
		close(fd);
	}
	CHECK_ERR(open(".", O_TMPFILE | O_RDONLY, 0600), EINVAL);
	CHECK_ERR(open("a", O_TMPFILE | O_RDWR, 0600), ENOTDIR);
	CHECK_ERR(open("missing", O_TMPFILE | O_RDWR, 0600), ENOENT);
}

int main(void)
{
	scratch_enter("t_fs_create");

	test_create_modes_follow_umask();
	test_excl_and_trunc();
	test_append();
	test_directory_and_errors();
	maybe_save();
	/* What was created before the save is still there, with its modes. */
	CHECK_EQ(mode_of("b"), S_IFREG | 0600);
	CHECK_EQ(mode_of("d"), S_IFREG | 04751);
	CHECK_EQ(size_of("app"), 10);
	test_symlinks_and_nofollow();
	test_o_path();
	test_cloexec();
	test_tmpfile();

	scratch_leave();
	return check_done();
}
