/* Unit tests for changing the bound of the memory file while it is in use (the OCI runtime's
 * `update --memory`): the reconfiguration context made with the bounded file resizes its
 * tmpfs, the new bound is read back, pages past the old bound then fit, and a size below what
 * the file holds is refused by the host. Needs the privilege to make a tmpfs (root, or a mount
 * namespace of one's own); skipped otherwise. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#include "mem/memfile.h"

#define MIB (1ULL << 20)

static int64_t area;

static bool no_room(void)
{
	return false;
}

static void fill(void *arg)
{
	uint64_t *len = arg;

	memset(memfile_ptr(area), 0x5a, *len);
}

static int set_size(uint64_t bytes)
{
	char size[32];
	int fd = memfile_reconf_fd();

	snprintf(size, sizeof(size), "%llu", (unsigned long long)bytes);
	if (fsconfig(fd, FSCONFIG_SET_STRING, "size", size, 0) ||
	    fsconfig(fd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0))
		return -errno;
	return 0;
}

static void test_the_bound_grows_and_shrinks_while_the_file_is_in_use(void **state)
{
	uint64_t len = 24 * MIB;

	(void)state;
	if (memfile_init_bounded(16 * MIB))
		skip();
	memfile_set_full_hook(no_room);
	assert_true(memfile_reconf_fd() >= 0);
	area = memfile_alloc(64 * MIB);
	assert_true(area >= 0);
	/* 24 MiB do not fit in 16 ... */
	assert_int_equal(memfile_guard(fill, &len), -ENOMEM);
	/* ... and do in 32, once the bound is read back. */
	assert_int_equal(set_size(32 * MIB), 0);
	assert_int_equal(memfile_limit_reread(), 32 * MIB);
	assert_int_equal(memfile_limit(), 32 * MIB);
	assert_int_equal(memfile_guard(fill, &len), 0);
	assert_true(memfile_used() >= 24 * MIB);
	/* Down to 28 MiB, still above what the file holds. */
	assert_int_equal(set_size(28 * MIB), 0);
	assert_int_equal(memfile_limit_reread(), 28 * MIB);
}

static void test_a_bound_below_what_the_file_holds_is_refused(void **state)
{
	(void)state;
	if (memfile_reconf_fd() < 0)
		skip();
	assert_true(memfile_used() >= 24 * MIB);
	assert_int_equal(set_size(16 * MIB), -EINVAL);
	assert_int_equal(memfile_limit_reread(), 28 * MIB);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_bound_grows_and_shrinks_while_the_file_is_in_use),
	    cmocka_unit_test(test_a_bound_below_what_the_file_holds_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
