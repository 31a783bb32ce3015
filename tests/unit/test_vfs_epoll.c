/* Unit tests for epoll files (vfs/epoll.c) over pipes, eventfds and host descriptors: level
 * and edge triggering, EPOLLONESHOT, MOD and DEL, epoll_ctl's errors in Linux's order, the
 * epoll's own readiness and wait queue, nesting, items leaving with their target's last
 * reference, maxevents and round-robin, EPOLLHUP, and the host descriptors a caller must
 * watch. Run under ASan, the release tests double as use-after-free checks. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vfs/vfs.h"
#include "vfs/waitq.h"

struct pipe_pair {
	struct vfs_file *rd, *wr;
};

struct wake_count {
	struct waiter w; /* first: the callback casts back */
	int calls;
};

static void count_wake(struct waiter *w, uint32_t events)
{
	(void)events;
	((struct wake_count *)w)->calls++;
}

static struct vfs_file *ep_new(void)
{
	struct vfs_file *ep = NULL;

	assert_int_equal(vfs_epoll_new(0, &ep), 0);
	assert_non_null(ep);
	return ep;
}

static struct pipe_pair pipe_new(void)
{
	struct pipe_pair p;

	assert_int_equal(vfs_pipe_new(O_NONBLOCK, &p.rd, &p.wr), 0);
	return p;
}

static void pipe_put(struct pipe_pair p)
{
	vfs_file_put(p.rd);
	vfs_file_put(p.wr);
}

static void put_bytes(struct vfs_file *f, size_t n)
{
	char buf[64] = {0};
	struct iovec iov = {buf, n};

	assert_true(n <= sizeof(buf));
	assert_int_equal(f->ops->write(f, &iov, 1, NULL), (ssize_t)n);
}

static void take_bytes(struct vfs_file *f, size_t n)
{
	char buf[64];
	struct iovec iov = {buf, n};

	assert_true(n <= sizeof(buf));
	assert_int_equal(f->ops->read(f, &iov, 1, NULL), (ssize_t)n);
}

static int ctl(struct vfs_file *ep, int op, int fd, struct vfs_file *target, uint32_t events,
	       uint64_t data)
{
	struct epoll_event ev = {.events = events, .data.u64 = data};

	return vfs_epoll_ctl(ep, op, fd, target, &ev);
}

static int wait_now(struct vfs_file *ep, struct epoll_event *out, int max)
{
	return vfs_epoll_wait(ep, out, max);
}

static uint32_t poll_now(struct vfs_file *f, struct waitq **wq)
{
	struct waitq *dummy;

	return f->ops->poll(f, wq ? wq : &dummy);
}

static void test_level_triggered_item_is_reported_while_the_pipe_has_data(void **state)
{
	struct vfs_file *ep = ep_new();
	struct pipe_pair p = pipe_new();
	struct epoll_event out[4];

	(void)state;
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 3, p.rd, EPOLLIN, 42), 0);
	assert_int_equal(wait_now(ep, out, 4), 0);
	put_bytes(p.wr, 4);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(wait_now(ep, out, 4), 1);
		assert_int_equal(out[0].events, EPOLLIN); /* POLLRDNORM is not asked for */
		assert_int_equal(out[0].data.u64, 42);
	}
	take_bytes(p.rd, 4);
	assert_int_equal(wait_now(ep, out, 4), 0);
	pipe_put(p);
	vfs_file_put(ep);
}

static void test_edge_triggered_item_is_reported_once_until_new_data_arrives(void **state)
{
	struct vfs_file *ep = ep_new();
	struct pipe_pair p = pipe_new();
	struct epoll_event out[4];

	(void)state;
	put_bytes(p.wr, 1);
	/* Adding a target that is ready already counts as one edge. */
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 3, p.rd, EPOLLIN | EPOLLET, 7), 0);
	assert_int_equal(wait_now(ep, out, 4), 1);
	assert_int_equal(out[0].events, EPOLLIN);
	assert_int_equal(wait_now(ep, out, 4), 0); /* still readable, but no new edge */
	put_bytes(p.wr, 1);
	assert_int_equal(wait_now(ep, out, 4), 1);
	assert_int_equal(out[0].data.u64, 7);
	assert_int_equal(wait_now(ep, out, 4), 0);
	pipe_put(p);
	vfs_file_put(ep);
}

