/*
 * t_statx_mnt_id: statx(2) reports STATX_MNT_ID whatever mask was asked for, and stx_mnt_id is
 * the first column of /proc/self/mountinfo's line for the mount the file lies in: each listed
 * mount point (the mount on top of it), a file below one (through its path and through an
 * fd), and /proc/self/fdinfo's mnt_id of the same fd. A pipe lies in an internal mount that
 * mountinfo does not list. Ids are the same after a checkpoint and restore.
 * conformance: native-proc
 */
#include "check.h"
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

struct kstatx {
	uint32_t mask, blksize;
	uint64_t attributes;
	uint32_t nlink, uid, gid;
	uint16_t mode, pad1;
	uint64_t ino, size, blocks, attributes_mask;
	uint64_t times[8];
	uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
	uint64_t mnt_id;
	uint64_t spare[13];
};

#define KSTATX_TYPE 0x1U
#define KSTATX_BASIC_STATS 0x7ffU
#define KSTATX_MNT_ID 0x1000U

#define MAX_MOUNTS 64

static struct {
	long id;
	char point[256];
} mounts[MAX_MOUNTS];
static int nmounts;

/* The mounts /proc/self/mountinfo lists (none if it cannot be read: natively without /proc). */
static void read_mountinfo(void)
{
	char line[1024];
	FILE *f = fopen("/proc/self/mountinfo", "r");

	nmounts = 0;
	if (!f)
		return;
	while (nmounts < MAX_MOUNTS && fgets(line, sizeof(line), f)) {
		long id, parent;
		char dev[64], root[256], point[256];
		if (sscanf(line, "%ld %ld %63s %255s %255s", &id, &parent, dev, root, point) != 5)
			continue;
		mounts[nmounts].id = id;
		strcpy(mounts[nmounts].point, point);
		nmounts++;
	}
	fclose(f);
}

/* The id of the listed mount PATH lies in (the longest mount point that leads it, the last one
 * mounted there), or -1 if none is listed. */
static long listed_mount_of(const char *path)
{
	size_t best = 0;
	long id = -1;

	for (int i = 0; i < nmounts; i++) {
		const char *p = mounts[i].point;
		size_t n = strlen(p);
		bool leads = strcmp(p, "/") == 0 ||
			     (strncmp(path, p, n) == 0 && (path[n] == '/' || path[n] == 0));
		if (leads && (n >= best || id < 0)) {
			best = n;
			id = mounts[i].id;
		}
	}
	return id;
}

static long statx_mnt_id(int dirfd, const char *path, int flags)
{
	struct kstatx x;

	memset(&x, 0xff, sizeof(x));
	if (syscall(SYS_statx, dirfd, path, flags, KSTATX_TYPE, &x) != 0) {
		CHECK_FAIL_("statx(%s) failed: %s", path, strerror(errno));
		return -1;
	}
	CHECK(x.mask & KSTATX_MNT_ID);
	return (long)x.mnt_id;
}

static long fdinfo_mnt_id(int fd)
{
	char path[64], line[256];
	long id = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "mnt_id: %ld", &id) == 1)
			break;
	fclose(f);
	return id;
}

static void check_all(int file_fd, int pipe_fd)
{
	read_mountinfo();
	if (in_sandbox())
		CHECK(nmounts >= 3); /* the root, /dev, /proc at least */

	/* Every listed mount point: the mount on top of it. */
	for (int i = 0; i < nmounts; i++)
		CHECK_EQ(statx_mnt_id(AT_FDCWD, mounts[i].point, 0),
			 listed_mount_of(mounts[i].point));

	/* Files below mount points, by path and by fd. */
	static const char *const files[] = {"/proc/self/status", "/dev/null", "/etc/passwd", "/tmp",
					    "/proc/self/fd"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (!in_sandbox() && access(files[i], F_OK)) /* a chroot has no /dev/null */
			continue;
		long want = listed_mount_of(files[i]);
		long got = statx_mnt_id(AT_FDCWD, files[i], 0);
		if (want >= 0)
			CHECK_EQ(got, want);
	}
	long want = listed_mount_of("/proc/self/status");
	if (want >= 0) {
		CHECK_EQ(statx_mnt_id(file_fd, "", AT_EMPTY_PATH), want);
		CHECK_EQ(fdinfo_mnt_id(file_fd), want);
	}

	/* A pipe: an internal mount, not one of those listed; fdinfo agrees. */
	long p = statx_mnt_id(pipe_fd, "", AT_EMPTY_PATH);
	CHECK(p > 0);
	for (int i = 0; i < nmounts; i++)
		CHECK(mounts[i].id != p);
	if (nmounts)
		CHECK_EQ(fdinfo_mnt_id(pipe_fd), p);
}

int main(void)
{
	struct kstatx x;
	int pfd[2];

	/* Asked for nothing, still given. */
	memset(&x, 0, sizeof(x));
	CHECK_EQ(syscall(SYS_statx, AT_FDCWD, "/", 0, 0, &x), 0);
	CHECK(x.mask & KSTATX_MNT_ID);
	CHECK(x.mnt_id > 0);
	memset(&x, 0, sizeof(x));
	CHECK_EQ(syscall(SYS_statx, AT_FDCWD, "/etc/passwd", 0, KSTATX_BASIC_STATS, &x), 0);
	CHECK(x.mask & KSTATX_MNT_ID);

	int fd = open("/proc/self/status", O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(pipe(pfd), 0);
	check_all(fd, pfd[0]);
	maybe_save();
	check_all(fd, pfd[0]);
	close(fd);
	close(pfd[0]);
	close(pfd[1]);
	return check_done();
}
