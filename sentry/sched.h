/* Blocking = retry (DESIGN.md §4). A handler that cannot finish registers what would let it
 * progress — wait queues, host descriptors, a deadline — and returns task_block(). The task's
 * host thread stays in its ptrace stop; when any of those fires, the task goes on the run
 * queue and the loop calls the same handler again with the same arguments (t->blk.retry set).
 * A blocked task is therefore fully described by "inside syscall N with registers R". */
#ifndef SENTRY_SCHED_H
#define SENTRY_SCHED_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "sentry/clock.h"

struct task;
struct waitq;

int task_wait_queue(struct task *t, struct waitq *q, uint32_t events);
int task_wait_host_fd(struct task *t, int fd, uint32_t events);
/* Wakes T at DEADLINE (CLOCK_MONOTONIC, absolute); the retried handler sees t->blk.timed_out. */
void task_wait_until(struct task *t, const struct timespec *deadline);
/* Parks T with what it registered; returns -ESENTRY_BLOCK for the handler to return. */
long task_block(struct task *t);
/* Wakes at most N tasks waiting on Q whose wait events share a bit with BITS, calling MARK on
 * each first and taking them off Q; returns how many (futex wake). */
int task_waitq_wake_n(struct waitq *q, int n, uint32_t bits, void (*mark)(struct task *));
/* Moves at most N task waiters from FROM to TO (futex requeue), calling MOVED (if not NULL) on
 * each; returns how many. */
int task_waitq_requeue(struct waitq *from, struct waitq *to, int n, void (*moved)(struct task *));
/* Schedules a blocked T to retry its syscall. Safe from wait-queue callbacks. */
void task_wake(struct task *t);
/* Drops everything T waits on and takes it off the run queue (exit, signal, retry). */
void task_cancel_wait(struct task *t);

/* A kernel timer on the monotonic clock: fires FN from the loop at DEADLINE, then every
 * INTERVAL if that is non-zero. Owners embed it and recover themselves from the pointer. */
struct ktimer {
	struct timespec deadline, interval;
	bool armed;
	/* EXPIRATIONS counts the periods that passed (more than 1 when the loop was late). */
	void (*fn)(struct ktimer *k, uint64_t expirations);
	struct ktimer *next;
};

void ktimer_arm(struct ktimer *k, struct timespec deadline, struct timespec interval);
void ktimer_cancel(struct ktimer *k);
/* Time left before the next expiry, zero if disarmed. */
struct timespec ktimer_remaining(const struct ktimer *k);

/* Retries the syscalls of woken tasks until none is left. */
void sched_run_woken(void);
/* True when something besides guest stops can wake a task: host descriptors or deadlines. */
bool sched_needs_events(void);
/* Registers the scheduler's timer with epoll set EPFD. */
int sched_init(int epfd);
/* Handles an epoll event whose data is PTR (a watch or the timer); false if not ours. */
bool sched_handle_event(void *ptr, uint32_t events);
/* Arms the timer for the earliest deadline. */
void sched_arm_timer(void);

/* Time helpers. The guest's clocks (mono_now, which the Sentry's deadlines use, and clock_now)
 * are sentry/clock.h's. */
struct timespec ts_add(struct timespec a, struct timespec b);
int ts_cmp(struct timespec a, struct timespec b);
struct timespec ts_sub(struct timespec a, struct timespec b); /* clamped at zero */
bool ts_is_zero(struct timespec a);

#endif
