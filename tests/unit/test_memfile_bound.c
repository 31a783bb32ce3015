/* Unit tests for the bounded memory file (--memory): the host refuses a page past the bound,
 * memfile_guard turns that into a call of the full hook (the OOM killer) and one retry, or
 * -ENOMEM; outside a guard a page with no room is kept aside until memfile_settle, and past
 * what that holds the fault stays fatal. Needs the privilege to make a tmpfs (root, or
 * a mount namespace of one's own); skipped otherwise. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mem/memfile.h"

#define MIB (1ULL << 20)

static int64_t area;
static int hook_calls;
static bool hook_frees;

static bool hook(void)
{
	hook_calls++;
	if (hook_frees)
		memfile_zero(area, 8 * MIB); /* the victim's memory, reaped */
	return hook_frees;
}

struct fill {
	uint64_t off, len;
};

static void fill(void *arg)
{
	struct fill *f = arg;

	memset(memfile_ptr(f->off), 0x5a, f->len);
}

/* In the test, not a setup: cmocka installs its own SIGBUS handler around each test, and the
 * memory file's must be the one in place. */
static void test_pages_past_the_bound_go_through_the_oom_hook_guarded_or_not(void **state)
{
	(void)state;
	if (memfile_init_bounded(16 * MIB))
		skip();
	memfile_set_full_hook(hook);
	area = memfile_alloc(64 * MIB);
	assert_true(area >= 0);
	struct fill a = {area, 8 * MIB}, b = {area + 8 * MIB, 12 * MIB};
	assert_int_equal(memfile_guard(fill, &a), 0);
	assert_int_equal(hook_calls, 0);
	assert_true(memfile_used() >= 8 * MIB && memfile_used() <= 16 * MIB);
	/* 8 + 12 > 16: the hook frees the first 8 and the copy runs again, whole. */
	hook_frees = true;
	assert_int_equal(memfile_guard(fill, &b), 0);
	assert_int_equal(hook_calls, 1);
	assert_int_equal(*(unsigned char *)memfile_ptr(area + 20 * MIB - 1), 0x5a);
	/* Nothing to free: one try of the hook, then -ENOMEM. */
	hook_frees = false;
	hook_calls = 0;
	struct fill c = {area + 20 * MIB, 32 * MIB};
	assert_int_equal(memfile_guard(fill, &c), -ENOMEM);
	assert_int_equal(hook_calls, 1);
	assert_true(memfile_used() <= 16 * MIB);
	memfile_zero(area, 64 * MIB);
	assert_true(memfile_used() < MIB);

	/* Outside a guard, a page with no room is the Sentry's alone until memfile_settle puts
	 * it in the file, the hook making room. */
	memset(memfile_ptr(area), 1, 12 * MIB);
	hook_calls = 0;
	hook_frees = true;
	memset(memfile_ptr(area + 12 * MIB), 2, 4 * MIB + 512 * 1024); /* 128 pages too many */
	assert_int_equal(hook_calls, 0);
	assert_int_equal(memfile_settle(), 0);
	assert_true(hook_calls >= 1);
	assert_int_equal(*(unsigned char *)memfile_ptr(area + 16 * MIB + 512 * 1024 - 1), 2);
	assert_int_equal(memfile_settle(), 0); /* nothing left to do */
	memfile_zero(area, 64 * MIB);
	/* The net holds all one syscall may write (MAX_RW_COUNT): twice the bound written at
	 * once outside a guard is held, not fatal (it killed the Sentry with room for 256
	 * pages: a guest's 100 MiB read of /dev/zero past a 64 MiB bound). */
	pid_t pid = fork();
	if (pid == 0) {
		memset(memfile_ptr(area), 1, 32 * MIB);
		_exit(*(unsigned char *)memfile_ptr(area + 32 * MIB - 1) == 1 ? 0 : 1);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	memfile_zero(area, 64 * MIB);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pages_past_the_bound_go_through_the_oom_hook_guarded_or_not),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
