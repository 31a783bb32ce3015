/*
 * t_futex: the raw futex syscall. WAIT checks the word (EAGAIN) and times out (relative, or
 * absolute CLOCK_MONOTONIC/REALTIME for WAIT_BITSET); WAKE, REQUEUE and CMP_REQUEUE return
 * exact counts once the waiters are known to sleep; bitsets select whom WAKE_BITSET wakes;
 * WAKE_OP updates the second word and wakes conditionally; shared futexes work across fork
 * on MAP_SHARED memory. The waiters are counted without /proc by moving them to a scratch
 * word with CMP_REQUEUE and back, which wakes nobody.
 */
#include "check.h"
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

/* From <linux/futex.h>, which musl does not ship. */
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_REQUEUE 3
#define FUTEX_CMP_REQUEUE 4
#define FUTEX_WAKE_OP 5
#define FUTEX_WAIT_BITSET 9
#define FUTEX_WAKE_BITSET 10
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_CLOCK_REALTIME 256
#define FUTEX_BITSET_MATCH_ANY 0xffffffffu
#define FUTEX_OP_SET 0
#define FUTEX_OP_ADD 1
#define FUTEX_OP_OR 2
#define FUTEX_OP_ANDN 3
#define FUTEX_OP_XOR 4
#define FUTEX_OP_OPARG_SHIFT 8
#define FUTEX_OP_CMP_EQ 0
#define FUTEX_OP_CMP_NE 1
#define FUTEX_OP_CMP_GT 4
#define FUTEX_OP(op, oparg, cmp, cmparg)                                                           \
	((((op)&0xf) << 28) | (((cmp)&0xf) << 24) | (((oparg)&0xfff) << 12) | ((cmparg)&0xfff))

static long futex(volatile uint32_t *uaddr, int op, uint32_t val, const void *timeout_or_val2,
		  volatile uint32_t *uaddr2, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, timeout_or_val2, uaddr2, val3);
}

static long long elapsed_ms(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1000LL + (now.tv_nsec - start->tv_nsec) / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec d = {ms / 1000, (ms % 1000) * 1000000};

	nanosleep(&d, NULL);
}

/*
 * The number of tasks waiting on word (flags: 0 or FUTEX_PRIVATE_FLAG), counted by
 * requeueing them all to scratch and then back. Nobody is woken.
 */
static volatile uint32_t scratch;

static long waiters_on(volatile uint32_t *word, int flags)
{
	long n =
	    futex(word, FUTEX_CMP_REQUEUE | flags, 0, (void *)(uintptr_t)INT_MAX, &scratch, *word);
	if (n > 0)
		futex(&scratch, FUTEX_CMP_REQUEUE | flags, 0, (void *)(uintptr_t)INT_MAX, word,
		      scratch);
	return n;
}

/* Polls until exactly n tasks wait on word; gives up after two seconds. */
static int await_waiters(volatile uint32_t *word, int flags, long n)
{
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (waiters_on(word, flags) != n) {
		if (elapsed_ms(&start) > 2000)
			return 0;
		sleep_ms(1);
	}
	return 1;
}

struct waiter {
	volatile uint32_t *word;
	int op;
	uint32_t val, bitset;
	long ret;
	int err;
	pthread_t thread;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;

	w->ret = futex(w->word, w->op, w->val, NULL, NULL, w->bitset);
	w->err = w->ret < 0 ? errno : 0;
	return NULL;
}

static void start_waiter(struct waiter *w, volatile uint32_t *word, int op, uint32_t val,
			 uint32_t bitset)
{
	*w = (struct waiter){.word = word, .op = op, .val = val, .bitset = bitset, .ret = -2};
	CHECK_EQ(pthread_create(&w->thread, NULL, wait_thread, w), 0);
}

static void join_waiter(struct waiter *w)
{
	CHECK_EQ(pthread_join(w->thread, NULL), 0);
	CHECK_EQ(w->ret, 0);
}

static volatile uint32_t word_a, word_b;