static void test_edge_that_finds_the_data_gone_is_not_reported(void **state)
{
	struct vfs_file *ep = ep_new();
	struct pipe_pair p = pipe_new();
	struct epoll_event out[4];

	(void)state;
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 3, p.rd, EPOLLIN | EPOLLET, 7), 0);
	put_bytes(p.wr, 2);
	take_bytes(p.rd, 2);
	assert_int_equal(wait_now(ep, out, 4), 0);
	pipe_put(p);
	vfs_file_put(ep);
}

static void test_edge_triggered_pollout_fires_again_when_a_read_makes_room(void **state)
{
	struct vfs_file *ep = ep_new();
	struct pipe_pair p = pipe_new();
	struct epoll_event out[4];

	(void)state;
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 4, p.wr, EPOLLOUT | EPOLLET, 1), 0);
	assert_int_equal(wait_now(ep, out, 4), 1);
	assert_int_equal(out[0].events, EPOLLOUT);
	put_bytes(p.wr, 8); /* wakes POLLIN only: not an edge for this item */
	assert_int_equal(wait_now(ep, out, 4), 0);
	take_bytes(p.rd, 8);
	assert_int_equal(wait_now(ep, out, 4), 1);
	pipe_put(p);
	vfs_file_put(ep);
}

static void test_oneshot_item_is_disabled_after_one_report_until_mod_rearms_it(void **state)
{
	struct vfs_file *ep = ep_new();
	struct pipe_pair p = pipe_new();
	struct epoll_event out[4];

	(void)state;
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 3, p.rd, EPOLLIN | EPOLLONESHOT, 1), 0);
	put_bytes(p.wr, 1);
	assert_int_equal(wait_now(ep, out, 4), 1);
	assert_int_equal(wait_now(ep, out, 4), 0);
	put_bytes(p.wr, 1);
	assert_int_equal(wait_now(ep, out, 4), 0);
	vfs_file_put(p.wr); /* not even a hang-up is reported while disabled */
	assert_int_equal(wait_now(ep, out, 4), 0);
	assert_int_equal(poll_now(ep, NULL), 0);
	assert_int_equal(ctl(ep, EPOLL_CTL_MOD, 3, p.rd, EPOLLIN | EPOLLONESHOT, 2), 0);
	assert_int_equal(wait_now(ep, out, 4), 1);
	assert_int_equal(out[0].events, EPOLLIN | EPOLLHUP);
	assert_int_equal(out[0].data.u64, 2);
	assert_int_equal(wait_now(ep, out, 4), 0);
	vfs_file_put(p.rd);
	vfs_file_put(ep);
}

static void test_mod_changes_the_interest_and_the_data(void **state)
{
	struct vfs_file *ep = ep_new();
	struct pipe_pair p = pipe_new();
	struct epoll_event out[4];

	(void)state;
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 3, p.rd, EPOLLPRI, 1), 0);
	put_bytes(p.wr, 1);
	assert_int_equal(wait_now(ep, out, 4), 0);
	assert_int_equal(ctl(ep, EPOLL_CTL_MOD, 3, p.rd, EPOLLIN | EPOLLRDNORM, 9), 0);
	assert_int_equal(wait_now(ep, out, 4), 1);
	assert_int_equal(out[0].events, EPOLLIN | EPOLLRDNORM);
	assert_int_equal(out[0].data.u64, 9);
	pipe_put(p);
	vfs_file_put(ep);
}

