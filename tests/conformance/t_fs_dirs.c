/*
 * t_fs_dirs: directories under /tmp: mkdir/mkdirat modes under the umask (sticky bit kept),
 * the link count of a directory (2 plus one per subdirectory), rmdir and its errors (EEXIST,
 * ENOTEMPTY, ENOTDIR, EINVAL for ".", ENOENT, ENAMETOOLONG), and getdents64 listing a
 * directory of several hundred entries exactly once each through a small buffer, across a
 * save and after rewinding.
 */
#include "check.h"
#include "scratch.h"
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>

#define NFILES 300
#define NDIRS 5

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static long nlink_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long)st.st_nlink : -1;
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_mode : (mode_t)-1;
}

static void test_mkdir_modes(void)
{
	umask(022);
	CHECK_EQ(mkdir("m1", 0777), 0);
	CHECK_EQ(mode_of("m1"), S_IFDIR | 0755);
	umask(027);
	CHECK_EQ(mkdir("m2", 0777), 0);
	CHECK_EQ(mode_of("m2"), S_IFDIR | 0750);
	umask(0);
	CHECK_EQ(mkdir("m3", 01777), 0);
	CHECK_EQ(mode_of("m3"), S_IFDIR | 01777);
	CHECK_EQ(mkdir("m4", 0), 0);
	CHECK_EQ(mode_of("m4"), S_IFDIR);
	umask(022);
	/* A trailing slash is fine on mkdir. */
	CHECK_EQ(mkdir("m5/", 0755), 0);
	CHECK(S_ISDIR(mode_of("m5")));
	struct stat st;
	CHECK_EQ(stat("m1", &st), 0);
	CHECK_EQ(st.st_uid, geteuid());
	CHECK_EQ(st.st_nlink, 2);
	for (const char *p = "m1\0m2\0m3\0m4\0m5\0"; *p; p += strlen(p) + 1)
		CHECK_EQ(rmdir(p), 0);
}

