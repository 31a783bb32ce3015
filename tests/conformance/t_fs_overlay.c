/*
 * t_fs_overlay: what any Linux root filesystem shows, checked without writing outside /tmp.
 * Listings of rootfs directories agree with lstat (type, inode, no duplicates, link counts),
 * the tree is one device with stable inode numbers (across a save too), opening a rootfs
 * file read-write without writing changes nothing, ".." and symlinks cannot climb above the
 * root, and copies of /etc's files written under /tmp read back identical.
 */
#include "check.h"
#include "scratch.h"
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>

#define MAX_ENTRIES 1024

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static unsigned char dtype_of(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return DT_REG;
	case S_IFDIR:
		return DT_DIR;
	case S_IFLNK:
		return DT_LNK;
	case S_IFCHR:
		return DT_CHR;
	case S_IFBLK:
		return DT_BLK;
	case S_IFIFO:
		return DT_FIFO;
	case S_IFSOCK:
		return DT_SOCK;
	}
	return DT_UNKNOWN;
}

static int same_inode(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_ino == sb.st_ino &&
	       sa.st_dev == sb.st_dev;
}

/*
 * Lists path with getdents64 and checks every entry against fstatat: the same type and,
 * within one filesystem, the same inode; no name twice; a link count of 2 plus the
 * subdirectories (or 1, "not counted", as some filesystems report). Returns the entry count.
 */
static int check_listing(const char *path)
{
	static char names[MAX_ENTRIES][256];
	char buf[4096] __attribute__((aligned(8)));
	struct stat dst, st;
	int count = 0, subdirs = 0;
	long n;

	int fd = open(path, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	if (fd < 0)
		return 0;
	CHECK_EQ(fstat(fd, &dst), 0);
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
			off += d->d_reclen;
			if (strcmp(d->d_name, "..") == 0)
				continue; /* at "/" natively, the chroot's real parent */
			for (int i = 0; i < count && i < MAX_ENTRIES; i++)
				if (strcmp(names[i], d->d_name) == 0)
					CHECK_FAIL_("%s: \"%s\" listed twice", path, d->d_name);
			if (count < MAX_ENTRIES)
				snprintf(names[count], sizeof(names[count]), "%s", d->d_name);
			count++;
			if (fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
				CHECK_FAIL_("%s: listed \"%s\" does not lstat: %s", path, d->d_name,
					    strerror(errno));
				continue;
			}
			if (d->d_type != DT_UNKNOWN && d->d_type != dtype_of(st.st_mode))
				CHECK_FAIL_("%s/%s: d_type %d, lstat mode %o", path, d->d_name,
					    d->d_type, st.st_mode);
			/* A mount point lists the inode under it; stat sees the mount's root. */
			if (st.st_dev == dst.st_dev && d->d_ino != st.st_ino)
				CHECK_FAIL_("%s/%s: d_ino %llu, st_ino %llu", path, d->d_name,
					    (unsigned long long)d->d_ino,
					    (unsigned long long)st.st_ino);
			if (S_ISDIR(st.st_mode) && strcmp(d->d_name, ".") != 0)
				subdirs++;
		}
	}
	CHECK_EQ(n, 0);
	close(fd);
	if (dst.st_nlink != 1 && dst.st_nlink != (nlink_t)(2 + subdirs))
		CHECK_FAIL_("%s: st_nlink %lu, but %d subdirectories", path,
			    (unsigned long)dst.st_nlink, subdirs);
	return count;
}

static void test_listings_match_stat(void)
{
	CHECK(check_listing("/") > 5);
	CHECK(check_listing("/etc") > 3);
	CHECK(check_listing("/bin") > 10);
	CHECK(check_listing("/lib") > 0);
	CHECK(check_listing("/usr") > 0);
	CHECK(check_listing("/usr/bin") > 0);
	/* Listing twice gives the same count. */
	CHECK_EQ(check_listing("/etc"), check_listing("/etc"));
}

