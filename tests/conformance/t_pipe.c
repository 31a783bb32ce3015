/*
 * t_pipe: pipe semantics. pipe2 flags (O_CLOEXEC on both fds, O_NONBLOCK on both files),
 * access modes, a default capacity of 65536 bytes filled exactly by non-blocking writes,
 * F_GETPIPE_SZ/F_SETPIPE_SZ (page rounding, EBUSY below the contents), all-or-nothing writes
 * up to PIPE_BUF, short reads of what is there, FIONREAD, EAGAIN when empty or full, EOF
 * only after every writer closes, ESPIPE for seeks, a blocking 256 KiB write drained by a
 * reader, and concurrent PIPE_BUF-sized writes that never interleave.
 */
#include "check.h"
#include <fcntl.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

static char buf[1 << 18];

static void test_flags_and_modes(void)
{
	int p[2];

	CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
	CHECK_EQ(fcntl(p[0], F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(p[1], F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(p[0], F_GETFL) & O_ACCMODE, O_RDONLY);
	CHECK_EQ(fcntl(p[1], F_GETFL) & O_ACCMODE, O_WRONLY);
	CHECK_EQ(fcntl(p[0], F_GETFL) & O_NONBLOCK, 0);
	close(p[0]);
	close(p[1]);

	CHECK_EQ(pipe2(p, O_NONBLOCK), 0);
	CHECK_EQ(fcntl(p[0], F_GETFD), 0);
	CHECK(fcntl(p[0], F_GETFL) & O_NONBLOCK);
	CHECK(fcntl(p[1], F_GETFL) & O_NONBLOCK);
	char c;
	CHECK_ERR(read(p[0], &c, 1), EAGAIN);
	/* Wrong direction. */
	CHECK_ERR(write(p[0], "x", 1), EBADF);
	CHECK_ERR(read(p[1], &c, 1), EBADF);
	/* No seeking. */
	CHECK_ERR(lseek(p[0], 0, SEEK_CUR), ESPIPE);
	CHECK_ERR(pread(p[0], &c, 1, 0), ESPIPE);
	CHECK_ERR(pwrite(p[1], "x", 1, 0), ESPIPE);
	close(p[0]);
	close(p[1]);

	CHECK_ERR(pipe2(p, O_RDWR), EINVAL);
	CHECK_ERR(pipe2(p, 0x40000000), EINVAL);
	CHECK_ERR(syscall(SYS_pipe2, BAD_PTR, 0), EFAULT);
}

static void test_capacity(void)
{
	int p[2];
	int avail = -1;

	CHECK_EQ(pipe2(p, O_NONBLOCK), 0);
	CHECK_EQ(fcntl(p[1], F_GETPIPE_SZ), 65536);
	CHECK_EQ(fcntl(p[0], F_GETPIPE_SZ), 65536);
	/* One big non-blocking write takes exactly the capacity. */
	CHECK_EQ(write(p[1], buf, 100000), 65536);
	CHECK_ERR(write(p[1], buf, 1), EAGAIN);
	CHECK_EQ(ioctl(p[0], FIONREAD, &avail), 0);
	CHECK_EQ(avail, 65536);
	/* Cannot shrink below what it holds. */
	CHECK_ERR(fcntl(p[1], F_SETPIPE_SZ, 4096), EBUSY);
	maybe_save(); /* a full pipe */
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 65536);
	CHECK_ERR(read(p[0], buf, 1), EAGAIN);

	/* Page-sized writes: sixteen fit. */
	int n = 0;
	while (write(p[1], buf, 4096) == 4096)
		n++;
	CHECK_EQ(n, 16);
	CHECK_EQ(errno, EAGAIN);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 65536);

	/* Resizing rounds up to a power-of-two number of pages. */
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 100000), 131072);
	CHECK_EQ(fcntl(p[0], F_GETPIPE_SZ), 131072);
	CHECK_EQ(write(p[1], buf, sizeof(buf)), 131072);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 131072);
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 1), 4096);
	CHECK_EQ(write(p[1], buf, sizeof(buf)), 4096);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 4096);
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 65536), 65536);
	CHECK_ERR(fcntl(p[1], F_SETPIPE_SZ, -1), EINVAL);
	close(p[0]);
	close(p[1]);
}

