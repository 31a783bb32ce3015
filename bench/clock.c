/* clock: the cost of reading the time through libc, which a vDSO serves without a syscall.
 * Makes N clock_gettime(CLOCK_MONOTONIC) calls (argv[1], default 2000000) and prints the mean
 * time per call in nanoseconds as the first word of its only line, so bench/run.sh can compare
 * it natively and under minisentry. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 2000000;
	struct timespec ts;

	if (n <= 0) {
		fprintf(stderr, "usage: clock [N > 0]\n");
		return 2;
	}
	long long start = now_ns();
	for (long i = 0; i < n; i++)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	long long elapsed = now_ns() - start;
	printf("%.1f ns per clock_gettime (n=%ld)\n", (double)elapsed / n, n);
	return 0;
}
