/* Eight threads add to one counter under a mutex and meet at a barrier; prints the total and
 * how many distinct thread ids it saw. */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define THREADS 8
#define ROUNDS 10000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t barrier;
static long counter;
static pid_t tids[THREADS];

static void *work(void *arg)
{
	long i = (long)arg;

	tids[i] = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&barrier);
	for (int r = 0; r < ROUNDS; r++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	int distinct = 0;

	pthread_barrier_init(&barrier, NULL, THREADS);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, work, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < THREADS; i++) {
		int seen = 0;
		for (int j = 0; j < i; j++)
			seen |= tids[j] == tids[i];
		distinct += !seen && tids[i] != getpid();
	}
	printf("%ld %d\n", counter, distinct);
	return 0;
}
