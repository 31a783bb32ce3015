/* Unit tests for the terminal line discipline (vfs/tty_ldisc.c) and pseudo-terminal pairs
 * (vfs/pty.c) without a kernel: canonical editing and its echoes, EOF, ISIG's signal callback,
 * non-canonical reads, queue limits, and a pair opened through devfs's /dev/ptmx and
 * /dev/pts/N with its lock, listing and hang-ups. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>

#include "vfs/pty.h"
#include "vfs/tty_ldisc.h"
#include "vfs/vfs.h"

static int last_sig;

static void on_signal(void *arg, int sig)
{
	(void)arg;
	last_sig = sig;
}

static size_t type(struct tty_ldisc *l, const char *s)
{
	return tty_ldisc_receive(l, (const uint8_t *)s, strlen(s));
}

static char *shown(struct tty_ldisc *l)
{
	static char buf[TTY_OUT_SIZE + 1];
	size_t n = tty_ldisc_take_output(l, (uint8_t *)buf, TTY_OUT_SIZE);

	buf[n] = '\0';
	return buf;
}

static void test_canonical_editing_and_echo(void **state)
{
	struct tty_ldisc l;
	uint8_t buf[64];
	bool eof;

	(void)state;
	assert_int_equal(tty_ldisc_init(&l), 0);
	type(&l, "ab\177c");
	assert_int_equal(tty_ldisc_readable(&l), 0); /* no line yet */
	type(&l, "\r");
	assert_int_equal(tty_ldisc_readable(&l), 3);
	assert_int_equal(tty_ldisc_read(&l, buf, sizeof(buf), &eof), 3);
	assert_memory_equal(buf, "ac\n", 3);
	assert_string_equal(shown(&l), "ab\b \bc\r\n");
	type(&l, "one two\027x\025ok\004");
	assert_int_equal(tty_ldisc_read(&l, buf, sizeof(buf), &eof), 2);
	assert_memory_equal(buf, "ok", 2);
	assert_false(eof);
	type(&l, "\004");
	assert_int_equal(tty_ldisc_inq(&l), 0);
	assert_int_equal(tty_ldisc_read(&l, buf, sizeof(buf), &eof), 0);
	assert_true(eof);
	tty_ldisc_free(&l);
}

static void test_isig_flushes_and_signals(void **state)
{
	struct tty_ldisc l;

	(void)state;
	assert_int_equal(tty_ldisc_init(&l), 0);
	l.signal = on_signal;
	type(&l, "partial\003");
	assert_int_equal(last_sig, SIGINT);
	assert_int_equal(l.in.len, 0);
	assert_string_equal(shown(&l), "^C"); /* the echo of "partial" went with the flush */
	type(&l, "\032");
	assert_int_equal(last_sig, SIGTSTP);
	tty_ldisc_free(&l);
}

static void test_raw_mode_and_limits(void **state)
{
	struct tty_ldisc l;
	struct tty_termios t;
	uint8_t buf[TTY_OUT_SIZE];
	bool eof;

	(void)state;
	assert_int_equal(tty_ldisc_init(&l), 0);
	t = l.t;
	t.c_lflag &= ~(ICANON | ECHO | ISIG);
	t.c_iflag &= ~ICRNL;
	tty_ldisc_set_termios(&l, &t);
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(tty_ldisc_receive(&l, buf, sizeof(buf)), TTY_IN_SIZE);
	assert_false(tty_ldisc_receive_room(&l));
	assert_int_equal(tty_ldisc_read(&l, buf, 10, &eof), 10);
	assert_true(tty_ldisc_receive_room(&l));
	/* output: ONLCR doubles newlines; a full queue takes nothing */
	memset(buf, '\n', sizeof(buf));
	assert_int_equal(tty_ldisc_write(&l, buf, sizeof(buf)), TTY_OUT_SIZE / 2);
	assert_int_equal(tty_ldisc_write(&l, buf, 1), 0);
	tty_ldisc_free(&l);
}

