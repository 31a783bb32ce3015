/*
 * t_fs_attrs: file attributes under /tmp: chmod/fchmod/fchmodat, chown/fchown/lchown/
 * fchownat as root (set-id bits cleared by chown), truncate, utimensat (explicit times,
 * UTIME_NOW, UTIME_OMIT, no-follow), utimes/futimesat, mtime and ctime moving on writes and
 * attribute changes, statx agreeing with stat, statfs/fstatfs, and root's access(2) rules.
 * (What an unprivileged uid is refused is t_fs_perms.)
 */
#include "check.h"
#include "scratch.h"
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <time.h>

/* The kernel's struct statx, spelled out because musl ships no <linux/stat.h>. */
struct kstatx_ts {
	int64_t tv_sec;
	uint32_t tv_nsec;
	int32_t reserved;
};

struct kstatx {
	uint32_t mask, blksize;
	uint64_t attributes;
	uint32_t nlink, uid, gid;
	uint16_t mode, pad1;
	uint64_t ino, size, blocks, attributes_mask;
	struct kstatx_ts atime, btime, ctime, mtime;
	uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
	uint64_t spare[14];
};

#define KSTATX_BASIC_STATS 0x7ffU

static void make_file(const char *path, mode_t mode)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, mode);

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	close(fd);
	CHECK_EQ(chmod(path, mode), 0);
}

static struct stat lstat_of(const char *path)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	CHECK_EQ(lstat(path, &st), 0);
	return st;
}

static int ts_after(struct timespec a, struct timespec b)
{
	return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec);
}

/* Long enough for the coarse clock behind file timestamps to move on. */
static void tick(void)
{
	struct timespec ts = {0, 30 * 1000 * 1000};

	nanosleep(&ts, NULL);
}

static void test_chmod(void)
{
	make_file("f", 0644);
	CHECK_EQ(chmod("f", 0600), 0);
	CHECK_EQ(lstat_of("f").st_mode, S_IFREG | 0600);
	int fd = open("f", O_RDONLY);
	CHECK_EQ(fchmod(fd, 0640), 0);
	CHECK_EQ(lstat_of("f").st_mode, S_IFREG | 0640);
	CHECK_EQ(fchmodat(AT_FDCWD, "f", 0604, 0), 0);
	CHECK_EQ(lstat_of("f").st_mode, S_IFREG | 0604);
	/* All twelve permission bits are kept; file-type bits in the argument are ignored. */
	CHECK_EQ(chmod("f", 07777), 0);
	CHECK_EQ(lstat_of("f").st_mode, S_IFREG | 07777);
	CHECK_EQ(chmod("f", S_IFDIR | 0644), 0);
	CHECK_EQ(lstat_of("f").st_mode, S_IFREG | 0644);
	/* Through a symlink the target changes, the link stays 0777. */
	CHECK_EQ(symlink("f", "sl"), 0);
	CHECK_EQ(chmod("sl", 0611), 0);
	CHECK_EQ(lstat_of("f").st_mode, S_IFREG | 0611);
	CHECK_EQ(lstat_of("sl").st_mode, S_IFLNK | 0777);
	CHECK_EQ(mkdir("d", 0755), 0);
	CHECK_EQ(chmod("d", 01700), 0);
	CHECK_EQ(lstat_of("d").st_mode, S_IFDIR | 01700);
	CHECK_EQ(chmod("d", 0755), 0);

	CHECK_ERR(chmod("missing", 0644), ENOENT);
	CHECK_ERR(chmod("f/x", 0644), ENOTDIR);
	CHECK_ERR(syscall(SYS_fchmod, 9999, 0644), EBADF);
	CHECK_ERR(fchmodat(9999, "f", 0644, 0), EBADF);
	CHECK_EQ(fchmod(fd, 0644), 0);
	close(fd);
}