static void test_del_removes_the_item_and_its_wakeups(void **state)
{
	struct vfs_file *ep = ep_new();
	struct pipe_pair p = pipe_new();
	struct epoll_event out[4];
	struct wake_count c = {0};
	struct waitq *wq;

	(void)state;
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 3, p.rd, EPOLLIN, 1), 0);
	assert_int_equal(vfs_epoll_ctl(ep, EPOLL_CTL_DEL, 3, p.rd, NULL), 0);
	poll_now(ep, &wq);
	waitq_add(wq, &c.w, count_wake, 0);
	put_bytes(p.wr, 1);
	assert_int_equal(c.calls, 0);
	assert_int_equal(wait_now(ep, out, 4), 0);
	assert_int_equal(vfs_epoll_ctl(ep, EPOLL_CTL_DEL, 3, p.rd, NULL), -ENOENT);
	waitq_remove(&c.w);
	pipe_put(p);
	vfs_file_put(ep);
}

static void test_items_are_keyed_by_descriptor_and_file(void **state)
{
	struct vfs_file *ep = ep_new();
	struct pipe_pair p = pipe_new();
	struct epoll_event out[4];

	(void)state;
	/* One file under two descriptors (a dup) is two items. */
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 3, p.rd, EPOLLIN, 3), 0);
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 5, p.rd, EPOLLIN, 5), 0);
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 3, p.rd, EPOLLIN, 3), -EEXIST);
	/* The same number naming another file is another key. */
	assert_int_equal(ctl(ep, EPOLL_CTL_MOD, 3, p.wr, EPOLLOUT, 0), -ENOENT);
	put_bytes(p.wr, 1);
	assert_int_equal(wait_now(ep, out, 4), 2);
	assert_int_equal(vfs_epoll_ctl(ep, EPOLL_CTL_DEL, 3, p.rd, NULL), 0);
	assert_int_equal(wait_now(ep, out, 4), 1);
	assert_int_equal(out[0].data.u64, 5);
	pipe_put(p);
	vfs_file_put(ep);
}

static void test_ctl_misuse_fails_with_einval(void **state)
{
	struct vfs_file *ep = ep_new(), *ep2 = ep_new();
	struct pipe_pair p = pipe_new();

	(void)state;
	assert_int_equal(ctl(p.rd, EPOLL_CTL_ADD, 4, p.wr, EPOLLOUT, 0), -EINVAL);
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 3, ep, EPOLLIN, 0), -EINVAL);
	assert_int_equal(ctl(ep, 99, 3, p.rd, EPOLLIN, 0), -EINVAL);
	assert_int_equal(
	    ctl(ep, EPOLL_CTL_ADD, 3, p.rd, EPOLLIN | EPOLLEXCLUSIVE | EPOLLONESHOT, 0), -EINVAL);
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 5, ep2, EPOLLIN | EPOLLEXCLUSIVE, 0), -EINVAL);
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 3, p.rd, EPOLLIN | EPOLLEXCLUSIVE | EPOLLET, 0), 0);
	assert_int_equal(ctl(ep, EPOLL_CTL_MOD, 3, p.rd, EPOLLIN | EPOLLEXCLUSIVE, 0), -EINVAL);
	/* An item added with EPOLLEXCLUSIVE cannot be modified at all. */
	assert_int_equal(ctl(ep, EPOLL_CTL_MOD, 3, p.rd, EPOLLIN, 0), -EINVAL);
	/* EPOLLEXCLUSIVE is checked before the item is looked up. */
	assert_int_equal(ctl(ep, EPOLL_CTL_MOD, 9, p.rd, EPOLLIN | EPOLLEXCLUSIVE, 0), -EINVAL);
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 4, p.wr, EPOLLOUT | EPOLLWAKEUP, 0), 0);
	assert_int_equal(vfs_epoll_ctl(ep, EPOLL_CTL_ADD, 6, p.wr, NULL), -EFAULT);
	pipe_put(p);
	vfs_file_put(ep2);
	vfs_file_put(ep);
}

