/* Unit tests for the writable VFS on tmpfs (vfs/memfs.c, vfs/namei.c, vfs/file.c): creating,
 * writing and reading files with holes, directories and their errno cases, rename with its
 * flags, links and symlinks, attributes and permission checks against credentials, fallocate,
 * statfs, shared mappings through the memory file, and mounts (EXDEV, EBUSY). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "mem/memfile.h"
#include "vfs/vfs.h"

static struct vfs_fs_ctx fs;
static const struct vfs_cred alice = {.uid = 1000, .gid = 1000}, bob = {.uid = 1001, .gid = 1001};

static int group_setup(void **state)
{
	(void)state;
	return memfile_init();
}

static int test_setup(void **state)
{
	(void)state;
	assert_int_equal(vfs_tmpfs_new(&fs.root), 0);
	fs.cwd = vfs_dentry_get(fs.root);
	fs.umask = 022;
	return 0;
}

static int test_teardown(void **state)
{
	(void)state;
	vfs_umount_all();
	assert_null(fs.root->children);
	assert_int_equal(fs.root->refs, 2);
	vfs_dentry_put(fs.cwd);
	vfs_dentry_put(fs.root);
	return 0;
}

static struct vfs_file *open_as(const struct vfs_cred *cred, const char *path, int flags)
{
	struct vfs_file *f = NULL;
	int err = vfs_open_cred(&fs, cred, NULL, path, flags, 0644, &f);

	if (err)
		fail_msg("open of '%s' failed: %s", path, strerror(-err));
	return f;
}

static int open_err(const struct vfs_cred *cred, const char *path, int flags)
{
	struct vfs_file *f;
	int err = vfs_open_cred(&fs, cred, NULL, path, flags, 0644, &f);

	if (!err)
		vfs_file_put(f);
	return err;
}

static ssize_t fwrite_at(struct vfs_file *f, const char *data, off_t *pos)
{
	struct iovec iov = {.iov_base = (void *)data, .iov_len = strlen(data)};

	return f->ops->write(f, &iov, 1, pos ? pos : &f->pos);
}

static void put_file(const char *path, const char *data)
{
	struct vfs_file *f = open_as(NULL, path, O_WRONLY | O_CREAT | O_TRUNC);

	assert_int_equal(fwrite_at(f, data, NULL), (ssize_t)strlen(data));
	vfs_file_put(f);
}

/* The whole content of PATH, NUL-terminated, in BUF. */
static ssize_t get_file(const char *path, char *buf, size_t size)
{
	struct vfs_file *f = open_as(NULL, path, O_RDONLY);
	struct iovec iov = {.iov_base = buf, .iov_len = size - 1};
	ssize_t n = f->ops->read(f, &iov, 1, &f->pos);

	vfs_file_put(f);
	assert_true(n >= 0);
	buf[n] = '\0';
	return n;
}

static int stat_path(const char *path, struct stat *st)
{
	struct vfs_dentry *d;
	int err = vfs_lookup(&fs, NULL, path, 0, &d);

	if (err)
		return err;
	err = vfs_stat(d, st);
	vfs_dentry_put(d);
	return err;
}

static struct vfs_dentry *lookup_ok(const char *path)
{
	struct vfs_dentry *d = NULL;

	assert_int_equal(vfs_lookup(&fs, NULL, path, 0, &d), 0);
	return d;
}

