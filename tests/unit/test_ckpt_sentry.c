/* Unit tests for the Sentry's checkpointed file state: signalfd and timerfd kinds
 * (sentry/signalfd.c, sentry/timer.c: remaining times are re-based on the restoring process's
 * clocks, absolute CLOCK_REALTIME expiries stay absolute) and file locks (sentry/locks.c).
 * Records are written by hand as an image would hold them, loaded, and saved again. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>

#include "sentry/fdtable.h"
#include "sentry/kernel.h"
#include "sentry/locks.h"
#include "sentry/signal.h"
#include "sentry/task.h"
#include "sentry/timer.h"
#include "state/codec.h"
#include "vfs/save.h"
#include "vfs/vfs.h"

/* vfs_file_save's common fields for a file outside the tree. */
static void file_header(struct enc *e, const char *kind, int flags)
{
	enc_str(e, kind);
	enc_u32(e, (uint32_t)flags);
	enc_i64(e, 0);
	enc_bool(e, false);
	enc_u64(e, 0);	    /* no dentry */
	enc_bool(e, false); /* no owner of I/O signals */
}

static struct vfs_file *load_record(const struct enc *e)
{
	struct dec d;

	dec_init(&d, e->buf, e->len, NULL);
	struct vfs_file *f = vfs_file_load(&d);
	if (f)
		assert_true(dec_at_end(&d));
	else
		assert_false(dec_ok(&d));
	dec_free(&d);
	return f;
}

/* Saves F alone; the caller frees OUT. */
static void save_record(struct vfs_file *f, struct enc *out)
{
	struct ckpt_refs *refs = ckpt_refs_new();

	enc_init(out, refs);
	assert_int_equal(vfs_file_save(out, f), 0);
	out->refs = NULL;
	ckpt_refs_free(refs);
}

static void test_signalfd_keeps_its_mask(void **state)
{
	struct enc e, again;
	uint64_t mask = (1ull << (SIGUSR1 - 1)) | (1ull << (SIGCHLD - 1));

	(void)state;
	assert_true(signalfd_register_kind() == 0 || signalfd_register_kind() == -EEXIST);
	enc_init(&e, NULL);
	file_header(&e, "signalfd", O_RDWR | O_NONBLOCK);
	enc_u64(&e, mask);
	struct vfs_file *f = load_record(&e);
	assert_non_null(f);
	assert_int_equal(f->flags, O_RDWR | O_NONBLOCK);
	save_record(f, &again);
	assert_int_equal(again.len, e.len);
	assert_memory_equal(again.buf, e.buf, e.len);
	vfs_file_put(f);
	enc_free(&again);
	enc_free(&e);

	/* SIGKILL cannot be in a signalfd's mask. */
	enc_init(&e, NULL);
	file_header(&e, "signalfd", O_RDWR);
	enc_u64(&e, 1ull << (SIGKILL - 1));
	assert_null(load_record(&e));
	enc_free(&e);
}

/* A timerfd record; VALUE is remaining time, or with ABS an absolute CLOCK_REALTIME time. */
static void timerfd_record(struct enc *e, clockid_t clk, uint64_t ticks, bool armed, bool abs,
			   struct timespec value, struct timespec interval)
{
	enc_init(e, NULL);
	file_header(e, "timerfd", O_RDWR);
	enc_u32(e, (uint32_t)clk);
	enc_u64(e, ticks);
	enc_bool(e, armed);
	if (!armed)
		return;
	enc_bool(e, abs);
	enc_i64(e, value.tv_sec);
	enc_i64(e, value.tv_nsec);
	enc_i64(e, interval.tv_sec);
	enc_i64(e, interval.tv_nsec);
}

struct timerfd_state {
	uint32_t clock;
	uint64_t ticks;
	bool armed, abs;
	struct timespec value, interval;
};

/* Saves timerfd F and decodes its record. */
static struct timerfd_state timerfd_saved(struct vfs_file *f)
{
	struct timerfd_state s = {0};
	struct enc e;
	struct dec d;
	char name[16];

	save_record(f, &e);
	dec_init(&d, e.buf, e.len, NULL);
	dec_str_buf(&d, name, sizeof(name));
	dec_u32(&d), dec_i64(&d), dec_bool(&d), dec_u64(&d), dec_bool(&d);
	s.clock = dec_u32(&d);
	s.ticks = dec_u64(&d);
	s.armed = dec_bool(&d);
	if (s.armed) {
		s.abs = dec_bool(&d);
		s.value.tv_sec = dec_i64(&d);
		s.value.tv_nsec = dec_i64(&d);
		s.interval.tv_sec = dec_i64(&d);
		s.interval.tv_nsec = dec_i64(&d);
	}
	assert_true(dec_ok(&d) && dec_at_end(&d));
	dec_free(&d);
	enc_free(&e);
	return s;
}