static void test_one_device_stable_inodes(void)
{
	const char *paths[] = {"/", "/etc", "/etc/passwd", "/bin", "/bin/busybox", "/usr", "/lib"};
	struct stat root, st, again;

	CHECK_EQ(stat("/", &root), 0);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		CHECK_EQ(lstat(paths[i], &st), 0);
		CHECK_EQ(st.st_dev, root.st_dev);
		CHECK_EQ(lstat(paths[i], &again), 0);
		CHECK_EQ(again.st_ino, st.st_ino);
	}
	/* Directory modes as the rootfs has them. */
	CHECK_EQ(stat("/tmp", &st), 0);
	CHECK_EQ(st.st_mode, S_IFDIR | 01777);
	CHECK_EQ(stat("/root", &st), 0);
	CHECK_EQ(st.st_mode & 07777, 0700);
	CHECK_EQ(stat("/etc", &st), 0);
	CHECK_EQ(st.st_uid, 0);
}

static void test_open_rdwr_without_writing(void)
{
	struct stat before, after, fst;
	char a[4096], b[4096];

	CHECK_EQ(stat("/etc/hostname", &before), 0);
	int fd = open("/etc/hostname", O_RDONLY);
	ssize_t n = read(fd, a, sizeof(a));
	CHECK(n > 0);
	close(fd);
	/* An open for writing, even one that copies the file up, changes nothing visible. */
	fd = open("/etc/hostname", O_RDWR);
	CHECK(fd >= 0);
	CHECK_EQ(fstat(fd, &fst), 0);
	CHECK_EQ(read(fd, b, sizeof(b)), n);
	CHECK_EQ(memcmp(a, b, n), 0);
	close(fd);
	CHECK_EQ(stat("/etc/hostname", &after), 0);
	CHECK_EQ(fst.st_ino, before.st_ino);
	CHECK_EQ(after.st_ino, before.st_ino);
	CHECK_EQ(after.st_dev, before.st_dev);
	CHECK_EQ(after.st_size, before.st_size);
	CHECK_EQ(after.st_mode, before.st_mode);
	CHECK_EQ(after.st_nlink, before.st_nlink);
	CHECK_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
	CHECK_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
}

static void test_no_climbing_out(void)
{
	char cwd[256];

	CHECK(same_inode("/..", "/"));
	CHECK(same_inode("/../../..", "/"));
	CHECK(same_inode("/../etc/../../etc/passwd", "/etc/passwd"));
	int efd = open("/etc", O_RDONLY | O_DIRECTORY);
	struct stat st, root;
	CHECK_EQ(fstatat(efd, "../../../..", &st, 0), 0);
	CHECK_EQ(stat("/", &root), 0);
	CHECK_EQ(st.st_ino, root.st_ino);
	int pfd = openat(efd, "../../../../etc/passwd", O_RDONLY);
	CHECK(pfd >= 0);
	close(pfd);
	close(efd);

	/* Symlinks under /tmp that try to climb resolve inside the root. */
	CHECK_EQ(symlink("../../../../../../../..", "up"), 0);
	CHECK_EQ(symlink("/../../../etc/passwd", "abs_up"), 0);
	CHECK_EQ(symlink("up/etc/../../../etc/passwd", "via_up"), 0);
	CHECK(same_inode("up", "/"));
	CHECK(same_inode("abs_up", "/etc/passwd"));
	CHECK(same_inode("via_up", "/etc/passwd"));
	CHECK(same_inode("up/tmp", "/tmp"));

	CHECK_EQ(chdir("up"), 0);
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK_STREQ(cwd, "/");
	CHECK_EQ(chdir("/etc/../../../bin"), 0);
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK_STREQ(cwd, "/bin");
	CHECK_EQ(chdir("../../.."), 0);
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK_STREQ(cwd, "/");
	CHECK_EQ(chdir(scratch_dir), 0);

	/* Where there is a /proc, a process's root is "/". */
	if (access("/proc/self/root", F_OK) == 0) {
		char link[64];
		CHECK_EQ(readlink("/proc/self/root", link, sizeof(link)), 1);
		CHECK_EQ(link[0], '/');
		CHECK(same_inode("/proc/self/root/etc/passwd", "/etc/passwd"));
		CHECK(same_inode("/proc/self/root/..", "/"));
	}
}