static int no_poll_getattr(struct vfs_file *f, struct stat *st)
{
	(void)f;
	*st = (struct stat){.st_mode = S_IFREG | 0644};
	return 0;
}

static void test_files_that_cannot_be_polled_fail_with_eperm_before_anything_else(void **state)
{
	static const struct vfs_file_ops reg_ops = {.getattr = no_poll_getattr};
	struct vfs_file reg = {.ops = &reg_ops, .refs = 1};
	struct vfs_file *ep = ep_new(), *host;
	char path[] = "/tmp/test_vfs_epoll.XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 3, &reg, EPOLLIN, 0), -EPERM);
	assert_int_equal(ctl(&reg, EPOLL_CTL_ADD, 3, &reg, EPOLLIN, 0), -EPERM);
	/* A host descriptor on a regular file is refused as Linux refuses it. */
	host = vfs_file_host_fd(fd, O_RDWR, true);
	assert_non_null(host);
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 0, host, EPOLLIN, 0), -EPERM);
	vfs_file_put(host);
	vfs_file_put(ep);
}

static void test_adding_an_epoll_that_would_close_a_cycle_fails_with_eloop(void **state)
{
	struct vfs_file *a = ep_new(), *b = ep_new(), *c = ep_new();

	(void)state;
	assert_int_equal(ctl(a, EPOLL_CTL_ADD, 1, b, EPOLLIN, 0), 0);
	assert_int_equal(ctl(b, EPOLL_CTL_ADD, 2, c, EPOLLIN, 0), 0);
	assert_int_equal(ctl(c, EPOLL_CTL_ADD, 3, a, EPOLLIN, 0), -ELOOP);
	assert_int_equal(ctl(b, EPOLL_CTL_ADD, 3, a, EPOLLIN, 0), -ELOOP);
	/* ELOOP comes before EEXIST, as in Linux. */
	assert_int_equal(ctl(a, EPOLL_CTL_ADD, 1, b, EPOLLIN, 0), -EEXIST);
	assert_int_equal(ctl(a, EPOLL_CTL_ADD, 2, c, EPOLLIN, 0), 0); /* a diamond, no cycle */
	vfs_file_put(a);
	vfs_file_put(b);
	vfs_file_put(c);
}

static void test_a_chain_of_more_than_five_epolls_fails_with_eloop(void **state)
{
	struct vfs_file *e[7];

	(void)state;
	for (int i = 0; i < 7; i++)
		e[i] = ep_new();
	/* e0 in e1 in ... in e4: four levels of nesting are allowed. */
	for (int i = 0; i < 4; i++)
		assert_int_equal(ctl(e[i + 1], EPOLL_CTL_ADD, i, e[i], EPOLLIN, 0), 0);
	assert_int_equal(ctl(e[5], EPOLL_CTL_ADD, 4, e[4], EPOLLIN, 0), -ELOOP);
	/* Measured upwards too: e5 inside e6 cannot take e4's chain either. */
	assert_int_equal(ctl(e[6], EPOLL_CTL_ADD, 5, e[5], EPOLLIN, 0), 0);
	assert_int_equal(ctl(e[5], EPOLL_CTL_ADD, 3, e[3], EPOLLIN, 0), -ELOOP);
	assert_int_equal(ctl(e[5], EPOLL_CTL_ADD, 2, e[2], EPOLLIN, 0), 0);
	for (int i = 0; i < 7; i++)
		vfs_file_put(e[i]);
}

