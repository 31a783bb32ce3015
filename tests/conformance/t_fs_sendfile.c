/*
 * t_fs_sendfile: in-kernel copies between /tmp files and pipes. sendfile to a pipe and to a
 * file, with an offset pointer (updated; the file position untouched) and without (the
 * position moves), and into a pipe with less room than asked for; copy_file_range the same two
 * ways; splice file->pipe and pipe->file; tee duplicating pipe data without consuming it; and their
 * EBADF/EINVAL/ESPIPE cases.
 */
#include "check.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/sendfile.h>
#include <sys/stat.h>

#define SRC_SIZE (100 * 1000)

static char src_path[64], dst_path[64];
static char pattern[SRC_SIZE];

static void on_alarm(int sig)
{
	(void)sig;
}

/*
 * Arms (1) or disarms (0) a one-second alarm without SA_RESTART, so a call that wrongly
 * blocks fails with EINTR and the test goes on.
 */
static void guard(int on)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	alarm(on ? 1 : 0);
}

static off_t pos(int fd)
{
	return lseek(fd, 0, SEEK_CUR);
}

static off_t fsize(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? st.st_size : -1;
}

/* 1 when the next n bytes of pipe rfd are pattern[off..off+n). */
static int pipe_holds(int rfd, off_t off, size_t n)
{
	static char buf[SRC_SIZE];
	size_t got = 0;
	ssize_t r;

	while (got < n && (r = read(rfd, buf + got, n - got)) > 0)
		got += r;
	return got == n && memcmp(buf, pattern + off, n) == 0;
}

/* 1 when n bytes of fd at off are pattern[poff..poff+n). */
static int file_holds(int fd, off_t off, off_t poff, size_t n)
{
	static char buf[SRC_SIZE];

	return pread(fd, buf, n, off) == (ssize_t)n && memcmp(buf, pattern + poff, n) == 0;
}