static void test_timerfd_relative_expiry_is_rebased_on_the_new_clock(void **state)
{
	struct enc e;
	uint64_t ticks = 0;
	struct iovec iov = {&ticks, 8};
	struct waitq *wq;

	(void)state;
	assert_true(timerfd_register_kind() == 0 || timerfd_register_kind() == -EEXIST);
	timerfd_record(&e, CLOCK_MONOTONIC, 3, true, false, (struct timespec){10, 0},
		       (struct timespec){1, 500});
	struct vfs_file *f = load_record(&e);
	enc_free(&e);
	assert_non_null(f);
	struct timerfd_state s = timerfd_saved(f);
	assert_int_equal(s.clock, CLOCK_MONOTONIC);
	assert_true(s.armed && !s.abs);
	assert_true(s.value.tv_sec == 9 || (s.value.tv_sec == 10 && s.value.tv_nsec == 0));
	assert_int_equal(s.interval.tv_sec, 1);
	assert_int_equal(s.interval.tv_nsec, 500);
	/* Expirations not yet read survive. */
	assert_int_equal(f->ops->poll(f, &wq) & POLLIN, POLLIN);
	assert_int_equal(f->ops->read(f, &iov, 1, NULL), 8);
	assert_int_equal(ticks, 3);
	vfs_file_put(f);

	/* Disarmed stays disarmed. */
	timerfd_record(&e, CLOCK_BOOTTIME, 0, false, false, (struct timespec){0, 0},
		       (struct timespec){0, 0});
	f = load_record(&e);
	enc_free(&e);
	assert_non_null(f);
	s = timerfd_saved(f);
	assert_false(s.armed);
	assert_int_equal(f->ops->poll(f, &wq) & POLLIN, 0);
	vfs_file_put(f);
}

static void test_timerfd_absolute_realtime_counts_the_periods_passed(void **state)
{
	struct enc e;
	struct timespec now;

	(void)state;
	assert_true(timerfd_register_kind() == 0 || timerfd_register_kind() == -EEXIST);
	clock_gettime(CLOCK_REALTIME, &now);
	/* Due 2.5 s ago with a 1 s period: three expirations, the next in about 0.5 s. */
	struct timespec due = {now.tv_sec - 3, now.tv_nsec};
	due.tv_nsec += 500000000;
	if (due.tv_nsec >= 1000000000) {
		due.tv_sec++;
		due.tv_nsec -= 1000000000;
	}
	timerfd_record(&e, CLOCK_REALTIME, 1, true, true, due, (struct timespec){1, 0});
	struct vfs_file *f = load_record(&e);
	enc_free(&e);
	assert_non_null(f);
	struct timerfd_state s = timerfd_saved(f);
	assert_true(s.armed && s.abs);
	assert_int_equal(s.ticks, 1 + 3);
	struct timespec next = {due.tv_sec + 3, due.tv_nsec};
	int64_t diff =
	    (s.value.tv_sec - next.tv_sec) * 1000000000LL + s.value.tv_nsec - next.tv_nsec;
	assert_true(diff > -50000000 && diff < 50000000); /* the same absolute expiry */
	vfs_file_put(f);

	/* A one-shot absolute timer that came due while no Sentry ran: one expiration. */
	timerfd_record(&e, CLOCK_REALTIME, 0, true, true, (struct timespec){now.tv_sec - 60, 0},
		       (struct timespec){0, 0});
	f = load_record(&e);
	enc_free(&e);
	assert_non_null(f);
	s = timerfd_saved(f);
	assert_false(s.armed);
	assert_int_equal(s.ticks, 1);
	vfs_file_put(f);

	/* Absolute on a clock other than CLOCK_REALTIME, bad clocks and times are refused. */
	timerfd_record(&e, CLOCK_MONOTONIC, 0, true, true, (struct timespec){5, 0},
		       (struct timespec){0, 0});
	assert_null(load_record(&e));
	enc_free(&e);
	timerfd_record(&e, 12345, 0, false, false, (struct timespec){0, 0},
		       (struct timespec){0, 0});
	assert_null(load_record(&e));
	enc_free(&e);
	timerfd_record(&e, CLOCK_MONOTONIC, 0, true, false, (struct timespec){1, 1000000000},
		       (struct timespec){0, 0});
	assert_null(load_record(&e));
	enc_free(&e);
}

/* --- locks ----------------------------------------------------------------------------------- */

