/* Unit tests for vfs open file descriptions (vfs/file.c, vfs/hostfs.c, vfs/hostfd.c,
 * vfs/attr.c): open(2) flag handling on the read-only host tree and its errors in Linux's
 * order, reads, lseek, getdents64 cookies across small buffers and rewinds, O_PATH files,
 * access and statx, and host stdio descriptors wrapped as files (pipes, files, a pty). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include "vfs/vfs.h"

#define MANY 50 /* files in /many, enough to need many small getdents64 calls */
#define KERNEL_O_LARGEFILE 0100000

struct node {
	char type; /* 'd' directory, 'f' file with DATA, 'x' executable file, 'l' symlink */
	const char *path;
	const char *data;
};

static const struct node tree[] = {
    {'d', "etc", NULL},
    {'f', "etc/hostname", "sandbox\n"},
    {'f', "file", "hello, world\n"},
    {'x', "script", "#!/bin/sh\n"},
    {'d', "dir", NULL},
    {'d', "many", NULL},
    {'l', "abs", "/etc/hostname"},
    {'l', "dirlink", "dir"},
    {'l', "dangling", "missing"},
    {'l', "dangling_deep", "nodir/missing"},
    {'l', "loop", "loop"},
};

static char host_dir[] = "/tmp/test_vfs_file.XXXXXX";
static struct vfs_fs_ctx fs;
static int fds_before;

static int count_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(dir);
	while (readdir(dir))
		n++;
	closedir(dir);
	return n;
}

static void write_file(const char *path, const char *data, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, strlen(data)), (ssize_t)strlen(data));
	close(fd);
}

static int group_setup(void **state)
{
	char path[PATH_MAX];
	size_t i;

	(void)state;
	fds_before = count_fds();
	assert_non_null(mkdtemp(host_dir));
	for (i = 0; i < sizeof(tree) / sizeof(tree[0]); i++) {
		const struct node *n = &tree[i];

		snprintf(path, sizeof(path), "%s/%s", host_dir, n->path);
		if (n->type == 'd')
			assert_int_equal(mkdir(path, 0755), 0);
		else if (n->type == 'l')
			assert_int_equal(symlink(n->data, path), 0);
		else
			write_file(path, n->data, n->type == 'x' ? 0755 : 0644);
	}
	for (i = 0; i < MANY; i++) {
		snprintf(path, sizeof(path), "%s/many/entry-%02zu-with-a-longish-name", host_dir,
			 i);
		write_file(path, "", 0644);
	}
	return 0;
}

static int tree_remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	return remove(path);
}

