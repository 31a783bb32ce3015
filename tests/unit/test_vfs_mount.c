/* Unit tests for mounts and devfs (vfs/mount.c, vfs/synth.c, vfs/devfs.c, and the mount
 * crossings in vfs/lookup.c and vfs/dentry.c): a devfs mounted on /dev of a host tree the way
 * the Sentry mounts it at start-up, paths into, through and out of the mount, getcwd-style
 * paths, stat across the mountpoint, mount errors, the semantics of each device, the /dev
 * listing and links, and that unmounting frees every dentry and host descriptor. */
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
#include <linux/random.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include "vfs/synth.h"
#include "vfs/vfs.h"

#define MAX_NAMES 64

struct node {
	char type; /* 'd' directory, 'f' file with DATA, 'l' symlink to DATA */
	const char *path;
	const char *data;
};

static const struct node tree[] = {
    {'d', "etc", NULL},	     {'f', "etc/hostname", "sandbox\n"},
    {'d', "dev", NULL},	     {'f', "dev/hidden", "under the mount\n"},
    {'d', "mnt", NULL},	     {'f', "file", "hello\n"},
    {'l', "devlink", "dev"}, {'l', "nulllink", "/dev/null"},
};

/* Everything devfs lists, in its order, with the types getdents64 reports. */
static const struct {
	const char *name;
	unsigned char type;
} dev_entries[] = {
    {".", DT_DIR},	 {"..", DT_DIR},     {"null", DT_CHR},	  {"zero", DT_CHR},
    {"full", DT_CHR},	 {"random", DT_CHR}, {"urandom", DT_CHR}, {"tty", DT_CHR},
    {"console", DT_CHR}, {"ptmx", DT_CHR},   {"fd", DT_LNK},	  {"stdin", DT_LNK},
    {"stdout", DT_LNK},	 {"stderr", DT_LNK}, {"pts", DT_DIR},	  {"shm", DT_DIR},
};
#define N_DEV_ENTRIES (sizeof(dev_entries) / sizeof(dev_entries[0]))

static char host_dir[] = "/tmp/test_vfs_mount.XXXXXX";
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

static int group_setup(void **state)
{
	char path[PATH_MAX];

	(void)state;
	fds_before = count_fds();
	assert_non_null(mkdtemp(host_dir));
	for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i++) {
		const struct node *n = &tree[i];

		snprintf(path, sizeof(path), "%s/%s", host_dir, n->path);
		if (n->type == 'd') {
			assert_int_equal(mkdir(path, 0755), 0);
		} else if (n->type == 'l') {
			assert_int_equal(symlink(n->data, path), 0);
		} else {
			int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);

			assert_true(fd >= 0);
			assert_int_equal(write(fd, n->data, strlen(n->data)),
					 (ssize_t)strlen(n->data));
			close(fd);
		}
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

/* A fresh host root with a devfs on /dev, set up as the Sentry does at start-up: after the
 * mount, the caller's references are dropped and the mount alone holds the devfs tree. */
static int test_setup(void **state)
{
	struct vfs_dentry *devroot, *dev;

	(void)state;
	assert_int_equal(vfs_mount_host_root(host_dir, &fs.root), 0);
	fs.cwd = vfs_dentry_get(fs.root);
	fs.umask = 022;
	assert_int_equal(vfs_devfs_new(&devroot), 0);
	dev = lookup_ok("/dev", VFS_LOOKUP_FOLLOW | VFS_LOOKUP_DIRECTORY);
	assert_int_equal(vfs_mount(dev, devroot), 0);
	vfs_dentry_put(dev);
	vfs_dentry_put(devroot);
	return 0;
}

/* Fails the test if it left a dentry referenced: once unmounted, the cache is the bare root. */
static int test_teardown(void **state)
{
	(void)state;
	vfs_umount_all();
	assert_null(fs.root->children);
	assert_int_equal(fs.root->refs, 2); /* the host mount's and the cwd's */
	vfs_dentry_put(fs.cwd);
	vfs_dentry_put(fs.root);
	return 0;
}

/* The guest path of D, in a buffer that lasts until the next call. */
static const char *path_of(struct vfs_dentry *d)
{
	static char buf[PATH_MAX];

	assert_true(vfs_path(fs.root, d, buf, sizeof(buf)) > 0);
	return buf;
}