static void test_wait_value_and_timeouts(int pf)
{
	struct timespec start, rel = {0, 50 * 1000 * 1000};

	word_a = 1;
	/* The value differs: no sleep at all. */
	CHECK_ERR(futex(&word_a, FUTEX_WAIT | pf, 2, NULL, NULL, 0), EAGAIN);
	CHECK_ERR(futex(&word_a, FUTEX_WAIT | pf, 2, &rel, NULL, 0), EAGAIN);

	/* Relative timeout. */
	clock_gettime(CLOCK_MONOTONIC, &start);
	CHECK_ERR(futex(&word_a, FUTEX_WAIT | pf, 1, &rel, NULL, 0), ETIMEDOUT);
	CHECK(elapsed_ms(&start) >= 50);
	CHECK(elapsed_ms(&start) < 1500);

	/* WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline... */
	struct timespec abs;
	clock_gettime(CLOCK_MONOTONIC, &start);
	abs = start;
	abs.tv_nsec += 50 * 1000 * 1000;
	if (abs.tv_nsec >= 1000000000) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000;
	}
	CHECK_ERR(futex(&word_a, FUTEX_WAIT_BITSET | pf, 1, &abs, NULL, FUTEX_BITSET_MATCH_ANY),
		  ETIMEDOUT);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	CHECK(now.tv_sec > abs.tv_sec || (now.tv_sec == abs.tv_sec && now.tv_nsec >= abs.tv_nsec));
	/* ...one in the past times out at once... */
	CHECK_ERR(futex(&word_a, FUTEX_WAIT_BITSET | pf, 1, &start, NULL, FUTEX_BITSET_MATCH_ANY),
		  ETIMEDOUT);
	/* ...or a CLOCK_REALTIME one. */
	struct timespec rabs;
	clock_gettime(CLOCK_REALTIME, &rabs);
	rabs.tv_nsec += 30 * 1000 * 1000;
	if (rabs.tv_nsec >= 1000000000) {
		rabs.tv_sec++;
		rabs.tv_nsec -= 1000000000;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	CHECK_ERR(futex(&word_a, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME | pf, 1, &rabs, NULL,
			FUTEX_BITSET_MATCH_ANY),
		  ETIMEDOUT);
	CHECK(elapsed_ms(&start) >= 20);

	/* Argument errors. */
	struct timespec bad = {0, 1000000000};
	CHECK_ERR(futex(&word_a, FUTEX_WAIT | pf, 1, &bad, NULL, 0), EINVAL);
	struct timespec neg = {-1, 0};
	CHECK_ERR(futex(&word_a, FUTEX_WAIT | pf, 1, &neg, NULL, 0), EINVAL);
	CHECK_ERR(futex(&word_a, FUTEX_WAIT_BITSET | pf, 1, &rel, NULL, 0), EINVAL); /* bitset 0 */
	CHECK_ERR(
	    futex((volatile uint32_t *)((char *)&word_a + 1), FUTEX_WAIT | pf, 1, &rel, NULL, 0),
	    EINVAL);
	CHECK_ERR(futex(BAD_PTR, FUTEX_WAIT | pf, 1, &rel, NULL, 0), EINVAL); /* unaligned too */
	CHECK_ERR(futex((volatile uint32_t *)8, FUTEX_WAIT | pf, 1, &rel, NULL, 0), EFAULT);
	CHECK_ERR(futex(&word_a, 99 | pf, 0, NULL, NULL, 0), ENOSYS);

	/* Nobody waits: WAKE returns 0. */
	CHECK_EQ(futex(&word_a, FUTEX_WAKE | pf, 1, NULL, NULL, 0), 0);
	CHECK_EQ(futex(&word_a, FUTEX_WAKE | pf, INT_MAX, NULL, NULL, 0), 0);
}

