/* Futexes: wait queues keyed by the memory-file location of a 32-bit word, so private and
 * shared mappings, and every mm that maps the same memory, agree on what a word is. */
#ifndef SENTRY_FUTEX_H
#define SENTRY_FUTEX_H

#include <stdint.h>
#include <sys/types.h>

struct mm;

/* Wakes up to N waiters of the word at ADDR in MM; returns how many. */
int futex_wake_addr(struct mm *mm, uintptr_t addr, int n);

/* Thread TID leaves the address space MM (exit, or exec's old one) with the robust futex list
 * at HEAD (set_robust_list; 0 for none): every lock on it that TID still holds is marked
 * FUTEX_OWNER_DIED and one waiter woken, so that the next owner gets EOWNERDEAD. */
void futex_robust_release(struct mm *mm, uintptr_t head, pid_t tid);

#endif
