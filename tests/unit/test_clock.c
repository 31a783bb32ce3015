/* Unit tests for the guests' clocks (sentry/clock.c) against a simulated host: a TSC that
 * ticks at 2.5 GHz and host clocks whose rate, wall offset and read jitter the tests set. The
 * guest's clocks start as the host's, take the TSC once its rate is known, never step back
 * while the host's clock changes pace or the lines are re-drawn, stay within microseconds of
 * the host's, follow a step of its wall clock, go on from a restore's time, and fall back to
 * the host's clocks without stepping back when the TSC goes backwards. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "sentry/clock.h"
#include "vdso/vclock.h"

#define NS_PER_S 1000000000LL
#define MS 1000000LL
#define US 1000LL

/* The simulated host: every TSC read takes READ_CYCLES, every clock read HOST_CYCLES, and the
 * host's clocks advance by MONO_RATE (raw: RAW_RATE) ns per cycle. */
static struct sim {
	uint64_t tsc;
	double mono, raw; /* the host's clocks at TSC */
	double mono_rate, raw_rate;
	int64_t wall, boot; /* realtime and boottime minus monotonic */
	int64_t jitter;	    /* a clock read may take this much longer (preemption) */
	uint64_t seed;
	int64_t off; /* guest monotonic minus the host's that the tests expect */
} h;

static void advance(uint64_t cycles)
{
	h.tsc += cycles;
	h.mono += cycles * h.mono_rate;
	h.raw += cycles * h.raw_rate;
}

static uint64_t fake_tsc(void)
{
	advance(30);
	return h.tsc;
}

static uint64_t delay(void)
{
	h.seed = h.seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return h.jitter ? (h.seed >> 33) % (uint64_t)(h.jitter / 0.4) : 0;
}

static int fake_host(clockid_t clk, struct timespec *ts)
{
	int64_t ns;

	advance(60 + delay());
	switch (clk) {
	case CLOCK_MONOTONIC:
		ns = (int64_t)h.mono;
		break;
	case CLOCK_MONOTONIC_RAW:
		ns = (int64_t)h.raw;
		break;
	case CLOCK_MONOTONIC_COARSE:
		ns = (int64_t)h.mono / (4 * MS) * (4 * MS);
		break;
	case CLOCK_REALTIME:
		ns = (int64_t)h.mono + h.wall;
		break;
	case CLOCK_REALTIME_COARSE:
		ns = ((int64_t)h.mono + h.wall) / (4 * MS) * (4 * MS);
		break;
	case CLOCK_BOOTTIME:
		ns = (int64_t)h.mono + h.boot;
		break;
	case CLOCK_TAI:
		ns = (int64_t)h.mono + h.wall + 37 * NS_PER_S;
		break;
	default:
		return -1;
	}
	ts->tv_sec = ns / NS_PER_S;
	ts->tv_nsec = ns % NS_PER_S;
	return 0;
}

static struct vclock_page page;