static void assert_same_dentry(const char *path, const char *canonical)
{
	struct vfs_dentry *a = lookup_ok(path, VFS_LOOKUP_FOLLOW);
	struct vfs_dentry *b = lookup_ok(canonical, 0);

	assert_ptr_equal(a, b);
	assert_string_equal(path_of(a), canonical);
	vfs_dentry_put(a);
	vfs_dentry_put(b);
}

static struct stat stat_of(const char *path, int flags)
{
	struct vfs_dentry *d = lookup_ok(path, flags);
	struct stat st;

	assert_int_equal(vfs_stat(d, &st), 0);
	vfs_dentry_put(d);
	return st;
}

static struct vfs_file *open_ok(const char *path, int flags)
{
	struct vfs_file *f = NULL;
	int err = vfs_open(&fs, NULL, path, flags, 0644, &f);

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

static ssize_t file_write(struct vfs_file *f, const void *buf, size_t len)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};

	return f->ops->write(f, &iov, 1, &f->pos);
}

static bool all_zero(const unsigned char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i])
			return false;
	return true;
}

/* Paths into, through and out of the mount. */

static void test_lookup_of_dev_null_crosses_into_the_mounted_devfs(void **state)
{
	struct stat st = stat_of("/dev/null", 0);

	(void)state;
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0666);
	assert_int_equal(major(st.st_rdev), 1);
	assert_int_equal(minor(st.st_rdev), 3);
	assert_int_equal(st.st_nlink, 1);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_size, 0);
	/* The host directory's own content is hidden under the mount. */
	assert_int_equal(lookup_err("/dev/hidden", 0), -ENOENT);
}

static void test_dotdot_from_the_mounted_root_goes_to_the_mountpoints_parent(void **state)
{
	(void)state;
	assert_same_dentry("/dev/../etc", "/etc");
	assert_same_dentry("/dev/..", "/");
	assert_same_dentry("/dev/pts/../../etc/hostname", "/etc/hostname");
	assert_same_dentry("/dev/./zero", "/dev/zero");
	assert_same_dentry("/dev/../dev/../dev/null", "/dev/null");
}

static void test_symlinks_to_and_through_the_mountpoint_cross_into_the_mount(void **state)
{
	(void)state;
	assert_same_dentry("/devlink/full", "/dev/full");
	assert_same_dentry("/nulllink", "/dev/null");
	assert_same_dentry("/devlink", "/dev");
}

static void test_dotdot_from_a_cwd_inside_the_mount_leaves_it(void **state)
{
	struct vfs_dentry *old = fs.cwd, *d;

	(void)state;
	fs.cwd = lookup_ok("/dev/pts", 0);
	assert_string_equal(path_of(fs.cwd), "/dev/pts");
	d = lookup_ok("../..", 0);
	assert_ptr_equal(d, fs.root);
	vfs_dentry_put(d);
	d = lookup_ok("../../etc/hostname", 0);
	assert_string_equal(path_of(d), "/etc/hostname");
	vfs_dentry_put(d);
	d = lookup_ok("../null", 0);
	assert_string_equal(path_of(d), "/dev/null");
	vfs_dentry_put(d);
	vfs_dentry_put(fs.cwd);
	fs.cwd = old;
}

static void test_dotdot_never_climbs_above_a_task_root_inside_the_mount(void **state)
{
	struct vfs_fs_ctx jail;
	struct vfs_dentry *d;
	char buf[PATH_MAX];

	(void)state;
	jail.root = lookup_ok("/dev", 0);
	jail.cwd = vfs_dentry_get(jail.root);
	jail.umask = 022;
	assert_int_equal(vfs_lookup(&jail, NULL, "/..", 0, &d), 0);
	assert_ptr_equal(d, jail.root);
	vfs_dentry_put(d);
	assert_int_equal(vfs_lookup(&jail, NULL, "../../../zero", 0, &d), 0);
	assert_int_equal(vfs_path(jail.root, d, buf, sizeof(buf)), (int)sizeof("/zero"));
	assert_string_equal(buf, "/zero");
	vfs_dentry_put(d);
	assert_int_equal(vfs_lookup(&jail, NULL, "/../etc", 0, &d), -ENOENT);
	vfs_dentry_put(jail.cwd);
	vfs_dentry_put(jail.root);
}

