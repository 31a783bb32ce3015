/* Worker threads for the bounded phases in which the Sentry moves memory: while it writes an
 * image its guest is stopped and the memory file is read only, and while it loads one no guest
 * runs yet, so the threads share nothing with the single-threaded kernel but the memory they
 * copy (docs/checkpoint.md, "Threads in the Sentry"). */
#include "mem/internal.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <stdbool.h>

/* The CPUs the Sentry was allowed when it started: it then pins itself to one of them
 * (docs/platform.md), and a worker would inherit that pin. */
static cpu_set_t start_cpus;
static bool have_start_cpus;

void workers_init(void)
{
	have_start_cpus = sched_getaffinity(0, sizeof(start_cpus), &start_cpus) == 0;
}

int workers_count(void)
{
	int n = have_start_cpus ? CPU_COUNT(&start_cpus) : 1;

	return n < 1 ? 1 : n > WORKERS_MAX ? WORKERS_MAX : n;
}

struct worker_arg {
	void (*fn)(void *arg, int i);
	void *arg;
	int i;
};

static void *worker_main(void *p)
{
	struct worker_arg *w = p;

	if (have_start_cpus)
		sched_setaffinity(0, sizeof(start_cpus), &start_cpus);
	w->fn(w->arg, w->i);
	return NULL;
}

void workers_run(int n, void (*fn)(void *arg, int i), void *arg)
{
	pthread_t th[WORKERS_MAX];
	struct worker_arg wa[WORKERS_MAX];
	bool made[WORKERS_MAX] = {false};
	sigset_t all, old;

	if (n > WORKERS_MAX)
		n = WORKERS_MAX;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 1; i < n; i++) {
		wa[i] = (struct worker_arg){fn, arg, i};
		made[i] = pthread_create(&th[i], NULL, worker_main, &wa[i]) == 0;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	fn(arg, 0);
	for (int i = 1; i < n; i++)
		if (made[i])
			pthread_join(th[i], NULL);
}
