/* Unit tests for eventfd files (vfs/eventfd.c): the counter and semaphore modes, the 8-byte
 * rule, overflow and EAGAIN instead of blocking, poll bits, the wake-ups that reads and writes
 * send, flags and the anonymous inode fstat shows. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>

#include "vfs/vfs.h"
#include "vfs/waitq.h"

static ssize_t efd_read(struct vfs_file *f, void *buf, size_t len)
{
	struct iovec iov = {buf, len};

	return f->ops->read(f, &iov, 1, NULL);
}

static ssize_t efd_write(struct vfs_file *f, uint64_t v)
{
	struct iovec iov = {&v, sizeof(v)};

	return f->ops->write(f, &iov, 1, NULL);
}

static uint32_t efd_poll(struct vfs_file *f)
{
	struct waitq *wq;

	return f->ops->poll(f, &wq);
}

static struct vfs_file *efd_new(unsigned int initval, int flags)
{
	struct vfs_file *f = NULL;

	assert_int_equal(vfs_eventfd_new(initval, flags, &f), 0);
	assert_non_null(f);
	return f;
}

struct wake_count {
	struct waiter w; /* first: the callback casts back */
	int calls;
	uint32_t last;
};

static void count_wake(struct waiter *w, uint32_t events)
{
	struct wake_count *c = (struct wake_count *)w;

	c->calls++;
	c->last = events;
}

static void test_read_returns_the_counter_and_resets_it(void **state)
{
	struct vfs_file *f = efd_new(5, 0);
	uint64_t v = 0;

	(void)state;
	assert_int_equal(efd_write(f, 3), 8);
	assert_int_equal(vfs_eventfd_count(f), 8);
	assert_int_equal(efd_read(f, &v, sizeof(v)), 8);
	assert_int_equal(v, 8);
	assert_int_equal(vfs_eventfd_count(f), 0);
	vfs_file_put(f);
}

static void test_read_of_a_zero_counter_fails_with_eagain(void **state)
{
	struct vfs_file *f = efd_new(0, 0);
	uint64_t v;

	(void)state;
	assert_int_equal(efd_read(f, &v, sizeof(v)), -EAGAIN);
	vfs_file_put(f);
}

static void test_semaphore_read_returns_one_and_decrements(void **state)
{
	struct vfs_file *f = efd_new(2, EFD_SEMAPHORE);
	uint64_t v = 0;

	(void)state;
	assert_int_equal(efd_read(f, &v, sizeof(v)), 8);
	assert_int_equal(v, 1);
	assert_int_equal(vfs_eventfd_count(f), 1);
	assert_int_equal(efd_read(f, &v, sizeof(v)), 8);
	assert_int_equal(v, 1);
	assert_int_equal(efd_read(f, &v, sizeof(v)), -EAGAIN);
	vfs_file_put(f);
}

static void test_reads_and_writes_shorter_than_eight_bytes_fail_with_einval(void **state)
{
	struct vfs_file *f = efd_new(1, 0);
	uint64_t v = 1;
	struct iovec iov = {&v, 7};

	(void)state;
	assert_int_equal(efd_read(f, &v, 7), -EINVAL);
	assert_int_equal(f->ops->write(f, &iov, 1, NULL), -EINVAL);
	assert_int_equal(vfs_eventfd_count(f), 1);
	vfs_file_put(f);
}

static void test_a_value_split_across_iovecs_is_read_and_written_whole(void **state)
{
	struct vfs_file *f = efd_new(0, 0);
	uint64_t in = 0x0102030405060708ull, out = 0;
	struct iovec win[2] = {{&in, 3}, {(char *)&in + 3, 5}};
	struct iovec rout[3] = {{&out, 1}, {(char *)&out + 1, 6}, {(char *)&out + 7, 8}};

	(void)state;
	assert_int_equal(f->ops->write(f, win, 2, NULL), 8);
	assert_int_equal(f->ops->read(f, rout, 3, NULL), 8);
	assert_int_equal(out, in);
	vfs_file_put(f);
}

static void test_writing_the_all_ones_value_fails_with_einval(void **state)
{
	struct vfs_file *f = efd_new(0, 0);

	(void)state;
	assert_int_equal(efd_write(f, UINT64_MAX), -EINVAL);
	assert_int_equal(vfs_eventfd_count(f), 0);
	vfs_file_put(f);
}

static void test_a_write_past_the_maximum_fails_with_eagain_and_changes_nothing(void **state)
{
	struct vfs_file *f = efd_new(1, 0);

	(void)state;
	assert_int_equal(efd_write(f, UINT64_MAX - 2), 8); /* the counter is now the maximum */
	assert_int_equal(vfs_eventfd_count(f), UINT64_MAX - 1);
	assert_int_equal(efd_write(f, 1), -EAGAIN);
	assert_int_equal(efd_write(f, 0), 8); /* adding nothing always fits */
	assert_int_equal(vfs_eventfd_count(f), UINT64_MAX - 1);
	vfs_file_put(f);
}

