/* Unit tests for vfs path resolution (vfs/lookup.c, vfs/dentry.c, vfs/hostfs.c): builds a
 * small host tree with nested directories and relative, absolute, escaping, looping and
 * chained symlinks, mounts it as a root, and checks what each guest path resolves to — in
 * particular that no path or symlink reaches a host file outside the tree — and that dropping
 * every reference frees the dentry cache and closes every host descriptor. */
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vfs/kernfs.h"
#include "vfs/vfs.h"

#define CHAIN_LEN 41 /* l0 -> l1 -> ... -> l40 -> file: 41 links from l0, 40 from l1 */

/* The host tree: 'd' a directory, 'f' a file with DATA, 'l' a symlink to DATA. */
struct node {
	char type;
	const char *path;
	const char *data;
};

static const struct node tree[] = {
    {'d', "etc", NULL},
    {'f', "etc/hostname", "sandbox\n"},
    {'f', "etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"},
    {'d', "a", NULL},
    {'d', "a/b", NULL},
    {'d', "a/b/c", NULL},
    {'f', "a/b/c/file", "deep\n"},
    {'l', "a/b/rel", "c/file"},
    {'l', "a/b/up", "../../etc"},
    {'l', "a/b/abs_passwd", "/etc/passwd"},
    {'l', "a/jail_abs", "/b/c/file"},
    {'f', "file", "hello, world\n"},
    {'l', "abs", "/etc/hostname"},
    {'l', "absdir", "/a/b/"},
    {'l', "dirlink", "a/b"},
    {'l', "filelink_slash", "file/"},
    {'l', "escape", "../../../../etc"},
    {'l', "a/escape_passwd", "../../../../../../etc/passwd"},
    {'l', "host_usr", "../../../../../../../../usr/bin"},
    {'l', "host_usr_abs", "/usr/bin"},
    {'l', "loop1", "loop2"},
    {'l', "loop2", "loop1"},
};

static char host_dir[] = "/tmp/test_vfs_lookup.XXXXXX";
static struct vfs_fs_ctx fs;

static void tree_create(void)
{
	char path[PATH_MAX], target[32];
	size_t i;

	assert_non_null(mkdtemp(host_dir));
	for (i = 0; i < sizeof(tree) / sizeof(tree[0]); i++) {
		const struct node *n = &tree[i];
		int fd;

		snprintf(path, sizeof(path), "%s/%s", host_dir, n->path);
		if (n->type == 'd') {
			assert_int_equal(mkdir(path, 0755), 0);
		} else if (n->type == 'l') {
			assert_int_equal(symlink(n->data, path), 0);
		} else {
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
			assert_true(fd >= 0);
			assert_int_equal(write(fd, n->data, strlen(n->data)),
					 (ssize_t)strlen(n->data));
			close(fd);
		}
	}
	for (i = 0; i < CHAIN_LEN; i++) {
		snprintf(path, sizeof(path), "%s/l%zu", host_dir, i);
		if (i + 1 < CHAIN_LEN)
			snprintf(target, sizeof(target), "l%zu", i + 1);
		else
			snprintf(target, sizeof(target), "file");
		assert_int_equal(symlink(target, path), 0);
	}
}

static int tree_remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	return remove(path);
}

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

