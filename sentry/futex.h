/* Futexes: wait queues keyed by the memory-file location of a 32-bit word, so private and
 * shared mappings, and every mm that maps the same memory, agree on what a word is. */
#ifndef SENTRY_FUTEX_H
#define SENTRY_FUTEX_H

#include <stdint.h>

struct mm;

/* Wakes up to N waiters of the word at ADDR in MM; returns how many. */
int futex_wake_addr(struct mm *mm, uintptr_t addr, int n);

#endif
