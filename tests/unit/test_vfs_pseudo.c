/* Unit tests for the inodes of pipes outside the tree (vfs/pseudo.c) and the old getdents's
 * records (vfs/dirent.c): fchmod and fchown follow chmod's and chown's rules and show on both
 * ends, fstatfs names pipefs, both ends share one lock key, and a getdents64 buffer rewritten
 * as struct linux_dirent keeps lengths, names and types. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <dirent.h>

#include "vfs/dirent.h"
#include "vfs/vfs.h"

static void test_pipe_chmod_shows_on_both_ends_and_needs_the_owner(void **state)
{
	struct vfs_file *rd, *wr;
	struct vfs_cred root = {0}, user = {.uid = 1000, .gid = 1000};
	struct stat st;

	(void)state;
	assert_int_equal(vfs_pipe_new(0, &rd, &wr), 0);
	assert_int_equal(vfs_file_chmod(rd, &root, 0640), 0);
	assert_int_equal(wr->ops->getattr(wr, &st), 0);
	assert_int_equal(st.st_mode, S_IFIFO | 0640);
	assert_int_equal(vfs_file_chmod(wr, &user, 0666), -EPERM);
	assert_int_equal(vfs_file_chown(wr, &user, 1000, -1), -EPERM);
	assert_int_equal(vfs_file_chown(wr, &root, 1000, 1000), 0);
	assert_int_equal(vfs_file_chmod(wr, &user, 0604), 0);
	assert_int_equal(rd->ops->getattr(rd, &st), 0);
	assert_int_equal(st.st_mode, S_IFIFO | 0604);
	assert_int_equal(st.st_uid, 1000);
	assert_ptr_equal(vfs_file_lock_key(rd), vfs_file_lock_key(wr));
	assert_non_null(vfs_file_lock_key(rd));
	vfs_file_put(rd);
	vfs_file_put(wr);
}

static void test_pipe_statfs_is_pipefs(void **state)
{
	struct vfs_file *rd, *wr;
	struct statfs s;

	(void)state;
	assert_int_equal(vfs_pipe_new(0, &rd, &wr), 0);
	assert_int_equal(vfs_file_statfs_pseudo(rd, &s), 0);
	assert_int_equal(s.f_type, 0x50495045);
	assert_int_equal(s.f_bsize, 4096);
	assert_int_equal(s.f_namelen, 255);
	vfs_file_put(rd);
	vfs_file_put(wr);
}

static void test_old_dirents_keep_lengths_names_and_types(void **state)
{
	char buf[256] __attribute__((aligned(8)));
	const char *names[] = {"a", "bcdef", "0123456789abcdef", "xy"};
	const unsigned char types[] = {DT_REG, DT_DIR, DT_LNK, DT_FIFO};
	size_t done = 0;

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_true(
		    vfs_dirent_put(buf, sizeof(buf), &done, 100 + i, i + 1, types[i], names[i]));
	vfs_dirent_to_old(buf, done);
	size_t at = 0;
	for (int i = 0; i < 4; i++) {
		uint64_t ino, off;
		uint16_t reclen;
		memcpy(&ino, buf + at, 8);
		memcpy(&off, buf + at + 8, 8);
		memcpy(&reclen, buf + at + 16, 2);
		assert_int_equal(ino, 100 + i);
		assert_int_equal(off, i + 1);
		assert_string_equal(buf + at + 18, names[i]);
		assert_int_equal((unsigned char)buf[at + reclen - 1], types[i]);
		at += reclen;
	}
	assert_int_equal(at, done);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pipe_chmod_shows_on_both_ends_and_needs_the_owner),
	    cmocka_unit_test(test_pipe_statfs_is_pipefs),
	    cmocka_unit_test(test_old_dirents_keep_lengths_names_and_types),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