static void test_chown(void)
{
	struct stat st;

	CHECK_EQ(chown("f", 1234, 5678), 0);
	st = lstat_of("f");
	CHECK_EQ(st.st_uid, 1234);
	CHECK_EQ(st.st_gid, 5678);
	CHECK_EQ(chown("f", -1, -1), 0);
	st = lstat_of("f");
	CHECK_EQ(st.st_uid, 1234);
	CHECK_EQ(st.st_gid, 5678);
	CHECK_EQ(chown("f", -1, 42), 0);
	st = lstat_of("f");
	CHECK_EQ(st.st_uid, 1234);
	CHECK_EQ(st.st_gid, 42);
	int fd = open("f", O_RDONLY);
	CHECK_EQ(fchown(fd, 7, 8), 0);
	st = lstat_of("f");
	CHECK_EQ(st.st_uid, 7);
	CHECK_EQ(st.st_gid, 8);

	/* lchown and AT_SYMLINK_NOFOLLOW change the link, chown through it the target. */
	CHECK_EQ(lchown("sl", 11, 12), 0);
	CHECK_EQ(lstat_of("sl").st_uid, 11);
	CHECK_EQ(lstat_of("f").st_uid, 7);
	CHECK_EQ(fchownat(AT_FDCWD, "sl", 13, 14, AT_SYMLINK_NOFOLLOW), 0);
	CHECK_EQ(lstat_of("sl").st_gid, 14);
	CHECK_EQ(chown("sl", 15, 16), 0);
	CHECK_EQ(lstat_of("f").st_uid, 15);
	CHECK_EQ(lstat_of("sl").st_uid, 13);
	CHECK_EQ(fchownat(fd, "", 17, 18, AT_EMPTY_PATH), 0);
	CHECK_EQ(lstat_of("f").st_gid, 18);

	/* chown of a regular file drops set-user-ID and (with group execute) set-group-ID. */
	CHECK_EQ(chmod("f", 06755), 0);
	CHECK_EQ(chown("f", 0, 0), 0);
	CHECK_EQ(lstat_of("f").st_mode, S_IFREG | 0755);
	/* ... but not a directory's set-group-ID. */
	CHECK_EQ(chmod("d", 02755), 0);
	CHECK_EQ(chown("d", 5, 5), 0);
	CHECK_EQ(lstat_of("d").st_mode, S_IFDIR | 02755);
	CHECK_EQ(chmod("d", 0755), 0);
	CHECK_EQ(chown("d", 0, 0), 0);

	CHECK_ERR(chown("missing", 0, 0), ENOENT);
	CHECK_ERR(fchown(9999, 0, 0), EBADF);
	CHECK_ERR(fchownat(AT_FDCWD, "f", 0, 0, 0x4), EINVAL);
	CHECK_EQ(fchown(fd, 0, 0), 0);
	CHECK_EQ(fchmod(fd, 0644), 0);
	close(fd);
}

static void test_truncate(void)
{
	struct stat st;

	CHECK_EQ(truncate("f", 4), 0);
	CHECK_EQ(lstat_of("f").st_size, 4);
	CHECK_EQ(truncate("sl", 100), 0); /* follows the link */
	CHECK_EQ(lstat_of("f").st_size, 100);
	CHECK_EQ(truncate("f", 0), 0);
	CHECK_EQ(stat("f", &st), 0);
	CHECK_EQ(st.st_size, 0);
	CHECK_ERR(truncate("d", 0), EISDIR);
	CHECK_ERR(truncate("missing", 0), ENOENT);
	CHECK_ERR(truncate("f", -1), EINVAL);
	CHECK_ERR(truncate("f/", 0), ENOTDIR);
}