static void locks_record(struct enc *e, pid_t tgid)
{
	enc_init(e, NULL);
	enc_u64(e, 2);
	enc_bool(e, true); /* POSIX, by process TGID, on file 1 */
	enc_u32(e, (uint32_t)tgid);
	enc_u64(e, 1);
	enc_u32(e, F_WRLCK);
	enc_i64(e, 0);
	enc_i64(e, 99);
	enc_bool(e, false); /* OFD, owned by file 2 */
	enc_u64(e, 2);
	enc_u32(e, F_RDLCK);
	enc_i64(e, 100);
	enc_i64(e, INT64_MAX);
	enc_u64(e, 1);
	enc_u64(e, 2); /* flock by file 2 */
	enc_bool(e, true);
}

static void test_locks_are_restored_with_their_owners(void **state)
{
	struct vfs_dentry *root;
	struct vfs_file *f1, *f2, *f3;
	struct ckpt_refs *refs = ckpt_refs_new();
	struct enc rec, again;
	struct dec d;

	(void)state;
	assert_int_equal(vfs_tmpfs_new(&root), 0);
	struct vfs_fs_ctx fs = {root, root, 022};
	assert_int_equal(vfs_open(&fs, NULL, "/locked", O_RDWR | O_CREAT, 0644, &f1), 0);
	assert_int_equal(vfs_open(&fs, NULL, "/locked", O_RDWR, 0, &f2), 0);
	assert_int_equal(vfs_open(&fs, NULL, "/locked", O_RDWR, 0, &f3), 0);
	struct task *t = task_new(7);
	assert_non_null(t);
	t->group_leader = t;
	t->files = fdtable_new();
	assert_true(fdtable_install(t->files, vfs_file_get(f1), false, 0, 100) >= 0);
	task_link(t);

	/* Loading: the files are those of the restored image. */
	assert_int_equal(ckpt_refs_put(refs, CK_FILE, 1, f1), 0);
	assert_int_equal(ckpt_refs_put(refs, CK_FILE, 2, f2), 0);
	locks_record(&rec, 7);
	dec_init(&d, rec.buf, rec.len, refs);
	assert_int_equal(locks_load(&d), 0);
	assert_true(dec_at_end(&d));
	dec_free(&d);
	ckpt_refs_free(refs);

	/* Saved again, the record is the same (file 1 is found in process 7's fd table). */
	refs = ckpt_refs_new();
	enc_init(&again, refs);
	assert_int_equal(locks_save(&again), 0);
	assert_int_equal(again.len, rec.len);
	assert_memory_equal(again.buf, rec.buf, rec.len);
	enc_free(&again);
	ckpt_refs_free(refs);

	/* The flock lock held by file 2 excludes others. */
	assert_int_equal(locks_flock(t, f3, LOCK_EX | LOCK_NB), -EWOULDBLOCK);
	locks_on_close(t, f2); /* f2's last reference: its OFD and flock locks go */
	assert_int_equal(locks_flock(t, f3, LOCK_EX | LOCK_NB), 0);
	assert_int_equal(locks_flock(t, f3, LOCK_UN), 0);
	locks_on_exit(t);
	refs = ckpt_refs_new();
	enc_init(&again, refs);
	assert_int_equal(locks_save(&again), 0);
	assert_int_equal(again.len, 16); /* no lock left */
	enc_free(&again);
	ckpt_refs_free(refs);

	/* A POSIX owner that is not a process is refused, and nothing is left behind. */
	refs = ckpt_refs_new();
	assert_int_equal(ckpt_refs_put(refs, CK_FILE, 1, f1), 0);
	assert_int_equal(ckpt_refs_put(refs, CK_FILE, 2, f2), 0);
	enc_free(&rec);
	locks_record(&rec, 99);
	dec_init(&d, rec.buf, rec.len, refs);
	assert_int_not_equal(locks_load(&d), 0);
	dec_free(&d);
	/* Every truncation is refused too. */
	enc_free(&rec);
	locks_record(&rec, 7);
	for (size_t cut = 0; cut < rec.len; cut++) {
		dec_init(&d, rec.buf, cut, refs);
		assert_int_not_equal(locks_load(&d), 0);
		dec_free(&d);
	}
	ckpt_refs_free(refs);
	refs = ckpt_refs_new();
	enc_init(&again, refs);
	assert_int_equal(locks_save(&again), 0);
	assert_int_equal(again.len, 16);
	enc_free(&again);
	ckpt_refs_free(refs);
	enc_free(&rec);

	task_unlink_free(t);
	kernel_free_dead();
	vfs_file_put(f1);
	vfs_file_put(f2);
	vfs_file_put(f3);
	vfs_dentry_put(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_signalfd_keeps_its_mask),
	    cmocka_unit_test(test_timerfd_relative_expiry_is_rebased_on_the_new_clock),
	    cmocka_unit_test(test_timerfd_absolute_realtime_counts_the_periods_passed),
	    cmocka_unit_test(test_locks_are_restored_with_their_owners),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