/* Copies every regular file of /etc into ./etc; returns how many. */
static int copy_etc(void)
{
	static char data[1 << 16];
	char src[512], dst[512];
	int copied = 0;

	CHECK_EQ(mkdir("etc", 0755), 0);
	DIR *d = opendir("/etc");
	CHECK(d != NULL);
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		struct stat st;
		snprintf(src, sizeof(src), "/etc/%s", de->d_name);
		if (lstat(src, &st) != 0 || !S_ISREG(st.st_mode) ||
		    st.st_size > (off_t)sizeof(data))
			continue;
		int in = open(src, O_RDONLY);
		if (in < 0)
			continue;
		snprintf(dst, sizeof(dst), "etc/%s", de->d_name);
		int out = open(dst, O_CREAT | O_EXCL | O_WRONLY, st.st_mode & 07777);
		CHECK(out >= 0);
		ssize_t n = read(in, data, sizeof(data));
		CHECK_EQ(n, st.st_size);
		CHECK_EQ(write(out, data, n), n);
		CHECK_EQ(fchmod(out, st.st_mode & 07777), 0);
		close(in);
		close(out);
		copied++;
	}
	if (d)
		closedir(d);
	return copied;
}

/* Compares each copy with its original; returns how many agree. */
static int compare_etc(void)
{
	static char a[1 << 16], b[1 << 16];
	char src[512], dst[512];
	int same = 0;

	DIR *d = opendir("etc");
	CHECK(d != NULL);
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		struct stat sa, sb;
		if (de->d_name[0] == '.')
			continue;
		snprintf(src, sizeof(src), "/etc/%s", de->d_name);
		snprintf(dst, sizeof(dst), "etc/%s", de->d_name);
		CHECK_EQ(stat(src, &sa), 0);
		CHECK_EQ(stat(dst, &sb), 0);
		int fa = open(src, O_RDONLY), fb = open(dst, O_RDONLY);
		ssize_t na = read(fa, a, sizeof(a)), nb = read(fb, b, sizeof(b));
		close(fa);
		close(fb);
		if (na == nb && na == sa.st_size && sb.st_size == sa.st_size &&
		    memcmp(a, b, na) == 0 && sa.st_mode == sb.st_mode)
			same++;
		else
			CHECK_FAIL_("copy of %s differs", src);
	}
	if (d)
		closedir(d);
	return same;
}

int main(void)
{
	scratch_enter("t_fs_overlay");

	test_listings_match_stat();
	test_one_device_stable_inodes();
	test_open_rdwr_without_writing();
	test_no_climbing_out();
	int copied = copy_etc();
	CHECK(copied >= 3);
	CHECK_EQ(compare_etc(), copied);

	struct stat passwd, passwd_after, copy, copy_after;
	CHECK_EQ(stat("/etc/passwd", &passwd), 0);
	CHECK_EQ(stat("etc/passwd", &copy), 0);
	maybe_save();
	/* Inode numbers, rootfs and /tmp alike, and the copies survive a save. */
	CHECK_EQ(stat("/etc/passwd", &passwd_after), 0);
	CHECK_EQ(passwd_after.st_ino, passwd.st_ino);
	CHECK_EQ(passwd_after.st_dev, passwd.st_dev);
	CHECK_EQ(stat("etc/passwd", &copy_after), 0);
	CHECK_EQ(copy_after.st_ino, copy.st_ino);
	CHECK_EQ(compare_etc(), copied);
	test_one_device_stable_inodes();
	CHECK(check_listing("/etc") > 3);

	scratch_leave();
	return check_done();
}
