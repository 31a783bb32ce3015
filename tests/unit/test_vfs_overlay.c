/* Unit tests for the overlay root (vfs/overlay.c): copy-up keeps data and attributes, whiteouts
 * hide lower names, a directory removed and made again is opaque, readdir merges the layers
 * without duplicates, renames across layers, and the host directory is byte-for-byte unchanged
 * after all of it (a checksum of the whole tree, before and after). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mem/memfile.h"
#include "vfs/vfs.h"

static char host_dir[] = "/tmp/test_vfs_overlay.XXXXXX";
static struct vfs_fs_ctx fs;
static uint64_t sum_before;

struct node {
	char type; /* 'd', 'f' (with DATA), 'l' (symlink to DATA) */
	const char *path;
	const char *data;
};

static const struct node tree[] = {
    {'d', "etc", NULL},
    {'f', "etc/passwd", "root:x:0:0::/root:/bin/sh\n"},
    {'f', "etc/hosts", "127.0.0.1 localhost\n"},
    {'d', "etc/dir", NULL},
    {'f', "etc/dir/one", "1"},
    {'f', "etc/dir/two", "2"},
    {'l', "etc/link", "passwd"},
    {'d', "empty", NULL},
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ULL;
	return h;
}

static uint64_t tree_sum;

static int sum_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char buf[4096];
	ssize_t n;

	(void)type, (void)ftw;
	tree_sum = fnv(tree_sum, path, strlen(path) + 1);
	tree_sum = fnv(tree_sum, &st->st_mode, sizeof(st->st_mode));
	tree_sum = fnv(tree_sum, &st->st_size, sizeof(st->st_size));
	tree_sum = fnv(tree_sum, &st->st_mtim, sizeof(st->st_mtim));
	tree_sum = fnv(tree_sum, &st->st_uid, sizeof(st->st_uid));
	if (S_ISLNK(st->st_mode)) {
		n = readlink(path, buf, sizeof(buf));
		tree_sum = fnv(tree_sum, buf, n > 0 ? (size_t)n : 0);
	} else if (S_ISREG(st->st_mode)) {
		int fd = open(path, O_RDONLY);

		while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
			tree_sum = fnv(tree_sum, buf, (size_t)n);
		close(fd);
	}
	return 0;
}

/* A checksum of names, types, modes, sizes, times and contents of the whole host tree. */
static uint64_t host_sum(void)
{
	tree_sum = 14695981039346656037ULL;
	assert_int_equal(nftw(host_dir, sum_one, 16, FTW_PHYS), 0);
	return tree_sum;
}

static int group_setup(void **state)
{
	char path[PATH_MAX];

	(void)state;
	assert_int_equal(memfile_init(), 0);
	assert_non_null(mkdtemp(host_dir));
	for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", host_dir, tree[i].path);
		if (tree[i].type == 'd') {
			assert_int_equal(mkdir(path, 0755), 0);
		} else if (tree[i].type == 'l') {
			assert_int_equal(symlink(tree[i].data, path), 0);
		} else {
			int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);

			assert_true(fd >= 0);
			assert_int_equal(write(fd, tree[i].data, strlen(tree[i].data)),
					 (ssize_t)strlen(tree[i].data));
			close(fd);
		}
	}
	sum_before = host_sum();
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	return remove(path);
}

