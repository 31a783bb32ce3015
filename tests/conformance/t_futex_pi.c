/*
 * t_futex_pi: priority-inheritance futexes. LOCK_PI takes a free word (it then holds the
 * caller's tid), fails EDEADLK for its owner and ESRCH for a word naming no thread, waits
 * otherwise (FUTEX_WAITERS set) until UNLOCK_PI hands the word to it, or until its timeout;
 * TRYLOCK_PI does not wait; UNLOCK_PI by another thread is EPERM; a word whose robust owner
 * died (FUTEX_OWNER_DIED) is taken with the bit kept. PTHREAD_PRIO_INHERIT mutexes built on
 * them keep a counter exact under contention. A waiter blocked in LOCK_PI is live across a
 * save point.
 */
#include "check.h"
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>

#define FUTEX_LOCK_PI 6
#define FUTEX_UNLOCK_PI 7
#define FUTEX_TRYLOCK_PI 8
#define FUTEX_LOCK_PI2 13
#define FUTEX_WAITERS 0x80000000u
#define FUTEX_OWNER_DIED 0x40000000u
#define FUTEX_TID_MASK 0x3fffffffu

static long futex(uint32_t *w, int op, const struct timespec *ts)
{
	return syscall(SYS_futex, w, op, 0, ts, NULL, 0);
}

static uint32_t tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

static uint32_t word;
static volatile uint32_t waiter_tid;
static volatile int waiter_ret = -100;

static void *lock_waiter(void *arg)
{
	(void)arg;
	waiter_tid = tid();
	waiter_ret = (int)futex(&word, FUTEX_LOCK_PI, NULL);
	if (waiter_ret == 0 && (word & FUTEX_TID_MASK) != waiter_tid)
		waiter_ret = -200;
	if (waiter_ret == 0 && futex(&word, FUTEX_UNLOCK_PI, NULL))
		waiter_ret = -300;
	return NULL;
}

static void *try_and_unlock_other(void *arg)
{
	long *res = arg;

	res[0] = futex(&word, FUTEX_TRYLOCK_PI, NULL) ? errno : 0;
	res[1] = futex(&word, FUTEX_UNLOCK_PI, NULL) ? errno : 0;
	struct timespec mono;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	mono.tv_nsec += 50 * 1000 * 1000;
	if (mono.tv_nsec >= 1000000000L) {
		mono.tv_sec++;
		mono.tv_nsec -= 1000000000L;
	}
	res[2] = futex(&word, FUTEX_LOCK_PI2, &mono) ? errno : 0;
	return NULL;
}

static void test_raw(void)
{
	word = 0;
	CHECK_EQ(futex(&word, FUTEX_LOCK_PI, NULL), 0);
	CHECK_EQ(word, tid());
	CHECK_ERR(futex(&word, FUTEX_LOCK_PI, NULL), EDEADLK);

	pthread_t th;
	long res[3] = {-1, -1, -1};
	CHECK_EQ(pthread_create(&th, NULL, try_and_unlock_other, res), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(res[0], EAGAIN);
	CHECK_EQ(res[1], EPERM);
	CHECK_EQ(res[2], ETIMEDOUT);
	CHECK_EQ(word & FUTEX_TID_MASK, tid());

	/* A waiter queues, and the unlock hands the word to it. */
	waiter_ret = -100;
	CHECK_EQ(pthread_create(&th, NULL, lock_waiter, NULL), 0);
	for (int i = 0; i < 500 && !(__atomic_load_n(&word, __ATOMIC_SEQ_CST) & FUTEX_WAITERS);
	     i++) {
		struct timespec d = {0, 2 * 1000 * 1000};
		nanosleep(&d, NULL);
	}
	CHECK(word & FUTEX_WAITERS);
	maybe_save(); /* a thread blocked in FUTEX_LOCK_PI */
	CHECK_EQ(futex(&word, FUTEX_UNLOCK_PI, NULL), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(waiter_ret, 0);
	CHECK_EQ(word, 0);

	/* Not the owner: EPERM; no thread of that id: ESRCH. */
	CHECK_ERR(futex(&word, FUTEX_UNLOCK_PI, NULL), EPERM);
	word = 0x3ffffff0;
	CHECK_ERR(futex(&word, FUTEX_LOCK_PI, NULL), ESRCH);
	CHECK_ERR(futex(&word, FUTEX_TRYLOCK_PI, NULL), ESRCH);

	/* The robust owner died: taken, OWNER_DIED kept for the new owner to see. */
	word = FUTEX_OWNER_DIED;
	CHECK_EQ(futex(&word, FUTEX_TRYLOCK_PI, NULL), 0);
	CHECK_EQ(word, tid() | FUTEX_OWNER_DIED);
	CHECK_EQ(futex(&word, FUTEX_UNLOCK_PI, NULL), 0);
	CHECK_EQ(word, 0);

	/* LOCK_PI's timeout is CLOCK_REALTIME only: the flag is ENOSYS for it. */
	CHECK_ERR(syscall(SYS_futex, &word, FUTEX_LOCK_PI | 256, 0, NULL, NULL, 0), ENOSYS);
}

static pthread_mutex_t pi_mutex;
static long counter;

static void *add_many(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2000; i++) {
		if (pthread_mutex_lock(&pi_mutex))
			return (void *)1;
		long c = counter;
		if (i % 64 == 0)
			sched_yield();
		counter = c + 1;
		pthread_mutex_unlock(&pi_mutex);
	}
	return NULL;
}

static void test_pi_mutex(void)
{
	pthread_mutexattr_t a;
	pthread_t th[4];
	void *r;

	CHECK_EQ(pthread_mutexattr_init(&a), 0);
	CHECK_EQ(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT), 0);
	CHECK_EQ(pthread_mutex_init(&pi_mutex, &a), 0);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, add_many, NULL), 0);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(pthread_join(th[i], &r), 0);
		CHECK(r == NULL);
	}
	CHECK_EQ(counter, 8000);
}

int main(void)
{
	test_raw();
	test_pi_mutex();
	return check_done();
}