static void test_path_of_a_dentry_in_the_mount_goes_through_the_mountpoint(void **state)
{
	struct vfs_dentry *d = lookup_ok("/dev", 0);
	char small[4];

	(void)state;
	/* getcwd in /dev */
	assert_int_equal(vfs_path(fs.root, d, small, sizeof(small)), -ERANGE);
	assert_string_equal(path_of(d), "/dev");
	vfs_dentry_put(d);
	d = lookup_ok("/dev/shm", 0);
	assert_string_equal(path_of(d), "/dev/shm");
	vfs_dentry_put(d);
}

static void test_stat_of_the_mountpoint_path_shows_the_mounted_root(void **state)
{
	struct stat root = stat_of("/", 0), dev = stat_of("/dev", 0),
		    null = stat_of("/dev/null", 0);
	struct stat pts = stat_of("/dev/pts", 0), shm = stat_of("/dev/shm", 0);

	(void)state;
	assert_int_not_equal(dev.st_dev, root.st_dev);
	assert_int_equal(major(dev.st_dev), 0); /* an anonymous device, as for Linux's tmpfs */
	assert_int_equal(null.st_dev, dev.st_dev);
	assert_int_equal(dev.st_ino, 1);
	assert_int_equal(dev.st_mode, S_IFDIR | 0755);
	assert_int_equal(dev.st_nlink, 4); /* ".", its entry in "/", pts/.. and shm/.. */
	assert_int_equal(pts.st_mode, S_IFDIR | 0755);
	assert_int_equal(pts.st_nlink, 2);
	assert_int_equal(shm.st_mode, S_IFDIR | 01777);
	assert_int_equal(shm.st_size, 40); /* tmpfs's size of an empty directory */
}

static void test_the_covered_directory_keeps_its_own_attributes(void **state)
{
	struct vfs_dentry *devroot = lookup_ok("/dev", 0);
	struct vfs_dentry *covered = devroot->mount->mountpoint;
	struct stat host, st;
	char path[PATH_MAX];

	(void)state;
	snprintf(path, sizeof(path), "%s/dev", host_dir);
	assert_int_equal(stat(path, &host), 0);
	assert_ptr_equal(covered->mounted, devroot->mount);
	assert_int_equal(vfs_stat(covered, &st), 0);
	assert_int_equal(st.st_ino, host.st_ino);
	assert_int_equal(st.st_dev, host.st_dev);
	assert_string_equal(path_of(covered), "/dev");
	vfs_dentry_put(devroot);
}

/* Mount errors and the mount table. */

static void test_mounting_on_a_mountpoint_again_fails_with_ebusy(void **state)
{
	struct vfs_dentry *devroot, *covered, *mnt = lookup_ok("/mnt", 0), *current;

	(void)state;
	current = lookup_ok("/dev", 0);
	covered = current->mount->mountpoint;
	assert_int_equal(vfs_devfs_new(&devroot), 0);
	assert_int_equal(vfs_mount(covered, devroot), -EBUSY);
	/* A tree is mounted in one place only. */
	assert_int_equal(vfs_mount(mnt, current), -EBUSY);
	vfs_dentry_put(devroot);
	vfs_dentry_put(current);
	vfs_dentry_put(mnt);
}

static void test_mounting_on_a_file_fails_with_enotdir(void **state)
{
	struct vfs_dentry *devroot, *file = lookup_ok("/file", 0);

	(void)state;
	assert_int_equal(vfs_devfs_new(&devroot), 0);
	assert_int_equal(vfs_mount(file, devroot), -ENOTDIR);
	vfs_dentry_put(devroot);
	vfs_dentry_put(file);
}

