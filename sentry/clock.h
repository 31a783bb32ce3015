/* The guests' clocks: what every guest clock read returns, through the vDSO or a syscall, and
 * the time every deadline of the Sentry is kept in. Where the host's TSC can be trusted, each
 * clock is a line through the TSC that clock.c draws in the clock page (vdso/vclock.h) and
 * re-draws against the host's clocks on the Sentry's tick; elsewhere the clocks are the host's.
 * Guest monotonic time carries an offset, so a restore goes on from the checkpoint's.
 * docs/platform.md, "The guests' vDSO". */
#ifndef SENTRY_CLOCK_H
#define SENTRY_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

struct vclock_page;

/* Sets up the clocks on PAGE (the clock page the guests map; NULL: a page of the Sentry's
 * own, for tests). TSC mode is tried unless the host's TSC is not usable or
 * MINISENTRY_VDSO_CLOCK=syscall is set in the environment. */
void clock_init(struct vclock_page *page);
/* Looks at the host's clocks now (what clock_init would read of /proc and /sys), for a
 * clock_init in a Sentry that no longer reaches them. */
void clock_probe_host(void);
/* Re-draws the lines when that is due: the Sentry's tick, and a guest's clock syscall. */
void clock_tick(void);

/* The guest's CLOCK_MONOTONIC, which the Sentry's deadlines use. */
struct timespec mono_now(void);
/* Clock CLK as the guest reads it (not the CPU-time clocks): 0 or -EINVAL. */
int clock_now(clockid_t clk, struct timespec *ts);
/* A restore: guest monotonic time goes on from GUEST_NOW. */
void mono_continue_from(struct timespec guest_now);
/* Guest monotonic minus the host's CLOCK_MONOTONIC now, in ns: how a deadline in guest time
 * becomes one for a host timer (which may fire a little early: callers check again). */
int64_t clock_host_offset(void);

/* What --stats prints: the mode, and how far the lines had to be corrected. */
void clock_print_stats(FILE *f);

/* For unit tests: the TSC and host clocks the guests' clocks are measured against. */
struct clock_source {
	uint64_t (*tsc)(void);
	int (*host)(clockid_t clk, struct timespec *ts);
	bool tsc_usable;
};
void clock_set_source(const struct clock_source *src);

#endif