static void test_mkdir_errors(void)
{
	char longname[300];

	CHECK_EQ(mkdir("d", 0755), 0);
	int fd = open("file", O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(symlink("d", "link_to_d"), 0);
	CHECK_EQ(symlink("nowhere", "dangling"), 0);

	CHECK_ERR(mkdir("d", 0755), EEXIST);
	CHECK_ERR(mkdir("file", 0755), EEXIST);
	CHECK_ERR(mkdir("link_to_d", 0755), EEXIST);
	CHECK_ERR(mkdir("dangling", 0755), EEXIST); /* mkdir never follows the last link */
	CHECK_ERR(mkdir(".", 0755), EEXIST);
	CHECK_ERR(mkdir("..", 0755), EEXIST);
	CHECK_ERR(mkdir("file/x", 0755), ENOTDIR);
	CHECK_ERR(mkdir("missing/x", 0755), ENOENT);
	CHECK_ERR(mkdir("", 0755), ENOENT);
	memset(longname, 'd', 256);
	longname[256] = '\0';
	CHECK_ERR(mkdir(longname, 0755), ENAMETOOLONG);
	CHECK_ERR(syscall(SYS_mkdir, BAD_PTR, 0755), EFAULT);

	/* mkdirat resolves relative to the directory fd; through a link in the middle too. */
	int dfd = open("d", O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	CHECK_EQ(mkdirat(dfd, "sub", 0700), 0);
	CHECK_EQ(mode_of("d/sub"), S_IFDIR | 0700);
	CHECK_EQ(mkdir("link_to_d/sub2", 0755), 0);
	CHECK(S_ISDIR(mode_of("d/sub2")));
	CHECK_ERR(mkdirat(dfd, "sub", 0700), EEXIST);
	int ffd = open("file", O_RDONLY);
	CHECK_ERR(mkdirat(ffd, "x", 0700), ENOTDIR);
	close(ffd);
	CHECK_ERR(mkdirat(9999, "x", 0700), EBADF);
	CHECK_EQ(mkdirat(AT_FDCWD, "d/sub3", 0700), 0);
	close(dfd);
}

static void test_nlink_counts_subdirs(void)
{
	char name[32];

	CHECK_EQ(mkdir("n", 0755), 0);
	CHECK_EQ(nlink_of("n"), 2);
	long parent = nlink_of(".");
	for (int i = 0; i < NDIRS; i++) {
		snprintf(name, sizeof(name), "n/sub%d", i);
		CHECK_EQ(mkdir(name, 0755), 0);
	}
	CHECK_EQ(nlink_of("n"), 2 + NDIRS);
	CHECK_EQ(nlink_of("n/sub0"), 2);
	/* Files and symlinks do not count. */
	int fd = open("n/f", O_CREAT | O_WRONLY, 0644);
	close(fd);
	CHECK_EQ(symlink("sub0", "n/l"), 0);
	CHECK_EQ(nlink_of("n"), 2 + NDIRS);
	CHECK_EQ(rmdir("n/sub0"), 0);
	CHECK_EQ(nlink_of("n"), 1 + NDIRS);
	CHECK_EQ(nlink_of("."), parent);
	/* ".." inside is the parent itself. */
	struct stat a, b;
	CHECK_EQ(stat("n/sub1/..", &a), 0);
	CHECK_EQ(stat("n", &b), 0);
	CHECK_EQ(a.st_ino, b.st_ino);
	CHECK_EQ(a.st_dev, b.st_dev);
}

static void test_rmdir_errors(void)
{
	CHECK_ERR(rmdir("n"), ENOTEMPTY);
	CHECK_ERR(rmdir("n/f"), ENOTDIR);
	CHECK_ERR(rmdir("n/l"), ENOTDIR); /* a link to a directory is not one */
	CHECK_ERR(rmdir("n/f/"), ENOTDIR);
	CHECK_ERR(rmdir("n/missing"), ENOENT);
	CHECK_ERR(rmdir("missing/x"), ENOENT);
	CHECK_ERR(rmdir("."), EINVAL);
	CHECK_ERR(rmdir("n/sub1/."), EINVAL);
	CHECK_ERR(rmdir("n/sub1/.."), ENOTEMPTY);
	CHECK_ERR(rmdir(""), ENOENT);
	CHECK_ERR(unlink("n/sub1"), EISDIR);
	CHECK_ERR(unlinkat(AT_FDCWD, "n/f", AT_REMOVEDIR), ENOTDIR);
	/* A directory holding only an empty subdirectory is still not empty. */
	CHECK_EQ(mkdir("n/sub1/deeper", 0755), 0);
	CHECK_ERR(rmdir("n/sub1"), ENOTEMPTY);
	CHECK_EQ(rmdir("n/sub1/deeper/"), 0);
	CHECK_EQ(rmdir("n/sub1"), 0);
	CHECK_ERR(rmdir("n/sub1"), ENOENT);
	CHECK_EQ(unlinkat(AT_FDCWD, "n/sub2", AT_REMOVEDIR), 0);
}

/*
 * Reads the whole directory through a buffer of bufsize bytes, marking seen[] for the
 * entry_NNN files and counting everything else; *dots counts "." and "..". Returns the number
 * of entries, or -1 on a malformed listing.
 */
static int list_dir(int fd, size_t bufsize, int seen[NFILES], int *dots, int *others,
		    int save_after_first)
{
	char buf[4096] __attribute__((aligned(8)));
	int total = 0, calls = 0;
	long n;

	while ((n = syscall(SYS_getdents64, fd, buf, bufsize)) > 0) {
		if (calls++ == 0 && save_after_first)
			maybe_save();
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
			int idx;
			char tail;
			if (d->d_reclen == 0 || off + d->d_reclen > n)
				return -1;
			total++;
			if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0) {
				CHECK_EQ(d->d_type, DT_DIR);
				(*dots)++;
			} else if (sscanf(d->d_name, "entry_%3d%c", &idx, &tail) == 1 && idx >= 0 &&
				   idx < NFILES) {
				seen[idx]++;
				CHECK_EQ(d->d_type, DT_REG);
			} else {
				(*others)++;
			}
			off += d->d_reclen;
		}
	}
	CHECK_EQ(n, 0);
	return total;
}