static void test_created_file_reads_back_what_was_written(void **state)
{
	char buf[64];
	struct stat st;

	(void)state;
	put_file("/a", "hello");
	assert_int_equal(get_file("/a", buf, sizeof(buf)), 5);
	assert_string_equal(buf, "hello");
	assert_int_equal(stat_path("/a", &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(st.st_size, 5);
	assert_int_equal(st.st_nlink, 1);
}

static void test_o_excl_on_existing_file_fails_with_eexist(void **state)
{
	(void)state;
	put_file("/a", "x");
	assert_int_equal(open_err(NULL, "/a", O_WRONLY | O_CREAT | O_EXCL), -EEXIST);
	assert_int_equal(open_err(NULL, "/missing/a", O_WRONLY | O_CREAT), -ENOENT);
	assert_int_equal(open_err(NULL, "/b/", O_WRONLY | O_CREAT), -EISDIR);
}

static void test_o_trunc_empties_and_o_append_appends(void **state)
{
	char buf[64];
	struct vfs_file *f;

	(void)state;
	put_file("/a", "0123456789");
	f = open_as(NULL, "/a", O_WRONLY | O_APPEND);
	f->pos = 0;
	assert_int_equal(fwrite_at(f, "ab", NULL), 2);
	assert_int_equal(f->pos, 12);
	vfs_file_put(f);
	assert_int_equal(get_file("/a", buf, sizeof(buf)), 12);
	assert_string_equal(buf, "0123456789ab");
	vfs_file_put(open_as(NULL, "/a", O_WRONLY | O_TRUNC));
	assert_int_equal(get_file("/a", buf, sizeof(buf)), 0);
}

static void test_write_past_the_end_leaves_a_hole_that_reads_as_zeros(void **state)
{
	struct vfs_file *f;
	char buf[300000];
	off_t pos = 200000;
	struct stat st;

	(void)state;
	f = open_as(NULL, "/sparse", O_RDWR | O_CREAT);
	assert_int_equal(fwrite_at(f, "end", &pos), 3);
	assert_int_equal(f->ops->pread_kernel(f, buf, sizeof(buf), 0), 200003);
	for (int i = 0; i < 200000; i++)
		if (buf[i])
			fail_msg("byte %d of the hole is %d", i, buf[i]);
	assert_memory_equal(buf + 200000, "end", 3);
	/* Truncating down then up again shows zeros, not the old bytes. */
	assert_int_equal(vfs_ftruncate(f, 200001), 0);
	assert_int_equal(vfs_ftruncate(f, 200003), 0);
	assert_int_equal(f->ops->pread_kernel(f, buf, 10, 200000), 3);
	assert_memory_equal(buf, "e\0\0", 3);
	assert_int_equal(f->ops->getattr(f, &st), 0);
	assert_int_equal(st.st_size, 200003);
	vfs_file_put(f);
}

static void test_ftruncate_needs_a_file_open_for_writing(void **state)
{
	struct vfs_file *f;

	(void)state;
	put_file("/a", "abc");
	f = open_as(NULL, "/a", O_RDONLY);
	assert_int_equal(vfs_ftruncate(f, 0), -EINVAL);
	vfs_file_put(f);
	f = open_as(NULL, "/", O_RDONLY | O_DIRECTORY);
	assert_int_equal(vfs_ftruncate(f, 0), -EINVAL);
	vfs_file_put(f);
}

static void test_fallocate_extends_and_punch_hole_zeroes_in_place(void **state)
{
	struct vfs_file *f;
	char buf[16];
	struct stat st;

	(void)state;
	put_file("/a", "abcdefgh");
	f = open_as(NULL, "/a", O_RDWR);
	assert_int_equal(vfs_fallocate(f, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 2, 3), 0);
	assert_int_equal(f->ops->pread_kernel(f, buf, sizeof(buf), 0), 8);
	assert_memory_equal(buf, "ab\0\0\0fgh", 8);
	assert_int_equal(vfs_fallocate(f, 0, 0, 100), 0);
	assert_int_equal(f->ops->getattr(f, &st), 0);
	assert_int_equal(st.st_size, 100);
	assert_int_equal(vfs_fallocate(f, FALLOC_FL_PUNCH_HOLE, 0, 1), -EOPNOTSUPP);
	assert_int_equal(vfs_fallocate(f, 0, 0, 0), -EINVAL);
	vfs_file_put(f);
	f = open_as(NULL, "/a", O_RDONLY);
	assert_int_equal(vfs_fallocate(f, 0, 0, 1), -EBADF);
	vfs_file_put(f);
}

static void test_mkdir_and_rmdir_follow_linux_errors(void **state)
{
	struct stat st;

	(void)state;
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/d", 0755), 0);
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/d", 0755), -EEXIST);
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/d/e/", 0755), 0);
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/x/y", 0755), -ENOENT);
	assert_int_equal(stat_path("/d", &st), 0);
	assert_int_equal(st.st_nlink, 3);
	put_file("/d/f", "");
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/d/f/g", 0755), -ENOTDIR);
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/d"), -ENOTEMPTY);
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/d/f"), -ENOTDIR);
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/d/e/."), -EINVAL);
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/d/e/.."), -ENOTEMPTY);
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/"), -EBUSY);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/d/e"), -EISDIR);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/d/f/"), -ENOTDIR);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/d/."), -EISDIR);
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/d/e/"), 0);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/d/f"), 0);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/d/f"), -ENOENT);
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/d"), 0);
	assert_int_equal(stat_path("/d", &st), -ENOENT);
}

