/* The /proc/all benchmark (in the spirit of the RFC's atop test): with N sleeping children,
 * collect stat, statm, status and io for every process twice — walking /proc/[pid]/FILE and
 * reading /proc/all/FILE — and print "walk_ms walk_syscalls all_ms all_syscalls walk_bytes
 * all_bytes fork_ms". Syscalls are counted as this program makes them (open, read, close,
 * getdents); fork_ms is the time the N forks took, which shows what a sandbox's cost per
 * process does as processes pile up. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *files[] = {"stat", "statm", "status", "io"};
static char buf[1 << 16];
static long calls;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long read_all(const char *path)
{
	long total = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY);

	calls++;
	if (fd < 0)
		return 0;
	do {
		n = read(fd, buf, sizeof(buf));
		calls++;
		total += n > 0 ? n : 0;
	} while (n > 0);
	close(fd);
	calls++;
	return total;
}

static long walk(void)
{
	char dents[1 << 15], path[300];
	long total = 0;
	int dir = open("/proc", O_RDONLY | O_DIRECTORY);
	long n;

	calls++;
	while ((n = syscall(SYS_getdents64, dir, dents, sizeof(dents))) > 0) {
		calls++;
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(dents + off);
			off += d->d_reclen;
			if (d->d_name[0] < '0' || d->d_name[0] > '9')
				continue;
			for (int f = 0; f < 4; f++) {
				snprintf(path, sizeof(path), "/proc/%s/%s", d->d_name, files[f]);
				total += read_all(path);
			}
		}
	}
	calls++;
	close(dir);
	calls++;
	return total;
}

static long all(void)
{
	char path[64];
	long total = 0;

	for (int f = 0; f < 4; f++) {
		snprintf(path, sizeof(path), "/proc/all/%s", files[f]);
		total += read_all(path);
	}
	return total;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	pid_t *kids = calloc(n, sizeof(pid_t));
	double t_fork = now_ms();

	for (int i = 0; i < n; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			for (;;)
				pause();
		}
		if (kids[i] < 0) {
			fprintf(stderr, "fork %d failed\n", i);
			return 1;
		}
	}
	double fork_ms = now_ms() - t_fork;
	/* Let every child reach its pause(): the benchmark is about sleeping processes. */
	struct timespec settle = {0, 300 * 1000 * 1000};
	nanosleep(&settle, NULL);
	walk(); /* warm: both ways start from the same state */
	calls = 0;
	double t0 = now_ms();
	long wb = walk();
	double walk_ms = now_ms() - t0;
	long walk_calls = calls;
	calls = 0;
	t0 = now_ms();
	long ab = all();
	double all_ms = now_ms() - t0;
	long all_calls = calls;
	printf("%.1f %ld %.1f %ld %ld %ld %.1f\n", walk_ms, walk_calls, all_ms, all_calls, wb, ab,
	       fork_ms);
	for (int i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return 0;
}
