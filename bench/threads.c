/* threads: syscall throughput of several syscall-heavy threads. THREADS threads (argv[1],
 * default 1) make N raw getpid syscalls between them (argv[2], default 200000);
 * prints the total syscalls per second as the first word of its only line, so bench/run.sh can
 * compare platforms and placements. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long per_thread;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *run(void *arg)
{
	(void)arg;
	for (long i = 0; i < per_thread; i++)
		syscall(SYS_getpid);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 200000;
	pthread_t tid[64];

	if (n <= 0 || threads < 1 || threads > 64) {
		fprintf(stderr, "usage: threads [THREADS 1..64] [N > 0]\n");
		return 2;
	}
	per_thread = n / threads;
	long long start = now_ns();
	for (int i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, run, NULL)) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	double secs = (double)(now_ns() - start) / 1e9;
	printf("%.0f syscalls/s (%d threads, n=%ld)\n", (double)(per_thread * threads) / secs,
	       threads, per_thread * threads);
	return 0;
}