static void test_poll_reports_pollin_with_a_count_and_pollout_while_one_more_fits(void **state)
{
	struct vfs_file *f = efd_new(0, 0);
	uint64_t v;

	(void)state;
	assert_int_equal(efd_poll(f), POLLOUT);
	assert_int_equal(efd_write(f, 1), 8);
	assert_int_equal(efd_poll(f), POLLIN | POLLOUT);
	assert_int_equal(efd_write(f, UINT64_MAX - 2), 8);
	assert_int_equal(efd_poll(f), POLLIN);
	assert_int_equal(efd_read(f, &v, sizeof(v)), 8);
	assert_int_equal(efd_poll(f), POLLOUT);
	vfs_file_put(f);
}

static void test_writes_wake_pollin_and_reads_wake_pollout(void **state)
{
	struct vfs_file *f = efd_new(0, 0);
	struct wake_count in = {0}, out = {0};
	struct waitq *wq = NULL;
	uint64_t v;

	(void)state;
	f->ops->poll(f, &wq);
	assert_non_null(wq);
	waitq_add(wq, &in.w, count_wake, POLLIN);
	waitq_add(wq, &out.w, count_wake, POLLOUT);
	assert_int_equal(efd_write(f, 2), 8);
	assert_int_equal(in.calls, 1);
	assert_int_equal(out.calls, 0);
	assert_int_equal(efd_read(f, &v, sizeof(v)), 8);
	assert_int_equal(in.calls, 1);
	assert_int_equal(out.calls, 1);
	assert_int_equal(out.last, POLLOUT);
	assert_int_equal(efd_read(f, &v, sizeof(v)), -EAGAIN); /* no change, no wake-up */
	assert_int_equal(out.calls, 1);
	waitq_remove(&in.w);
	waitq_remove(&out.w);
	vfs_file_put(f);
}

static void test_release_unhooks_waiters_still_queued(void **state)
{
	struct vfs_file *f = efd_new(0, 0);
	struct wake_count c = {0};
	struct waitq *wq = NULL;

	(void)state;
	f->ops->poll(f, &wq);
	waitq_add(wq, &c.w, count_wake, 0);
	vfs_file_put(f);
	assert_null(c.w.q);
	waitq_remove(&c.w); /* harmless once the queue is gone */
}

static void test_nonblock_goes_to_the_file_flags_and_bad_flags_fail_with_einval(void **state)
{
	struct vfs_file *f = efd_new(0, EFD_NONBLOCK | EFD_CLOEXEC);

	(void)state;
	assert_int_equal(f->flags, O_RDWR | O_NONBLOCK);
	assert_true(vfs_is_eventfd(f));
	vfs_file_put(f);
	f = efd_new(0, 0);
	assert_int_equal(f->flags, O_RDWR);
	vfs_file_put(f);
	f = NULL;
	assert_int_equal(vfs_eventfd_new(0, 0x10, &f), -EINVAL);
	assert_null(f);
}

static void test_fstat_shows_the_anonymous_inode(void **state)
{
	struct vfs_file *f = efd_new(0, 0), *g = efd_new(0, 0);
	struct stat st, st2;

	(void)state;
	assert_int_equal(f->ops->getattr(f, &st), 0);
	assert_int_equal(st.st_mode, S_IRUSR | S_IWUSR);
	assert_int_equal(st.st_nlink, 1);
	assert_int_equal(st.st_dev, VFS_ANON_INODE_DEV);
	assert_int_equal(st.st_ino, VFS_ANON_INODE_INO);
	assert_int_equal(g->ops->getattr(g, &st2), 0);
	assert_int_equal(st2.st_ino, st.st_ino); /* one inode for all, as on Linux */
	vfs_file_put(f);
	vfs_file_put(g);
}

static void test_is_eventfd_is_false_for_a_pipe(void **state)
{
	struct vfs_file *rd, *wr;

	(void)state;
	assert_int_equal(vfs_pipe_new(0, &rd, &wr), 0);
	assert_false(vfs_is_eventfd(rd));
	vfs_file_put(rd);
	vfs_file_put(wr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_read_returns_the_counter_and_resets_it),
	    cmocka_unit_test(test_read_of_a_zero_counter_fails_with_eagain),
	    cmocka_unit_test(test_semaphore_read_returns_one_and_decrements),
	    cmocka_unit_test(test_reads_and_writes_shorter_than_eight_bytes_fail_with_einval),
	    cmocka_unit_test(test_a_value_split_across_iovecs_is_read_and_written_whole),
	    cmocka_unit_test(test_writing_the_all_ones_value_fails_with_einval),
	    cmocka_unit_test(test_a_write_past_the_maximum_fails_with_eagain_and_changes_nothing),
	    cmocka_unit_test(test_poll_reports_pollin_with_a_count_and_pollout_while_one_more_fits),
	    cmocka_unit_test(test_writes_wake_pollin_and_reads_wake_pollout),
	    cmocka_unit_test(test_release_unhooks_waiters_still_queued),
	    cmocka_unit_test(test_nonblock_goes_to_the_file_flags_and_bad_flags_fail_with_einval),
	    cmocka_unit_test(test_fstat_shows_the_anonymous_inode),
	    cmocka_unit_test(test_is_eventfd_is_false_for_a_pipe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