static ssize_t io(struct vfs_file *f, bool rd, void *buf, size_t len)
{
	struct iovec iov = {buf, len};

	return rd ? f->ops->read(f, &iov, 1, NULL) : f->ops->write(f, &iov, 1, NULL);
}

static void test_pair_through_devfs(void **state)
{
	struct vfs_dentry *root;
	struct vfs_fs_ctx fs;
	struct vfs_file *m, *s, *dir;
	struct stat st;
	char buf[256], name[32];
	unsigned int n = 0;
	int lock = 0;
	struct waitq *wq;

	(void)state;
	assert_int_equal(vfs_devfs_new(&root), 0);
	fs = (struct vfs_fs_ctx){.root = root, .cwd = root, .umask = 022};
	assert_int_equal(vfs_open(&fs, NULL, "/ptmx", O_RDWR | O_NOCTTY, 0, &m), 0);
	assert_int_equal(m->ops->ioctl(m, TIOCGPTN, &n), 0);
	assert_int_equal(n, 1); /* 0 is the sandbox's terminal */
	assert_int_equal(m->ops->ioctl(m, TIOCGPTLCK, &lock), 0);
	assert_int_equal(lock, 1);
	snprintf(name, sizeof(name), "/pts/%u", n);
	assert_int_equal(vfs_open(&fs, NULL, name, O_RDWR | O_NOCTTY, 0, &s), -EIO);
	lock = 0;
	assert_int_equal(m->ops->ioctl(m, TIOCSPTLCK, &lock), 0);
	assert_int_equal(vfs_open(&fs, NULL, name, O_RDWR | O_NOCTTY, 0, &s), 0);
	assert_int_equal(s->ops->getattr(s, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(major(st.st_rdev), 136);
	assert_int_equal(minor(st.st_rdev), n);

	/* listed in /pts after 0 and ptmx */
	assert_int_equal(vfs_open(&fs, NULL, "/pts", O_RDONLY | O_DIRECTORY, 0, &dir), 0);
	off_t pos = 0;
	ssize_t len = dir->ops->getdents64(dir, buf, sizeof(buf), &pos);
	assert_true(len > 0);
	bool found = false;
	for (ssize_t at = 0; at < len;) {
		struct {
			uint64_t ino;
			int64_t off;
			unsigned short reclen;
			unsigned char type;
			char name[];
		} *d = (void *)(buf + at);
		found |= strcmp(d->name, name + 5) == 0;
		at += d->reclen;
	}
	assert_true(found);
	vfs_file_put(dir);

	assert_int_equal(io(m, false, "hi\n", 3), 3);
	assert_int_equal(io(s, true, buf, sizeof(buf)), 3);
	assert_int_equal(io(m, true, buf, sizeof(buf)), 4); /* the echo */
	assert_memory_equal(buf, "hi\r\n", 4);
	assert_int_equal(io(m, true, buf, sizeof(buf)), -EAGAIN);

	/* the slave's close: master reads EIO, polls POLLHUP */
	vfs_file_put(s);
	assert_int_equal(io(m, true, buf, sizeof(buf)), -EIO);
	assert_true(m->ops->poll(m, &wq) & POLLHUP);
	assert_int_equal(vfs_open(&fs, NULL, name, O_RDWR | O_NOCTTY, 0, &s), 0);

	/* the master's close: the node goes, the slave is hung up */
	vfs_file_put(m);
	assert_int_equal(io(s, true, buf, sizeof(buf)), 0);
	assert_int_equal(io(s, false, "x", 1), -EIO);
	assert_true(s->ops->poll(s, &wq) & POLLHUP);
	vfs_file_put(s);
	assert_int_equal(vfs_open(&fs, NULL, name, O_RDWR | O_NOCTTY, 0, &s), -ENOENT);
	vfs_dentry_put(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_canonical_editing_and_echo),
	    cmocka_unit_test(test_isig_flushes_and_signals),
	    cmocka_unit_test(test_raw_mode_and_limits),
	    cmocka_unit_test(test_pair_through_devfs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