static void test_long_names_and_symlink_loops_fail(void **state)
{
	char name[NAME_MAX + 3];

	(void)state;
	memset(name, 'n', sizeof(name) - 1);
	name[0] = '/';
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, name, 0755), -ENAMETOOLONG);
	assert_int_equal(vfs_symlink(&fs, NULL, "loop", NULL, "/loop"), 0);
	assert_int_equal(open_err(NULL, "/loop", O_RDONLY), -ELOOP);
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/loop/x", 0755), -ELOOP);
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/loop", 0755), -EEXIST);
}

static void test_removed_file_stays_readable_through_an_open_file(void **state)
{
	struct vfs_file *f;
	char buf[8];

	(void)state;
	put_file("/a", "data");
	f = open_as(NULL, "/a", O_RDONLY);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/a"), 0);
	assert_int_equal(f->ops->pread_kernel(f, buf, sizeof(buf), 0), 4);
	assert_int_equal(open_err(NULL, "/a", O_RDONLY), -ENOENT);
	vfs_file_put(f);
}

static void test_hard_link_shares_data_and_counts_links(void **state)
{
	struct vfs_dentry *a;
	struct stat st;
	char buf[16];

	(void)state;
	put_file("/a", "one");
	a = lookup_ok("/a");
	assert_int_equal(vfs_link(&fs, NULL, a, NULL, "/b"), 0);
	assert_int_equal(vfs_link(&fs, NULL, a, NULL, "/b"), -EEXIST);
	assert_int_equal(vfs_stat(a, &st), 0);
	assert_int_equal(st.st_nlink, 2);
	put_file("/b", "two");
	get_file("/a", buf, sizeof(buf));
	assert_string_equal(buf, "two");
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/b"), 0);
	assert_int_equal(vfs_stat(a, &st), 0);
	assert_int_equal(st.st_nlink, 1);
	vfs_dentry_put(a);
	a = lookup_ok("/");
	assert_int_equal(vfs_link(&fs, NULL, a, NULL, "/rootlink"), -EPERM);
	vfs_dentry_put(a);
}

static void test_symlink_is_followed_and_read_back(void **state)
{
	struct vfs_dentry *l;
	char buf[64];

	(void)state;
	put_file("/target", "via link");
	assert_int_equal(vfs_symlink(&fs, NULL, "target", NULL, "/link"), 0);
	get_file("/link", buf, sizeof(buf));
	assert_string_equal(buf, "via link");
	l = lookup_ok("/link");
	assert_int_equal(vfs_readlink(l, buf, sizeof(buf)), 6);
	assert_memory_equal(buf, "target", 6);
	vfs_dentry_put(l);
	assert_int_equal(vfs_symlink(&fs, NULL, "", NULL, "/empty"), -ENOENT);
}

static void test_mknod_makes_fifos_and_refuses_devices(void **state)
{
	struct stat st;

	(void)state;
	assert_int_equal(vfs_mknod(&fs, NULL, NULL, "/fifo", S_IFIFO | 0600, 0), 0);
	assert_int_equal(stat_path("/fifo", &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(vfs_mknod(&fs, NULL, NULL, "/sock", S_IFSOCK | 0600, 0), 0);
	assert_int_equal(vfs_mknod(&fs, NULL, NULL, "/null", S_IFCHR | 0600, 0x103), -EPERM);
	assert_int_equal(vfs_mknod(&fs, NULL, NULL, "/reg", 0600, 0), 0);
	assert_int_equal(stat_path("/reg", &st), 0);
	assert_true(S_ISREG(st.st_mode));
}

static void test_rename_moves_replaces_and_honours_its_flags(void **state)
{
	char buf[16];
	struct stat st;

	(void)state;
	put_file("/a", "A");
	put_file("/b", "B");
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/a", NULL, "/b", RENAME_NOREPLACE), -EEXIST);
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/a", NULL, "/b", RENAME_EXCHANGE), 0);
	get_file("/a", buf, sizeof(buf));
	assert_string_equal(buf, "B");
	assert_int_equal(
	    vfs_rename(&fs, NULL, NULL, "/a", NULL, "/c", RENAME_EXCHANGE | RENAME_NOREPLACE),
	    -EINVAL);
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/a", NULL, "/c", RENAME_EXCHANGE), -ENOENT);
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/a", NULL, "/b", 0), 0);
	get_file("/b", buf, sizeof(buf));
	assert_string_equal(buf, "B");
	assert_int_equal(stat_path("/a", &st), -ENOENT);
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/a", NULL, "/c", 0), -ENOENT);
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/b/", NULL, "/c", 0), -ENOTDIR);
}

static void test_rename_of_directories_checks_emptiness_and_ancestry(void **state)
{
	struct vfs_dentry *cwd;
	char path[PATH_MAX];

	(void)state;
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/d", 0755), 0);
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/d/sub", 0755), 0);
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/full", 0755), 0);
	put_file("/full/x", "");
	put_file("/f", "");
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/d", NULL, "/d/sub/in", 0), -EINVAL);
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/d", NULL, "/full", 0), -ENOTEMPTY);
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/d", NULL, "/f", 0), -ENOTDIR);
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/f", NULL, "/d", 0), -EISDIR);
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/d/sub", NULL, "/d", 0), -ENOTEMPTY);
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/", NULL, "/x", 0), -EBUSY);
	/* A working directory inside moves along with the rename. */
	cwd = lookup_ok("/d/sub");
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/d", NULL, "/moved", 0), 0);
	assert_true(vfs_path(fs.root, cwd, path, sizeof(path)) > 0);
	assert_string_equal(path, "/moved/sub");
	vfs_dentry_put(cwd);
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/full/x"), -ENOTDIR);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/full/x"), 0);
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/moved", NULL, "/full", 0), 0);
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/full/sub"), 0);
}

