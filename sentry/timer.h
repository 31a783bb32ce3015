/* Per-process timer state: ITIMER_REAL and the POSIX timers (timer.c). */
#ifndef SENTRY_TIMER_H
#define SENTRY_TIMER_H

#include <signal.h>

#include "sentry/sched.h"

struct task;

/* A timer on the process's CPU time (ITIMER_VIRTUAL/PROF, CPU-clock POSIX timers): sampled,
 * since the host tells CPU time but not when a budget runs out. */
struct cpu_itimer {
	bool armed;
	struct timespec expiry, interval;
};

struct posix_timer {
	struct ktimer k;       /* wall clocks */
	struct cpu_itimer cpu; /* CLOCK_PROCESS_CPUTIME_ID */
	int id;
	clockid_t clock;
	int notify, signo;
	union sigval value;
	pid_t tid;
	struct task *leader;
	int overrun;	  /* expiries while its signal was still queued */
	int overrun_last; /* what the last delivered signal stood for (timer_getoverrun) */
	bool queued;	  /* its signal is pending: expiries count as overruns */
	struct posix_timer *next;
};

struct process_timers {
	struct task *leader;
	struct ktimer real;	  /* ITIMER_REAL */
	struct cpu_itimer cpu[2]; /* ITIMER_VIRTUAL, ITIMER_PROF */
	struct ktimer cpu_poll;	  /* samples CPU time while a CPU itimer is armed */
	struct posix_timer *posix;
	int next_id;
};

/* A POSIX timer's signal (INFO, SI_TIMER) was taken off a queue: fills in its overrun. */
void timer_signal_dequeued(siginfo_t *info);

/* Decodes a clock id, including the CPU clocks glibc encodes for a pid (MAKE_PROCESS_CPUCLOCK):
 * process CPU clocks of the caller become CLOCK_PROCESS_CPUTIME_ID and thread ones
 * CLOCK_THREAD_CPUTIME_ID; others are returned as they are (-EINVAL if not a clock). */
clockid_t timer_decode_clock(struct task *t, clockid_t clk);

/* Makes timerfd files checkpointable (vfs_file_kind_register): called once at start, before a
 * checkpoint or a restore; 0 or -EEXIST when registered already, -ENOMEM. */
int timerfd_register_kind(void);

/* LEADER's RLIMIT_CPU was set, inherited or restored: a finite one is watched from now on
 * (sampled with the CPU-time itimers). */
void timers_cpu_limit_changed(struct task *leader);

/* Cancels and frees the timers of the process LEADER leads (at its exit). */
void timers_release(struct task *leader);
/* An exec of LEADER's process: its POSIX timers are deleted (timer_create(2)); the interval
 * timers of setitimer and alarm stay. */
void timers_exec(struct task *leader);

/* Checkpoint: the timers of the process LEADER leads, saved with its task record. On a failed
 * load the caller frees them with timers_release. */
struct enc;
struct dec;
void timers_save(struct enc *e, const struct task *leader);
int timers_load(struct dec *d, struct task *leader);

#endif
