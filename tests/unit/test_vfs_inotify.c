/* Unit tests for inotify (vfs/inotify.c) on a tmpfs: the events the VFS's operations give a
 * watched file and its directory, merging of identical events, the queue's cap and its one
 * IN_Q_OVERFLOW, read(2)'s whole records, IN_IGNORED from rm_watch and from the last reference
 * of an unlinked file, and that closing an instance lets its watched dentries go. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>

#include "mem/memfile.h"
#include "vfs/inotify.h"
#include "vfs/vfs.h"

static struct vfs_fs_ctx fs;

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
	assert_null(fs.root->children); /* no watch left a dentry behind */
	vfs_dentry_put(fs.cwd);
	vfs_dentry_put(fs.root);
	return 0;
}

static struct vfs_file *new_instance(void)
{
	struct vfs_file *in = NULL;

	assert_int_equal(vfs_inotify_new(O_NONBLOCK, 0, &in), 0);
	assert_true(vfs_is_inotify(in));
	return in;
}

static int watch(struct vfs_file *in, const char *path, uint32_t mask)
{
	struct vfs_dentry *d;
	int wd;

	assert_int_equal(vfs_lookup(&fs, NULL, path, VFS_LOOKUP_FOLLOW, &d), 0);
	wd = vfs_inotify_add_watch(in, d, mask);
	vfs_dentry_put(d);
	return wd;
}

static struct vfs_file *open_file(const char *path, int flags)
{
	struct vfs_file *f = NULL;

	assert_int_equal(vfs_open(&fs, NULL, path, flags, 0644, &f), 0);
	return f;
}

/* The next event: its wd, mask and name ("" for none). */
static void next_event(struct vfs_file *in, int wd, uint32_t mask, const char *name)
{
	char buf[sizeof(struct inotify_event) + 16] __attribute__((aligned(8)));
	struct inotify_event *e = (struct inotify_event *)buf;
	struct iovec iov = {buf, sizeof(*e)};
	ssize_t n;

	/* A header's room is too little for an event with a name: EINVAL, the event stays. */
	if (*name)
		assert_int_equal(in->ops->read(in, &iov, 1, NULL), -EINVAL);
	iov.iov_len = *name ? sizeof(buf) : sizeof(*e); /* room for this event alone */
	n = in->ops->read(in, &iov, 1, NULL);
	assert_int_equal(n, sizeof(*e) + e->len);
	assert_int_equal(e->wd, wd);
	assert_int_equal(e->mask, mask);
	assert_string_equal(e->len ? e->name : "", name);
}

static void no_event(struct vfs_file *in)
{
	char buf[64];
	struct iovec iov = {buf, sizeof(buf)};
	struct waitq *wq;

	assert_int_equal(in->ops->read(in, &iov, 1, NULL), -EAGAIN);
	assert_int_equal(in->ops->poll(in, &wq), 0);
}

static void test_file_operations_reach_the_file_and_its_directory(void **state)
{
	struct vfs_file *in = new_instance(), *f;
	struct waitq *wq;
	int wd, wf, n = 0;

	(void)state;
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "d", 0755), 0);
	wd = watch(in, "d", IN_ALL_EVENTS);
	f = open_file("d/f", O_CREAT | O_WRONLY);
	wf = watch(in, "d/f", IN_ALL_EVENTS);
	assert_true(wf > wd);
	assert_int_equal(watch(in, "d/f", IN_ALL_EVENTS), wf);
	assert_int_equal(in->ops->poll(in, &wq), POLLIN | POLLRDNORM);
	assert_int_equal(in->ops->ioctl(in, FIONREAD, &n), 0);
	assert_int_equal(n, 2 * (16 + 16));
	next_event(in, wd, IN_CREATE, "f");
	next_event(in, wd, IN_OPEN, "f");
	vfs_file_put(f);
	next_event(in, wd, IN_CLOSE_WRITE, "f");
	next_event(in, wf, IN_CLOSE_WRITE, "");

	/* Two identical events in a row are one. */
	f = open_file("d/f", O_WRONLY);
	vfs_notify_modify(f);
	vfs_notify_modify(f);
	next_event(in, wd, IN_OPEN, "f");
	next_event(in, wf, IN_OPEN, "");
	next_event(in, wd, IN_MODIFY, "f");
	next_event(in, wf, IN_MODIFY, "");
	next_event(in, wd, IN_MODIFY, "f");
	next_event(in, wf, IN_MODIFY, "");
	no_event(in);

	/* Unlinked while open: the file's watch goes at the last close. */
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "d/f"), 0);
	next_event(in, wf, IN_ATTRIB, "");
	next_event(in, wd, IN_DELETE, "f");
	no_event(in);
	vfs_file_put(f);
	next_event(in, wd, IN_CLOSE_WRITE, "f");
	next_event(in, wf, IN_CLOSE_WRITE, "");
	next_event(in, wf, IN_DELETE_SELF, "");
	next_event(in, wf, IN_IGNORED, "");
	assert_int_equal(vfs_inotify_rm_watch(in, wf), -EINVAL);

	assert_int_equal(vfs_inotify_rm_watch(in, wd), 0);
	next_event(in, wd, IN_IGNORED, "");
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "d"), 0);
	no_event(in);
	vfs_file_put(in);
}

static void test_full_queue_ends_with_one_overflow(void **state)
{
	struct vfs_file *in, *f;
	int wf;

	(void)state;
	assert_int_equal(vfs_inotify_set_limit(0, -1), -EINVAL);
	assert_int_equal(vfs_inotify_set_limit(0, 3), 0);
	in = new_instance();
	assert_int_equal(vfs_inotify_set_limit(0, 16384), 0);
	f = open_file("f", O_CREAT | O_RDWR);
	wf = watch(in, "f", IN_ACCESS | IN_MODIFY);
	for (int i = 0; i < 4; i++) {
		vfs_notify_access(f);
		vfs_notify_modify(f);
	}
	next_event(in, wf, IN_ACCESS, "");
	next_event(in, wf, IN_MODIFY, "");
	next_event(in, wf, IN_ACCESS, "");
	next_event(in, -1, IN_Q_OVERFLOW, "");
	no_event(in);
	vfs_notify_modify(f);
	next_event(in, wf, IN_MODIFY, "");
	vfs_file_put(f);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "f"), 0);
	next_event(in, wf, IN_IGNORED, ""); /* always sent, unlike what the mask leaves out */
	vfs_file_put(in);
}

static void test_closing_an_instance_releases_its_watches(void **state)
{
	struct vfs_file *in = new_instance();

	(void)state;
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "d", 0755), 0);
	assert_int_equal(watch(in, "d", IN_CREATE | IN_ONESHOT), 1);
	vfs_file_put(open_file("d/f", O_CREAT | O_WRONLY));
	next_event(in, 1, IN_CREATE, "f");
	next_event(in, 1, IN_IGNORED, "");
	assert_int_equal(watch(in, "d", IN_CREATE), 2); /* descriptors go upwards */
	assert_int_equal(watch(in, "d/f", IN_CREATE), 3);
	vfs_file_put(in); /* the teardown checks that nothing holds "d" or "d/f" now */
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "d/f"), 0);
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "d"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_file_operations_reach_the_file_and_its_directory,
					    test_setup, test_teardown),
	    cmocka_unit_test_setup_teardown(test_full_queue_ends_with_one_overflow, test_setup,
					    test_teardown),
	    cmocka_unit_test_setup_teardown(test_closing_an_instance_releases_its_watches,
					    test_setup, test_teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