static void test_atomic_and_partial(void)
{
	int p[2];

	CHECK_EQ(pipe2(p, O_NONBLOCK), 0);
	/* Leave 100 bytes free. */
	CHECK_EQ(write(p[1], buf, 65536 - 100), 65536 - 100);
	/* Up to PIPE_BUF: all or nothing. */
	CHECK_ERR(write(p[1], buf, PIPE_BUF), EAGAIN);
	CHECK_ERR(write(p[1], buf, 200), EAGAIN);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 65536 - 100);

	/* A read returns what is there, not what was asked. */
	CHECK_EQ(write(p[1], "abc", 3), 3);
	CHECK_EQ(write(p[1], "de", 2), 2);
	int fl = fcntl(p[0], F_GETFL);
	CHECK_EQ(fcntl(p[0], F_SETFL, fl & ~O_NONBLOCK), 0);
	CHECK_EQ(read(p[0], buf, 100), 5);
	CHECK(memcmp(buf, "abcde", 5) == 0);
	/* A zero-length read returns 0 without blocking. */
	CHECK_EQ(read(p[0], buf, 0), 0);
	close(p[0]);
	close(p[1]);
}

static void test_eof(void)
{
	int p[2];

	CHECK_EQ(pipe(p), 0);
	int w2 = dup(p[1]);
	CHECK_EQ(write(p[1], "z", 1), 1);
	close(p[1]);
	/* One writer left: data, then (non-blocking) EAGAIN rather than EOF. */
	CHECK_EQ(read(p[0], buf, 10), 1);
	CHECK_EQ(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	CHECK_ERR(read(p[0], buf, 10), EAGAIN);
	close(w2);
	CHECK_EQ(read(p[0], buf, 10), 0);
	CHECK_EQ(read(p[0], buf, 10), 0);
	close(p[0]);
}

/* A blocking 256 KiB write completes as a child drains the pipe. */
static void test_blocking_big_write(void)
{
	int p[2], status;

	CHECK_EQ(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		size_t total = 0;
		ssize_t n;
		close(p[1]);
		while ((n = read(p[0], buf, 8192)) > 0) {
			for (ssize_t i = 0; i < n; i++)
				if (buf[i] != (char)((total + (size_t)i) % 251))
					_exit(2);
			total += (size_t)n;
		}
		_exit(total == sizeof(buf) ? 0 : 1);
	}
	close(p[0]);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(i % 251);
	CHECK_EQ(write(p[1], buf, sizeof(buf)), sizeof(buf));
	close(p[1]);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
}

/* Two writers of PIPE_BUF-sized records: the stream is whole records, never mixed. */
static void test_concurrent_atomic_writes(void)
{
	int p[2], status;
	enum { RECORDS = 200 };
	pid_t kids[2];

	CHECK_EQ(pipe(p), 0);
	for (int k = 0; k < 2; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			char rec[PIPE_BUF];
			close(p[0]);
			memset(rec, 'A' + k, sizeof(rec));
			for (int i = 0; i < RECORDS; i++)
				if (write(p[1], rec, sizeof(rec)) != sizeof(rec))
					_exit(1);
			_exit(0);
		}
	}
	close(p[1]);
	/* Read record by record (a read may return part of one; complete it). */
	size_t total = 0;
	int mixed = 0, count[2] = {0, 0};
	for (;;) {
		size_t got = 0;
		ssize_t n = 1;
		while (got < PIPE_BUF && (n = read(p[0], buf + got, PIPE_BUF - got)) > 0)
			got += (size_t)n;
		total += got;
		if (got < PIPE_BUF)
			break;
		for (size_t i = 1; i < PIPE_BUF; i++)
			if (buf[i] != buf[0])
				mixed++;
		if (buf[0] == 'A' || buf[0] == 'B')
			count[buf[0] - 'A']++;
	}
	CHECK_EQ(total, 2 * RECORDS * PIPE_BUF);
	CHECK_EQ(mixed, 0);
	CHECK_EQ(count[0], RECORDS);
	CHECK_EQ(count[1], RECORDS);
	for (int k = 0; k < 2; k++) {
		CHECK_EQ(waitpid(kids[k], &status, 0), kids[k]);
		CHECK_EQ(status, 0);
	}
	close(p[0]);
}

int main(void)
{
	test_flags_and_modes();
	test_capacity();
	test_atomic_and_partial();
	test_eof();
	test_blocking_big_write();
	test_concurrent_atomic_writes();
	return check_done();
}