static void test_wake_counts(int pf)
{
	struct waiter w[3];

	word_a = 0;
	for (int i = 0; i < 3; i++)
		start_waiter(&w[i], &word_a, FUTEX_WAIT | pf, 0, 0);
	CHECK(await_waiters(&word_a, pf, 3));
	maybe_save(); /* threads blocked on a futex */
	CHECK(await_waiters(&word_a, pf, 3));
	CHECK_EQ(futex(&word_a, FUTEX_WAKE | pf, 2, NULL, NULL, 0), 2);
	CHECK(await_waiters(&word_a, pf, 1));
	CHECK_EQ(futex(&word_a, FUTEX_WAKE | pf, 5, NULL, NULL, 0), 1);
	for (int i = 0; i < 3; i++)
		join_waiter(&w[i]);
}

static void test_requeue(int pf)
{
	struct waiter w[4];

	word_a = 7;
	word_b = 0;
	for (int i = 0; i < 4; i++)
		start_waiter(&w[i], &word_a, FUTEX_WAIT | pf, 7, 0);
	CHECK(await_waiters(&word_a, pf, 4));

	/* CMP_REQUEUE checks *uaddr against val3 first. */
	CHECK_ERR(futex(&word_a, FUTEX_CMP_REQUEUE | pf, 1, (void *)1, &word_b, 8), EAGAIN);
	CHECK_EQ(waiters_on(&word_a, pf), 4);

	/* Wake one, move one: returns both; two stay on a, one is on b. */
	CHECK_EQ(futex(&word_a, FUTEX_CMP_REQUEUE | pf, 1, (void *)1, &word_b, 7), 2);
	CHECK(await_waiters(&word_a, pf, 2));
	CHECK_EQ(waiters_on(&word_b, pf), 1);

	/*
	 * Plain REQUEUE (no compare): like CMP_REQUEUE, Linux returns woken plus requeued,
	 * although futex(2) says "woken" only.
	 */
	CHECK_EQ(futex(&word_a, FUTEX_REQUEUE | pf, 0, (void *)INT_MAX, &word_b, 0), 2);
	CHECK_EQ(waiters_on(&word_a, pf), 0);
	CHECK_EQ(waiters_on(&word_b, pf), 3);

	/* A wake on a finds nobody; b has them all. */
	CHECK_EQ(futex(&word_a, FUTEX_WAKE | pf, INT_MAX, NULL, NULL, 0), 0);
	CHECK_EQ(futex(&word_b, FUTEX_WAKE | pf, INT_MAX, NULL, NULL, 0), 3);
	for (int i = 0; i < 4; i++)
		join_waiter(&w[i]);
}

static void test_bitset(int pf)
{
	struct waiter w1, w2;

	word_a = 0;
	start_waiter(&w1, &word_a, FUTEX_WAIT_BITSET | pf, 0, 0x1);
	start_waiter(&w2, &word_a, FUTEX_WAIT_BITSET | pf, 0, 0x6);
	CHECK(await_waiters(&word_a, pf, 2));
	CHECK_EQ(futex(&word_a, FUTEX_WAKE_BITSET | pf, INT_MAX, NULL, NULL, 0x8), 0);
	CHECK_EQ(futex(&word_a, FUTEX_WAKE_BITSET | pf, INT_MAX, NULL, NULL, 0x4), 1);
	join_waiter(&w2);
	CHECK_EQ(waiters_on(&word_a, pf), 1);
	CHECK_ERR(futex(&word_a, FUTEX_WAKE_BITSET | pf, 1, NULL, NULL, 0), EINVAL);
	/* A plain WAKE matches every bitset. */
	CHECK_EQ(futex(&word_a, FUTEX_WAKE | pf, 1, NULL, NULL, 0), 1);
	join_waiter(&w1);
}