/* Fails the group if host descriptors outlived their mounts. */
static int group_teardown(void **state)
{
	(void)state;
	assert_int_equal(nftw(host_dir, tree_remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
	assert_int_equal(count_fds(), fds_before);
	return 0;
}

/* Each test gets a fresh mount, so one that fails halfway cannot disturb the next. */
static int test_setup(void **state)
{
	(void)state;
	assert_int_equal(vfs_mount_host_root(host_dir, &fs.root), 0);
	fs.cwd = vfs_dentry_get(fs.root);
	fs.umask = 022;
	return 0;
}

/* Fails the test if it left a dentry or file referenced. */
static int test_teardown(void **state)
{
	(void)state;
	assert_null(fs.root->children);
	assert_int_equal(fs.root->refs, 2);
	vfs_dentry_put(fs.cwd);
	vfs_dentry_put(fs.root);
	return 0;
}

static struct vfs_file *open_ok(const char *path, int flags)
{
	struct vfs_file *f = NULL;
	int err = vfs_open(&fs, NULL, path, flags, 0, &f);

	if (err)
		fail_msg("open of '%s' failed with %d (%s)", path, err, strerror(-err));
	return f;
}

static int open_err(const char *path, int flags)
{
	struct vfs_file *f;
	int err = vfs_open(&fs, NULL, path, flags, 0644, &f);

	if (!err)
		vfs_file_put(f);
	return err;
}

static ssize_t file_read(struct vfs_file *f, void *buf, size_t len)
{
	struct iovec iov = {.iov_base = buf, .iov_len = len};

	return f->ops->read(f, &iov, 1, &f->pos);
}

/* Lists directory PATH with getdents64 calls of BUFSIZE bytes into NAMES; returns the count. */
static int list_dir(struct vfs_file *f, size_t bufsize, char names[][NAME_MAX + 1], int max)
{
	char *buf = malloc(bufsize);
	int count = 0, calls = 0;
	ssize_t n;

	assert_non_null(buf);
	while ((n = f->ops->getdents64(f, buf, bufsize, &f->pos)) > 0) {
		ssize_t off = 0;

		assert_true(++calls <= max); /* each call makes progress */

		while (off < n) {
			struct {
				uint64_t ino;
				int64_t off;
				uint16_t reclen;
				uint8_t type;
				char name[];
			} *de = (void *)(buf + off);

			assert_true(count < max);
			assert_true(de->reclen > 0 && off + de->reclen <= n);
			strcpy(names[count++], de->name);
			off += de->reclen;
		}
	}
	assert_int_equal(n, 0);
	free(buf);
	return count;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void test_open_reads_the_file_contents(void **state)
{
	struct vfs_file *f = open_ok("/file", O_RDONLY | O_CLOEXEC);
	char a[5], b[32];
	struct iovec iov[2] = {{a, sizeof(a)}, {b, sizeof(b)}};

	(void)state;
	assert_int_equal(f->flags, O_RDONLY | KERNEL_O_LARGEFILE);
	assert_true(f->seekable);
	assert_int_equal(f->ops->read(f, iov, 2, &f->pos), 13);
	assert_memory_equal(a, "hello", 5);
	assert_memory_equal(b, ", world\n", 8);
	assert_int_equal(f->pos, 13);
	assert_int_equal(file_read(f, b, sizeof(b)), 0);
	vfs_file_put(f);
}

static void test_open_follows_an_absolute_symlink_to_the_rootfs_file(void **state)
{
	struct vfs_file *f = open_ok("/abs", O_RDONLY);
	char buf[32];

	(void)state;
	assert_int_equal(file_read(f, buf, sizeof(buf)), 8);
	assert_memory_equal(buf, "sandbox\n", 8);
	vfs_file_put(f);
}

static void test_lseek_moves_the_offset_and_refuses_negative_results(void **state)
{
	struct vfs_file *f = open_ok("/file", O_RDONLY);
	char buf[8];

	(void)state;
	assert_int_equal(vfs_lseek(f, 0, SEEK_END), 13);
	assert_int_equal(vfs_lseek(f, -6, SEEK_CUR), 7);
	assert_int_equal(file_read(f, buf, 5), 5);
	assert_memory_equal(buf, "world", 5);
	assert_int_equal(vfs_lseek(f, -1, SEEK_SET), -EINVAL);
	assert_int_equal(vfs_lseek(f, -20, SEEK_END), -EINVAL);
	assert_int_equal(vfs_lseek(f, 0, 42), -EINVAL);
	assert_int_equal(f->pos, 12);
	assert_int_equal(vfs_lseek(f, 3, SEEK_DATA), 3);
	assert_int_equal(vfs_lseek(f, 3, SEEK_HOLE), 13);
	assert_int_equal(vfs_lseek(f, 13, SEEK_DATA), -ENXIO);
	assert_int_equal(vfs_lseek(f, 100, SEEK_SET), 100);
	assert_int_equal(file_read(f, buf, sizeof(buf)), 0);
	vfs_file_put(f);
}

static void test_pread_kernel_reads_at_an_offset_without_moving_the_file(void **state)
{
	struct vfs_file *f = open_ok("/file", O_RDONLY);
	char buf[32];

	(void)state;
	assert_int_equal(f->ops->pread_kernel(f, buf, 5, 7), 5);
	assert_memory_equal(buf, "world", 5);
	assert_int_equal(f->ops->pread_kernel(f, buf, sizeof(buf), 10), 3);
	assert_int_equal(f->pos, 0);
	vfs_file_put(f);
}

static void test_getdents64_lists_every_entry(void **state)
{
	static char names[MANY + 8][NAME_MAX + 1];
	struct vfs_file *f = open_ok("/many", O_RDONLY | O_DIRECTORY);
	char want[NAME_MAX + 1];
	int n, i;

	(void)state;
	n = list_dir(f, 65536, names, MANY + 8);
	assert_int_equal(n, MANY + 2);
	qsort(names, (size_t)n, sizeof(names[0]), name_cmp);
	assert_string_equal(names[0], ".");
	assert_string_equal(names[1], "..");
	for (i = 0; i < MANY; i++) {
		snprintf(want, sizeof(want), "entry-%02d-with-a-longish-name", i);
		assert_string_equal(names[i + 2], want);
	}
	vfs_file_put(f);
}

static void test_getdents64_continues_across_small_buffers(void **state)
{
	static char big[MANY + 8][NAME_MAX + 1], small[MANY + 8][NAME_MAX + 1];
	struct vfs_file *f = open_ok("/many", O_RDONLY | O_DIRECTORY);
	int n_big, n_small;

	(void)state;
	n_big = list_dir(f, 65536, big, MANY + 8);
	assert_int_equal(vfs_lseek(f, 0, SEEK_SET), 0);
	/* 64 bytes hold one record of these names (48 bytes) or two of "." and "..": the
	 * listing takes dozens of calls, each continuing from the last one's cookie. */
	n_small = list_dir(f, 64, small, MANY + 8);
	assert_int_equal(n_small, n_big);
	assert_memory_equal(small, big, sizeof(big[0]) * (size_t)n_big);
	vfs_file_put(f);
}

static void test_getdents64_rewinds_after_lseek_to_zero(void **state)
{
	static char names[MANY + 8][NAME_MAX + 1];
	struct vfs_file *f = open_ok("/many", O_RDONLY | O_DIRECTORY);
	char buf[4096];
	int i;

	(void)state;
	for (i = 0; f->ops->getdents64(f, buf, 200, &f->pos) > 0; i++)
		assert_true(i < MANY);
	assert_int_equal(f->ops->getdents64(f, buf, sizeof(buf), &f->pos), 0);
	assert_int_equal(vfs_lseek(f, 0, SEEK_SET), 0);
	assert_int_equal(list_dir(f, 512, names, MANY + 8), MANY + 2);
	assert_int_equal(vfs_lseek(f, 0, SEEK_END), -EINVAL);
	vfs_file_put(f);
}

static void test_getdents64_with_a_buffer_too_small_for_one_record_fails_with_einval(void **state)
{
	struct vfs_file *f = open_ok("/many", O_RDONLY | O_DIRECTORY);
	char buf[64];

	(void)state;
	assert_int_equal(f->ops->getdents64(f, buf, 16, &f->pos), -EINVAL);
	assert_int_equal(f->ops->getdents64(f, buf, 0, &f->pos), -EINVAL);
	assert_int_equal(f->pos, 0);
	vfs_file_put(f);
}

static void test_getdents64_reports_the_root_dotdot_as_the_root_itself(void **state)
{
	struct vfs_file *f = open_ok("/", O_RDONLY | O_DIRECTORY);
	char buf[8192];
	struct stat st;
	ssize_t n, off;
	bool seen = false;

	(void)state;
	assert_int_equal(vfs_stat(fs.root, &st), 0);
	n = f->ops->getdents64(f, buf, sizeof(buf), &f->pos);
	assert_true(n > 0);
	for (off = 0; off < n;) {
		uint64_t ino;
		uint16_t reclen;

		memcpy(&ino, buf + off, sizeof(ino));
		memcpy(&reclen, buf + off + 16, sizeof(reclen));
		if (strcmp(buf + off + 19, "..") == 0) {
			assert_int_equal(ino, st.st_ino);
			seen = true;
		}
		off += reclen;
	}
	assert_true(seen);
	vfs_file_put(f);
}

static void test_reading_a_directory_fails_with_eisdir(void **state)
{
	struct vfs_file *f = open_ok("/dir", O_RDONLY);
	char buf[8];

	(void)state;
	assert_int_equal(file_read(f, buf, sizeof(buf)), -EISDIR);
	vfs_file_put(f);
}

static void test_getdents64_on_a_regular_file_fails_with_enotdir(void **state)
{
	struct vfs_file *f = open_ok("/file", O_RDONLY);
	char buf[512];

	(void)state;
	assert_int_equal(f->ops->getdents64(f, buf, sizeof(buf), &f->pos), -ENOTDIR);
	vfs_file_put(f);
}

static void test_open_nofollow_on_a_symlink_fails_with_eloop(void **state)
{
	(void)state;
	assert_int_equal(open_err("/abs", O_RDONLY | O_NOFOLLOW), -ELOOP);
	assert_int_equal(open_err("/loop", O_RDONLY), -ELOOP);
	/* Only the last component is exempt from following. */
	assert_int_equal(open_err("/dirlink/.", O_RDONLY | O_NOFOLLOW), 0);
}

static void test_o_path_with_nofollow_opens_the_symlink_itself(void **state)
{
	struct vfs_file *f = open_ok("/abs", O_PATH | O_NOFOLLOW);
	struct stat st;

	(void)state;
	assert_int_equal(f->ops->getattr(f, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	vfs_file_put(f);
}

static void test_o_path_file_can_be_stat_ed_but_not_read(void **state)
{
	struct vfs_file *f = open_ok("/file", O_PATH | O_RDWR | O_CREAT);
	char buf[8];
	struct stat st;

	(void)state;
	assert_int_equal(f->flags, O_PATH);
	assert_int_equal(file_read(f, buf, sizeof(buf)), -EBADF);
	assert_int_equal(f->ops->getdents64(f, buf, sizeof(buf), &f->pos), -EBADF);
	assert_int_equal(vfs_lseek(f, 0, SEEK_SET), -EBADF);
	assert_int_equal(f->ops->getattr(f, &st), 0);
	assert_int_equal(st.st_size, 13);
	vfs_file_put(f);
}

static void test_opens_that_would_write_fail_with_erofs(void **state)
{
	(void)state;
	assert_int_equal(open_err("/file", O_WRONLY), -EROFS);
	assert_int_equal(open_err("/file", O_RDWR), -EROFS);
	assert_int_equal(open_err("/file", O_RDONLY | O_TRUNC), -EROFS);
	assert_int_equal(open_err("/abs", O_WRONLY | O_APPEND), -EROFS);
	assert_int_equal(open_err("/new", O_RDONLY | O_CREAT), -EROFS);
	assert_int_equal(open_err("/new", O_WRONLY | O_CREAT | O_EXCL), -EROFS);
	assert_int_equal(open_err("/dangling", O_WRONLY | O_CREAT), -EROFS);
	assert_int_equal(open_err("/file", O_WRONLY | O_CREAT), -EROFS);
	assert_int_equal(open_err("/dir", O_RDWR | O_TMPFILE), -EROFS);
}

static void test_o_creat_reports_a_missing_parent_before_erofs(void **state)
{
	(void)state;
	assert_int_equal(open_err("/nodir/new", O_WRONLY | O_CREAT), -ENOENT);
	assert_int_equal(open_err("/dangling_deep", O_WRONLY | O_CREAT), -ENOENT);
	assert_int_equal(open_err("/file/new", O_WRONLY | O_CREAT), -ENOTDIR);
}

static void test_o_creat_on_an_existing_directory_fails_with_eisdir(void **state)
{
	(void)state;
	assert_int_equal(open_err("/dir", O_RDONLY | O_CREAT), -EISDIR);
	assert_int_equal(open_err("/dirlink", O_WRONLY | O_CREAT), -EISDIR);
	assert_int_equal(open_err("/new/", O_RDONLY | O_CREAT), -EISDIR);
	assert_int_equal(open_err("/", O_RDONLY | O_CREAT), -EISDIR);
	assert_int_equal(open_err("/dir/..", O_RDONLY | O_CREAT), -EISDIR);
}

static void test_o_creat_o_excl_on_an_existing_name_fails_with_eexist(void **state)
{
	(void)state;
	assert_int_equal(open_err("/file", O_RDONLY | O_CREAT | O_EXCL), -EEXIST);
	assert_int_equal(open_err("/dangling", O_RDONLY | O_CREAT | O_EXCL), -EEXIST);
	assert_int_equal(open_err("/dir", O_WRONLY | O_CREAT | O_EXCL), -EEXIST);
}

static void test_o_creat_follows_final_symlinks_up_to_the_limit(void **state)
{
	(void)state;
	assert_int_equal(open_err("/loop", O_RDONLY | O_CREAT), -ELOOP);
	assert_int_equal(open_err("/abs", O_RDONLY | O_CREAT | O_NOFOLLOW), -ELOOP);
}

static void test_read_only_o_creat_of_an_existing_file_opens_it(void **state)
{
	struct vfs_file *f = open_ok("/abs", O_RDONLY | O_CREAT);
	char buf[16];

	(void)state;
	assert_int_equal(f->flags & O_CREAT, 0);
	assert_int_equal(file_read(f, buf, sizeof(buf)), 8);
	vfs_file_put(f);
}

static void test_write_access_to_a_directory_fails_with_eisdir(void **state)
{
	(void)state;
	assert_int_equal(open_err("/dir", O_WRONLY), -EISDIR);
	assert_int_equal(open_err("/dir", O_RDWR), -EISDIR);
}

static void test_o_directory_on_a_file_fails_with_enotdir(void **state)
{
	(void)state;
	assert_int_equal(open_err("/file", O_RDONLY | O_DIRECTORY), -ENOTDIR);
	assert_int_equal(open_err("/dirlink", O_RDONLY | O_DIRECTORY | O_NOFOLLOW), -ENOTDIR);
	assert_int_equal(open_err("/dir", O_RDONLY | O_DIRECTORY | O_CREAT), -EINVAL);
}

static void test_write_to_a_read_only_file_fails_with_ebadf(void **state)
{
	struct vfs_file *f = open_ok("/file", O_RDONLY);
	struct iovec iov = {.iov_base = "x", .iov_len = 1};

	(void)state;
	assert_int_equal(f->ops->write(f, &iov, 1, &f->pos), -EBADF);
	assert_int_equal(f->ops->ioctl(f, TCGETS, NULL), -ENOTTY);
	vfs_file_put(f);
}

static void test_access_treats_the_caller_as_root_on_a_read_only_tree(void **state)
{
	struct vfs_dentry *file, *script, *dir;

	(void)state;
	assert_int_equal(vfs_lookup(&fs, NULL, "/file", 0, &file), 0);
	assert_int_equal(vfs_lookup(&fs, NULL, "/script", 0, &script), 0);
	assert_int_equal(vfs_lookup(&fs, NULL, "/dir", 0, &dir), 0);
	assert_int_equal(vfs_access(file, F_OK), 0);
	assert_int_equal(vfs_access(file, R_OK), 0);
	assert_int_equal(vfs_access(file, W_OK), -EROFS);
	assert_int_equal(vfs_access(file, X_OK), -EACCES);
	assert_int_equal(vfs_access(file, W_OK | X_OK), -EROFS);
	assert_int_equal(vfs_access(script, R_OK | X_OK), 0);
	assert_int_equal(vfs_access(dir, X_OK), 0);
	assert_int_equal(vfs_access(dir, W_OK), -EROFS);
	assert_int_equal(vfs_access(dir, 8), -EINVAL);
	vfs_dentry_put(file);
	vfs_dentry_put(script);
	vfs_dentry_put(dir);
}

static void test_statx_fill_copies_the_basic_stats(void **state)
{
	struct vfs_dentry *d;
	struct statx stx;
	struct stat st;

	(void)state;
	assert_int_equal(vfs_lookup(&fs, NULL, "/script", 0, &d), 0);
	assert_int_equal(vfs_stat(d, &st), 0);
	assert_int_equal(vfs_statx_fill(&st, STATX_BASIC_STATS, &stx), 0);
	assert_int_equal(stx.stx_mask & STATX_BASIC_STATS, STATX_BASIC_STATS);
	assert_int_equal(stx.stx_mode, st.st_mode);
	assert_int_equal(stx.stx_mode & 0777, 0755);
	assert_int_equal(stx.stx_size, 10);
	assert_int_equal(stx.stx_ino, st.st_ino);
	assert_int_equal(stx.stx_nlink, st.st_nlink);
	assert_int_equal(stx.stx_uid, st.st_uid);
	assert_int_equal(stx.stx_mtime.tv_sec, st.st_mtim.tv_sec);
	assert_int_equal(stx.stx_mtime.tv_nsec, st.st_mtim.tv_nsec);
	assert_int_equal(makedev(stx.stx_dev_major, stx.stx_dev_minor), st.st_dev);
	vfs_dentry_put(d);
}

static void test_host_fd_file_returns_eagain_until_the_pipe_has_input(void **state)
{
	struct vfs_file *f;
	char buf[8];
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	f = vfs_file_host_fd(p[0], O_RDONLY, true);
	assert_non_null(f);
	assert_false(f->seekable);
	assert_null(f->dentry);
	assert_int_equal(f->ops->host_fd(f), p[0]);
	assert_int_equal(file_read(f, buf, sizeof(buf)), -EAGAIN);
	assert_int_equal(write(p[1], "hi", 2), 2);
	assert_int_equal(file_read(f, buf, sizeof(buf)), 2);
	assert_memory_equal(buf, "hi", 2);
	assert_int_equal(vfs_lseek(f, 0, SEEK_CUR), -ESPIPE);
	assert_int_equal(f->ops->ioctl(f, TCGETS, buf), -ENOTTY);
	close(p[1]);
	assert_int_equal(file_read(f, buf, sizeof(buf)), 0); /* EOF is ready, not EAGAIN */
	vfs_file_put(f);
	assert_int_equal(fcntl(p[0], F_GETFD), -1); /* owned: closed with the file */
}

static void test_host_fd_file_writes_to_a_pipe_and_keeps_an_unowned_fd_open(void **state)
{
	struct vfs_file *f;
	struct iovec iov[2] = {{"ab", 2}, {"cd", 2}};
	char buf[8];
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	f = vfs_file_host_fd(p[1], O_WRONLY, false);
	assert_non_null(f);
	assert_int_equal(f->ops->write(f, iov, 2, NULL), 4);
	assert_int_equal(read(p[0], buf, sizeof(buf)), 4);
	assert_memory_equal(buf, "abcd", 4);
	vfs_file_put(f);
	assert_int_equal(fcntl(p[1], F_GETFD), 0);
	close(p[0]);
	close(p[1]);
}

static void test_host_fd_file_on_a_regular_file_shares_the_host_offset(void **state)
{
	char path[] = "/tmp/test_vfs_file_stdio.XXXXXX";
	struct vfs_file *f;
	struct iovec iov;
	char buf[8];
	off_t at = 1;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, "abcdef", 6), 6);
	f = vfs_file_host_fd(fd, O_RDWR, true);
	assert_non_null(f);
	assert_true(f->seekable);
	assert_int_equal(vfs_lseek(f, 2, SEEK_SET), 2);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 2);
	assert_int_equal(file_read(f, buf, 3), 3);
	assert_memory_equal(buf, "cde", 3);
	assert_int_equal(vfs_lseek(f, 0, SEEK_CUR), 5);
	/* A positional read (its own offset) leaves the host offset alone. */
	iov = (struct iovec){.iov_base = buf, .iov_len = 2};
	assert_int_equal(f->ops->read(f, &iov, 1, &at), 2);
	assert_memory_equal(buf, "bc", 2);
	assert_int_equal(at, 3);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 5);
	assert_int_equal(vfs_lseek(f, 0, SEEK_END), 6);
	vfs_file_put(f);
}

static void test_host_fd_file_passes_terminal_queries_through_to_a_tty(void **state)
{
	struct termios host, guest;
	struct winsize ws = {.ws_row = 24, .ws_col = 80}, got;
	struct vfs_file *f;
	int master, slave;

	(void)state;
	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) || unlockpt(master))
		skip();
	slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	assert_true(slave >= 0);
	assert_int_equal(ioctl(slave, TIOCSWINSZ, &ws), 0);
	assert_int_equal(tcgetattr(slave, &host), 0);

	f = vfs_file_host_fd(slave, O_RDWR, true);
	assert_non_null(f);
	assert_false(f->seekable);
	memset(&guest, 0, sizeof(guest));
	assert_int_equal(f->ops->ioctl(f, TCGETS, &guest), 0);
	assert_int_equal(guest.c_lflag, host.c_lflag);
	assert_int_equal(guest.c_iflag, host.c_iflag);
	assert_int_equal(f->ops->ioctl(f, TIOCGWINSZ, &got), 0);
	assert_int_equal(got.ws_row, 24);
	assert_int_equal(got.ws_col, 80);
	ws.ws_row = 30;
	assert_int_equal(f->ops->ioctl(f, TIOCSWINSZ, &ws), 0);
	assert_int_equal(f->ops->ioctl(f, TIOCGWINSZ, &got), 0);
	assert_int_equal(got.ws_row, 30);
	/* Requests the Sentry does not pass through never reach the host terminal. */
	char c = 'x';
	assert_int_equal(f->ops->ioctl(f, TIOCSTI, &c), -ENOTTY);
	vfs_file_put(f);
	close(master);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, test_setup, test_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_open_reads_the_file_contents),
	    T(test_open_follows_an_absolute_symlink_to_the_rootfs_file),
	    T(test_lseek_moves_the_offset_and_refuses_negative_results),
	    T(test_pread_kernel_reads_at_an_offset_without_moving_the_file),
	    T(test_getdents64_lists_every_entry),
	    T(test_getdents64_continues_across_small_buffers),
	    T(test_getdents64_rewinds_after_lseek_to_zero),
	    T(test_getdents64_with_a_buffer_too_small_for_one_record_fails_with_einval),
	    T(test_getdents64_reports_the_root_dotdot_as_the_root_itself),
	    T(test_reading_a_directory_fails_with_eisdir),
	    T(test_getdents64_on_a_regular_file_fails_with_enotdir),
	    T(test_open_nofollow_on_a_symlink_fails_with_eloop),
	    T(test_o_path_with_nofollow_opens_the_symlink_itself),
	    T(test_o_path_file_can_be_stat_ed_but_not_read),
	    T(test_opens_that_would_write_fail_with_erofs),
	    T(test_o_creat_reports_a_missing_parent_before_erofs),
	    T(test_o_creat_on_an_existing_directory_fails_with_eisdir),
	    T(test_o_creat_o_excl_on_an_existing_name_fails_with_eexist),
	    T(test_o_creat_follows_final_symlinks_up_to_the_limit),
	    T(test_read_only_o_creat_of_an_existing_file_opens_it),
	    T(test_write_access_to_a_directory_fails_with_eisdir),
	    T(test_o_directory_on_a_file_fails_with_enotdir),
	    T(test_write_to_a_read_only_file_fails_with_ebadf),
	    T(test_access_treats_the_caller_as_root_on_a_read_only_tree),
	    T(test_statx_fill_copies_the_basic_stats),
	    T(test_host_fd_file_returns_eagain_until_the_pipe_has_input),
	    T(test_host_fd_file_writes_to_a_pipe_and_keeps_an_unowned_fd_open),
	    T(test_host_fd_file_on_a_regular_file_shares_the_host_offset),
	    T(test_host_fd_file_passes_terminal_queries_through_to_a_tty),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