static void test_readdir_lists_what_the_directory_holds(void **state)
{
	struct vfs_file *f;
	char buf[4096];
	ssize_t n;
	int count = 0;
	bool saw_b = false;

	(void)state;
	put_file("/a", "");
	put_file("/b", "");
	put_file("/c", "");
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/b"), 0);
	f = open_as(NULL, "/", O_RDONLY | O_DIRECTORY);
	while ((n = f->ops->getdents64(f, buf, 48, &f->pos)) > 0) {
		for (ssize_t off = 0; off < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				uint16_t reclen;
				uint8_t type;
				char name[];
			} *de = (void *)(buf + off);

			saw_b |= strcmp(de->name, "b") == 0;
			count++;
			off += de->reclen;
		}
	}
	assert_int_equal(n, 0);
	assert_int_equal(count, 4); /* . .. a c */
	assert_false(saw_b);
	vfs_file_put(f);
}

static void test_permissions_are_checked_against_the_callers_credentials(void **state)
{
	struct vfs_dentry *d;

	(void)state;
	/* The root directory is root's, 1777: anyone creates, only owners delete. */
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/private", 0700), 0);
	assert_int_equal(vfs_mkdir(&fs, &alice, NULL, "/private/x", 0755), -EACCES);
	assert_int_equal(open_err(&alice, "/private/x", O_RDONLY), -EACCES);
	vfs_file_put(open_as(&alice, "/alices", O_WRONLY | O_CREAT));
	assert_int_equal(vfs_unlink(&fs, &bob, NULL, "/alices"), -EPERM);
	assert_int_equal(vfs_rename(&fs, &bob, NULL, "/alices", NULL, "/bobs", 0), -EPERM);
	d = lookup_ok("/alices");
	assert_int_equal(vfs_chmod(d, &bob, 0777), -EPERM);
	assert_int_equal(vfs_chmod(d, &alice, 0600), 0);
	assert_int_equal(open_err(&bob, "/alices", O_RDONLY), -EACCES);
	assert_int_equal(vfs_chown(d, &alice, bob.uid, -1), -EPERM);
	assert_int_equal(vfs_chown(d, NULL, bob.uid, bob.gid), 0);
	assert_int_equal(vfs_truncate(d, &alice, 0), -EACCES);
	assert_int_equal(vfs_utimens(d, &alice, NULL), -EACCES);
	assert_int_equal(vfs_access_cred(d, &alice, R_OK), -EACCES);
	assert_int_equal(vfs_access_cred(d, &bob, R_OK | W_OK), 0);
	/* Root reads and writes anything but runs nothing without an x bit. */
	assert_int_equal(vfs_access_cred(d, NULL, R_OK | W_OK), 0);
	assert_int_equal(vfs_access_cred(d, NULL, X_OK), -EACCES);
	vfs_dentry_put(d);
	assert_int_equal(vfs_unlink(&fs, &bob, NULL, "/alices"), 0);
}