static int group_teardown(void **state)
{
	(void)state;
	assert_int_equal(nftw(host_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
	return 0;
}

/* Each test gets a fresh overlay (a fresh upper layer), and checks the host tree after. */
static int test_setup(void **state)
{
	(void)state;
	assert_int_equal(vfs_mount_overlay_root(host_dir, &fs.root), 0);
	fs.cwd = vfs_dentry_get(fs.root);
	fs.umask = 022;
	return 0;
}

static int test_teardown(void **state)
{
	(void)state;
	assert_null(fs.root->children);
	assert_int_equal(fs.root->refs, 2);
	vfs_dentry_put(fs.cwd);
	vfs_dentry_put(fs.root);
	assert_true(host_sum() == sum_before);
	return 0;
}

static struct vfs_file *open_ok(const char *path, int flags)
{
	struct vfs_file *f = NULL;
	int err = vfs_open(&fs, NULL, path, flags, 0644, &f);

	if (err)
		fail_msg("open of '%s' failed: %s", path, strerror(-err));
	return f;
}

static ssize_t get_file(const char *path, char *buf, size_t size)
{
	struct vfs_file *f = open_ok(path, O_RDONLY);
	ssize_t n = f->ops->pread_kernel(f, buf, size - 1, 0);

	vfs_file_put(f);
	assert_true(n >= 0);
	buf[n] = '\0';
	return n;
}

static void put_file(const char *path, const char *data, int flags)
{
	struct vfs_file *f = open_ok(path, O_WRONLY | flags);
	struct iovec iov = {.iov_base = (void *)data, .iov_len = strlen(data)};

	assert_int_equal(f->ops->write(f, &iov, 1, &f->pos), (ssize_t)strlen(data));
	vfs_file_put(f);
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

/* The names in directory PATH, sorted, joined by spaces (without "." and ".."). */
static void list(const char *path, char *out, size_t size)
{
	struct vfs_file *f = open_ok(path, O_RDONLY | O_DIRECTORY);
	char buf[4096], names[64][NAME_MAX + 1];
	int count = 0;
	ssize_t n;

	while ((n = f->ops->getdents64(f, buf, sizeof(buf), &f->pos)) > 0) {
		for (ssize_t off = 0; off < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				uint16_t reclen;
				uint8_t type;
				char name[];
			} *de = (void *)(buf + off);

			if (strcmp(de->name, ".") && strcmp(de->name, ".."))
				strcpy(names[count++], de->name);
			off += de->reclen;
		}
	}
	assert_int_equal(n, 0);
	vfs_file_put(f);
	qsort(names, (size_t)count, sizeof(names[0]), (int (*)(const void *, const void *))strcmp);
	out[0] = '\0';
	for (int i = 0; i < count; i++) {
		if (i)
			strncat(out, " ", size - strlen(out) - 1);
		strncat(out, names[i], size - strlen(out) - 1);
	}
}

static void test_lower_files_read_through_the_overlay(void **state)
{
	char buf[128];

	(void)state;
	get_file("/etc/link", buf, sizeof(buf));
	assert_string_equal(buf, "root:x:0:0::/root:/bin/sh\n");
}

static void test_copy_up_on_write_keeps_the_old_data(void **state)
{
	char buf[128];
	struct stat before, after;

	(void)state;
	assert_int_equal(stat_path("/etc/passwd", &before), 0);
	put_file("/etc/passwd", "alice:x:1000:1000::/home/alice:/bin/sh\n", O_APPEND);
	get_file("/etc/passwd", buf, sizeof(buf));
	assert_string_equal(buf,
			    "root:x:0:0::/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n");
	assert_int_equal(stat_path("/etc/passwd", &after), 0);
	assert_int_equal(after.st_ino, before.st_ino);
	assert_int_equal(after.st_dev, before.st_dev);
	assert_int_equal(after.st_mode, before.st_mode);
}

static void test_truncate_and_chmod_copy_up(void **state)
{
	struct vfs_dentry *d;
	struct stat st;
	char buf[64];

	(void)state;
	vfs_file_put(open_ok("/etc/hosts", O_WRONLY | O_TRUNC));
	assert_int_equal(get_file("/etc/hosts", buf, sizeof(buf)), 0);
	assert_int_equal(vfs_lookup(&fs, NULL, "/etc/dir/one", 0, &d), 0);
	assert_int_equal(vfs_chmod(d, NULL, 0600), 0);
	assert_int_equal(vfs_chown(d, NULL, 5, 6), 0);
	assert_int_equal(vfs_stat(d, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, 5);
	vfs_dentry_put(d);
	get_file("/etc/dir/one", buf, sizeof(buf));
	assert_string_equal(buf, "1");
}

static void test_whiteout_hides_a_removed_lower_file(void **state)
{
	struct stat st;
	char names[256];

	(void)state;
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/etc/hosts"), 0);
	assert_int_equal(stat_path("/etc/hosts", &st), -ENOENT);
	list("/etc", names, sizeof(names));
	assert_string_equal(names, "dir link passwd");
	put_file("/etc/hosts", "new", O_CREAT | O_EXCL);
	list("/etc", names, sizeof(names));
	assert_string_equal(names, "dir hosts link passwd");
}

static void test_rmdir_then_mkdir_gives_an_opaque_directory(void **state)
{
	char names[256];

	(void)state;
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/etc/dir"), -ENOTEMPTY);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/etc/dir/one"), 0);
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/etc/dir"), -ENOTEMPTY);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/etc/dir/two"), 0);
	list("/etc/dir", names, sizeof(names));
	assert_string_equal(names, "");
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/etc/dir"), 0);
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/etc/dir", 0700), 0);
	list("/etc/dir", names, sizeof(names));
	assert_string_equal(names, "");
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/empty"), 0);
	list("/", names, sizeof(names));
	assert_string_equal(names, "etc");
}

static void test_readdir_merges_layers_without_duplicates(void **state)
{
	char names[256];

	(void)state;
	put_file("/etc/dir/one", "changed", O_TRUNC);
	put_file("/etc/dir/three", "3", O_CREAT);
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/etc/dir/sub", 0755), 0);
	list("/etc/dir", names, sizeof(names));
	assert_string_equal(names, "one sub three two");
}

