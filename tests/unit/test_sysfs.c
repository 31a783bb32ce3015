/* Unit tests for sysfs (fs-sys/sysfs.c) on the kernfs helper (vfs/kernfs.c): the CPU files'
 * formats (Linux's hex masks and lists), laziness (nothing under cpu/ exists until a guest
 * looks, and reading one CPU's topology builds that CPU only), identical trees in lazy and
 * eager mode, and Linux's errors for writes and for creating or removing names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include "fs-sys/sysfs.h"
#include "tests/unit/kernfs_walk.h"

static struct vfs_dentry *root;
static struct vfs_fs_ctx fs;

static void mount_sysfs(int cpus, bool eager)
{
	assert_int_equal(sysfs_new(cpus, eager, &root), 0);
	fs.root = root;
	fs.cwd = root;
}

static void unmount_sysfs(void)
{
	vfs_dentry_put(root);
	root = NULL;
}

static void assert_file(const char *path, const char *want)
{
	int err = 0;
	char *got = walk_read(&fs, path, NULL, &err);

	if (!got)
		fail_msg("%s: error %d", path, err);
	assert_string_equal(got, want);
	free(got);
}

static void test_sysfs_shows_cpu_lists_and_masks_as_linux_does(void **state)
{
	(void)state;
	mount_sysfs(40, false);
	assert_file("/devices/system/cpu/online", "0-39\n");
	assert_file("/devices/system/cpu/possible", "0-39\n");
	assert_file("/devices/system/cpu/present", "0-39\n");
	assert_file("/devices/system/cpu/offline", "\n");
	assert_file("/devices/system/cpu/kernel_max", "8191\n");
	assert_file("/devices/system/cpu/cpu33/topology/core_id", "33\n");
	assert_file("/devices/system/cpu/cpu33/topology/physical_package_id", "0\n");
	assert_file("/devices/system/cpu/cpu33/topology/core_siblings", "ff,ffffffff\n");
	assert_file("/devices/system/cpu/cpu33/topology/core_siblings_list", "0-39\n");
	assert_file("/devices/system/cpu/cpu33/topology/thread_siblings", "02,00000000\n");
	assert_file("/devices/system/cpu/cpu33/topology/thread_siblings_list", "33\n");
	assert_file("/devices/system/cpu/cpu0/topology/thread_siblings", "00,00000001\n");
	unmount_sysfs();

	mount_sysfs(96, false);
	assert_file("/devices/system/cpu/cpu95/topology/core_siblings",
		    "ffffffff,ffffffff,ffffffff\n");
	assert_file("/devices/system/cpu/cpu64/topology/thread_siblings",
		    "00000001,00000000,00000000\n");
	unmount_sysfs();

	mount_sysfs(1, false);
	assert_file("/devices/system/cpu/online", "0\n");
	assert_file("/devices/system/cpu/cpu0/topology/core_siblings", "1\n");
	unmount_sysfs();

	mount_sysfs(6, false);
	assert_file("/devices/system/cpu/cpu0/topology/core_siblings", "3f\n");
	unmount_sysfs();
}

static void test_sysfs_refuses_bad_cpu_counts(void **state)
{
	struct vfs_dentry *d;

	(void)state;
	assert_int_equal(sysfs_new(0, false, &d), -EINVAL);
	assert_int_equal(sysfs_new(513, false, &d), -EINVAL);
	assert_int_equal(sysfs_new(512, false, &d), 0);
	vfs_dentry_put(d);
}

static void test_sysfs_builds_nothing_under_cpu_until_looked_at(void **state)
{
	struct kernfs_stats before, after;
	struct vfs_dentry *cpu, *cpu5, *cpu6;
	struct stat st;

	(void)state;
	mount_sysfs(96, false);
	assert_int_equal(kernfs_stats(root, &before), 0);
	assert_true(before.inodes < 20);

	/* stat of the lazy cpu directory: 96 cpuN links, nothing built. */
	assert_int_equal(vfs_lookup(&fs, NULL, "/devices/system/cpu", 0, &cpu), 0);
	assert_int_equal(vfs_stat(cpu, &st), 0);
	assert_int_equal(st.st_nlink, 2 + 96);
	assert_int_equal(kernfs_stats(root, &after), 0);
	assert_int_equal(after.inodes, before.inodes);
	assert_false(kernfs_dir_populated(cpu));

	assert_file("/devices/system/cpu/cpu5/topology/core_id", "5\n");
	assert_int_equal(kernfs_stats(root, &after), 0);
	/* cpu5, its topology directory, and core_id: nothing else. */
	assert_int_equal(after.inodes, before.inodes + 3);
	assert_false(kernfs_dir_populated(cpu));
	assert_int_equal(vfs_lookup(&fs, NULL, "/devices/system/cpu/cpu5", 0, &cpu5), 0);
	assert_int_equal(vfs_lookup(&fs, NULL, "/devices/system/cpu/cpu6", 0, &cpu6), 0);
	assert_true(kernfs_dir_populated(cpu5));
	assert_false(kernfs_dir_populated(cpu6));
	assert_int_equal(vfs_stat(cpu6, &st), 0);
	assert_int_equal(st.st_nlink, 3);

	vfs_dentry_put(cpu6);
	vfs_dentry_put(cpu5);
	vfs_dentry_put(cpu);
	/* The dentries the lookups cached are gone with their references. */
	assert_int_equal(kernfs_stats(root, &after), 0);
	assert_int_equal(after.dentries, 1);
	unmount_sysfs();
}

static void test_sysfs_lazy_and_eager_trees_are_identical_with_96_cpus(void **state)
{
	struct walk_out lazy = {0}, eager = {0};
	struct kernfs_stats ls, es;

	(void)state;
	mount_sysfs(96, false);
	assert_int_equal(kernfs_stats(root, &ls), 0);
	walk_tree(&fs, "/", NULL, &lazy);
	unmount_sysfs();
	mount_sysfs(96, true);
	assert_int_equal(kernfs_stats(root, &es), 0);
	walk_tree(&fs, "/", NULL, &eager);
	unmount_sysfs();

	assert_true(ls.inodes < 20);
	assert_true(es.inodes > 96 * 8);
	assert_true(strstr(lazy.data, "/devices/system/cpu/cpu95/topology/thread_siblings_list") !=
		    NULL);
	assert_int_equal(lazy.len, eager.len);
	assert_string_equal(lazy.data, eager.data);
	free(lazy.data);
	free(eager.data);
}

static void test_sysfs_refuses_writes_and_new_names_as_linux_does(void **state)
{
	struct vfs_file *f;

	(void)state;
	mount_sysfs(4, false);
	assert_int_equal(vfs_open(&fs, NULL, "/devices/system/cpu/online", O_WRONLY, 0, &f),
			 -EACCES);
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/devices/system/cpu/cpu9", 0755), -EPERM);
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/devices/system/cpu/cpu1"), -EPERM);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/devices/system/cpu/online"), -EPERM);
	assert_int_equal(
	    vfs_open(&fs, NULL, "/devices/system/cpu/new", O_CREAT | O_WRONLY, 0644, &f), -EACCES);
	unmount_sysfs();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sysfs_shows_cpu_lists_and_masks_as_linux_does),
	    cmocka_unit_test(test_sysfs_refuses_bad_cpu_counts),
	    cmocka_unit_test(test_sysfs_builds_nothing_under_cpu_until_looked_at),
	    cmocka_unit_test(test_sysfs_lazy_and_eager_trees_are_identical_with_96_cpus),
	    cmocka_unit_test(test_sysfs_refuses_writes_and_new_names_as_linux_does),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
