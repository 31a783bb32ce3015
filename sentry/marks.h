/* Start-up marks: with MINISENTRY_MARKS set, `mark("name")` writes one line, "mark SEC.NSEC
 * PID name", to stderr at that moment (CLOCK_MONOTONIC, comparable across the launcher, the
 * Sentry and a caller): how docs/security.md's "Start-up" tables were timed. Off, a mark is one
 * load and a branch. */
#ifndef SENTRY_MARKS_H
#define SENTRY_MARKS_H

#include <stdbool.h>

extern bool marks_on;
void marks_init(void);
void mark_write(const char *name);

static inline void mark(const char *name)
{
	if (__builtin_expect(marks_on, 0))
		mark_write(name);
}

#endif