static void test_epoll_is_pollable_and_its_queue_fires_when_a_pipe_gets_data(void **state)
{
	struct vfs_file *ep = ep_new();
	struct pipe_pair p = pipe_new();
	struct wake_count c = {0};
	struct waitq *wq = NULL;

	(void)state;
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 3, p.rd, EPOLLIN, 0), 0);
	assert_int_equal(poll_now(ep, &wq), 0);
	assert_non_null(wq);
	waitq_add(wq, &c.w, count_wake, POLLIN);
	put_bytes(p.wr, 1);
	assert_int_equal(c.calls, 1);
	assert_int_equal(poll_now(ep, NULL), POLLIN | POLLRDNORM);
	take_bytes(p.rd, 1); /* wakes POLLOUT: not of interest, no wake-up */
	assert_int_equal(c.calls, 1);
	assert_int_equal(poll_now(ep, NULL), 0);
	waitq_remove(&c.w);
	pipe_put(p);
	vfs_file_put(ep);
}

static void test_adding_a_ready_target_wakes_the_epoll_queue(void **state)
{
	struct vfs_file *ep = ep_new(), *efd;
	struct wake_count c = {0};
	struct waitq *wq = NULL;

	(void)state;
	assert_int_equal(vfs_eventfd_new(1, 0, &efd), 0);
	poll_now(ep, &wq);
	waitq_add(wq, &c.w, count_wake, 0);
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 3, efd, EPOLLIN, 0), 0);
	assert_int_equal(c.calls, 1);
	waitq_remove(&c.w);
	vfs_file_put(efd);
	vfs_file_put(ep);
}

static void test_nested_epoll_reports_and_wakes_for_the_inner_items(void **state)
{
	struct vfs_file *outer = ep_new(), *inner = ep_new();
	struct pipe_pair p = pipe_new();
	struct epoll_event out[4];
	struct wake_count c = {0};
	struct waitq *wq;

	(void)state;
	assert_int_equal(ctl(inner, EPOLL_CTL_ADD, 3, p.rd, EPOLLIN, 33), 0);
	assert_int_equal(ctl(outer, EPOLL_CTL_ADD, 5, inner, EPOLLIN, 55), 0);
	poll_now(outer, &wq);
	waitq_add(wq, &c.w, count_wake, 0);
	assert_int_equal(wait_now(outer, out, 4), 0);
	put_bytes(p.wr, 1);
	assert_int_equal(c.calls, 1);
	assert_int_equal(wait_now(outer, out, 4), 1);
	assert_int_equal(out[0].events, EPOLLIN);
	assert_int_equal(out[0].data.u64, 55);
	assert_int_equal(wait_now(inner, out, 4), 1);
	assert_int_equal(out[0].data.u64, 33);
	/* The inner epoll closing takes the outer item with it. */
	vfs_file_put(inner);
	assert_int_equal(wait_now(outer, out, 4), 0);
	put_bytes(p.wr, 1);
	assert_int_equal(c.calls, 1);
	waitq_remove(&c.w);
	pipe_put(p);
	vfs_file_put(outer);
}

static void test_closing_a_watched_pipe_end_removes_its_items(void **state)
{
	struct vfs_file *ep1 = ep_new(), *ep2 = ep_new();
	struct pipe_pair p = pipe_new();
	struct epoll_event out[4];

	(void)state;
	assert_int_equal(ctl(ep1, EPOLL_CTL_ADD, 3, p.rd, EPOLLIN, 0), 0);
	assert_int_equal(ctl(ep1, EPOLL_CTL_ADD, 4, p.wr, EPOLLOUT, 0), 0);
	assert_int_equal(ctl(ep2, EPOLL_CTL_ADD, 3, p.rd, EPOLLIN, 0), 0);
	vfs_file_get(p.rd); /* a second descriptor: closing one keeps the items */
	vfs_file_put(p.rd);
	put_bytes(p.wr, 1);
	assert_int_equal(wait_now(ep2, out, 4), 1);
	vfs_file_put(p.rd); /* the last reference: gone from both epolls */
	assert_int_equal(wait_now(ep2, out, 4), 0);
	assert_int_equal(wait_now(ep1, out, 4), 1);
	assert_int_equal(out[0].events, EPOLLOUT | EPOLLERR); /* no reader left */
	assert_int_equal(ctl(ep1, EPOLL_CTL_ADD, 4, p.wr, EPOLLOUT, 0), -EEXIST);
	vfs_file_put(p.wr);
	assert_int_equal(wait_now(ep1, out, 4), 0);
	vfs_file_put(ep1);
	vfs_file_put(ep2);
}