static int64_t guest(clockid_t clk)
{
	struct timespec ts;

	assert_int_equal(clock_now(clk, &ts), 0);
	return ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static int64_t host(clockid_t clk)
{
	struct timespec ts;

	fake_host(clk, &ts);
	return ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static int setup(void **state)
{
	(void)state;
	h = (struct sim){0};
	return 0;
}

static void start(bool usable)
{
	const struct clock_source src = {fake_tsc, fake_host, usable};

	h.tsc = 1000000;
	h.mono = 5 * NS_PER_S;
	h.raw = 5 * NS_PER_S;
	h.mono_rate = h.raw_rate = 0.4; /* 2.5 GHz */
	h.wall = 1700000000 * NS_PER_S;
	h.boot = 3 * NS_PER_S;
	h.jitter = 0;
	h.seed = 1;
	clock_set_source(&src);
	clock_init(&page);
}

/* Runs the simulated host for NS, the Sentry ticking every TICK and the guest reading its
 * monotonic and realtime clocks every READ: they never step back; returns the largest
 * distance of the guest's monotonic clock to the host's seen in the last second. */
static int64_t run(int64_t ns, int64_t tick, int64_t read)
{
	int64_t end = (int64_t)h.mono + ns, next_tick = (int64_t)h.mono, worst = 0;
	int64_t last_m = guest(CLOCK_MONOTONIC), last_r = guest(CLOCK_REALTIME);

	while ((int64_t)h.mono < end) {
		advance((uint64_t)(read / 0.4));
		if ((int64_t)h.mono >= next_tick) {
			/* Reads right before and after a re-draw are the likeliest to step back. */
			int64_t m = guest(CLOCK_MONOTONIC), r = guest(CLOCK_REALTIME);
			assert_true(m >= last_m);
			assert_true(r >= last_r);
			last_m = m;
			last_r = r;
			clock_tick();
			next_tick += tick;
		}
		int64_t m = guest(CLOCK_MONOTONIC), r = guest(CLOCK_REALTIME);
		assert_true(m >= last_m);
		assert_true(r >= last_r);
		last_m = m;
		last_r = r;
		int64_t d = llabs(m - host(CLOCK_MONOTONIC) - h.off);
		if ((int64_t)h.mono > end - NS_PER_S && d > worst)
			worst = d;
	}
	return worst;
}

static void test_clocks_are_the_hosts_until_the_tsc_rate_is_known(void **state)
{
	(void)state;
	start(true);
	assert_int_equal(page.mode, VCLOCK_MODE_SYSCALL);
	advance(1000); /* well under a millisecond */
	clock_tick();
	assert_int_equal(page.mode, VCLOCK_MODE_SYSCALL);
	int64_t g = guest(CLOCK_MONOTONIC);
	assert_true(g >= 5 * NS_PER_S && g - host(CLOCK_MONOTONIC) <= 0);
	advance(3 * MS * 5 / 2); /* 3 ms */
	clock_tick();
	assert_int_equal(page.mode, VCLOCK_MODE_TSC);
}

static void test_an_unusable_tsc_leaves_every_read_to_the_host(void **state)
{
	(void)state;
	start(false);
	run(NS_PER_S, 5 * MS, 100 * US);
	assert_int_equal(page.mode, VCLOCK_MODE_SYSCALL);
	assert_true(llabs(guest(CLOCK_REALTIME) - host(CLOCK_REALTIME)) < 1 * US);
}

static void test_tsc_clocks_stay_within_a_microsecond_of_the_hosts(void **state)
{
	(void)state;
	start(true);
	int64_t worst = run(5 * NS_PER_S, 5 * MS, 50 * US);
	assert_int_equal(page.mode, VCLOCK_MODE_TSC);
	assert_true(worst < 1 * US);
	assert_true(llabs(guest(CLOCK_REALTIME) - host(CLOCK_REALTIME)) < 1 * US);
	assert_true(llabs(guest(CLOCK_BOOTTIME) - host(CLOCK_BOOTTIME)) < 1 * US);
	assert_true(llabs(guest(CLOCK_TAI) - host(CLOCK_TAI)) < 1 * US);
	assert_true(llabs(guest(CLOCK_MONOTONIC_RAW) - host(CLOCK_MONOTONIC_RAW)) < 1 * US);
}

/* The host's clock is slewed (NTP): 200 ppm fast for ten seconds, then 300 ppm slow. */
static void test_time_never_steps_back_while_the_hosts_clock_changes_pace(void **state)
{
	(void)state;
	start(true);
	run(2 * NS_PER_S, 100 * MS, 200 * US);
	h.mono_rate = 0.4 * (1 + 200e-6);
	run(10 * NS_PER_S, 100 * MS, 200 * US);
	h.mono_rate = 0.4 * (1 - 300e-6);
	int64_t worst = run(10 * NS_PER_S, 100 * MS, 200 * US);
	/* Back within a few microseconds once the rate window has caught up. */
	assert_true(worst < 5 * US);
}

/* The host's clock reads take up to 2 us longer now and then, so measures of its wall clock's
 * offset differ by that much: the guest's realtime must not step back for it; a true step of
 * the host's wall clock, a second back, reaches it at the next re-draw. */
static void test_realtime_follows_host_steps_but_not_read_jitter(void **state)
{
	(void)state;
	start(true);
	h.jitter = 2 * US;
	run(3 * NS_PER_S, 5 * MS, 20 * US);
	h.jitter = 0;
	int64_t before = guest(CLOCK_REALTIME);
	h.wall -= NS_PER_S;
	advance(300 * MS * 5 / 2);
	clock_tick();
	int64_t after = guest(CLOCK_REALTIME);
	assert_true(after < before - NS_PER_S / 2);
	assert_true(llabs(after - host(CLOCK_REALTIME)) < 10 * US);
}

static void test_coarse_clocks_step_by_the_tick_and_never_pass_fine_ones(void **state)
{
	(void)state;
	start(true);
	run(NS_PER_S, 5 * MS, 100 * US);
	int64_t res = (int64_t)page.coarse_res;
	assert_true(res > 1);
	for (int i = 0; i < 1000; i++) {
		int64_t c = guest(CLOCK_MONOTONIC_COARSE), f = guest(CLOCK_MONOTONIC);
		assert_true(c <= f && f - c < res);
		assert_int_equal(c % res, 0);
		int64_t rc = guest(CLOCK_REALTIME_COARSE), rf = guest(CLOCK_REALTIME);
		assert_true(rc <= rf && rf - rc < res + 1 * US);
		advance(777777);
	}
}

/* A restore: the guest's monotonic time goes on from the checkpoint's, whatever the new
 * host's clock says, and keeps going after the lines are drawn again. */
static void test_a_restore_goes_on_from_the_saved_time(void **state)
{
	(void)state;
	start(true);
	run(NS_PER_S, 5 * MS, 100 * US);
	h.off = 1234 * NS_PER_S - host(CLOCK_MONOTONIC);
	mono_continue_from((struct timespec){1234, 0});
	int64_t g = guest(CLOCK_MONOTONIC);
	assert_true(g >= 1234 * NS_PER_S && g < 1234 * NS_PER_S + 10 * US);
	assert_true(run(2 * NS_PER_S, 5 * MS, 100 * US) < 1 * US);
	assert_int_equal(page.mode, VCLOCK_MODE_TSC);
	assert_true(llabs(clock_host_offset() - h.off) < 1 * US);
	assert_true(llabs(guest(CLOCK_REALTIME) - host(CLOCK_REALTIME)) < 1 * US);
	assert_true(llabs(guest(CLOCK_BOOTTIME) - host(CLOCK_BOOTTIME) - h.off) < 1 * US);
}

/* The TSC starts again from a small value (a host suspend): the clocks go back to the host's,
 * with an offset that keeps them from stepping back, and take the TSC again later. */
static void test_a_tsc_going_backwards_falls_back_without_stepping_back(void **state)
{
	(void)state;
	start(true);
	run(NS_PER_S, 5 * MS, 100 * US);
	int64_t before = guest(CLOCK_MONOTONIC);
	h.tsc = 5000;
	clock_tick();
	assert_int_equal(page.mode, VCLOCK_MODE_SYSCALL);
	assert_true(guest(CLOCK_MONOTONIC) >= before);
	run(NS_PER_S, 5 * MS, 100 * US);
	assert_int_equal(page.mode, VCLOCK_MODE_TSC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_clocks_are_the_hosts_until_the_tsc_rate_is_known, setup),
	    cmocka_unit_test_setup(test_an_unusable_tsc_leaves_every_read_to_the_host, setup),
	    cmocka_unit_test_setup(test_tsc_clocks_stay_within_a_microsecond_of_the_hosts, setup),
	    cmocka_unit_test_setup(test_time_never_steps_back_while_the_hosts_clock_changes_pace,
				   setup),
	    cmocka_unit_test_setup(test_realtime_follows_host_steps_but_not_read_jitter, setup),
	    cmocka_unit_test_setup(test_coarse_clocks_step_by_the_tick_and_never_pass_fine_ones,
				   setup),
	    cmocka_unit_test_setup(test_a_restore_goes_on_from_the_saved_time, setup),
	    cmocka_unit_test_setup(test_a_tsc_going_backwards_falls_back_without_stepping_back,
				   setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
