/* Per-process timer state: ITIMER_REAL and the POSIX timers (timer.c). */
#ifndef SENTRY_TIMER_H
#define SENTRY_TIMER_H

#include <signal.h>

#include "sentry/sched.h"

struct task;

struct posix_timer {
	struct ktimer k;
	int id;
	clockid_t clock;
	int notify, signo;
	union sigval value;
	pid_t tid;
	struct task *leader;
	int overrun_last;
	struct posix_timer *next;
};

struct process_timers {
	struct task *leader;
	struct ktimer real; /* ITIMER_REAL */
	struct posix_timer *posix;
	int next_id;
};

/* Cancels and frees the timers of the process LEADER leads (at its exit). */
void timers_release(struct task *leader);

#endif