static void test_sendfile(int src, int p[2])
{
	off_t off;

	/* Without an offset: reads from the file position and moves it. */
	CHECK_EQ(lseek(src, 0, SEEK_SET), 0);
	CHECK_EQ(sendfile(p[1], src, NULL, 1000), 1000);
	CHECK_EQ(pos(src), 1000);
	CHECK(pipe_holds(p[0], 0, 1000));
	/* With one: reads there, updates it, leaves the position. */
	off = 5000;
	CHECK_EQ(sendfile(p[1], src, &off, 3000), 3000);
	CHECK_EQ(off, 8000);
	CHECK_EQ(pos(src), 1000);
	CHECK(pipe_holds(p[0], 5000, 3000));
	/* Short at EOF, then 0. */
	off = SRC_SIZE - 10;
	CHECK_EQ(sendfile(p[1], src, &off, 1000), 10);
	CHECK_EQ(off, SRC_SIZE);
	CHECK(pipe_holds(p[0], SRC_SIZE - 10, 10));
	CHECK_EQ(sendfile(p[1], src, &off, 1000), 0);
	CHECK_EQ(sendfile(p[1], src, NULL, 0), 0);

	/* To a regular file: the output position moves too. */
	int dst = open(dst_path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	CHECK(dst >= 0);
	CHECK_EQ(lseek(dst, 10, SEEK_SET), 10);
	off = 0;
	long total = 0, n;
	while (total < SRC_SIZE && (n = sendfile(dst, src, &off, SRC_SIZE - total)) > 0)
		total += n;
	CHECK_EQ(total, SRC_SIZE);
	CHECK_EQ(off, SRC_SIZE);
	CHECK_EQ(pos(dst), 10 + SRC_SIZE);
	CHECK_EQ(fsize(dst), 10 + SRC_SIZE);
	CHECK(file_holds(dst, 10, 0, SRC_SIZE));
	CHECK_EQ(pos(src), 1000);

	/* Errors. */
	off = -1;
	CHECK_ERR(sendfile(dst, src, &off, 10), EINVAL);
	int wo = open(src_path, O_WRONLY);
	CHECK_ERR(sendfile(p[1], wo, NULL, 10), EBADF);
	close(wo);
	int ro = open(dst_path, O_RDONLY);
	CHECK_ERR(sendfile(ro, src, NULL, 10), EBADF);
	close(ro);
	int ap = open(dst_path, O_WRONLY | O_APPEND);
	CHECK_ERR(sendfile(ap, src, NULL, 10), EINVAL);
	close(ap);
	CHECK_ERR(sendfile(9999, src, NULL, 10), EBADF);
	CHECK_ERR(sendfile(p[1], 9999, NULL, 10), EBADF);
	CHECK_EQ(pos(src), 1000);
	close(dst);
}

/* Into a pipe with less room than asked for: what is sent is exactly what the position (or
 * the offset) moved by, and the pipe holds those bytes after the ones already there. */
static void test_sendfile_into_a_nearly_full_pipe(int src, int p[2])
{
	static char fill[60000], back[sizeof(fill)];
	off_t off = 7000;
	long n;

	CHECK_EQ(lseek(src, 2000, SEEK_SET), 2000);
	CHECK_EQ(write(p[1], fill, sizeof(fill)), (long)sizeof(fill));
	n = sendfile(p[1], src, NULL, 20000);
	CHECK(n > 0 && n < 20000);
	CHECK_EQ(pos(src), 2000 + n);
	CHECK_EQ(read(p[0], back, sizeof(back)), (long)sizeof(back));
	CHECK(pipe_holds(p[0], 2000, (size_t)n));

	CHECK_EQ(write(p[1], fill, sizeof(fill)), (long)sizeof(fill));
	n = sendfile(p[1], src, &off, 20000);
	CHECK(n > 0 && n < 20000);
	CHECK_EQ(off, 7000 + n);
	CHECK_EQ(read(p[0], back, sizeof(back)), (long)sizeof(back));
	CHECK(pipe_holds(p[0], 7000, (size_t)n));
	CHECK_EQ(lseek(src, 1000, SEEK_SET), 1000);
}

static void test_copy_file_range(int src)
{
	int dst = open(dst_path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	loff_t in, out;

	CHECK(dst >= 0);
	/* With offsets: both updated, neither position moves. */
	in = 100;
	out = 50;
	CHECK_EQ(lseek(src, 7, SEEK_SET), 7);
	CHECK_EQ(copy_file_range(src, &in, dst, &out, 4000, 0), 4000);
	CHECK_EQ(in, 4100);
	CHECK_EQ(out, 4050);
	CHECK_EQ(pos(src), 7);
	CHECK_EQ(pos(dst), 0);
	CHECK_EQ(fsize(dst), 4050);
	CHECK(file_holds(dst, 50, 100, 4000));
	char zero[50], buf[50];
	memset(zero, 0, sizeof(zero));
	CHECK_EQ(pread(dst, buf, 50, 0), 50);
	CHECK_EQ(memcmp(buf, zero, 50), 0);

	/* Without: the positions are used and moved. */
	CHECK_EQ(lseek(dst, 0, SEEK_SET), 0);
	CHECK_EQ(copy_file_range(src, NULL, dst, NULL, 20, 0), 20);
	CHECK_EQ(pos(src), 27);
	CHECK_EQ(pos(dst), 20);
	CHECK(file_holds(dst, 0, 7, 20));
	/* Mixed: an offset for input only. */
	in = 0;
	CHECK_EQ(copy_file_range(src, &in, dst, NULL, 30, 0), 30);
	CHECK_EQ(in, 30);
	CHECK_EQ(pos(src), 27);
	CHECK_EQ(pos(dst), 50);
	CHECK(file_holds(dst, 20, 0, 30));

	/* At or past EOF of the input: 0 bytes. */
	in = SRC_SIZE;
	CHECK_EQ(copy_file_range(src, &in, dst, NULL, 100, 0), 0);
	in = SRC_SIZE + 100;
	CHECK_EQ(copy_file_range(src, &in, dst, NULL, 100, 0), 0);
	/* Short when the input ends first. */
	in = SRC_SIZE - 5;
	out = 0;
	CHECK_EQ(copy_file_range(src, &in, dst, &out, 100, 0), 5);
	CHECK(file_holds(dst, 0, SRC_SIZE - 5, 5));

	/* Errors. */
	in = 0;
	CHECK_ERR(copy_file_range(src, &in, dst, NULL, 10, 1), EINVAL);
	int wo = open(src_path, O_WRONLY);
	CHECK_ERR(copy_file_range(wo, NULL, dst, NULL, 10, 0), EBADF);
	close(wo);
	int ro = open(dst_path, O_RDONLY);
	CHECK_ERR(copy_file_range(src, NULL, ro, NULL, 10, 0), EBADF);
	close(ro);
	int ap = open(dst_path, O_WRONLY | O_APPEND);
	CHECK_ERR(copy_file_range(src, NULL, ap, NULL, 10, 0), EBADF);
	close(ap);
	int dfd = open("/tmp", O_RDONLY | O_DIRECTORY);
	CHECK_ERR(copy_file_range(dfd, NULL, dst, NULL, 10, 0), EISDIR);
	close(dfd);
	CHECK_ERR(copy_file_range(9999, NULL, dst, NULL, 10, 0), EBADF);
	close(dst);
}

static void test_splice_and_tee(int src, int p[2])
{
	loff_t off;
	char buf[64];

	/* file -> pipe, with an offset pointer and without. */
	CHECK_EQ(lseek(src, 200, SEEK_SET), 200);
	off = 3000;
	CHECK_EQ(splice(src, &off, p[1], NULL, 500, 0), 500);
	CHECK_EQ(off, 3500);
	CHECK_EQ(pos(src), 200);
	CHECK_EQ(splice(src, NULL, p[1], NULL, 100, 0), 100);
	CHECK_EQ(pos(src), 300);
	CHECK(pipe_holds(p[0], 3000, 500));
	CHECK(pipe_holds(p[0], 200, 100));

	/* pipe -> file, with an offset pointer: the file grows there. */
	int dst = open(dst_path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	CHECK(dst >= 0);
	CHECK_EQ(write(p[1], pattern, 1000), 1000);
	maybe_save();
	/* The pipe keeps its contents across a save. */
	off = 4096;
	CHECK_EQ(splice(p[0], NULL, dst, &off, 600, 0), 600);
	CHECK_EQ(off, 4096 + 600);
	CHECK_EQ(pos(dst), 0);
	CHECK_EQ(fsize(dst), 4096 + 600);
	CHECK(file_holds(dst, 4096, 0, 600));
	/* ... and without: the rest at the file position. */
	CHECK_EQ(splice(p[0], NULL, dst, NULL, 1000, 0), 400);
	CHECK_EQ(pos(dst), 400);
	CHECK(file_holds(dst, 0, 600, 400));

	/* Nothing to move from an empty pipe without blocking. */
	guard(1);
	CHECK_ERR(splice(p[0], NULL, dst, NULL, 10, SPLICE_F_NONBLOCK), EAGAIN);
	guard(0);
	CHECK_EQ(splice(src, NULL, p[1], NULL, 0, 0), 0);
	/* An offset on the pipe side, two non-pipes, unreadable or unwritable ends. */
	off = 0;
	CHECK_ERR(splice(p[0], &off, dst, NULL, 10, 0), ESPIPE);
	CHECK_ERR(splice(src, NULL, p[1], &off, 10, 0), ESPIPE);
	CHECK_ERR(splice(src, NULL, dst, NULL, 10, 0), EINVAL);
	CHECK_ERR(splice(p[1], NULL, dst, NULL, 10, 0), EBADF);
	CHECK_ERR(splice(src, NULL, p[0], NULL, 10, 0), EBADF);
	CHECK_ERR(splice(9999, NULL, p[1], NULL, 10, 0), EBADF);

	/* tee: the second pipe gets a copy, the first keeps its data. */
	int q[2];
	CHECK_EQ(pipe2(q, O_NONBLOCK), 0); /* reading it can never hang the test */
	CHECK_EQ(write(p[1], "teeing data", 11), 11);
	CHECK_EQ(tee(p[0], q[1], 100, 0), 11);
	CHECK_EQ(tee(p[0], q[1], 4, 0), 4);
	CHECK_EQ(read(q[0], buf, sizeof(buf)), 15);
	CHECK_EQ(memcmp(buf, "teeing datateei", 15), 0);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 11);
	CHECK_EQ(memcmp(buf, "teeing data", 11), 0);
	guard(1);
	CHECK_ERR(tee(p[0], q[1], 10, SPLICE_F_NONBLOCK), EAGAIN);
	guard(0);
	CHECK_ERR(tee(p[0], p[1], 10, 0), EINVAL);
	CHECK_ERR(tee(src, q[1], 10, 0), EINVAL);
	close(q[0]);
	close(q[1]);
	close(dst);
}

int main(void)
{
	snprintf(src_path, sizeof(src_path), "/tmp/t_fs_sendfile.%d.src", getpid());
	snprintf(dst_path, sizeof(dst_path), "/tmp/t_fs_sendfile.%d.dst", getpid());
	for (int i = 0; i < SRC_SIZE; i++)
		pattern[i] = (char)(i % 251 + i / 4096);
	int src = open(src_path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	CHECK(src >= 0);
	CHECK_EQ(write(src, pattern, SRC_SIZE), SRC_SIZE);

	int p[2];
	CHECK_EQ(pipe(p), 0);
	test_sendfile(src, p);
	test_sendfile_into_a_nearly_full_pipe(src, p);
	test_copy_file_range(src);
	test_splice_and_tee(src, p);

	/* Overlapping ranges of one file (last: a wrong success would change src). */
	loff_t in = 0, out = 10;
	CHECK_ERR(copy_file_range(src, &in, src, &out, 100, 0), EINVAL);

	close(p[0]);
	close(p[1]);
	close(src);
	CHECK_EQ(unlink(src_path), 0);
	CHECK_EQ(unlink(dst_path), 0);
	return check_done();
}
