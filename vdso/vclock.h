/* The guests' clock page and how a clock is read from it. The Sentry writes the page; every
 * guest maps it read-only as [vvar], just below its vDSO (docs/platform.md, "The guests'
 * vDSO"). The vDSO answers clock_gettime from it without leaving the guest, and the Sentry
 * answers the clock syscalls with this same function on this same page, so a read through libc
 * and a raw syscall never disagree. Freestanding: the vDSO has no libc. */
#ifndef VDSO_VCLOCK_H
#define VDSO_VCLOCK_H

#include <stdbool.h>
#include <stdint.h>

/* Clock ids as Linux numbers them (the vDSO has no <time.h>). */
enum {
	VCLOCK_REALTIME = 0,
	VCLOCK_MONOTONIC = 1,
	VCLOCK_MONOTONIC_RAW = 4,
	VCLOCK_REALTIME_COARSE = 5,
	VCLOCK_MONOTONIC_COARSE = 6,
	VCLOCK_BOOTTIME = 7,
	VCLOCK_TAI = 11,
};

/* Every read is the syscall: no usable TSC on this host, or not calibrated yet. */
#define VCLOCK_MODE_SYSCALL 0
/* Clocks are computed from the TSC. */
#define VCLOCK_MODE_TSC 1

#define VCLOCK_SHIFT 32
#define VCLOCK_NSEC_PER_SEC 1000000000LL

/* A clock as a line: BASE_NS at the page's base_tsc, then MULT / 2^32 ns per TSC cycle. */
struct vclock_line {
	uint64_t base_ns;
	uint64_t mult;
};

struct vclock_page {
	uint32_t seq; /* odd while the Sentry writes the rest */
	uint32_t mode;
	uint64_t base_tsc;
	struct vclock_line mono; /* the guest's CLOCK_MONOTONIC */
	struct vclock_line raw;	 /* the guest's CLOCK_MONOTONIC_RAW */
	int64_t real_off;	 /* CLOCK_REALTIME minus CLOCK_MONOTONIC, ns */
	int64_t boot_off;	 /* CLOCK_BOOTTIME minus CLOCK_MONOTONIC */
	int64_t tai_off;	 /* CLOCK_TAI minus CLOCK_MONOTONIC */
	uint64_t coarse_res;	 /* ns: the coarse clocks step by this much (the host's tick) */
	uint64_t hres_res;	 /* ns: the resolution of the others (the host's, 1) */
};

/* The TSC, ordered: not read before the loads ahead of it, nor after the loads behind it (the
 * sequence count's second read must come after it, see vclock_read). */
static inline uint64_t vclock_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("lfence; rdtsc; lfence" : "=a"(lo), "=d"(hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}

static inline uint64_t vclock_ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* LINE's value at TSC. A CPU whose TSC is a little behind the one the base was read on reads
 * the base, never less. The product is 128 bits wide: a line stays right however long the
 * Sentry leaves it alone. */
static inline uint64_t vclock_line_at(const struct vclock_line *line, uint64_t base_tsc,
				      uint64_t tsc)
{
	uint64_t d = tsc > base_tsc ? tsc - base_tsc : 0;

	return vclock_ld(&line->base_ns) +
	       (uint64_t)(((unsigned __int128)d * vclock_ld(&line->mult)) >> VCLOCK_SHIFT);
}

/* Clock CLK's value in ns from page P, reading the TSC with RDTSC once: 0, or -1 when the page
 * cannot say (syscall mode, a clock it does not keep, or the Sentry writing it: a reader never
 * waits for the Sentry, which may be waiting for the CPU the reader spins on) and the caller
 * must ask the kernel. The coarse clocks are the fine ones cut down to COARSE_RES: never
 * ahead of a fine read that follows, like Linux's, which are the time of the last tick. */
static inline int vclock_read(const struct vclock_page *p, int clk, uint64_t (*rdtsc)(void),
			      int64_t *ns)
{
	for (int tries = 0; tries < 4; tries++) {
		uint32_t seq = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
		if ((seq & 1) || __atomic_load_n(&p->mode, __ATOMIC_RELAXED) != VCLOCK_MODE_TSC)
			return -1;
		uint64_t tsc = rdtsc(), base = vclock_ld(&p->base_tsc);
		uint64_t mono = vclock_line_at(&p->mono, base, tsc), res;
		int64_t v;
		switch (clk) {
		case VCLOCK_MONOTONIC:
			v = (int64_t)mono;
			break;
		case VCLOCK_REALTIME:
			v = (int64_t)mono + (int64_t)vclock_ld((const uint64_t *)&p->real_off);
			break;
		case VCLOCK_BOOTTIME:
			v = (int64_t)mono + (int64_t)vclock_ld((const uint64_t *)&p->boot_off);
			break;
		case VCLOCK_TAI:
			v = (int64_t)mono + (int64_t)vclock_ld((const uint64_t *)&p->tai_off);
			break;
		case VCLOCK_MONOTONIC_RAW:
			v = (int64_t)vclock_line_at(&p->raw, base, tsc);
			break;
		case VCLOCK_MONOTONIC_COARSE:
		case VCLOCK_REALTIME_COARSE:
			res = vclock_ld(&p->coarse_res);
			if (!res)
				return -1;
			v = (int64_t)(mono - mono % res);
			if (clk == VCLOCK_REALTIME_COARSE)
				v += (int64_t)vclock_ld((const uint64_t *)&p->real_off);
			break;
		default:
			return -1;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&p->seq, __ATOMIC_RELAXED) == seq) {
			if (v < 0)
				return -1; /* before the epoch: the kernel says how it looks */
			*ns = v;
			return 0;
		}
	}
	return -1;
}

/* The resolution of clock CLK per page P: 0, or -1 when the kernel must say. */
static inline int vclock_res(const struct vclock_page *p, int clk, int64_t *ns)
{
	if (__atomic_load_n(&p->mode, __ATOMIC_RELAXED) != VCLOCK_MODE_TSC)
		return -1;
	switch (clk) {
	case VCLOCK_REALTIME:
	case VCLOCK_MONOTONIC:
	case VCLOCK_MONOTONIC_RAW:
	case VCLOCK_BOOTTIME:
	case VCLOCK_TAI:
		*ns = (int64_t)vclock_ld(&p->hres_res);
		return *ns ? 0 : -1;
	case VCLOCK_REALTIME_COARSE:
	case VCLOCK_MONOTONIC_COARSE:
		*ns = (int64_t)vclock_ld(&p->coarse_res);
		return *ns ? 0 : -1;
	}
	return -1;
}

#endif