static void test_utimens_sets_omits_and_checks_ownership(void **state)
{
	struct timespec ts[2] = {{100, 0}, {200, UTIME_OMIT}};
	struct vfs_dentry *d;
	struct stat st, before;

	(void)state;
	vfs_file_put(open_as(&alice, "/f", O_WRONLY | O_CREAT));
	d = lookup_ok("/f");
	assert_int_equal(vfs_stat(d, &before), 0);
	assert_int_equal(vfs_utimens(d, &alice, ts), 0);
	assert_int_equal(vfs_stat(d, &st), 0);
	assert_int_equal(st.st_atim.tv_sec, 100);
	assert_int_equal(st.st_mtim.tv_sec, before.st_mtim.tv_sec);
	assert_int_equal(vfs_utimens(d, &bob, ts), -EPERM);
	ts[0].tv_nsec = 1000000000;
	assert_int_equal(vfs_utimens(d, &alice, ts), -EINVAL);
	vfs_dentry_put(d);
}

static void test_statfs_reports_tmpfs(void **state)
{
	struct statfs sfs;

	(void)state;
	assert_int_equal(vfs_statfs(fs.root, &sfs), 0);
	assert_int_equal(sfs.f_type, TMPFS_MAGIC);
	assert_int_equal(sfs.f_namelen, NAME_MAX);
}

static void test_shared_mapping_writes_are_seen_by_read(void **state)
{
	struct vfs_file *f, *g;
	struct mobj *m1, *m2;
	uint64_t off1, off2;
	char buf[8];

	(void)state;
	put_file("/m", "abcd");
	f = open_as(NULL, "/m", O_RDWR);
	g = open_as(NULL, "/m", O_RDWR);
	assert_int_equal(vfs_file_mmap_range(f, 0, 4096, &m1, &off1), 0);
	assert_int_equal(vfs_file_mmap_range(g, 0, 4096, &m2, &off2), 0);
	assert_int_equal(off1, off2);
	memcpy(memfile_ptr(off1), "WX", 2);
	assert_int_equal(g->ops->pread_kernel(g, buf, sizeof(buf), 0), 4);
	assert_memory_equal(buf, "WXcd", 4);
	assert_int_equal(fwrite_at(g, "yz", &(off_t){2}), 2);
	assert_memory_equal(memfile_ptr(off1), "WXyz", 4);
	mobj_put(m1);
	mobj_put(m2);
	vfs_file_put(f);
	vfs_file_put(g);
}

static void test_mounts_give_exdev_and_ebusy(void **state)
{
	struct vfs_dentry *mp, *sub;

	(void)state;
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/mnt", 0755), 0);
	mp = lookup_ok("/mnt");
	assert_int_equal(vfs_tmpfs_new(&sub), 0);
	assert_int_equal(vfs_mount(mp, sub), 0);
	vfs_dentry_put(sub);
	vfs_dentry_put(mp);
	put_file("/a", "a");
	put_file("/mnt/b", "b");
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/a", NULL, "/mnt/a", 0), -EXDEV);
	mp = lookup_ok("/a");
	assert_int_equal(vfs_link(&fs, NULL, mp, NULL, "/mnt/a"), -EXDEV);
	vfs_dentry_put(mp);
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/mnt"), -EBUSY);
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/mnt", NULL, "/mnt2", 0), -EBUSY);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/mnt/b"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, test_setup, test_teardown)
	    T(test_created_file_reads_back_what_was_written),
	    T(test_o_excl_on_existing_file_fails_with_eexist),
	    T(test_o_trunc_empties_and_o_append_appends),
	    T(test_write_past_the_end_leaves_a_hole_that_reads_as_zeros),
	    T(test_ftruncate_needs_a_file_open_for_writing),
	    T(test_fallocate_extends_and_punch_hole_zeroes_in_place),
	    T(test_mkdir_and_rmdir_follow_linux_errors),
	    T(test_long_names_and_symlink_loops_fail),
	    T(test_removed_file_stays_readable_through_an_open_file),
	    T(test_hard_link_shares_data_and_counts_links),
	    T(test_symlink_is_followed_and_read_back),
	    T(test_mknod_makes_fifos_and_refuses_devices),
	    T(test_rename_moves_replaces_and_honours_its_flags),
	    T(test_rename_of_directories_checks_emptiness_and_ancestry),
	    T(test_readdir_lists_what_the_directory_holds),
	    T(test_permissions_are_checked_against_the_callers_credentials),
	    T(test_utimens_sets_omits_and_checks_ownership),
	    T(test_statfs_reports_tmpfs),
	    T(test_shared_mapping_writes_are_seen_by_read),
	    T(test_mounts_give_exdev_and_ebusy),
#undef T
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