static void test_mounting_a_tree_inside_itself_or_a_subdirectory_fails_with_einval(void **state)
{
	struct vfs_dentry *etc = lookup_ok("/etc", 0), *mnt = lookup_ok("/mnt", 0);
	struct vfs_dentry *pts = lookup_ok("/dev/pts", 0), *devroot = lookup_ok("/dev", 0);
	struct vfs_dentry *other;

	(void)state;
	assert_int_equal(vfs_mount(etc, fs.root), -EINVAL);
	assert_int_equal(vfs_mount(mnt, etc), -EINVAL); /* not the root of a tree */
	assert_int_equal(vfs_devfs_new(&other), 0);
	/* The rootfs root is above the mountpoint /dev/pts, through the devfs mount. */
	assert_int_equal(vfs_mount(pts, fs.root), -EINVAL);
	assert_int_equal(vfs_mount(other, other), -EINVAL);
	vfs_dentry_put(other);
	vfs_dentry_put(devroot);
	vfs_dentry_put(pts);
	vfs_dentry_put(mnt);
	vfs_dentry_put(etc);
}

static int collect_mount(struct vfs_mount *m, void *arg)
{
	struct vfs_mount **seen = arg;
	int i = 0;

	while (seen[i])
		i++;
	seen[i] = m;
	return 0;
}

static int stop_at_first(struct vfs_mount *m, void *arg)
{
	(void)m, (void)arg;
	return 7;
}

static void test_mounts_are_listed_in_mount_order_with_their_type(void **state)
{
	struct vfs_mount *seen[4] = {NULL};
	struct vfs_dentry *pts = lookup_ok("/dev/pts", 0), *inner, *d;
	struct stat a, b;

	(void)state;
	assert_int_equal(vfs_devfs_new(&inner), 0);
	assert_int_equal(vfs_mount_fs(pts, inner, "devpts", "devpts", 0x2, NULL), 0);
	vfs_dentry_put(inner);
	vfs_dentry_put(pts);

	assert_int_equal(vfs_mounts_foreach(collect_mount, seen), 0);
	assert_non_null(seen[0]);
	assert_non_null(seen[1]);
	assert_null(seen[2]);
	assert_string_equal(seen[0]->fs_type, "devtmpfs");
	assert_string_equal(seen[0]->source, "devtmpfs");
	assert_int_equal(seen[0]->flags, 0);
	assert_string_equal(path_of(seen[0]->root), "/dev");
	assert_string_equal(seen[1]->fs_type, "devpts");
	assert_int_equal(seen[1]->flags, 0x2);
	assert_true(seen[1]->id > seen[0]->id);
	assert_string_equal(path_of(seen[1]->root), "/dev/pts");
	assert_int_equal(vfs_mounts_foreach(stop_at_first, NULL), 7);

	/* Stacked trees: /dev/pts is the second devfs, with a device of its own. */
	d = lookup_ok("/dev/pts/null", 0);
	assert_string_equal(path_of(d), "/dev/pts/null");
	vfs_dentry_put(d);
	assert_same_dentry("/dev/pts/../zero", "/dev/zero");
	a = stat_of("/dev/null", 0);
	b = stat_of("/dev/pts/null", 0);
	assert_int_not_equal(a.st_dev, b.st_dev);
	assert_int_equal(a.st_rdev, b.st_rdev);
}

static void test_unmounting_uncovers_the_host_directory(void **state)
{
	struct vfs_dentry *d;

	(void)state;
	vfs_umount_all();
	assert_int_equal(lookup_err("/dev/null", 0), -ENOENT);
	d = lookup_ok("/dev/hidden", 0);
	assert_string_equal(path_of(d), "/dev/hidden");
	vfs_dentry_put(d);
	assert_int_equal(vfs_mounts_foreach(stop_at_first, NULL), 0);
}

static void test_a_devfs_that_is_never_mounted_is_freed_by_its_last_put(void **state)
{
	struct vfs_dentry *root, *d;
	struct vfs_fs_ctx own;

	(void)state;
	assert_int_equal(vfs_devfs_new(&root), 0);
	own.root = root;
	own.cwd = root;
	own.umask = 022;
	assert_int_equal(vfs_lookup(&own, NULL, "/shm/../null", 0, &d), 0);
	vfs_dentry_put(root);
	vfs_dentry_put(d); /* the last reference: ASan reports anything left behind */
}

