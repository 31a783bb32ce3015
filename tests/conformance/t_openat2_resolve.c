/*
 * t_openat2_resolve: openat2(2)'s RESOLVE_ flags. The argument checks (unknown bits and
 * BENEATH with IN_ROOT are EINVAL, RESOLVE_CACHED refuses O_CREAT and O_TRUNC with EAGAIN);
 * NO_SYMLINKS (ELOOP on any symlink followed, a trailing one with O_PATH|O_NOFOLLOW is fine);
 * BENEATH (EXDEV for absolute paths and symlinks and for ".." leaving the start, even for a
 * moment); IN_ROOT (absolute paths and symlinks restart at the dirfd, ".." stops there);
 * NO_XDEV (EXDEV on crossing a mount either way, tried on /proc and /tmp where they are
 * mounts, told by st_dev; absolute path arguments are allowed, absolute symlinks only once
 * the walk has looked its root up, as Linux's nd_jump_root decides); NO_MAGICLINKS on
 * /proc/self/fd/N, cwd, root, exe and the task/ ones (ELOOP; scoped lookups give EXDEV);
 * a larger struct open_how must hold zeros beyond the known fields (E2BIG).
 * conformance: native-proc
 */
#include "check.h"
#include "scratch.h"
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>

/* musl has no <linux/openat2.h>. */
struct how {
	uint64_t flags, mode, resolve;
};
#define R_NO_XDEV 0x01
#define R_NO_MAGICLINKS 0x02
#define R_NO_SYMLINKS 0x04
#define R_BENEATH 0x08
#define R_IN_ROOT 0x10
#define R_CACHED 0x20
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