static void test_wake_op(int pf)
{
	struct waiter w1, w2;

	/* One waiter on each word; *b is 0, so CMP_EQ 0 holds and both are woken. */
	word_a = 0;
	word_b = 0;
	start_waiter(&w1, &word_a, FUTEX_WAIT | pf, 0, 0);
	start_waiter(&w2, &word_b, FUTEX_WAIT | pf, 0, 0);
	CHECK(await_waiters(&word_a, pf, 1));
	CHECK(await_waiters(&word_b, pf, 1));
	CHECK_EQ(futex(&word_a, FUTEX_WAKE_OP | pf, 1, (void *)1, &word_b,
		       FUTEX_OP(FUTEX_OP_SET, 5, FUTEX_OP_CMP_EQ, 0)),
		 2);
	CHECK_EQ(word_b, 5);
	join_waiter(&w1);
	join_waiter(&w2);

	/* The comparison is on the old value: 5 > 9 fails, so the b waiter stays. */
	start_waiter(&w2, &word_b, FUTEX_WAIT | pf, 5, 0);
	CHECK(await_waiters(&word_b, pf, 1));
	CHECK_EQ(futex(&word_a, FUTEX_WAKE_OP | pf, 1, (void *)1, &word_b,
		       FUTEX_OP(FUTEX_OP_ADD, 3, FUTEX_OP_CMP_GT, 9)),
		 0);
	CHECK_EQ(word_b, 8);
	CHECK_EQ(waiters_on(&word_b, pf), 1);
	CHECK_EQ(futex(&word_b, FUTEX_WAKE | pf, 1, NULL, NULL, 0), 1);
	join_waiter(&w2);

	/* The other operations, with nobody waiting. */
	word_b = 0xf0;
	CHECK_EQ(futex(&word_a, FUTEX_WAKE_OP | pf, 1, (void *)1, &word_b,
		       FUTEX_OP(FUTEX_OP_OR, 0x0f, FUTEX_OP_CMP_NE, 0)),
		 0);
	CHECK_EQ(word_b, 0xff);
	CHECK_EQ(futex(&word_a, FUTEX_WAKE_OP | pf, 1, (void *)1, &word_b,
		       FUTEX_OP(FUTEX_OP_ANDN, 0x3c, FUTEX_OP_CMP_EQ, 0)),
		 0);
	CHECK_EQ(word_b, 0xc3);
	CHECK_EQ(futex(&word_a, FUTEX_WAKE_OP | pf, 1, (void *)1, &word_b,
		       FUTEX_OP(FUTEX_OP_XOR, 0xff, FUTEX_OP_CMP_EQ, 0)),
		 0);
	CHECK_EQ(word_b, 0x3c);
	CHECK_EQ(futex(&word_a, FUTEX_WAKE_OP | pf, 1, (void *)1, &word_b,
		       FUTEX_OP(FUTEX_OP_SET | FUTEX_OP_OPARG_SHIFT, 4, FUTEX_OP_CMP_EQ, 0)),
		 0);
	CHECK_EQ(word_b, 16);
}

/* A shared futex on MAP_SHARED memory links two processes. */
static void test_shared_across_fork(void)
{
	volatile uint32_t *w =
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status;

	CHECK(w != MAP_FAILED);
	if (w == MAP_FAILED)
		return;
	*w = 0;
	pid_t pid = fork();
	if (pid == 0) {
		while (*w == 0)
			futex(w, FUTEX_WAIT, 0, NULL, NULL, 0);
		_exit(*w == 42 ? 0 : 1);
	}
	CHECK(await_waiters(w, 0, 1));
	maybe_save(); /* a process blocked on a shared futex */
	CHECK(await_waiters(w, 0, 1));
	*w = 42;
	CHECK_EQ(futex(w, FUTEX_WAKE, 1, NULL, NULL, 0), 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	munmap((void *)w, 4096);
}

int main(void)
{
	static const int flags[] = {0, FUTEX_PRIVATE_FLAG};

	for (int i = 0; i < 2; i++) {
		test_wait_value_and_timeouts(flags[i]);
		test_wake_counts(flags[i]);
		test_requeue(flags[i]);
		test_bitset(flags[i]);
		test_wake_op(flags[i]);
	}
	test_shared_across_fork();
	return check_done();
}