static void test_rename_across_layers_moves_the_file_and_hides_the_old_name(void **state)
{
	struct vfs_dentry *d;
	char buf[64], names[256];
	struct stat st;

	(void)state;
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/etc/hosts", NULL, "/hosts.moved", 0), 0);
	assert_int_equal(stat_path("/etc/hosts", &st), -ENOENT);
	get_file("/hosts.moved", buf, sizeof(buf));
	assert_string_equal(buf, "127.0.0.1 localhost\n");
	/* Over an existing lower name, and back. */
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/hosts.moved", NULL, "/etc/passwd", 0), 0);
	get_file("/etc/passwd", buf, sizeof(buf));
	assert_string_equal(buf, "127.0.0.1 localhost\n");
	list("/etc", names, sizeof(names));
	assert_string_equal(names, "dir link passwd");
	/* A lower directory does not move; an upper one does. */
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/etc/dir", NULL, "/dir2", 0), -EXDEV);
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/new", 0755), 0);
	put_file("/new/f", "f", O_CREAT);
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/new", NULL, "/empty", 0), 0);
	list("/empty", names, sizeof(names));
	assert_string_equal(names, "f");
	put_file("/x", "X", O_CREAT);
	assert_int_equal(vfs_rename(&fs, NULL, NULL, "/etc/link", NULL, "/x", RENAME_EXCHANGE), 0);
	get_file("/etc/link", buf, sizeof(buf));
	assert_string_equal(buf, "X");
	assert_int_equal(vfs_lookup(&fs, NULL, "/x", 0, &d), 0);
	assert_int_equal(vfs_readlink(d, buf, sizeof(buf)), 6); /* the link, moved to / */
	vfs_dentry_put(d);
}

static void test_hard_link_of_a_lower_file_copies_it_up(void **state)
{
	struct vfs_dentry *d;
	char buf[64];
	struct stat st;

	(void)state;
	assert_int_equal(vfs_lookup(&fs, NULL, "/etc/hosts", 0, &d), 0);
	assert_int_equal(vfs_link(&fs, NULL, d, NULL, "/etc/hosts2"), 0);
	vfs_dentry_put(d);
	put_file("/etc/hosts2", "x", O_APPEND);
	get_file("/etc/hosts", buf, sizeof(buf));
	assert_string_equal(buf, "127.0.0.1 localhost\nx");
	assert_int_equal(stat_path("/etc/hosts", &st), 0);
	assert_int_equal(st.st_nlink, 2);
}

static void test_merged_directory_counts_subdirectories_of_both_layers(void **state)
{
	struct stat st;

	(void)state;
	assert_int_equal(stat_path("/etc", &st), 0);
	assert_int_equal(st.st_nlink, 3);	 /* ., .. and dir */
	put_file("/etc/new-file", "x", O_CREAT); /* /etc becomes a merged directory */
	assert_int_equal(stat_path("/etc", &st), 0);
	assert_int_equal(st.st_nlink, 3);
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/etc/sub", 0755), 0);
	assert_int_equal(stat_path("/etc", &st), 0);
	assert_int_equal(st.st_nlink, 4);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/etc/dir/one"), 0);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/etc/dir/two"), 0);
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/etc/dir"), 0); /* a lower one, whited out */
	assert_int_equal(stat_path("/etc", &st), 0);
	assert_int_equal(st.st_nlink, 3);
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/etc/sub"), 0);
	assert_int_equal(stat_path("/etc", &st), 0);
	assert_int_equal(st.st_nlink, 2);
}

static void test_symlink_chown_copies_the_link_up(void **state)
{
	struct vfs_dentry *d;
	char buf[64];

	(void)state;
	assert_int_equal(vfs_lookup(&fs, NULL, "/etc/link", 0, &d), 0);
	assert_int_equal(vfs_chown(d, NULL, 7, 7), 0);
	assert_int_equal(vfs_readlink(d, buf, sizeof(buf)), 6);
	vfs_dentry_put(d);
	get_file("/etc/link", buf, sizeof(buf));
	assert_string_equal(buf, "root:x:0:0::/root:/bin/sh\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, test_setup, test_teardown)
	    T(test_lower_files_read_through_the_overlay),
	    T(test_copy_up_on_write_keeps_the_old_data),
	    T(test_truncate_and_chmod_copy_up),
	    T(test_whiteout_hides_a_removed_lower_file),
	    T(test_rmdir_then_mkdir_gives_an_opaque_directory),
	    T(test_readdir_merges_layers_without_duplicates),
	    T(test_rename_across_layers_moves_the_file_and_hides_the_old_name),
	    T(test_hard_link_of_a_lower_file_copies_it_up),
	    T(test_symlink_chown_copies_the_link_up),
	    T(test_merged_directory_counts_subdirectories_of_both_layers),
#undef T
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
