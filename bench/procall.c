/* The /proc/all benchmark (the RFC's atop test): with N sleeping children, an atop-like
 * collector gathers stat, statm, status and io of every process once per interval, either by
 * walking /proc/[pid]/FILE or by reading /proc/all/FILE, INTERVALS times each way (the two
 * interleaved). It prints "walk_ms walk_syscalls all_ms all_syscalls walk_bytes all_bytes
 * fork_ms walk_cpu_ms all_cpu_ms": per collection, medians over the intervals. Syscalls are
 * counted as this program makes them (open, read, close, getdents); CPU is the collector's
 * own (CLOCK_PROCESS_CPUTIME_ID: in a sandbox, the guest thread's, not the Sentry's work for
 * it); fork_ms is what the N forks took, which shows a cost per process that grows with the
 * number of processes. Where /proc/all is missing (Linux), the all_ columns are 0. */
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

#define INTERVALS 5

static const char *files[] = {"stat", "statm", "status", "io"};
static char buf[1 << 16];
static long calls;

static double clock_ms(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Waits until every child sleeps in its pause() ('S' in its stat): on a loaded machine the
 * last of thousands of children may take seconds to get there, and one that still runs is
 * measured afresh on every look, sleeping ones are not. */
static void settle(const pid_t *kids, int n)
{
	char path[64], st[512];

	for (int i = 0; i < n; i++) {
		for (int tries = 0; tries < 6000; tries++) {
			snprintf(path, sizeof(path), "/proc/%d/stat", kids[i]);
			int fd = open(path, O_RDONLY);
			ssize_t k = fd >= 0 ? read(fd, st, sizeof(st) - 1) : -1;
			if (fd >= 0)
				close(fd);
			st[k > 0 ? k : 0] = 0;
			char *p = strrchr(st, ')');
			if (!p || p[2] == 'S')
				break;
			struct timespec ms = {0, 10 * 1000 * 1000};
			nanosleep(&ms, NULL);
		}
	}
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
	settle(kids, n);
	walk(); /* warm: both ways start from the same state */
	double wms[INTERVALS], ams[INTERVALS], wcpu[INTERVALS], acpu[INTERVALS];
	long wb = 0, ab = 0, walk_calls = 0, all_calls = 0;
	for (int r = 0; r < INTERVALS; r++) {
		double t0 = now_ms(), c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
		calls = 0;
		wb = walk();
		walk_calls = calls;
		wms[r] = now_ms() - t0;
		wcpu[r] = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
		t0 = now_ms(), c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
		calls = 0;
		ab = all();
		all_calls = ab ? calls : 0;
		ams[r] = ab ? now_ms() - t0 : 0;
		acpu[r] = ab ? clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0 : 0;
	}
	printf("%.1f %ld %.1f %ld %ld %ld %.1f %.1f %.1f\n", median(wms, INTERVALS), walk_calls,
	       median(ams, INTERVALS), all_calls, wb, ab, fork_ms, median(wcpu, INTERVALS),
	       median(acpu, INTERVALS));
	for (int i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return 0;
}