static void test_a_tree_with_a_mount_inside_can_be_mounted_afterwards(void **state)
{
	struct vfs_dentry *outer, *inner, *pts, *mnt = lookup_ok("/mnt", 0), *d;
	struct vfs_fs_ctx own;

	(void)state;
	assert_int_equal(vfs_devfs_new(&outer), 0);
	assert_int_equal(vfs_devfs_new(&inner), 0);
	own.root = own.cwd = outer;
	own.umask = 022;
	assert_int_equal(vfs_lookup(&own, NULL, "pts", 0, &pts), 0);
	assert_int_equal(vfs_mount(pts, inner), 0);
	assert_int_equal(vfs_mount(mnt, outer), 0);
	vfs_dentry_put(pts);
	vfs_dentry_put(inner);
	vfs_dentry_put(outer);
	vfs_dentry_put(mnt);
	d = lookup_ok("/mnt/pts/urandom", 0);
	assert_string_equal(path_of(d), "/mnt/pts/urandom");
	vfs_dentry_put(d);
	assert_same_dentry("/mnt/pts/../../dev/pts/../../etc", "/etc");
}

/* The devices. */

static void test_null_reads_end_of_file_and_swallows_writes(void **state)
{
	struct vfs_file *f = open_ok("/dev/null", O_RDWR);
	char buf[16] = "untouched";

	(void)state;
	assert_int_equal(file_read(f, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "untouched");
	assert_int_equal(file_write(f, "discard me", 10), 10);
	assert_int_equal(f->ops->pread_kernel(f, buf, sizeof(buf), 0), 0);
	assert_int_equal(vfs_lseek(f, 100, SEEK_SET), 0);
	assert_int_equal(vfs_lseek(f, 5, SEEK_END), 0);
	assert_int_equal(f->pos, 0);
	assert_null(f->ops->poll); /* always ready for poll(2); epoll_ctl gives EPERM */
	assert_int_equal(f->ops->host_fd(f), -1);
	vfs_file_put(f);
}

static void test_zero_reads_zeros_across_an_iovec_and_swallows_writes(void **state)
{
	struct vfs_file *f = open_ok("/dev/zero", O_RDWR);
	unsigned char a[100], b[5000];
	struct iovec iov[2] = {{a, sizeof(a)}, {b, sizeof(b)}};

	(void)state;
	memset(a, 0xaa, sizeof(a));
	memset(b, 0xbb, sizeof(b));
	assert_int_equal(f->ops->read(f, iov, 2, &f->pos), (ssize_t)(sizeof(a) + sizeof(b)));
	assert_true(all_zero(a, sizeof(a)));
	assert_true(all_zero(b, sizeof(b)));
	assert_int_equal(f->pos, 0);
	memset(b, 0xbb, sizeof(b));
	assert_int_equal(f->ops->pread_kernel(f, b, 4096, 8192), 4096);
	assert_true(all_zero(b, 4096));
	assert_int_equal(b[4096], 0xbb);
	assert_int_equal(file_write(f, "x", 1), 1);
	assert_int_equal(vfs_lseek(f, 12, SEEK_CUR), 0);
	vfs_file_put(f);
}

static void test_full_reads_zeros_and_refuses_writes_with_enospc(void **state)
{
	struct vfs_file *f = open_ok("/dev/full", O_WRONLY | O_CREAT | O_TRUNC);
	unsigned char buf[64];
	struct stat st;

	(void)state;
	memset(buf, 1, sizeof(buf));
	assert_int_equal(file_write(f, "x", 1), -ENOSPC);
	assert_int_equal(file_read(f, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	assert_true(all_zero(buf, sizeof(buf)));
	assert_int_equal(f->ops->getattr(f, &st), 0);
	assert_int_equal(st.st_rdev, makedev(1, 7));
	vfs_file_put(f);
}

static void test_random_and_urandom_read_random_bytes_and_accept_writes(void **state)
{
	const char *names[] = {"/dev/random", "/dev/urandom"};

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct vfs_file *f = open_ok(names[i], O_RDWR);
		unsigned char a[64], b[64];
		struct stat st;
		int count = 0;

		memset(a, 0, sizeof(a));
		memset(b, 0, sizeof(b));
		assert_int_equal(file_read(f, a, sizeof(a)), (ssize_t)sizeof(a));
		assert_int_equal(f->ops->pread_kernel(f, b, sizeof(b), 0), (ssize_t)sizeof(b));
		assert_false(all_zero(a, sizeof(a)));
		assert_memory_not_equal(a, b, sizeof(a));
		assert_int_equal(file_write(f, "seed", 4), 4);
		assert_int_equal(vfs_lseek(f, 10, SEEK_SET), 0);
		assert_int_equal(f->ops->ioctl(f, RNDGETENTCNT, &count), 0);
		assert_int_equal(count, 256);
		assert_int_equal(f->ops->getattr(f, &st), 0);
		assert_int_equal(st.st_rdev, makedev(1, 8 + i));
		vfs_file_put(f);
	}
}

static void test_random_polls_readable_and_urandom_has_no_poll_op_as_on_linux(void **state)
{
	struct vfs_file *r = open_ok("/dev/random", O_RDONLY);
	struct vfs_file *u = open_ok("/dev/urandom", O_RDONLY);
	struct waitq *wq = (void *)1;

	(void)state;
	assert_non_null(r->ops->poll);
	assert_int_equal(r->ops->poll(r, &wq), POLLIN | POLLRDNORM);
	assert_null(wq);
	assert_null(u->ops->poll);
	vfs_file_put(r);
	vfs_file_put(u);
}

static void test_opening_a_device_through_a_symlink_with_o_creat_opens_it(void **state)
{
	struct vfs_file *f = open_ok("/nulllink", O_WRONLY | O_CREAT | O_TRUNC);

	(void)state;
	assert_int_equal(file_write(f, "x", 1), 1);
	assert_string_equal(path_of(f->dentry), "/dev/null");
	vfs_file_put(f);
}

/* The terminal: replaces the test's stdin with FD for the duration of an open of PATH. */
static int open_with_stdin(int fd, const char *path, int flags, struct vfs_file **f)
{
	int saved = dup(STDIN_FILENO), err;

	assert_true(saved >= 0);
	assert_int_equal(dup2(fd, STDIN_FILENO), STDIN_FILENO);
	err = vfs_open(&fs, NULL, path, flags, 0, f);
	assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
	close(saved);
	return err;
}

static void test_opening_tty_without_a_terminal_fails_with_enxio(void **state)
{
	int null = open("/dev/null", O_RDONLY);
	struct vfs_file *f;

	(void)state;
	assert_true(null >= 0);
	assert_int_equal(open_with_stdin(null, "/dev/tty", O_RDWR, &f), -ENXIO);
	assert_int_equal(open_with_stdin(null, "/dev/console", O_RDWR, &f), -ENXIO);
	close(null);
}

static void test_opening_tty_on_a_terminal_wraps_a_dup_of_the_sentrys_stdin(void **state)
{
	struct termios host, guest;
	struct vfs_file *f;
	struct stat st;
	char buf[8];
	int master, slave;

	(void)state;
	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) || unlockpt(master))
		skip();
	slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	assert_true(slave >= 0);
	assert_int_equal(tcgetattr(slave, &host), 0);

	assert_int_equal(open_with_stdin(slave, "/dev/tty", O_RDWR, &f), 0);
	close(slave); /* the file has a descriptor of its own */
	assert_false(f->seekable);
	assert_true(f->ops->host_fd(f) >= 0);
	assert_int_equal(f->ops->ioctl(f, TCGETS, &guest), 0);
	assert_int_equal(guest.c_lflag, host.c_lflag);
	/* fstat shows the node opened, as on Linux. */
	assert_int_equal(f->ops->getattr(f, &st), 0);
	assert_int_equal(st.st_rdev, makedev(5, 0));
	assert_int_equal(st.st_dev, stat_of("/dev", 0).st_dev);
	assert_int_equal(file_write(f, "hi", 2), 2);
	assert_int_equal(read(master, buf, sizeof(buf)), 2);
	assert_memory_equal(buf, "hi", 2);
	vfs_file_put(f);
	close(master);
}