static void test_closing_the_epoll_first_unhooks_it_from_its_targets(void **state)
{
	struct vfs_file *ep = ep_new(), *outer = ep_new();
	struct pipe_pair p = pipe_new();
	struct wake_count c = {0};
	struct waitq *wq;

	(void)state;
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 3, p.rd, EPOLLIN, 0), 0);
	assert_int_equal(ctl(outer, EPOLL_CTL_ADD, 5, ep, EPOLLIN, 0), 0);
	poll_now(ep, &wq);
	waitq_add(wq, &c.w, count_wake, 0); /* a task still blocked on it */
	vfs_file_put(ep);
	assert_null(c.w.q);
	assert_int_equal(c.calls, 1); /* woken once: its retry finds the descriptor gone */
	put_bytes(p.wr, 1);	      /* must not reach the freed epoll */
	vfs_file_put(p.wr);	      /* nor the release's wake-up */
	assert_int_equal(c.calls, 1);
	vfs_file_put(p.rd);
	vfs_file_put(outer);
}

static void test_maxevents_limits_the_report_and_the_rest_come_first_next_time(void **state)
{
	struct vfs_file *ep = ep_new(), *efd[3];
	struct epoll_event out[3];

	(void)state;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(vfs_eventfd_new(1, 0, &efd[i]), 0);
		assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 10 + i, efd[i], EPOLLIN, i), 0);
	}
	assert_int_equal(wait_now(ep, out, 2), 2);
	assert_int_equal(out[0].data.u64 + out[1].data.u64, 0 + 1);
	assert_int_equal(wait_now(ep, out, 2), 2);
	assert_int_equal(out[0].data.u64, 2);
	assert_int_equal(wait_now(ep, out, 3), 3);
	assert_int_equal(wait_now(ep, out, 0), -EINVAL);
	for (int i = 0; i < 3; i++)
		vfs_file_put(efd[i]);
	vfs_file_put(ep);
}

static void test_epollhup_is_reported_when_the_writer_closes(void **state)
{
	struct vfs_file *ep = ep_new();
	struct pipe_pair p = pipe_new();
	struct epoll_event out[4];
	struct wake_count c = {0};
	struct waitq *wq;

	(void)state;
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 3, p.rd, EPOLLIN | EPOLLET, 0), 0);
	poll_now(ep, &wq);
	waitq_add(wq, &c.w, count_wake, 0);
	vfs_file_put(p.wr);
	assert_int_equal(c.calls, 1);
	assert_int_equal(wait_now(ep, out, 4), 1);
	assert_int_equal(out[0].events, EPOLLHUP); /* always reported, though not asked for */
	waitq_remove(&c.w);
	vfs_file_put(p.rd);
	vfs_file_put(ep);
}

static void test_eventfd_items_follow_the_counter(void **state)
{
	struct vfs_file *ep = ep_new(), *efd;
	struct epoll_event out[2];
	uint64_t v = 3;
	struct iovec iov = {&v, sizeof(v)};

	(void)state;
	assert_int_equal(vfs_eventfd_new(0, 0, &efd), 0);
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 3, efd, EPOLLIN | EPOLLOUT, 0), 0);
	assert_int_equal(wait_now(ep, out, 2), 1);
	assert_int_equal(out[0].events, EPOLLOUT);
	assert_int_equal(efd->ops->write(efd, &iov, 1, NULL), 8);
	assert_int_equal(wait_now(ep, out, 2), 1);
	assert_int_equal(out[0].events, EPOLLIN | EPOLLOUT);
	vfs_file_put(efd);
	vfs_file_put(ep);
}

