/*
 * t_futex_waitv: futex_waitv waits on several words and returns the index of the one woken
 * (a thread blocked across a checkpoint too, and a child on a shared word); a word whose value
 * differs is EAGAIN at once; an absolute timeout on CLOCK_MONOTONIC or CLOCK_REALTIME is
 * ETIMEDOUT; bad flags, counts, clocks, sizes and alignment are EINVAL, a bad address EFAULT.
 */
#include "check.h"
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif
#define SIZE_U32 0x02
#define FUTEX_WAKE 1
#define FUTEX_WAKE_PRIVATE (1 | 128)
#define PRIVATE 128

struct waitv {
	uint64_t val;
	uint64_t uaddr;
	uint32_t flags;
	uint32_t reserved;
};

static uint32_t words[3];

static long waitv(struct waitv *w, unsigned n, struct timespec *ts, int clk)
{
	return syscall(SYS_futex_waitv, w, n, 0, ts, clk);
}

static void set(struct waitv *w, uint32_t *word, uint64_t val, uint32_t flags)
{
	*w = (struct waitv){.val = val, .uaddr = (uintptr_t)word, .flags = flags};
}

static long wake(uint32_t *word, int shared)
{
	return syscall(SYS_futex, word, shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static volatile long result = -100;

static void *waiter(void *arg)
{
	struct waitv w[3];

	(void)arg;
	for (int i = 0; i < 3; i++)
		set(&w[i], &words[i], 0, SIZE_U32 | PRIVATE);
	result = waitv(w, 3, NULL, 0);
	return NULL;
}

/* Wakes word I until the waiter has gone (it may not be queued yet). */
static void wake_until_done(uint32_t *word, int shared, volatile long *done, long unset)
{
	for (int i = 0; i < 5000 && *done == unset; i++) {
		wake(word, shared);
		usleep(1000);
	}
}

int main(void)
{
	struct waitv w[4];
	struct timespec ts;

	/* A differing value: at once. */
	set(&w[0], &words[0], 0, SIZE_U32 | PRIVATE);
	set(&w[1], &words[1], 7, SIZE_U32 | PRIVATE);
	CHECK_ERR(waitv(w, 2, NULL, 0), EAGAIN);

	/* Timeouts are absolute. */
	set(&w[1], &words[1], 0, SIZE_U32 | PRIVATE);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += 20 * 1000000;
	if (ts.tv_nsec >= 1000000000)
		ts.tv_sec++, ts.tv_nsec -= 1000000000;
	CHECK_ERR(waitv(w, 2, &ts, CLOCK_MONOTONIC), ETIMEDOUT);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 20 * 1000000;
	if (ts.tv_nsec >= 1000000000)
		ts.tv_sec++, ts.tv_nsec -= 1000000000;
	CHECK_ERR(waitv(w, 2, &ts, CLOCK_REALTIME), ETIMEDOUT);

	/* Errors. */
	CHECK_ERR(syscall(SYS_futex_waitv, w, 2, 1, NULL, 0), EINVAL);
	CHECK_ERR(waitv(w, 0, NULL, 0), EINVAL);
	CHECK_ERR(waitv(w, 129, NULL, 0), EINVAL);
	CHECK_ERR(waitv(NULL, 1, NULL, 0), EINVAL);
	CHECK_ERR(waitv(w, 2, &ts, CLOCK_BOOTTIME), EINVAL);
	CHECK_ERR(waitv(BAD_PTR, 1, NULL, 0), EFAULT);
	set(&w[2], &words[2], 0, 0x03); /* 64-bit words: not offered */
	CHECK_ERR(waitv(w, 3, NULL, 0), EINVAL);
	set(&w[2], &words[2], 0, SIZE_U32);
	w[2].reserved = 1;
	CHECK_ERR(waitv(w, 3, NULL, 0), EINVAL);
	set(&w[2], (uint32_t *)((char *)&words[2] + 1), 0, SIZE_U32);
	CHECK_ERR(waitv(w, 3, NULL, 0), EINVAL);
	set(&w[2], &words[2], 1ULL << 32, SIZE_U32);
	CHECK_ERR(waitv(w, 3, NULL, 0), EINVAL);
	set(&w[2], (uint32_t *)8, 0, SIZE_U32); /* aligned, unmapped */
	CHECK_ERR(waitv(w, 3, NULL, 0), EFAULT);

	/* A thread waits on three words, across a checkpoint; the second one wakes it. */
	pthread_t th;
	CHECK_EQ(pthread_create(&th, NULL, waiter, NULL), 0);
	usleep(20000);
	maybe_save();
	CHECK_EQ(result, -100);
	wake_until_done(&words[1], 0, &result, -100);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(result, 1);

	/* A child waits on a shared word (and a private one); the parent wakes the shared one. */
	uint32_t *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	pid_t pid = fork();
	if (pid == 0) {
		struct waitv c[2];
		set(&c[0], &words[0], 0, SIZE_U32 | PRIVATE);
		set(&c[1], sh, 0, SIZE_U32);
		long r = waitv(c, 2, NULL, 0);
		sh[1] = 1;
		_exit(r == 1 ? 0 : 10 + (int)r);
	}
	for (int i = 0; i < 5000 && !((volatile uint32_t *)sh)[1]; i++) {
		wake(sh, 1);
		usleep(1000);
	}
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	return check_done();
}
