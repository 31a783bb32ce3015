/*
 * t_statx: statx(2) through the raw syscall (musl has no wrapper): the basic-stats mask is
 * filled, and type, size, inode and link count agree with fstat; AT_EMPTY_PATH and
 * AT_SYMLINK_NOFOLLOW behave as for newfstatat; bad flags and masks give EINVAL. A file's
 * inode number, size and times do not change across a checkpoint and restore.
 */
#include "check.h"
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>

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

#define KSTATX_TYPE 0x1U
#define KSTATX_MODE 0x2U
#define KSTATX_NLINK 0x4U
#define KSTATX_INO 0x100U
#define KSTATX_SIZE 0x200U
#define KSTATX_BASIC_STATS 0x7ffU
#define KSTATX_RESERVED 0x80000000U

static void check_matches(const struct kstatx *x, const struct stat *st)
{
	CHECK_EQ(x->mode, st->st_mode);
	CHECK_EQ(x->ino, st->st_ino);
	CHECK_EQ(x->size, st->st_size);
	CHECK_EQ(x->nlink, st->st_nlink);
	CHECK_EQ(x->uid, st->st_uid);
	CHECK_EQ(x->gid, st->st_gid);
	CHECK_EQ(x->mtime.tv_sec, st->st_mtime);
	CHECK_EQ(x->blocks, st->st_blocks);
}

int main(void)
{
	struct kstatx x;
	struct stat st;

	CHECK_EQ(sizeof(struct kstatx), 256);

	memset(&x, 0xff, sizeof(x));
	CHECK_EQ(syscall(SYS_statx, AT_FDCWD, "/etc/passwd", 0, KSTATX_BASIC_STATS, &x), 0);
	CHECK_EQ(x.mask & (KSTATX_TYPE | KSTATX_MODE | KSTATX_NLINK | KSTATX_INO | KSTATX_SIZE),
		 KSTATX_TYPE | KSTATX_MODE | KSTATX_NLINK | KSTATX_INO | KSTATX_SIZE);
	CHECK(S_ISREG(x.mode));
	CHECK_EQ(stat("/etc/passwd", &st), 0);
	check_matches(&x, &st);

	/* Through an fd with AT_EMPTY_PATH; the size matches what read() returns. */
	char buf[8192];
	int fd = open("/etc/passwd", O_RDONLY);
	CHECK(fd >= 0);
	maybe_save(); /* st was taken before: the restored file is the same inode */
	CHECK_EQ(syscall(SYS_statx, fd, "", AT_EMPTY_PATH, KSTATX_BASIC_STATS, &x), 0);
	check_matches(&x, &st);
	CHECK_EQ(read(fd, buf, sizeof(buf)), x.size);
	close(fd);

	CHECK_EQ(syscall(SYS_statx, AT_FDCWD, "/etc", 0, KSTATX_BASIC_STATS, &x), 0);
	CHECK(S_ISDIR(x.mode));
	CHECK(x.nlink >= 2);

	/* A symlink, followed or not. */
	CHECK_EQ(
	    syscall(SYS_statx, AT_FDCWD, "/bin/sh", AT_SYMLINK_NOFOLLOW, KSTATX_BASIC_STATS, &x),
	    0);
	CHECK(S_ISLNK(x.mode));
	CHECK_EQ(lstat("/bin/sh", &st), 0);
	check_matches(&x, &st);
	CHECK_EQ(syscall(SYS_statx, AT_FDCWD, "/bin/sh", 0, KSTATX_BASIC_STATS, &x), 0);
	CHECK(S_ISREG(x.mode));
	CHECK_EQ(stat("/bin/busybox", &st), 0);
	check_matches(&x, &st);

	/* A zero mask is allowed: the type is still reported. */
	CHECK_EQ(syscall(SYS_statx, AT_FDCWD, "/etc", 0, 0, &x), 0);
	CHECK(S_ISDIR(x.mode));

	CHECK_ERR(syscall(SYS_statx, AT_FDCWD, "/etc/nonexistent", 0, KSTATX_BASIC_STATS, &x),
		  ENOENT);
	CHECK_ERR(syscall(SYS_statx, AT_FDCWD, "/etc/passwd", 0, KSTATX_RESERVED, &x), EINVAL);
	CHECK_ERR(syscall(SYS_statx, AT_FDCWD, "/etc/passwd", 0x40000000, KSTATX_BASIC_STATS, &x),
		  EINVAL);
	CHECK_ERR(syscall(SYS_statx, 999, "", AT_EMPTY_PATH, KSTATX_BASIC_STATS, &x), EBADF);
	CHECK_ERR(syscall(SYS_statx, AT_FDCWD, "/etc/passwd", 0, KSTATX_BASIC_STATS, BAD_PTR),
		  EFAULT);
	return check_done();
}