/* The /dev directory. */

static void test_getdents64_lists_every_dev_entry_with_its_type_and_a_unique_inode(void **state)
{
	struct vfs_file *f = open_ok("/dev", O_RDONLY | O_DIRECTORY);
	ino_t inos[N_DEV_ENTRIES];
	struct stat dev = stat_of("/dev", 0);
	char buf[4096] __attribute__((aligned(8)));
	size_t count = 0;
	ssize_t n, off;

	(void)state;
	n = f->ops->getdents64(f, buf, sizeof(buf), &f->pos);
	assert_true(n > 0);
	for (off = 0; off < n;) {
		struct {
			uint64_t ino;
			int64_t off;
			uint16_t reclen;
			uint8_t type;
			char name[];
		} *de = (void *)(buf + off);
		char path[64];

		assert_true(count < N_DEV_ENTRIES);
		assert_string_equal(de->name, dev_entries[count].name);
		assert_int_equal(de->type, dev_entries[count].type);
		assert_int_equal(de->reclen % 8, 0);
		assert_int_equal(de->off, (int64_t)count + 1);
		if (count >= 2) {
			snprintf(path, sizeof(path), "/dev/%s", de->name);
			assert_int_equal(stat_of(path, 0).st_ino, de->ino);
		} else {
			assert_int_equal(de->ino, dev.st_ino); /* the mounted root's ".." too */
		}
		for (size_t i = 1; count >= 2 && i < count; i++)
			assert_true(inos[i] != de->ino);
		inos[count++] = de->ino;
		off += de->reclen;
	}
	assert_int_equal(count, N_DEV_ENTRIES);
	assert_int_equal(f->ops->getdents64(f, buf, sizeof(buf), &f->pos), 0);
	vfs_file_put(f);
}