static void test_host_descriptor_items_are_polled_and_listed_for_the_caller(void **state)
{
	struct vfs_file *ep = ep_new(), *inner = ep_new(), *in, *in2;
	struct epoll_event out[2];
	int p[2], fds[4];
	uint32_t evs[4];

	(void)state;
	assert_int_equal(pipe(p), 0);
	in = vfs_file_host_fd(p[0], O_RDONLY, true);
	in2 = vfs_file_host_fd(p[0], O_RDONLY, false);
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 0, in, EPOLLIN, 1), 0);
	assert_int_equal(ctl(inner, EPOLL_CTL_ADD, 0, in2, EPOLLIN | EPOLLPRI, 2), 0);
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 7, inner, EPOLLIN, 3), 0);
	/* One entry per descriptor, nested epolls' too, with everything they wait for. */
	assert_int_equal(vfs_epoll_host_fds(ep, fds, evs, 4), 1);
	assert_int_equal(fds[0], p[0]);
	assert_int_equal(evs[0], EPOLLIN | EPOLLPRI | EPOLLHUP | EPOLLERR);
	/* Without room, a bound to size the next call by. */
	int n = vfs_epoll_host_fds(ep, fds, evs, 0);
	assert_true(n >= 1 && n <= 4);
	assert_int_equal(vfs_epoll_host_fds(ep, fds, evs, n), 1);
	assert_int_equal(wait_now(ep, out, 2), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(wait_now(ep, out, 2), 2);
	close(p[1]);
	assert_int_equal(wait_now(inner, out, 2), 1);
	assert_int_equal(out[0].events, EPOLLIN | EPOLLHUP);
	vfs_file_put(in2);
	vfs_file_put(in);
	vfs_file_put(inner);
	vfs_file_put(ep);
}