static int group_setup(void **state)
{
	(void)state;
	tree_create();
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	return nftw(host_dir, tree_remove_one, 16, FTW_DEPTH | FTW_PHYS);
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

/* Every test drops what it took: the cache is then back to the bare root. */
static int test_teardown(void **state)
{
	(void)state;
	assert_null(fs.root->children);
	assert_int_equal(fs.root->refs, 2); /* the mount's and the cwd's */
	vfs_dentry_put(fs.cwd);
	vfs_dentry_put(fs.root);
	return 0;
}

static struct vfs_dentry *lookup_ok(const char *path, int flags)
{
	struct vfs_dentry *d = NULL;
	int err = vfs_lookup(&fs, NULL, path, flags, &d);

	if (err)
		fail_msg("lookup of '%s' failed with %d (%s)", path, err, strerror(-err));
	return d;
}

static int lookup_err(const char *path, int flags)
{
	struct vfs_dentry *d;
	int err = vfs_lookup(&fs, NULL, path, flags, &d);

	if (!err)
		vfs_dentry_put(d);
	return err;
}

/* The guest path of D, in a buffer that lasts until the next call. */
static const char *path_of(struct vfs_dentry *d)
{
	static char buf[PATH_MAX];

	assert_true(vfs_path(fs.root, d, buf, sizeof(buf)) > 0);
	return buf;
}

/* Asserts that PATH (symlinks followed) resolves to the same dentry as CANONICAL. */
static void assert_resolves_to(const char *path, const char *canonical)
{
	struct vfs_dentry *a = lookup_ok(path, VFS_LOOKUP_FOLLOW);
	struct vfs_dentry *b = lookup_ok(canonical, 0);

	assert_ptr_equal(a, b);
	assert_string_equal(path_of(a), canonical);
	vfs_dentry_put(a);
	vfs_dentry_put(b);
}

static void test_nested_path_resolves_to_the_file(void **state)
{
	struct vfs_dentry *d = lookup_ok("/a/b/c/file", 0);
	struct stat st;

	(void)state;
	assert_int_equal(vfs_stat(d, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 5);
	assert_false(vfs_is_dir(d));
	assert_string_equal(d->name, "file");
	vfs_dentry_put(d);

	assert_resolves_to("a/b/c/file", "/a/b/c/file");
	assert_resolves_to("//a///b/./c/../c/file", "/a/b/c/file");
	assert_resolves_to("/a/b/c/", "/a/b/c");
}

static void test_cached_dentry_is_shared_while_referenced(void **state)
{
	struct vfs_dentry *a = lookup_ok("/a/b", 0);
	struct vfs_dentry *b = lookup_ok("/a/./b/", 0);

	(void)state;
	assert_ptr_equal(a, b);
	assert_int_equal(a->refs, 2);
	assert_ptr_equal(a->parent->parent, fs.root);
	vfs_dentry_put(a);
	vfs_dentry_put(b);
}

static void test_dotdot_above_root_stays_at_root(void **state)
{
	struct vfs_dentry *d;

	(void)state;
	assert_resolves_to("/../../etc/hostname", "/etc/hostname");
	assert_resolves_to("../../../a/../etc", "/etc");
	d = lookup_ok("/..", 0);
	assert_ptr_equal(d, fs.root);
	vfs_dentry_put(d);
}

static void test_dotdot_from_a_subdirectory_start_is_clamped_at_root(void **state)
{
	struct vfs_dentry *start = lookup_ok("/a/b", 0), *d, *want = lookup_ok("/etc/hostname", 0);

	(void)state;
	assert_int_equal(vfs_lookup(&fs, start, "../../../../etc/hostname", 0, &d), 0);
	assert_ptr_equal(d, want);
	vfs_dentry_put(d);
	assert_int_equal(vfs_lookup(&fs, start, "c/file", 0, &d), 0);
	assert_string_equal(path_of(d), "/a/b/c/file");
	vfs_dentry_put(d);
	vfs_dentry_put(want);
	vfs_dentry_put(start);
}

static void test_dotdot_and_absolute_symlinks_are_scoped_to_a_chrooted_root(void **state)
{
	struct vfs_fs_ctx jail = {.umask = 022};
	struct vfs_dentry *d, *want = lookup_ok("/a/b/c/file", 0);
	char buf[64];

	(void)state;
	jail.root = lookup_ok("/a", 0);
	jail.cwd = vfs_dentry_get(jail.root);
	assert_int_equal(vfs_lookup(&jail, NULL, "/../../b/c/file", 0, &d), 0);
	assert_ptr_equal(d, want);
	assert_int_equal(vfs_path(jail.root, d, buf, sizeof(buf)), (int)sizeof("/b/c/file"));
	assert_string_equal(buf, "/b/c/file");
	vfs_dentry_put(d);
	/* up -> ../../etc: the second ".." stops at /a, which has no etc. */
	assert_int_equal(vfs_lookup(&jail, NULL, "/b/up", VFS_LOOKUP_FOLLOW, &d), -ENOENT);
	/* An absolute target restarts at the jail's root. */
	assert_int_equal(vfs_lookup(&jail, NULL, "jail_abs", VFS_LOOKUP_FOLLOW, &d), 0);
	assert_ptr_equal(d, want);
	vfs_dentry_put(d);
	vfs_dentry_put(want);
	vfs_dentry_put(jail.cwd);
	vfs_dentry_put(jail.root);
}

static void test_relative_symlinks_resolve_from_their_directory(void **state)
{
	(void)state;
	assert_resolves_to("/a/b/rel", "/a/b/c/file");
	assert_resolves_to("/a/b/up/hostname", "/etc/hostname");
	assert_resolves_to("/dirlink/c/file", "/a/b/c/file");
}

static void test_absolute_symlink_resolves_inside_the_rootfs(void **state)
{
	(void)state;
	assert_resolves_to("/abs", "/etc/hostname");
	assert_resolves_to("/a/b/c/../../../absdir/c/file", "/a/b/c/file");
	/* Restarting at the root, not continuing in the link's directory. */
	assert_resolves_to("/a/b/abs_passwd", "/etc/passwd");
	assert_resolves_to("a/b/abs_passwd", "/etc/passwd");
	assert_int_equal(lookup_err("/a/jail_abs", VFS_LOOKUP_FOLLOW), -ENOENT);
}

static void test_escaping_symlinks_stay_inside_the_rootfs(void **state)
{
	(void)state;
	assert_resolves_to("/escape", "/etc");
	assert_resolves_to("/escape/hostname", "/etc/hostname");
	assert_resolves_to("/a/escape_passwd", "/etc/passwd");
	/* The host has /usr/bin; the rootfs does not. */
	assert_int_equal(lookup_err("/host_usr", VFS_LOOKUP_FOLLOW), -ENOENT);
	assert_int_equal(lookup_err("/host_usr_abs", VFS_LOOKUP_FOLLOW), -ENOENT);
	assert_int_equal(lookup_err("/a/b/../../../../usr/bin", VFS_LOOKUP_FOLLOW), -ENOENT);
}

static void test_final_symlink_is_not_followed_without_the_follow_flag(void **state)
{
	struct vfs_dentry *d = lookup_ok("/abs", 0);
	char buf[64];
	ssize_t n;

	(void)state;
	assert_true(S_ISLNK(d->inode->mode));
	n = vfs_readlink(d, buf, sizeof(buf));
	assert_int_equal(n, (ssize_t)strlen("/etc/hostname"));
	assert_memory_equal(buf, "/etc/hostname", (size_t)n);
	vfs_dentry_put(d);
}

static void test_readlink_of_a_non_symlink_fails_with_einval(void **state)
{
	struct vfs_dentry *d = lookup_ok("/file", 0);
	char buf[16];

	(void)state;
	assert_int_equal(vfs_readlink(d, buf, sizeof(buf)), -EINVAL);
	vfs_dentry_put(d);
}

static void test_symlink_loop_fails_with_eloop(void **state)
{
	(void)state;
	assert_int_equal(lookup_err("/loop1", VFS_LOOKUP_FOLLOW), -ELOOP);
	assert_int_equal(lookup_err("/loop1/x", 0), -ELOOP);
	assert_int_equal(lookup_err("/loop2/", 0), -ELOOP);
}

static void test_chain_of_40_symlinks_resolves(void **state)
{
	(void)state;
	assert_resolves_to("/l1", "/file");
}

static void test_chain_of_41_symlinks_fails_with_eloop(void **state)
{
	(void)state;
	assert_int_equal(lookup_err("/l0", VFS_LOOKUP_FOLLOW), -ELOOP);
	assert_int_equal(lookup_err("/l0", 0), 0); /* the link itself needs no following */
}

static void test_file_in_the_middle_of_a_path_fails_with_enotdir(void **state)
{
	(void)state;
	assert_int_equal(lookup_err("/file/x", 0), -ENOTDIR);
	assert_int_equal(lookup_err("/a/b/rel/x", 0), -ENOTDIR);
	assert_int_equal(lookup_err("/file/..", 0), -ENOTDIR);
}

static void test_trailing_slash_on_a_file_fails_with_enotdir(void **state)
{
	(void)state;
	assert_int_equal(lookup_err("/file/", 0), -ENOTDIR);
	assert_int_equal(lookup_err("/file//", VFS_LOOKUP_FOLLOW), -ENOTDIR);
	assert_int_equal(lookup_err("/file/.", 0), -ENOTDIR);
	assert_int_equal(lookup_err("/a/b/rel/", 0), -ENOTDIR);
	/* A symlink body ending in a slash demands a directory too. */
	assert_int_equal(lookup_err("/filelink_slash", VFS_LOOKUP_FOLLOW), -ENOTDIR);
}

static void test_trailing_slash_follows_a_final_symlink(void **state)
{
	struct vfs_dentry *d = lookup_ok("/dirlink/", 0);

	(void)state;
	assert_string_equal(path_of(d), "/a/b");
	vfs_dentry_put(d);
}

static void test_directory_flag_requires_a_directory(void **state)
{
	(void)state;
	assert_int_equal(lookup_err("/file", VFS_LOOKUP_DIRECTORY), -ENOTDIR);
	assert_int_equal(lookup_err("/dirlink", VFS_LOOKUP_DIRECTORY), -ENOTDIR);
	assert_int_equal(lookup_err("/dirlink", VFS_LOOKUP_DIRECTORY | VFS_LOOKUP_FOLLOW), 0);
	assert_int_equal(lookup_err("/", VFS_LOOKUP_DIRECTORY), 0);
}

static void test_missing_component_fails_with_enoent(void **state)
{
	(void)state;
	assert_int_equal(lookup_err("/nope", 0), -ENOENT);
	assert_int_equal(lookup_err("/a/nope/c", 0), -ENOENT);
	assert_int_equal(lookup_err("/nope/../a", 0), -ENOENT);
}

static void test_empty_path_fails_with_enoent(void **state)
{
	(void)state;
	assert_int_equal(lookup_err("", 0), -ENOENT);
}

static void test_component_longer_than_255_bytes_fails_with_enametoolong(void **state)
{
	char path[300];

	(void)state;
	path[0] = '/';
	memset(path + 1, 'x', 256);
	path[257] = '\0';
	assert_int_equal(lookup_err(path, 0), -ENAMETOOLONG);
	path[256] = '\0'; /* 255 bytes: a valid name that does not exist */
	assert_int_equal(lookup_err(path, 0), -ENOENT);
}

static void test_path_of_4096_bytes_fails_with_enametoolong(void **state)
{
	char path[PATH_MAX + 1];
	size_t i;

	(void)state;
	/* "/././.../a": 4094 bytes resolve, 4096 do not. */
	path[0] = '/';
	for (i = 1; i + 2 < PATH_MAX - 2; i += 2)
		memcpy(path + i, "./", 2);
	memcpy(path + i, "a", 2);
	assert_int_equal(strlen(path), PATH_MAX - 2);
	assert_resolves_to(path, "/a");

	memset(path, '/', PATH_MAX);
	path[PATH_MAX] = '\0';
	assert_int_equal(lookup_err(path, 0), -ENAMETOOLONG);
}

static void test_relative_path_from_a_file_start_fails_with_enotdir(void **state)
{
	struct vfs_dentry *start = lookup_ok("/file", 0), *d;

	(void)state;
	assert_int_equal(vfs_lookup(&fs, start, "x", 0, &d), -ENOTDIR);
	/* An absolute path ignores the start. */
	assert_int_equal(vfs_lookup(&fs, start, "/a", 0, &d), 0);
	vfs_dentry_put(d);
	vfs_dentry_put(start);
}

static void test_vfs_path_round_trips_through_lookup(void **state)
{
	static const char *paths[] = {"/", "/a", "/a/b/c/file", "/etc/hostname", "/abs", "/l40"};
	char buf[PATH_MAX];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct vfs_dentry *d = lookup_ok(paths[i], 0), *again;
		int n = vfs_path(fs.root, d, buf, sizeof(buf));

		assert_int_equal(n, (int)strlen(paths[i]) + 1);
		assert_string_equal(buf, paths[i]);
		again = lookup_ok(buf, 0);
		assert_ptr_equal(again, d);
		vfs_dentry_put(again);
		vfs_dentry_put(d);
	}
}

static void test_vfs_path_that_does_not_fit_fails_with_erange(void **state)
{
	struct vfs_dentry *d = lookup_ok("/a/b", 0);
	char buf[8];

	(void)state;
	assert_int_equal(vfs_path(fs.root, d, buf, 4), -ERANGE);
	assert_int_equal(vfs_path(fs.root, d, buf, 5), 5);
	assert_string_equal(buf, "/a/b");
	assert_int_equal(vfs_path(fs.root, fs.root, buf, 1), -ERANGE);
	assert_int_equal(vfs_path(fs.root, fs.root, buf, 2), 2);
	assert_string_equal(buf, "/");
	vfs_dentry_put(d);
}

static void test_dropping_every_reference_closes_every_host_descriptor(void **state)
{
	struct vfs_fs_ctx own = {.umask = 022};
	struct vfs_dentry *d[4];
	struct vfs_file *f[3];
	char buf[4096];
	off_t pos = 0;
	int before = count_fds();

	(void)state;
	assert_int_equal(vfs_mount_host_root(host_dir, &own.root), 0);
	own.cwd = vfs_dentry_get(own.root);
	assert_int_equal(vfs_lookup(&own, NULL, "/a/b/c/file", 0, &d[0]), 0);
	assert_int_equal(vfs_lookup(&own, NULL, "/l1", VFS_LOOKUP_FOLLOW, &d[1]), 0);
	assert_int_equal(vfs_lookup(&own, NULL, "/escape/passwd", 0, &d[2]), 0);
	assert_int_equal(vfs_lookup(&own, NULL, "/loop1", VFS_LOOKUP_FOLLOW, &d[3]), -ELOOP);
	assert_int_equal(vfs_open(&own, NULL, "/abs", O_RDONLY, 0, &f[0]), 0);
	assert_int_equal(vfs_open(&own, NULL, "/a/b", O_RDONLY | O_DIRECTORY, 0, &f[1]), 0);
	assert_int_equal(vfs_open(&own, NULL, "/a/b/up", O_PATH, 0, &f[2]), 0);
	assert_true(f[1]->ops->getdents64(f[1], buf, sizeof(buf), &pos) > 0);
	assert_true(count_fds() > before);

	vfs_file_put(f[0]);
	vfs_file_put(f[1]);
	vfs_file_put(f[2]);
	vfs_dentry_put(d[0]);
	vfs_dentry_put(d[1]);
	vfs_dentry_put(d[2]);
	assert_null(own.root->children);
	vfs_dentry_put(own.cwd);
	vfs_dentry_put(own.root);
	assert_int_equal(count_fds(), before);
}

static void test_mounting_a_missing_or_non_directory_host_path_fails(void **state)
{
	char path[PATH_MAX];
	struct vfs_dentry *root;

	(void)state;
	snprintf(path, sizeof(path), "%s/nope", host_dir);
	assert_int_equal(vfs_mount_host_root(path, &root), -ENOENT);
	snprintf(path, sizeof(path), "%s/file", host_dir);
	assert_int_equal(vfs_mount_host_root(path, &root), -ENOTDIR);
}

/* The walk's restrictions. */

/* A kernfs to mount: "plain" an ordinary symlink to /etc, "magic" and "magicdir" magic links
 * (what procfs's fd/N are) to /etc/hostname and /etc: their objects are what the tests' own
 * walks of those paths find. */

static int kfs_link_dentry(struct kernfs_node *n, struct vfs_dentry **out)
{
	return vfs_lookup(&fs, NULL, kernfs_entry_of(n)->target, 0, out);
}

static const struct kernfs_entry kfs_rows[] = {
    {.name = "plain", .mode = S_IFLNK | 0777, .target = "/etc"},
    {.name = "magic",
     .mode = S_IFLNK | 0777,
     .flags = KERNFS_MAGIC_LINK,
     .target = "/etc/hostname",
     .link_dentry = kfs_link_dentry},
    {.name = "magicdir",
     .mode = S_IFLNK | 0777,
     .flags = KERNFS_MAGIC_LINK,
     .target = "/etc",
     .link_dentry = kfs_link_dentry},
};
static const struct kernfs_entry kfs_root_entry = {
    .mode = S_IFDIR | 0555, .children = kfs_rows, .nchildren = 3};

static struct vfs_dentry *kfs_mountpoint, *kfs_root;

static void kfs_mount(void)
{
	assert_int_equal(
	    kernfs_new("testfs", 0x1234, &kfs_root_entry, NULL, NULL, false, &kfs_root), 0);
	kfs_mountpoint = lookup_ok("/a/b/c", 0);
	assert_int_equal(vfs_mount(kfs_mountpoint, kfs_root), 0);
}

static void kfs_umount(void)
{
	assert_int_equal(vfs_umount_at(kfs_root, false), 0);
	vfs_dentry_put(kfs_root);
	vfs_dentry_put(kfs_mountpoint);
}

static int lookup_from(struct vfs_dentry *start, const char *path, int flags)
{
	struct vfs_dentry *d;
	int err = vfs_lookup(&fs, start, path, flags, &d);

	if (!err)
		vfs_dentry_put(d);
	return err;
}

/* Asserts that PATH from START with FLAGS resolves to the dentry CANONICAL names. */
static void assert_from_resolves_to(struct vfs_dentry *start, const char *path, int flags,
				    const char *canonical)
{
	struct vfs_dentry *a = NULL, *b = lookup_ok(canonical, 0);
	int err = vfs_lookup(&fs, start, path, flags, &a);

	if (err)
		fail_msg("lookup of '%s' failed with %d (%s)", path, err, strerror(-err));
	assert_ptr_equal(a, b);
	vfs_dentry_put(a);
	vfs_dentry_put(b);
}

#define FOLLOW VFS_LOOKUP_FOLLOW

static void test_no_symlinks_refuses_every_symlink_the_walk_would_follow(void **state)
{
	int no = VFS_LOOKUP_NO_SYMLINKS;

	(void)state;
	assert_from_resolves_to(NULL, "/a/b/c/file", FOLLOW | no, "/a/b/c/file");
	assert_int_equal(lookup_from(NULL, "/dirlink/c/file", no), -ELOOP);
	assert_int_equal(lookup_from(NULL, "/abs", FOLLOW | no), -ELOOP);
	assert_int_equal(lookup_from(NULL, "/absdir/", no), -ELOOP);
	assert_int_equal(lookup_from(NULL, "/abs", no), 0); /* a trailing link not followed */
}

static void test_beneath_refuses_absolute_paths_and_leaving_the_start(void **state)
{
	struct vfs_dentry *a = lookup_ok("/a", 0);
	int beneath = VFS_LOOKUP_BENEATH;

	(void)state;
	assert_from_resolves_to(a, "b/c/file", beneath, "/a/b/c/file");
	assert_from_resolves_to(a, "b/../b/rel", FOLLOW | beneath, "/a/b/c/file");
	assert_from_resolves_to(a, "b/..", beneath, "/a");
	assert_int_equal(lookup_from(a, "..", beneath), -EXDEV);
	assert_int_equal(lookup_from(a, "b/../../a", beneath), -EXDEV);
	assert_int_equal(lookup_from(a, "/a", beneath), -EXDEV);
	assert_int_equal(lookup_from(a, "b/up", FOLLOW | beneath), -EXDEV);
	assert_int_equal(lookup_from(a, "b/abs_passwd", FOLLOW | beneath), -EXDEV);
	assert_int_equal(lookup_from(a, "jail_abs", beneath), 0);
	assert_int_equal(lookup_from(a, "jail_abs", FOLLOW | VFS_LOOKUP_NO_SYMLINKS | beneath),
			 -ELOOP);
	vfs_dentry_put(a);
}

static void test_in_root_makes_the_start_the_root(void **state)
{
	struct vfs_dentry *a = lookup_ok("/a", 0);
	int in_root = VFS_LOOKUP_IN_ROOT;

	(void)state;
	assert_from_resolves_to(a, "/b/c/file", in_root, "/a/b/c/file");
	assert_from_resolves_to(a, "jail_abs", FOLLOW | in_root, "/a/b/c/file");
	assert_from_resolves_to(a, "../../b", in_root, "/a/b");
	assert_from_resolves_to(a, "/", in_root, "/a");
	assert_int_equal(lookup_from(a, "b/up", FOLLOW | in_root), -ENOENT); /* /a/etc */
	assert_int_equal(lookup_from(a, "escape_passwd", FOLLOW | in_root), -ENOENT);
	vfs_dentry_put(a);
}

static void test_no_xdev_refuses_crossing_a_mount_either_way(void **state)
{
	int xdev = VFS_LOOKUP_NO_XDEV;
	struct vfs_dentry *d;

	(void)state;
	kfs_mount();
	d = lookup_ok("/a/b/c", 0);
	assert_ptr_equal(d, kfs_root);
	vfs_dentry_put(d);
	assert_int_equal(lookup_from(NULL, "/a/b/c", xdev), -EXDEV);
	assert_int_equal(lookup_from(NULL, "/a/b/c/", xdev), -EXDEV);
	assert_int_equal(lookup_from(kfs_root, ".", xdev), 0);
	assert_int_equal(lookup_from(kfs_root, "..", xdev), -EXDEV);
	assert_int_equal(lookup_from(kfs_root, "../c", xdev), -EXDEV);
	assert_from_resolves_to(kfs_root, "..", 0, "/a/b");
	/* An absolute path argument starts at the root, wherever the start is. */
	assert_from_resolves_to(kfs_root, "/etc", xdev, "/etc");
	/* An absolute symlink on another mount than the root's. */
	assert_int_equal(lookup_from(kfs_root, "plain", FOLLOW | xdev), -EXDEV);
	assert_from_resolves_to(kfs_root, "plain", FOLLOW, "/etc");
	/* On the root's mount: refused until the walk has looked its root up (Linux). */
	assert_int_equal(lookup_from(fs.root, "abs", FOLLOW | xdev), -EXDEV);
	assert_from_resolves_to(fs.root, "../abs", FOLLOW | xdev, "/etc/hostname");
	assert_from_resolves_to(NULL, "/abs", FOLLOW | xdev, "/etc/hostname");
	/* IN_ROOT at the mount's root: ".." stays, nothing is crossed. */
	assert_from_resolves_to(kfs_root, "..", xdev | VFS_LOOKUP_IN_ROOT, "/a/b/c");
	kfs_umount();
}

static void test_magic_links_jump_and_are_refused_by_the_restrictions(void **state)
{
	(void)state;
	kfs_mount();
	assert_from_resolves_to(kfs_root, "magic", FOLLOW, "/etc/hostname");
	assert_from_resolves_to(kfs_root, "magicdir/hostname", 0, "/etc/hostname");
	assert_int_equal(lookup_from(kfs_root, "magic/x", 0), -ENOTDIR);
	assert_int_equal(lookup_from(kfs_root, "magic/", 0), -ENOTDIR);
	assert_int_equal(lookup_from(kfs_root, "magic", FOLLOW | VFS_LOOKUP_DIRECTORY), -ENOTDIR);
	assert_int_equal(lookup_from(kfs_root, "magic", FOLLOW | VFS_LOOKUP_NO_MAGICLINKS), -ELOOP);
	assert_int_equal(lookup_from(kfs_root, "magicdir/hostname", VFS_LOOKUP_NO_MAGICLINKS),
			 -ELOOP);
	assert_int_equal(lookup_from(kfs_root, "magic", FOLLOW | VFS_LOOKUP_NO_SYMLINKS), -ELOOP);
	assert_int_equal(lookup_from(kfs_root, "magic", VFS_LOOKUP_NO_MAGICLINKS), 0);
	assert_int_equal(lookup_from(kfs_root, "magic", FOLLOW | VFS_LOOKUP_BENEATH), -EXDEV);
	assert_int_equal(lookup_from(kfs_root, "magic", FOLLOW | VFS_LOOKUP_IN_ROOT), -EXDEV);
	assert_int_equal(
	    lookup_from(kfs_root, "magic", FOLLOW | VFS_LOOKUP_BENEATH | VFS_LOOKUP_NO_MAGICLINKS),
	    -ELOOP);
	assert_int_equal(lookup_from(kfs_root, "magic", FOLLOW | VFS_LOOKUP_NO_XDEV), -EXDEV);
	/* An ordinary symlink is no magic link. */
	assert_from_resolves_to(kfs_root, "plain", FOLLOW | VFS_LOOKUP_NO_MAGICLINKS, "/etc");
	kfs_umount();
}

static void test_open_applies_the_restrictions_to_its_last_component(void **state)
{
	struct vfs_dentry *a = lookup_ok("/a", 0), *want = lookup_ok("/etc/hostname", 0);
	struct vfs_file *f;

	(void)state;
	kfs_mount();
	assert_int_equal(
	    vfs_open_resolve(&fs, NULL, a, "..", O_RDONLY | O_CREAT, 0644, VFS_LOOKUP_BENEATH, &f),
	    -EXDEV);
	assert_int_equal(vfs_open_resolve(&fs, NULL, a, "..", O_RDONLY | O_CREAT, 0644, 0, &f),
			 -EISDIR);
	assert_int_equal(vfs_open_resolve(&fs, NULL, NULL, "/abs", O_RDONLY | O_CREAT, 0644,
					  VFS_LOOKUP_NO_SYMLINKS, &f),
			 -ELOOP);
	assert_int_equal(vfs_open_resolve(&fs, NULL, a, "b/abs_passwd", O_RDONLY | O_CREAT, 0644,
					  VFS_LOOKUP_BENEATH, &f),
			 -EXDEV);
	assert_int_equal(vfs_open_resolve(&fs, NULL, NULL, "/a/b/c", O_RDONLY | O_CREAT, 0644,
					  VFS_LOOKUP_NO_XDEV, &f),
			 -EXDEV);
	assert_int_equal(vfs_open_resolve(&fs, NULL, kfs_root, "magic", O_RDONLY | O_CREAT, 0644,
					  VFS_LOOKUP_NO_MAGICLINKS, &f),
			 -ELOOP);
	assert_int_equal(
	    vfs_open_resolve(&fs, NULL, kfs_root, "magic", O_RDONLY | O_CREAT, 0644, 0, &f), 0);
	assert_ptr_equal(f->dentry, want);
	vfs_file_put(f);
	assert_int_equal(vfs_open_resolve(&fs, NULL, a, "/b/c/plain", O_PATH | O_NOFOLLOW, 0,
					  VFS_LOOKUP_IN_ROOT, &f),
			 0); /* /b/c in the root /a: the mount on /a/b/c */
	assert_ptr_equal(f->dentry->parent, kfs_root);
	vfs_file_put(f);
	kfs_umount();
	vfs_dentry_put(want);
	vfs_dentry_put(a);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, test_setup, test_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_nested_path_resolves_to_the_file),
	    T(test_cached_dentry_is_shared_while_referenced),
	    T(test_dotdot_above_root_stays_at_root),
	    T(test_dotdot_from_a_subdirectory_start_is_clamped_at_root),
	    T(test_dotdot_and_absolute_symlinks_are_scoped_to_a_chrooted_root),
	    T(test_relative_symlinks_resolve_from_their_directory),
	    T(test_absolute_symlink_resolves_inside_the_rootfs),
	    T(test_escaping_symlinks_stay_inside_the_rootfs),
	    T(test_final_symlink_is_not_followed_without_the_follow_flag),
	    T(test_readlink_of_a_non_symlink_fails_with_einval),
	    T(test_symlink_loop_fails_with_eloop),
	    T(test_chain_of_40_symlinks_resolves),
	    T(test_chain_of_41_symlinks_fails_with_eloop),
	    T(test_file_in_the_middle_of_a_path_fails_with_enotdir),
	    T(test_trailing_slash_on_a_file_fails_with_enotdir),
	    T(test_trailing_slash_follows_a_final_symlink),
	    T(test_directory_flag_requires_a_directory),
	    T(test_missing_component_fails_with_enoent),
	    T(test_empty_path_fails_with_enoent),
	    T(test_component_longer_than_255_bytes_fails_with_enametoolong),
	    T(test_path_of_4096_bytes_fails_with_enametoolong),
	    T(test_relative_path_from_a_file_start_fails_with_enotdir),
	    T(test_vfs_path_round_trips_through_lookup),
	    T(test_vfs_path_that_does_not_fit_fails_with_erange),
	    T(test_dropping_every_reference_closes_every_host_descriptor),
	    T(test_mounting_a_missing_or_non_directory_host_path_fails),
	    T(test_no_symlinks_refuses_every_symlink_the_walk_would_follow),
	    T(test_beneath_refuses_absolute_paths_and_leaving_the_start),
	    T(test_in_root_makes_the_start_the_root),
	    T(test_no_xdev_refuses_crossing_a_mount_either_way),
	    T(test_magic_links_jump_and_are_refused_by_the_restrictions),
	    T(test_open_applies_the_restrictions_to_its_last_component),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