static void test_getdents64_of_dev_continues_across_small_buffers_and_rewinds(void **state)
{
	struct vfs_file *f = open_ok("/dev", O_RDONLY | O_DIRECTORY);
	char buf[48];
	size_t records = 0;
	ssize_t n;

	(void)state;
	assert_int_equal(f->ops->getdents64(f, buf, 16, &f->pos), -EINVAL);
	while ((n = f->ops->getdents64(f, buf, sizeof(buf), &f->pos)) > 0) {
		for (ssize_t off = 0; off < n; records++) {
			uint16_t reclen;

			memcpy(&reclen, buf + off + 16, sizeof(reclen)); /* d_reclen */
			off += reclen;
		}
	}
	assert_int_equal(n, 0);
	assert_int_equal(records, N_DEV_ENTRIES);
	assert_int_equal(vfs_lseek(f, 0, SEEK_SET), 0);
	assert_true(f->ops->getdents64(f, buf, sizeof(buf), &f->pos) > 0);
	assert_int_equal(vfs_lseek(f, 0, SEEK_END), -EINVAL);
	vfs_file_put(f);
}

static void test_dev_links_point_into_proc_self_fd(void **state)
{
	static const char *const links[][2] = {
	    {"/dev/fd", "/proc/self/fd"},
	    {"/dev/stdin", "/proc/self/fd/0"},
	    {"/dev/stdout", "/proc/self/fd/1"},
	    {"/dev/stderr", "/proc/self/fd/2"},
	};
	char buf[PATH_MAX];

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		struct vfs_dentry *d = lookup_ok(links[i][0], 0);
		struct stat st;
		ssize_t n = vfs_readlink(d, buf, sizeof(buf));

		assert_int_equal(n, (ssize_t)strlen(links[i][1]));
		assert_memory_equal(buf, links[i][1], (size_t)n);
		assert_int_equal(vfs_stat(d, &st), 0);
		assert_int_equal(st.st_mode, S_IFLNK | 0777);
		assert_int_equal(st.st_size, n);
		vfs_dentry_put(d);
	}
	/* No /proc in this tree: following the links fails as on a system without one. */
	assert_int_equal(lookup_err("/dev/fd", VFS_LOOKUP_FOLLOW), -ENOENT);
	assert_int_equal(lookup_err("/dev/stdin", VFS_LOOKUP_FOLLOW), -ENOENT);
	assert_int_equal(open_err("/dev/fd", O_RDONLY | O_NOFOLLOW), -ELOOP);
}

static void test_access_allows_writing_devices_but_not_the_directory(void **state)
{
	struct vfs_dentry *null = lookup_ok("/dev/null", 0), *dev = lookup_ok("/dev", 0);

	(void)state;
	assert_int_equal(vfs_access(null, R_OK | W_OK), 0);
	assert_int_equal(vfs_access(null, X_OK), -EACCES);
	assert_int_equal(vfs_access(dev, R_OK | X_OK), 0);
	assert_int_equal(vfs_access(dev, W_OK), -EROFS);
	vfs_dentry_put(dev);
	vfs_dentry_put(null);
}