static void test_getdents_many_entries(void)
{
	char name[32];
	int seen[NFILES], dots = 0, others = 0;

	CHECK_EQ(mkdir("many", 0755), 0);
	for (int i = 0; i < NFILES; i++) {
		snprintf(name, sizeof(name), "many/entry_%03d", i);
		int fd = open(name, O_CREAT | O_EXCL | O_WRONLY, 0644);
		CHECK(fd >= 0);
		close(fd);
	}
	CHECK_EQ(mkdir("many/subdir", 0755), 0);

	int fd = open("many", O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	memset(seen, 0, sizeof(seen));
	/* 256 bytes hold only a handful of entries per call; save after the first one. */
	CHECK_EQ(list_dir(fd, 256, seen, &dots, &others, 1), NFILES + 3);
	CHECK_EQ(dots, 2);
	CHECK_EQ(others, 1);
	int missing = 0, doubled = 0;
	for (int i = 0; i < NFILES; i++) {
		missing += seen[i] == 0;
		doubled += seen[i] > 1;
	}
	CHECK_EQ(missing, 0);
	CHECK_EQ(doubled, 0);
	char buf[256];
	CHECK_EQ(syscall(SYS_getdents64, fd, buf, sizeof(buf)), 0); /* stays at the end */

	/* Rewinding lists everything again, in one big buffer this time. */
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	memset(seen, 0, sizeof(seen));
	dots = others = 0;
	CHECK_EQ(list_dir(fd, 4096, seen, &dots, &others, 0), NFILES + 3);
	missing = 0;
	for (int i = 0; i < NFILES; i++)
		missing += seen[i] != 1;
	CHECK_EQ(missing, 0);

	/* d_ino is the inode stat reports. */
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
	CHECK(n > 0);
	int compared = 0;
	for (long off = 0; off < n;) {
		struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
		struct stat st;
		CHECK_EQ(fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW), 0);
		CHECK_EQ(d->d_ino, st.st_ino);
		compared++;
		off += d->d_reclen;
	}
	CHECK(compared >= 2);

	/* Errors: a buffer too small for one entry, a file, a bad fd. */
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_ERR(syscall(SYS_getdents64, fd, buf, 8), EINVAL);
	CHECK_ERR(syscall(SYS_getdents64, fd, BAD_PTR, sizeof(buf)), EFAULT);
	int ffd = open("many/entry_000", O_RDONLY);
	CHECK_ERR(syscall(SYS_getdents64, ffd, buf, sizeof(buf)), ENOTDIR);
	close(ffd);
	CHECK_ERR(syscall(SYS_getdents64, 9999, buf, sizeof(buf)), EBADF);

	/* Emptied, the directory lists only "." and "..", and can go. */
	for (int i = 0; i < NFILES; i++) {
		snprintf(name, sizeof(name), "many/entry_%03d", i);
		CHECK_EQ(unlink(name), 0);
	}
	CHECK_EQ(rmdir("many/subdir"), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	dots = others = 0;
	memset(seen, 0, sizeof(seen));
	CHECK_EQ(list_dir(fd, sizeof(buf), seen, &dots, &others, 0), 2);
	CHECK_EQ(dots, 2);
	CHECK_EQ(rmdir("many"), 0);
	/* Listing a removed directory through a descriptor still open on it: ENOENT. */
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_ERR(syscall(SYS_getdents64, fd, buf, sizeof(buf)), ENOENT);
	close(fd);
}

int main(void)
{
	scratch_enter("t_fs_dirs");

	test_mkdir_modes();
	test_mkdir_errors();
	test_nlink_counts_subdirs();
	test_rmdir_errors();
	test_getdents_many_entries();

	scratch_leave();
	return check_done();
}