static long o2(int dirfd, const char *path, long flags, long resolve)
{
	struct how how = {.flags = (uint64_t)flags, .resolve = (uint64_t)resolve};

	if (flags & O_CREAT)
		how.mode = 0644;
	return syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* openat2 succeeds, and the file is the one at EXPECT (a path, lstat'ed). */
#define CHECK_OPENS(dirfd, path, flags, resolve, expect)                                           \
	do {                                                                                       \
		long fd_ = o2(dirfd, path, flags, resolve);                                        \
		CHECK(fd_ >= 0);                                                                   \
		if (fd_ >= 0) {                                                                    \
			CHECK(same_file((int)fd_, expect));                                        \
			close((int)fd_);                                                           \
		} else {                                                                           \
			dprintf(1, "  %s: %s\n", path, strerror(errno));                           \
		}                                                                                  \
	} while (0)

static int same_file(int fd, const char *path)
{
	struct stat a, b;

	if (fstat(fd, &a) != 0 || lstat(path, &b) != 0)
		return 0;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* A mount at PATH: another device than the root's. */
static int is_mount(const char *path)
{
	struct stat r, m;

	return stat("/", &r) == 0 && stat(path, &m) == 0 && r.st_dev != m.st_dev;
}

static char file_f[160];

/* The tree: a/{f, b/, b/g, rel -> b, abs -> /etc, b/up -> ../f, b/up2 -> ../..,
 * b/rootf -> /f, b/slash -> /}. */
static void make_tree(void)
{
	CHECK_EQ(mkdir("a", 0755), 0);
	CHECK_EQ(mkdir("a/b", 0755), 0);
	CHECK_EQ(close(open("a/f", O_CREAT | O_WRONLY, 0644)), 0);
	CHECK_EQ(close(open("a/b/g", O_CREAT | O_WRONLY, 0644)), 0);
	CHECK_EQ(symlink("b", "a/rel"), 0);
	CHECK_EQ(symlink("/etc", "a/abs"), 0);
	CHECK_EQ(symlink("../f", "a/b/up"), 0);
	CHECK_EQ(symlink("../..", "a/b/up2"), 0);
	CHECK_EQ(symlink("/f", "a/b/rootf"), 0);
	CHECK_EQ(symlink("/", "a/b/slash"), 0);
	snprintf(file_f, sizeof(file_f), "%s/a/f", scratch_dir);
}

static void test_argument_checks(int a)
{
	struct how how = {.flags = O_RDONLY};
	char big[4097] = {0};
	long fd;

	CHECK_ERR(o2(a, "f", O_RDONLY, 0x40), EINVAL);
	CHECK_ERR(o2(a, "f", O_RDONLY, 1L << 40), EINVAL);
	CHECK_ERR(o2(a, "f", O_RDONLY, R_BENEATH | R_IN_ROOT), EINVAL);
	CHECK_ERR(syscall(SYS_openat2, a, "f", &how, 16), EINVAL);
	/* A larger struct (a newer caller's) with zeros beyond the known fields is fine. */
	memcpy(big, &how, sizeof(how));
	fd = syscall(SYS_openat2, a, "f", big, 4096);
	CHECK(fd >= 0);
	close((int)fd);
	big[100] = 1;
	CHECK_ERR(syscall(SYS_openat2, a, "f", big, 4096), E2BIG);
	CHECK_ERR(syscall(SYS_openat2, a, "f", big, 4097), E2BIG);
	CHECK_OPENS(a, "f", O_RDONLY, R_CACHED, "a/f");
	CHECK_ERR(o2(a, "new", O_RDWR | O_CREAT, R_CACHED), EAGAIN);
	CHECK_ERR(o2(a, "f", O_RDWR | O_TRUNC, R_CACHED), EAGAIN);
	CHECK_ERR(access("a/new", F_OK), ENOENT);
	CHECK_OPENS(a, "f", O_RDONLY,
		    R_NO_XDEV | R_NO_MAGICLINKS | R_NO_SYMLINKS | R_BENEATH | R_CACHED, "a/f");
}

static void test_no_symlinks(int a)
{
	CHECK_OPENS(a, "b/g", O_RDONLY, R_NO_SYMLINKS, "a/b/g");
	CHECK_ERR(o2(a, "rel/g", O_RDONLY, R_NO_SYMLINKS), ELOOP);
	CHECK_ERR(o2(a, "b/up", O_RDONLY, R_NO_SYMLINKS), ELOOP);
	CHECK_ERR(o2(a, "abs", O_PATH, R_NO_SYMLINKS), ELOOP);
	CHECK_ERR(o2(a, "abs", O_PATH, R_NO_SYMLINKS | R_BENEATH), ELOOP);
	/* A trailing symlink that is not followed is no symlink resolution. */
	CHECK_OPENS(a, "b/up", O_PATH | O_NOFOLLOW, R_NO_SYMLINKS, "a/b/up");
	CHECK_ERR(o2(a, "b/up", O_RDONLY | O_NOFOLLOW, R_NO_SYMLINKS), ELOOP);
	CHECK_ERR(o2(a, "rel/", O_PATH | O_NOFOLLOW, R_NO_SYMLINKS), ELOOP);
	CHECK_ERR(o2(a, "b/up", O_RDWR | O_CREAT, R_NO_SYMLINKS), ELOOP);
	CHECK_ERR(o2(a, "b/up", O_RDWR | O_CREAT | O_EXCL, R_NO_SYMLINKS), EEXIST);
	CHECK_OPENS(a, "b/up", O_RDONLY, 0, "a/f");
}

static void test_beneath(int a)
{
	CHECK_OPENS(a, "b/..", O_PATH, R_BENEATH, "a");
	CHECK_OPENS(a, "rel/g", O_RDONLY, R_BENEATH, "a/b/g");
	CHECK_OPENS(a, "b/up", O_RDONLY, R_BENEATH, "a/f");
	CHECK_ERR(o2(a, "..", O_PATH, R_BENEATH), EXDEV);
	CHECK_ERR(o2(a, "b/../..", O_PATH, R_BENEATH), EXDEV);
	CHECK_ERR(o2(a, "../a/f", O_RDONLY, R_BENEATH), EXDEV); /* leaving, even for a moment */
	CHECK_ERR(o2(a, "b/up2", O_PATH, R_BENEATH), EXDEV);
	CHECK_ERR(o2(a, "/etc", O_PATH, R_BENEATH), EXDEV);
	CHECK_ERR(o2(a, file_f, O_RDONLY, R_BENEATH), EXDEV);
	CHECK_ERR(o2(99, "/etc", O_PATH, R_BENEATH), EXDEV); /* the dirfd is not even looked at */
	CHECK_ERR(o2(a, "abs", O_PATH, R_BENEATH), EXDEV);
	CHECK_ERR(o2(a, "b/rootf", O_PATH, R_BENEATH), EXDEV);
	CHECK_OPENS(a, "abs", O_PATH | O_NOFOLLOW, R_BENEATH, "a/abs");
	CHECK_ERR(o2(a, "..", O_RDONLY | O_CREAT, R_BENEATH), EXDEV);
	CHECK_ERR(o2(a, "..", O_RDONLY | O_CREAT, 0), EISDIR);
	CHECK_ERR(o2(a, ".", O_RDONLY | O_CREAT | O_EXCL, R_BENEATH), EEXIST);
	CHECK_OPENS(a, "b/new", O_RDWR | O_CREAT, R_BENEATH, "a/b/new");
	CHECK_EQ(unlink("a/b/new"), 0);
	/* AT_FDCWD: the working directory is the root. */
	CHECK_OPENS(AT_FDCWD, "a/f", O_RDONLY, R_BENEATH, "a/f");
	CHECK_ERR(o2(AT_FDCWD, "a/../../x", O_RDONLY, R_BENEATH), EXDEV);
}

static void test_in_root(int a)
{
	CHECK_OPENS(a, "/f", O_RDONLY, R_IN_ROOT, "a/f");
	CHECK_OPENS(a, "/../../f", O_RDONLY, R_IN_ROOT, "a/f");
	CHECK_OPENS(a, "../../..", O_PATH, R_IN_ROOT, "a");
	CHECK_OPENS(a, "b/up2", O_PATH, R_IN_ROOT, "a");
	CHECK_OPENS(a, "b/rootf", O_RDONLY, R_IN_ROOT, "a/f");
	CHECK_OPENS(a, "b/slash/b/g", O_RDONLY, R_IN_ROOT, "a/b/g");
	CHECK_ERR(o2(a, "abs", O_PATH, R_IN_ROOT), ENOENT); /* a/etc */
	CHECK_ERR(o2(99, "/etc", O_PATH, R_IN_ROOT), EBADF);
	CHECK_OPENS(a, "/b/made", O_RDWR | O_CREAT, R_IN_ROOT, "a/b/made");
	CHECK_OPENS(a, "b/rootf", O_RDWR | O_CREAT, R_IN_ROOT, "a/f"); /* followed in the root */
	CHECK_EQ(unlink("a/b/made"), 0);
	CHECK_OPENS(a, "b/up", O_RDONLY, R_IN_ROOT | R_NO_XDEV, "a/f");
}

/* NO_XDEV across the mount at MNT (a directory right under /). */
static void test_no_xdev_at(const char *mnt)
{
	char inside[64], below[80];
	int root = open("/", O_PATH), m = open(mnt, O_PATH);

	snprintf(inside, sizeof(inside), "%s", mnt + 1);
	snprintf(below, sizeof(below), "%s/", mnt + 1);
	CHECK_OPENS(root, "etc", O_PATH, R_NO_XDEV, "/etc");
	CHECK_ERR(o2(root, inside, O_PATH, R_NO_XDEV), EXDEV);
	CHECK_ERR(o2(root, below, O_PATH, R_NO_XDEV), EXDEV);
	CHECK_ERR(o2(AT_FDCWD, mnt, O_PATH, R_NO_XDEV), EXDEV);
	CHECK_OPENS(m, ".", O_PATH, R_NO_XDEV, mnt);
	CHECK_ERR(o2(m, "..", O_PATH, R_NO_XDEV), EXDEV);
	CHECK_ERR(o2(m, "../etc", O_PATH, R_NO_XDEV), EXDEV);
	CHECK_OPENS(m, "..", O_PATH, 0, "/");
	/* An absolute path argument is judged from the root, whatever the dirfd. */
	CHECK_OPENS(m, "/etc", O_PATH, R_NO_XDEV, "/etc");
	/* IN_ROOT at the mount: ".." stays, no crossing. */
	CHECK_OPENS(m, "..", O_PATH, R_NO_XDEV | R_IN_ROOT, mnt);
	close(root);
	close(m);
}

static void test_no_xdev(int a)
{
	int tmp_mounted = is_mount("/tmp");

	/* The sandbox mounts a tmpfs on /tmp and procfs on /proc; a native chroot may not. */
	if (in_sandbox()) {
		CHECK(tmp_mounted);
		CHECK(is_mount("/proc"));
	}

	CHECK_OPENS(a, "b/../f", O_RDONLY, R_NO_XDEV, "a/f");
	CHECK_OPENS(AT_FDCWD, "/etc", O_PATH, R_NO_XDEV, "/etc");
	/* An absolute symlink before anything looked the root up: another mount to Linux. */
	CHECK_ERR(o2(a, "abs", O_PATH, R_NO_XDEV), EXDEV);
	/* After "..", the link's mount is compared with the root's. */
	if (tmp_mounted)
		CHECK_ERR(o2(a, "../a/abs", O_PATH, R_NO_XDEV), EXDEV);
	else
		CHECK_OPENS(a, "../a/abs", O_PATH, R_NO_XDEV, "/etc");
	if (tmp_mounted) {
		CHECK_ERR(o2(AT_FDCWD, file_f, O_RDONLY, R_NO_XDEV), EXDEV);
		test_no_xdev_at("/tmp");
	} else {
		CHECK_OPENS(AT_FDCWD, file_f, O_RDONLY, R_NO_XDEV, "a/f");
	}
	if (is_mount("/proc"))
		test_no_xdev_at("/proc");
}

static void test_magic_links(int a)
{
	char path[64], rel[64];
	int fd = openat(a, "f", O_RDONLY), pfd = open("/proc/self/status", O_RDONLY);
	int proc = open("/proc", O_PATH);

	CHECK(fd >= 0 && pfd >= 0 && proc >= 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	CHECK_OPENS(AT_FDCWD, path, O_RDONLY, 0, "a/f");
	CHECK_OPENS(AT_FDCWD, path, O_RDWR | O_CREAT, 0, "a/f"); /* an object that exists */
	CHECK_ERR(o2(AT_FDCWD, path, O_RDONLY, R_NO_MAGICLINKS), ELOOP);
	CHECK_ERR(o2(AT_FDCWD, path, O_RDWR | O_CREAT, R_NO_MAGICLINKS), ELOOP);
	CHECK_ERR(o2(AT_FDCWD, path, O_RDONLY, R_NO_SYMLINKS), ELOOP);
	CHECK_ERR(o2(AT_FDCWD, path, O_RDONLY | O_NOFOLLOW, R_NO_MAGICLINKS), ELOOP);
	CHECK_OPENS(AT_FDCWD, path, O_PATH | O_NOFOLLOW, R_NO_MAGICLINKS, path);
	snprintf(rel, sizeof(rel), "self/fd/%d", fd);
	CHECK_ERR(o2(proc, rel, O_RDONLY, R_BENEATH), EXDEV);
	CHECK_ERR(o2(proc, rel, O_RDONLY, R_IN_ROOT), EXDEV);
	CHECK_ERR(o2(proc, rel, O_RDONLY, R_BENEATH | R_NO_MAGICLINKS), ELOOP);
	CHECK_ERR(o2(proc, rel, O_RDONLY, R_NO_XDEV), EXDEV); /* a jump to another mount */
	snprintf(rel, sizeof(rel), "self/fd/%d", pfd);
	CHECK_OPENS(proc, rel, O_RDONLY, R_NO_XDEV, "/proc/self/status");

	/* /proc/self is an ordinary symlink; cwd, root, exe and the task ones are magic. */
	CHECK_OPENS(proc, "self/fd", O_PATH, R_NO_MAGICLINKS, "/proc/self/fd");
	CHECK_ERR(o2(proc, "self/fd", O_PATH, R_NO_SYMLINKS), ELOOP);
	CHECK_OPENS(AT_FDCWD, "/proc/self/cwd", O_PATH, 0, ".");
	CHECK_ERR(o2(AT_FDCWD, "/proc/self/cwd", O_PATH, R_NO_MAGICLINKS), ELOOP);
	CHECK_ERR(o2(AT_FDCWD, "/proc/self/cwd/", O_PATH | O_NOFOLLOW, R_NO_MAGICLINKS), ELOOP);
	CHECK_ERR(o2(AT_FDCWD, "/proc/self/cwd/a", O_PATH, R_NO_MAGICLINKS), ELOOP);
	CHECK_ERR(o2(AT_FDCWD, "/proc/self/root", O_PATH, R_NO_MAGICLINKS), ELOOP);
	CHECK_ERR(o2(AT_FDCWD, "/proc/self/exe", O_PATH, R_NO_MAGICLINKS), ELOOP);
	CHECK_ERR(o2(AT_FDCWD, "/proc/thread-self/cwd", O_PATH, R_NO_MAGICLINKS), ELOOP);
	snprintf(rel, sizeof(rel), "/proc/self/task/%d/cwd", (int)syscall(SYS_gettid));
	CHECK_ERR(o2(AT_FDCWD, rel, O_PATH, R_NO_MAGICLINKS), ELOOP);
	CHECK_OPENS(AT_FDCWD, "/proc/self/fd/..", O_PATH, R_NO_MAGICLINKS, "/proc/self/.");
	close(fd);
	close(pfd);
	close(proc);
}

int main(void)
{
	int a;

	scratch_enter("t_openat2_resolve");
	make_tree();
	a = open("a", O_PATH | O_DIRECTORY);
	CHECK(a >= 0);
	maybe_save();
	test_argument_checks(a);
	test_no_symlinks(a);
	test_beneath(a);
	maybe_save();
	test_in_root(a);
	test_no_xdev(a);
	/* Natively without root there is no procfs in the chroot; the sandbox always has one. */
	if (in_sandbox() || access("/proc/self/fd", F_OK) == 0)
		test_magic_links(a);
	else
		dprintf(1, "skip: no /proc\n");
	close(a);
	scratch_leave();
	return check_done();
}