static void test_edge_triggered_host_items_report_new_readiness_once(void **state)
{
	struct vfs_file *ep = ep_new(), *in;
	struct epoll_event out[2];
	int p[2], fds[2];
	uint32_t evs[2];
	char c;

	(void)state;
	assert_int_equal(pipe(p), 0);
	in = vfs_file_host_fd(p[0], O_RDONLY, true);
	assert_int_equal(ctl(ep, EPOLL_CTL_ADD, 0, in, EPOLLIN | EPOLLET, 1), 0);
	assert_int_equal(wait_now(ep, out, 2), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(wait_now(ep, out, 2), 1);
	assert_int_equal(wait_now(ep, out, 2), 0);
	/* Reported and still ready: watching it would only wake the caller for nothing. */
	assert_int_equal(vfs_epoll_host_fds(ep, fds, evs, 2), 1);
	assert_int_equal(evs[0], EPOLLHUP | EPOLLERR);
	assert_int_equal(read(p[0], &c, 1), 1);
	assert_int_equal(wait_now(ep, out, 2), 0);
	assert_int_equal(vfs_epoll_host_fds(ep, fds, evs, 2), 1);
	assert_int_equal(evs[0], EPOLLIN | EPOLLHUP | EPOLLERR);
	assert_int_equal(write(p[1], "y", 1), 1);
	assert_int_equal(wait_now(ep, out, 2), 1);
	/* A disabled EPOLLONESHOT item is not listed at all. */
	assert_int_equal(ctl(ep, EPOLL_CTL_MOD, 0, in, EPOLLIN | EPOLLONESHOT, 1), 0);
	assert_int_equal(wait_now(ep, out, 2), 1);
	assert_int_equal(vfs_epoll_host_fds(ep, fds, evs, 2), 0);
	close(p[1]);
	vfs_file_put(in);
	vfs_file_put(ep);
}

static void test_host_fd_poll_reports_the_host_readiness_without_a_queue(void **state)
{
	struct vfs_file *in;
	struct waitq *wq = (struct waitq *)&wq;
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	in = vfs_file_host_fd(p[0], O_RDONLY, true);
	assert_int_equal(poll_now(in, &wq) & (POLLIN | POLLHUP), 0);
	assert_null(wq);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_true(poll_now(in, NULL) & POLLIN);
	close(p[1]);
	assert_true(poll_now(in, NULL) & POLLHUP);
	vfs_file_put(in);
}

static void test_epoll_files_are_anonymous_inodes_with_checked_flags(void **state)
{
	struct vfs_file *ep = NULL, *efd;
	struct stat st;
	struct epoll_event out[1];

	(void)state;
	assert_int_equal(vfs_epoll_new(0x1, &ep), -EINVAL);
	assert_null(ep);
	assert_int_equal(vfs_epoll_new(EPOLL_CLOEXEC, &ep), 0);
	assert_int_equal(ep->flags, O_RDWR);
	assert_true(vfs_is_epoll(ep));
	assert_int_equal(ep->ops->getattr(ep, &st), 0);
	assert_int_equal(st.st_mode, S_IRUSR | S_IWUSR);
	assert_int_equal(st.st_ino, VFS_ANON_INODE_INO);
	assert_int_equal(vfs_eventfd_new(0, 0, &efd), 0);
	assert_false(vfs_is_epoll(efd));
	assert_int_equal(vfs_epoll_wait(efd, out, 1), -EINVAL);
	assert_int_equal(vfs_epoll_host_fds(efd, NULL, NULL, 0), -EINVAL);
	vfs_file_put(efd);
	vfs_file_put(ep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_level_triggered_item_is_reported_while_the_pipe_has_data),
	    cmocka_unit_test(test_edge_triggered_item_is_reported_once_until_new_data_arrives),
	    cmocka_unit_test(test_edge_that_finds_the_data_gone_is_not_reported),
	    cmocka_unit_test(test_edge_triggered_pollout_fires_again_when_a_read_makes_room),
	    cmocka_unit_test(test_oneshot_item_is_disabled_after_one_report_until_mod_rearms_it),
	    cmocka_unit_test(test_mod_changes_the_interest_and_the_data),
	    cmocka_unit_test(test_del_removes_the_item_and_its_wakeups),
	    cmocka_unit_test(test_items_are_keyed_by_descriptor_and_file),
	    cmocka_unit_test(test_ctl_misuse_fails_with_einval),
	    cmocka_unit_test(test_files_that_cannot_be_polled_fail_with_eperm_before_anything_else),
	    cmocka_unit_test(test_adding_an_epoll_that_would_close_a_cycle_fails_with_eloop),
	    cmocka_unit_test(test_a_chain_of_more_than_five_epolls_fails_with_eloop),
	    cmocka_unit_test(test_epoll_is_pollable_and_its_queue_fires_when_a_pipe_gets_data),
	    cmocka_unit_test(test_adding_a_ready_target_wakes_the_epoll_queue),
	    cmocka_unit_test(test_nested_epoll_reports_and_wakes_for_the_inner_items),
	    cmocka_unit_test(test_closing_a_watched_pipe_end_removes_its_items),
	    cmocka_unit_test(test_closing_the_epoll_first_unhooks_it_from_its_targets),
	    cmocka_unit_test(test_maxevents_limits_the_report_and_the_rest_come_first_next_time),
	    cmocka_unit_test(test_epollhup_is_reported_when_the_writer_closes),
	    cmocka_unit_test(test_eventfd_items_follow_the_counter),
	    cmocka_unit_test(test_host_descriptor_items_are_polled_and_listed_for_the_caller),
	    cmocka_unit_test(test_edge_triggered_host_items_report_new_readiness_once),
	    cmocka_unit_test(test_host_fd_poll_reports_the_host_readiness_without_a_queue),
	    cmocka_unit_test(test_epoll_files_are_anonymous_inodes_with_checked_flags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
