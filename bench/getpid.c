/* getpid: the cost of one intercepted system call. Makes N raw getpid syscalls (argv[1],
 * default 200000) and prints the mean time per call in nanoseconds as the first word of
 * its only line, so bench/run.sh can compare it natively and under minisentry. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 200000;

	if (n <= 0) {
		fprintf(stderr, "usage: getpid [N > 0]\n");
		return 2;
	}
	long long start = now_ns();
	for (long i = 0; i < n; i++)
		syscall(SYS_getpid);
	long long elapsed = now_ns() - start;
	printf("%.1f ns per getpid (n=%ld)\n", (double)elapsed / n, n);
	return 0;
}
