/* Starting many sleeping processes (issue 14: the cost of a new address space must not grow
 * with the sandbox): `spawn N` forks N children that each sleep in pause(), prints the wall
 * milliseconds the N forks took, then kills and reaps them. Run natively and in the sandbox;
 * the Sentry's resident size at its peak comes from `minisentry run --stats`. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	long n = argc == 2 ? atol(argv[1]) : 0;
	pid_t *kids = calloc(n > 0 ? n : 1, sizeof(*kids));
	double t0 = now_ms(), took;
	long made = 0;

	if (n <= 0 || !kids)
		return 2;
	for (; made < n; made++) {
		pid_t p = fork();
		if (p == 0) {
			for (;;)
				pause();
		}
		if (p < 0)
			break;
		kids[made] = p;
	}
	took = now_ms() - t0;
	for (long i = 0; i < made; i++)
		kill(kids[i], SIGKILL);
	for (long i = 0; i < made; i++)
		waitpid(kids[i], NULL, 0);
	if (made < n) {
		fprintf(stderr, "spawn: fork %ld of %ld failed\n", made + 1, n);
		return 1;
	}
	printf("%.1f\n", took);
	return 0;
}
