/* Start-up marks (marks.h). */
#include "sentry/marks.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

bool marks_on;

void marks_init(void)
{
	const char *v = getenv("MINISENTRY_MARKS");

	marks_on = v && *v && (v[0] != '0' || v[1]);
}

void mark_write(const char *name)
{
	struct timespec ts;
	char line[128];

	clock_gettime(CLOCK_MONOTONIC, &ts);
	int n = snprintf(line, sizeof(line), "mark %lld.%09ld %d %s\n", (long long)ts.tv_sec,
			 ts.tv_nsec, (int)getpid(), name);
	if (n > 0 && write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0) {
		/* stderr closed: no marks */
	}
}