static void test_utimes(void)
{
	struct stat st;
	struct timespec before, after;

	/* Explicit times, to the nanosecond. */
	struct timespec ts[2] = {{1000, 500}, {2000, 600}};
	CHECK_EQ(utimensat(AT_FDCWD, "f", ts, 0), 0);
	st = lstat_of("f");
	CHECK_EQ(st.st_atim.tv_sec, 1000);
	CHECK_EQ(st.st_atim.tv_nsec, 500);
	CHECK_EQ(st.st_mtim.tv_sec, 2000);
	CHECK_EQ(st.st_mtim.tv_nsec, 600);

	/* UTIME_OMIT keeps one, UTIME_NOW sets one to now. */
	clock_gettime(CLOCK_REALTIME, &before);
	struct timespec some[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
	CHECK_EQ(utimensat(AT_FDCWD, "f", some, 0), 0);
	clock_gettime(CLOCK_REALTIME, &after);
	st = lstat_of("f");
	CHECK_EQ(st.st_atim.tv_sec, 1000);
	CHECK_EQ(st.st_atim.tv_nsec, 500);
	CHECK(st.st_mtim.tv_sec >= before.tv_sec - 1 && st.st_mtim.tv_sec <= after.tv_sec);
	CHECK(st.st_ctim.tv_sec >= before.tv_sec - 1 && st.st_ctim.tv_sec <= after.tv_sec);
	struct timespec omit[2] = {{5, UTIME_OMIT}, {6, UTIME_OMIT}};
	CHECK_EQ(utimensat(AT_FDCWD, "f", omit, 0), 0);
	CHECK_EQ(lstat_of("f").st_atim.tv_sec, 1000);
	/* NULL means both now; futimens works on the descriptor. */
	CHECK_EQ(utimensat(AT_FDCWD, "f", NULL, 0), 0);
	st = lstat_of("f");
	CHECK(st.st_atim.tv_sec >= before.tv_sec - 1);
	int fd = open("f", O_RDONLY);
	CHECK_EQ(futimens(fd, ts), 0);
	CHECK_EQ(lstat_of("f").st_mtim.tv_sec, 2000);

	/* AT_SYMLINK_NOFOLLOW sets the link's own times. */
	struct timespec lts[2] = {{3000, 0}, {4000, 0}};
	CHECK_EQ(utimensat(AT_FDCWD, "sl", lts, AT_SYMLINK_NOFOLLOW), 0);
	CHECK_EQ(lstat_of("sl").st_mtim.tv_sec, 4000);
	CHECK_EQ(lstat_of("f").st_mtim.tv_sec, 2000);
	CHECK_EQ(utimensat(AT_FDCWD, "sl", lts, 0), 0);
	CHECK_EQ(lstat_of("f").st_mtim.tv_sec, 4000);

	/* Microsecond interfaces: utimes and futimesat. */
	struct timeval tv[2] = {{5000, 7}, {6000, 8}};
	CHECK_EQ(utimes("f", tv), 0);
	st = lstat_of("f");
	CHECK_EQ(st.st_atim.tv_sec, 5000);
	CHECK_EQ(st.st_atim.tv_nsec, 7000);
	CHECK_EQ(st.st_mtim.tv_sec, 6000);
	CHECK_EQ(st.st_mtim.tv_nsec, 8000);
	int dfd = open(".", O_RDONLY | O_DIRECTORY);
	tv[1].tv_sec = 6500;
	CHECK_EQ(syscall(SYS_futimesat, dfd, "f", tv), 0);
	CHECK_EQ(lstat_of("f").st_mtim.tv_sec, 6500);
	close(dfd);

	struct timespec bad[2] = {{0, 1000000000}, {0, 0}};
	CHECK_ERR(utimensat(AT_FDCWD, "f", bad, 0), EINVAL);
	bad[0].tv_nsec = -1;
	CHECK_ERR(utimensat(AT_FDCWD, "f", bad, 0), EINVAL);
	CHECK_ERR(utimensat(AT_FDCWD, "f", ts, 0x4), EINVAL);
	CHECK_ERR(utimensat(AT_FDCWD, "missing", ts, 0), ENOENT);
	struct timeval badtv[2] = {{0, 1000000}, {0, 0}};
	CHECK_ERR(utimes("f", badtv), EINVAL);
	CHECK_ERR(futimens(9999, ts), EBADF);
	close(fd);
}

static void test_times_move(void)
{
	struct stat st, st2;
	struct timespec before;
	struct timespec old[2] = {{1000, 0}, {1000, 0}};

	/* Writing sets mtime and ctime to now. */
	CHECK_EQ(utimensat(AT_FDCWD, "f", old, 0), 0);
	clock_gettime(CLOCK_REALTIME, &before);
	int fd = open("f", O_WRONLY);
	CHECK_EQ(write(fd, "x", 1), 1);
	st = lstat_of("f");
	CHECK(st.st_mtim.tv_sec >= before.tv_sec - 1);
	CHECK(st.st_ctim.tv_sec >= before.tv_sec - 1);
	CHECK_EQ(st.st_atim.tv_sec, 1000);

	/* Each attribute change moves ctime and leaves mtime. */
	CHECK_EQ(utimensat(AT_FDCWD, "f", old, 0), 0);
	st = lstat_of("f");
	tick();
	CHECK_EQ(chmod("f", 0600), 0);
	st2 = lstat_of("f");
	CHECK(ts_after(st2.st_ctim, st.st_ctim));
	CHECK_EQ(st2.st_mtim.tv_sec, 1000);
	tick();
	CHECK_EQ(chown("f", 1, 1), 0);
	st = lstat_of("f");
	CHECK(ts_after(st.st_ctim, st2.st_ctim));
	tick();
	CHECK_EQ(link("f", "f_link"), 0);
	st2 = lstat_of("f");
	CHECK(ts_after(st2.st_ctim, st.st_ctim));
	CHECK_EQ(st2.st_mtim.tv_sec, 1000);
	tick();
	CHECK_EQ(unlink("f_link"), 0);
	st = lstat_of("f");
	CHECK(ts_after(st.st_ctim, st2.st_ctim));
	/* A size-changing truncate moves both. */
	tick();
	CHECK_EQ(ftruncate(fd, 3), 0);
	st2 = lstat_of("f");
	CHECK(ts_after(st2.st_ctim, st.st_ctim));
	CHECK(st2.st_mtim.tv_sec >= before.tv_sec - 1);
	close(fd);
	CHECK_EQ(chown("f", 0, 0), 0);

	/* Creating and removing entries moves the directory's mtime. */
	CHECK_EQ(utimensat(AT_FDCWD, "d", old, 0), 0);
	fd = open("d/new", O_CREAT | O_WRONLY, 0644);
	close(fd);
	CHECK(lstat_of("d").st_mtim.tv_sec >= before.tv_sec - 1);
	CHECK_EQ(utimensat(AT_FDCWD, "d", old, 0), 0);
	CHECK_EQ(rename("d/new", "d/new2"), 0);
	CHECK(lstat_of("d").st_mtim.tv_sec >= before.tv_sec - 1);
	CHECK_EQ(utimensat(AT_FDCWD, "d", old, 0), 0);
	CHECK_EQ(unlink("d/new2"), 0);
	CHECK(lstat_of("d").st_mtim.tv_sec >= before.tv_sec - 1);
}

static void test_statx_agrees(void)
{
	struct kstatx x;
	struct stat st;

	memset(&x, 0xff, sizeof(x));
	CHECK_EQ(syscall(SYS_statx, AT_FDCWD, "f", 0, KSTATX_BASIC_STATS, &x), 0);
	CHECK_EQ(stat("f", &st), 0);
	CHECK_EQ(x.mask & KSTATX_BASIC_STATS, KSTATX_BASIC_STATS);
	CHECK_EQ(x.mode, st.st_mode);
	CHECK_EQ(x.uid, st.st_uid);
	CHECK_EQ(x.gid, st.st_gid);
	CHECK_EQ(x.ino, st.st_ino);
	CHECK_EQ(x.nlink, st.st_nlink);
	CHECK_EQ(x.size, st.st_size);
	CHECK_EQ(x.blocks, st.st_blocks);
	CHECK_EQ(x.atime.tv_sec, st.st_atim.tv_sec);
	CHECK_EQ(x.atime.tv_nsec, st.st_atim.tv_nsec);
	CHECK_EQ(x.mtime.tv_sec, st.st_mtim.tv_sec);
	CHECK_EQ(x.mtime.tv_nsec, st.st_mtim.tv_nsec);
	CHECK_EQ(x.ctime.tv_sec, st.st_ctim.tv_sec);
	CHECK_EQ(x.ctime.tv_nsec, st.st_ctim.tv_nsec);
	CHECK_EQ(makedev(x.dev_major, x.dev_minor), st.st_dev);
	CHECK_EQ(x.blksize, st.st_blksize);
	/* Of the link itself. */
	CHECK_EQ(syscall(SYS_statx, AT_FDCWD, "sl", AT_SYMLINK_NOFOLLOW, KSTATX_BASIC_STATS, &x),
		 0);
	CHECK(S_ISLNK(x.mode));
	CHECK_EQ(x.size, 1);
}

static void test_statfs(void)
{
	struct statfs a, b, c;

	CHECK_EQ(statfs("/tmp", &a), 0);
	CHECK_EQ(statfs(".", &b), 0);
	int fd = open("f", O_RDONLY);
	CHECK_EQ(fstatfs(fd, &c), 0);
	close(fd);
	/* One filesystem: the same type and id from every path into it. */
	CHECK(a.f_type != 0);
	CHECK_EQ(a.f_type, b.f_type);
	CHECK_EQ(a.f_type, c.f_type);
	CHECK_EQ(memcmp(&a.f_fsid, &c.f_fsid, sizeof(a.f_fsid)), 0);
	CHECK(a.f_bsize > 0);
	CHECK_EQ(a.f_namelen, 255);
	CHECK(c.f_bfree <= c.f_blocks);
	CHECK(c.f_bavail <= c.f_bfree);
	CHECK_ERR(statfs("missing", &a), ENOENT);
	CHECK_ERR(fstatfs(9999, &a), EBADF);
	CHECK_ERR(syscall(SYS_statfs, "/tmp", BAD_PTR), EFAULT);
}

static void test_root_access(void)
{
	/* Root reads and writes anything, but executes only what has an execute bit. */
	make_file("none", 0);
	CHECK_EQ(access("none", R_OK | W_OK), 0);
	CHECK_ERR(access("none", X_OK), EACCES);
	CHECK_EQ(chmod("none", 0010), 0);
	CHECK_EQ(access("none", X_OK), 0);
	CHECK_EQ(mkdir("closed", 0), 0);
	CHECK_EQ(access("closed", R_OK | W_OK | X_OK), 0);
	make_file("closed/inside", 0);
	int fd = open("closed/inside", O_RDWR);
	CHECK(fd >= 0);
	close(fd);
}

int main(void)
{
	scratch_enter("t_fs_attrs");

	test_chmod();
	test_chown();
	test_truncate();
	test_utimes();
	maybe_save();
	/* Attributes survive a save. */
	CHECK_EQ(lstat_of("f").st_mtim.tv_sec, 6500);
	CHECK_EQ(lstat_of("f").st_atim.tv_nsec, 7000);
	CHECK_EQ(lstat_of("sl").st_uid, 13);
	CHECK_EQ(lstat_of("f").st_mode, S_IFREG | 0644);
	test_times_move();
	test_statx_agrees();
	test_statfs();
	test_root_access();

	scratch_leave();
	return check_done();
}
