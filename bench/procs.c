/* Process benchmarks, run natively and in the sandbox: `procs MODE N` prints one number.
 *   fork N    µs per fork + child exit + wait
 *   exec N    µs per fork + exec of /bin/true + wait
 *   pipe N    MB/s moving N MiB through a pipe in 64 KiB writes (writer and reader processes)
 *   thread N  µs per pthread_create + pthread_join */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void *nothing(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	long n = atol(argv[2]);
	double t0 = now_us();

	if (!strcmp(argv[1], "fork")) {
		for (long i = 0; i < n; i++) {
			pid_t p = fork();
			if (p == 0)
				_exit(0);
			if (p < 0 || waitpid(p, NULL, 0) != p)
				return 1;
		}
		printf("%.2f\n", (now_us() - t0) / n);
	} else if (!strcmp(argv[1], "exec")) {
		for (long i = 0; i < n; i++) {
			int st;
			pid_t p = fork();
			if (p == 0) {
				char *args[] = {"/bin/true", NULL};
				execv(args[0], args);
				_exit(127);
			}
			if (p < 0 || waitpid(p, &st, 0) != p || st != 0)
				return 1;
		}
		printf("%.2f\n", (now_us() - t0) / n);
	} else if (!strcmp(argv[1], "pipe")) {
		static char buf[65536];
		int fds[2];
		long total = n << 20;
		if (pipe(fds))
			return 1;
		pid_t p = fork();
		if (p == 0) {
			close(fds[0]);
			for (long done = 0; done < total; done += sizeof(buf))
				if (write(fds[1], buf, sizeof(buf)) != sizeof(buf))
					_exit(1);
			_exit(0);
		}
		close(fds[1]);
		long got = 0;
		ssize_t r;
		while ((r = read(fds[0], buf, sizeof(buf))) > 0)
			got += r;
		waitpid(p, NULL, 0);
		if (got != total)
			return 1;
		printf("%.1f\n", total / (now_us() - t0)); /* bytes per µs = MB/s */
	} else if (!strcmp(argv[1], "thread")) {
		for (long i = 0; i < n; i++) {
			pthread_t t;
			if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL))
				return 1;
		}
		printf("%.2f\n", (now_us() - t0) / n);
	} else {
		return 2;
	}
	return 0;
}
