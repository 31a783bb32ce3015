/* File benchmarks, run natively and in the sandbox: `files MODE N` prints one number.
 *   open N       µs per open + close of /etc/passwd
 *   stat N       µs per stat of /etc/passwd
 *   read4k N     µs per 4 KiB pread of /bin/busybox (a rootfs file)
 *   read4ktmp N  µs per 4 KiB pread of a file in /tmp (tmpfs in the sandbox)
 *   seqread N    MB/s reading an N MiB /tmp file sequentially in 1 MiB reads */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* A file of MIB MiB under /tmp, written once (not timed). */
static int make_tmp_file(long mib)
{
	static char buf[1 << 20];
	char path[64];

	snprintf(path, sizeof(path), "/tmp/bench-files.%d", getpid());
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	unlink(path);
	memset(buf, 'x', sizeof(buf));
	for (long i = 0; i < mib; i++)
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			return -1;
	return fd;
}

static double pread_loop(int fd, long n)
{
	char buf[4096];
	double t0 = now_us();

	for (long i = 0; i < n; i++)
		if (pread(fd, buf, sizeof(buf), 0) != sizeof(buf))
			return -1;
	return (now_us() - t0) / n;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	long n = atol(argv[2]);
	double t0 = now_us(), r;
	struct stat st;

	if (!strcmp(argv[1], "open")) {
		for (long i = 0; i < n; i++) {
			int fd = open("/etc/passwd", O_RDONLY);
			if (fd < 0)
				return 1;
			close(fd);
		}
		r = (now_us() - t0) / n;
	} else if (!strcmp(argv[1], "stat")) {
		for (long i = 0; i < n; i++)
			if (stat("/etc/passwd", &st))
				return 1;
		r = (now_us() - t0) / n;
	} else if (!strcmp(argv[1], "read4k")) {
		int fd = open("/bin/busybox", O_RDONLY);
		r = fd < 0 ? -1 : pread_loop(fd, n);
	} else if (!strcmp(argv[1], "read4ktmp")) {
		int fd = make_tmp_file(1);
		r = fd < 0 ? -1 : pread_loop(fd, n);
	} else if (!strcmp(argv[1], "seqread")) {
		static char buf[1 << 20];
		int fd = make_tmp_file(n);
		if (fd < 0 || lseek(fd, 0, SEEK_SET))
			return 1;
		t0 = now_us();
		long got = 0;
		ssize_t k;
		while ((k = read(fd, buf, sizeof(buf))) > 0)
			got += k;
		if (got != n << 20)
			return 1;
		r = got / (now_us() - t0);
	} else {
		return 2;
	}
	if (r < 0)
		return 1;
	printf("%.2f\n", r);
	return 0;
}