static void test_creating_a_file_in_dev_fails_with_erofs(void **state)
{
	(void)state;
	assert_int_equal(open_err("/dev/newfile", O_WRONLY | O_CREAT), -EROFS);
	assert_int_equal(open_err("/dev/shm/newfile", O_RDWR | O_CREAT | O_EXCL), -EROFS);
	assert_int_equal(open_err("/dev/null", O_WRONLY | O_CREAT | O_EXCL), -EEXIST);
	assert_int_equal(open_err("/dev/missing", O_RDONLY), -ENOENT);
}

static void test_dev_directories_cannot_be_opened_for_writing_or_read(void **state)
{
	struct vfs_file *f;
	char c;

	(void)state;
	assert_int_equal(open_err("/dev", O_RDWR), -EISDIR);
	assert_int_equal(open_err("/dev/pts", O_WRONLY), -EISDIR);
	assert_int_equal(open_err("/dev/null", O_RDONLY | O_DIRECTORY), -ENOTDIR);
	f = open_ok("/dev/shm", O_RDONLY);
	assert_int_equal(file_read(f, &c, 1), -EISDIR);
	vfs_file_put(f);
	f = open_ok("/dev/null", O_RDONLY);
	assert_int_equal(f->ops->getdents64(f, &c, 1, &f->pos), -ENOTDIR);
	vfs_file_put(f);
}

static void test_o_path_file_on_a_device_stats_as_the_device(void **state)
{
	struct vfs_file *f = open_ok("/dev/zero", O_PATH);
	struct stat st;

	(void)state;
	assert_int_equal(f->ops->getattr(f, &st), 0);
	assert_int_equal(st.st_rdev, makedev(1, 5));
	vfs_file_put(f);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, test_setup, test_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_lookup_of_dev_null_crosses_into_the_mounted_devfs),
	    T(test_dotdot_from_the_mounted_root_goes_to_the_mountpoints_parent),
	    T(test_symlinks_to_and_through_the_mountpoint_cross_into_the_mount),
	    T(test_dotdot_from_a_cwd_inside_the_mount_leaves_it),
	    T(test_dotdot_never_climbs_above_a_task_root_inside_the_mount),
	    T(test_path_of_a_dentry_in_the_mount_goes_through_the_mountpoint),
	    T(test_stat_of_the_mountpoint_path_shows_the_mounted_root),
	    T(test_the_covered_directory_keeps_its_own_attributes),
	    T(test_mounting_on_a_mountpoint_again_fails_with_ebusy),
	    T(test_mounting_on_a_file_fails_with_enotdir),
	    T(test_mounting_a_tree_inside_itself_or_a_subdirectory_fails_with_einval),
	    T(test_mounts_are_listed_in_mount_order_with_their_type),
	    T(test_unmounting_uncovers_the_host_directory),
	    T(test_a_devfs_that_is_never_mounted_is_freed_by_its_last_put),
	    T(test_a_tree_with_a_mount_inside_can_be_mounted_afterwards),
	    T(test_null_reads_end_of_file_and_swallows_writes),
	    T(test_zero_reads_zeros_across_an_iovec_and_swallows_writes),
	    T(test_full_reads_zeros_and_refuses_writes_with_enospc),
	    T(test_random_and_urandom_read_random_bytes_and_accept_writes),
	    T(test_random_polls_readable_and_urandom_has_no_poll_op_as_on_linux),
	    T(test_opening_a_device_through_a_symlink_with_o_creat_opens_it),
	    T(test_opening_tty_without_a_terminal_fails_with_enxio),
	    T(test_opening_tty_on_a_terminal_wraps_a_dup_of_the_sentrys_stdin),
	    T(test_getdents64_lists_every_dev_entry_with_its_type_and_a_unique_inode),
	    T(test_getdents64_of_dev_continues_across_small_buffers_and_rewinds),
	    T(test_dev_links_point_into_proc_self_fd),
	    T(test_access_allows_writing_devices_but_not_the_directory),
	    T(test_creating_a_file_in_dev_fails_with_erofs),
	    T(test_dev_directories_cannot_be_opened_for_writing_or_read),
	    T(test_o_path_file_on_a_device_stats_as_the_device),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
