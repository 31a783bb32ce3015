/* The guests' clocks (clock.h). In TSC mode the guest's CLOCK_MONOTONIC and MONOTONIC_RAW are
 * lines through the TSC in the clock page, and the other clocks offsets from them; the vDSO
 * and the Sentry read them with the same function (vclock_read), so the two agree exactly.
 * The lines are re-drawn against the host's clocks at most PERIOD_NS apart: each new line
 * starts where the old one is at that instant (a reader never sees time step back) and its
 * slope is the TSC's rate measured over the last few seconds, bent by at most
 * MAX_SLEW_PPM so that any distance to the host's clock is gone within about SLEW_NS. The
 * host's wall clock is followed as an offset from monotonic time, so a step of the host's
 * realtime clock reaches the guests at the next re-draw. In syscall mode the guest's clocks
 * are the host's, monotonic ones plus the restore offset. */
#include "sentry/clock.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/units.h"
#include "vdso/vclock.h"

#define MIN_BASELINE_NS NSEC_PER_MSEC	  /* the first rate is measured over this at least */
#define PERIOD_NS (250 * NSEC_PER_MSEC)	  /* the lines are re-drawn at least this often */
#define SLEW_NS NSEC_PER_SEC		  /* a distance to the host's clock is gone in this */
#define MAX_SLEW_PPM 500		  /* a line is at most this much faster or slower */
#define STEP_NS (10 * NSEC_PER_MSEC)	  /* farther than this, a line jumps (forward) */
#define RATE_WINDOW_NS (4 * NSEC_PER_SEC) /* the rate's baseline: one to two of these */
#define WALL_STEP_NS (10 * NSEC_PER_USEC) /* a step of the host's wall clock we follow */

static uint64_t host_rdtsc(void)
{
	return vclock_rdtsc();
}

/* A host clock read with a bracket of TSC readings: the clock was between LO and HI when the
 * TSC read TSC. */
struct sample {
	uint64_t tsc;
	int64_t lo, hi;
};

/* A reference point of both lines for their rate. */
struct ref {
	struct sample mono, raw;
};

static struct vclock_page unmapped_page; /* the page when no guest maps one (tests) */

/* The page the guests map is as writable to a hostile guest as any memory of its sandbox (its
 * stub may map any of the memory file): the Sentry never reads it back. It draws the lines in
 * a copy of its own, OWN, which its own clock reads use, and publishes them to PAGE. */
static struct {
	struct vclock_page *page;
	struct vclock_page own;
	struct clock_source src;
	bool tsc;	    /* TSC mode is possible here */
	const char *why;    /* why not */
	int64_t off;	    /* guest monotonic minus the host's (both lines aim at host + off) */
	int64_t wall, boot; /* the host's realtime and boottime minus its monotonic, as followed */
	struct ref ref, cand; /* the rate's baseline runs from REF; CAND becomes REF later */
	uint64_t due;	      /* TSC value at which the lines are re-drawn next */
	uint64_t redraws, jumps;
	int64_t worst; /* the largest distance a re-draw found to the host's clock, ns */
} ck = {
    .page = &unmapped_page,
    .src = {host_rdtsc, clock_gettime, true},
};

void clock_set_source(const struct clock_source *src)
{
	ck.src = *src;
}

static int64_t ts_ns(struct timespec ts)
{
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static struct timespec ns_ts(int64_t ns)
{
	struct timespec ts = {ns / NSEC_PER_SEC, ns % NSEC_PER_SEC};

	if (ts.tv_nsec < 0) {
		ts.tv_sec--;
		ts.tv_nsec += NSEC_PER_SEC;
	}
	return ts;
}

static int64_t host_ns(clockid_t clk)
{
	struct timespec ts = {0, 0};

	ck.src.host(clk, &ts);
	return ts_ns(ts);
}

/* The narrowest bracket of a few: a read the scheduler cut in two is not used. */
static struct sample take(clockid_t clk)
{
	struct sample best = {0, 0, INT64_MAX};

	for (int i = 0; i < 4; i++) {
		int64_t lo = host_ns(clk);
		uint64_t tsc = ck.src.tsc();
		int64_t hi = host_ns(clk);
		if (hi - lo < best.hi - best.lo)
			best = (struct sample){tsc, lo, hi};
		if (best.hi - best.lo < 200)
			break;
	}
	return best;
}

static int64_t mid(struct sample s)
{
	return s.lo + (s.hi - s.lo) / 2;
}

/* CLK minus CLOCK_MONOTONIC on the host, at the upper end of what a bracket allows. */
static int64_t host_offset(clockid_t clk)
{
	int64_t best = INT64_MAX, off = 0;

	for (int i = 0; i < 4 && best > 200; i++) {
		int64_t lo = host_ns(CLOCK_MONOTONIC), v = host_ns(clk),
			hi = host_ns(CLOCK_MONOTONIC);
		if (hi - lo < best) {
			best = hi - lo;
			off = v - lo;
		}
	}
	return off;
}

/* The slope from A to B in ns per 2^32 cycles, if it is a TSC's: 50 MHz to 20 GHz. */
static bool slope(struct sample a, struct sample b, uint64_t *mult)
{
	if (b.tsc <= a.tsc || mid(b) <= mid(a))
		return false;
	unsigned __int128 m =
	    ((unsigned __int128)(uint64_t)(mid(b) - mid(a)) << VCLOCK_SHIFT) / (b.tsc - a.tsc);
	if (m > (20ULL << VCLOCK_SHIFT) || m < (1ULL << VCLOCK_SHIFT) / 20)
		return false;
	*mult = (uint64_t)m;
	return true;
}

/* V (a value at TSC reading AT) carried to TSC reading TO at MULT. */
static int64_t carry(int64_t v, uint64_t at, uint64_t to, uint64_t mult)
{
	if (to >= at)
		return v + (int64_t)(((unsigned __int128)(to - at) * mult) >> VCLOCK_SHIFT);
	return v - (int64_t)(((unsigned __int128)(at - to) * mult) >> VCLOCK_SHIFT);
}

/* The lines change between these two, and reach the page at the end: readers that overlap
 * retry or take the syscall. The fence makes the odd count visible before the writer reads the
 * TSC, so a reader that used the old lines read its TSC before the new lines' base. */
static void write_begin(void)
{
	__atomic_store_n(&ck.page->seq, ++ck.own.seq, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void write_end(void)
{
	const size_t at = offsetof(struct vclock_page, mode);

	memcpy((char *)ck.page + at, (const char *)&ck.own + at, sizeof(ck.own) - at);
	__atomic_store_n(&ck.page->seq, ++ck.own.seq, __ATOMIC_RELEASE);
}

/* The line that goes on from G, the old line's value at the new base, towards TARGET, the
 * host's clock there, at MULT (the measured rate) bent by at most MAX_SLEW_PPM; a line too
 * far behind jumps to TARGET, one too far ahead goes on at MULT and the offset takes the
 * difference (time never steps back). */
static struct vclock_line steer(int64_t g, int64_t target, uint64_t mult, int64_t *shift)
{
	int64_t e = g - target;

	if (llabs(e) > ck.worst)
		ck.worst = llabs(e);
	if (e < -STEP_NS) {
		ck.jumps++;
		return (struct vclock_line){(uint64_t)target, mult};
	}
	if (e > STEP_NS) {
		ck.jumps++;
		*shift = e;
		return (struct vclock_line){(uint64_t)g, mult};
	}
	__int128 adj = (__int128)e * (__int128)mult / SLEW_NS;
	__int128 cap = (__int128)mult * MAX_SLEW_PPM / 1000000;
	if (adj > cap)
		adj = cap;
	if (adj < -cap)
		adj = -cap;
	return (struct vclock_line){(uint64_t)g, (uint64_t)((__int128)mult - adj)};
}

/* Follows the host's offset CUR to NOW, a new measure of it, only when the host stepped its
 * clock (or the first measure was that far off): the measures differ by the time between two
 * reads, and following that would make the guest's clock step back and forth. */
static void follow(int64_t *cur, int64_t now, bool first)
{
	if (first || llabs(now - *cur) > WALL_STEP_NS)
		*cur = now;
}

/* Back to syscall mode (the TSC went backwards: a host suspend, or a TSC no longer to be
 * trusted): the host's clocks plus an offset that keeps guest time from stepping back. */
static void lose_tsc(void)
{
	struct vclock_page *p = &ck.own;
	uint64_t c = ck.src.tsc();

	if (p->mode == VCLOCK_MODE_TSC) {
		int64_t gm = (int64_t)vclock_line_at(&p->mono, p->base_tsc, c);
		int64_t gr = (int64_t)vclock_line_at(&p->raw, p->base_tsc, c);
		int64_t hm = host_ns(CLOCK_MONOTONIC), hr = host_ns(CLOCK_MONOTONIC_RAW);
		if (gm - hm > ck.off)
			ck.off = gm - hm;
		if (gr - hr > ck.off)
			ck.off = gr - hr;
	}
	write_begin();
	p->mode = VCLOCK_MODE_SYSCALL;
	write_end();
	ck.ref = (struct ref){take(CLOCK_MONOTONIC), take(CLOCK_MONOTONIC_RAW)};
	ck.cand = (struct ref){{0, 0, 0}, {0, 0, 0}};
	ck.due = 0;
}

/* Re-draws both lines through the TSC against the host's clocks now. */
static void redraw(void)
{
	struct vclock_page *p = &ck.own;
	struct ref now = {take(CLOCK_MONOTONIC), take(CLOCK_MONOTONIC_RAW)};
	uint64_t mm, mr;

	if (now.mono.tsc <= ck.ref.mono.tsc || now.raw.tsc <= ck.ref.raw.tsc) {
		lose_tsc();
		return;
	}
	if (mid(now.mono) - mid(ck.ref.mono) < MIN_BASELINE_NS)
		return; /* too early to know the rate */
	if (!slope(ck.ref.mono, now.mono, &mm) || !slope(ck.ref.raw, now.raw, &mr)) {
		ck.tsc = false;
		ck.why = "its TSC does not tick at a steady rate";
		lose_tsc();
		return;
	}
	bool first = p->mode != VCLOCK_MODE_TSC;
	int64_t wall = host_offset(CLOCK_REALTIME), boot = host_offset(CLOCK_BOOTTIME);
	int64_t tai = host_offset(CLOCK_TAI) - wall;
	tai = (tai + NSEC_PER_SEC / 2) / NSEC_PER_SEC * NSEC_PER_SEC; /* whole seconds */

	write_begin();
	uint64_t c = ck.src.tsc();
	int64_t tm = carry(mid(now.mono), now.mono.tsc, c, mm) + ck.off;
	int64_t tr = carry(mid(now.raw), now.raw.tsc, c, mr) + ck.off;
	if (first) {
		/* From syscall mode: from the bracket's upper end, which no read before was past.
		 */
		p->mono = (struct vclock_line){
		    (uint64_t)(carry(now.mono.hi, now.mono.tsc, c, mm) + ck.off), mm};
		p->raw = (struct vclock_line){
		    (uint64_t)(carry(now.raw.hi, now.raw.tsc, c, mr) + ck.off), mr};
	} else {
		int64_t shift = 0, gm = (int64_t)vclock_line_at(&p->mono, p->base_tsc, c);
		int64_t gr = (int64_t)vclock_line_at(&p->raw, p->base_tsc, c);
		p->mono = steer(gm, tm, mm, &shift);
		ck.off += shift;
		if (shift)
			tr += shift;
		shift = 0;
		p->raw = steer(gr, tr, mr, &shift);
	}
	p->base_tsc = c;
	follow(&ck.wall, wall, first && !ck.redraws);
	follow(&ck.boot, boot, first && !ck.redraws);
	p->real_off = ck.wall - ck.off;
	p->boot_off = ck.boot;
	p->tai_off = p->real_off + tai;
	p->mode = VCLOCK_MODE_TSC;
	write_end();
	ck.redraws++;

	/* The rate's baseline: from a reference at least RATE_WINDOW_NS old once there is one,
	 * so that it follows the host's corrections of its clock's rate. */
	if (!ck.cand.mono.tsc)
		ck.cand = now;
	else if (mid(now.mono) - mid(ck.cand.mono) >= RATE_WINDOW_NS) {
		ck.ref = ck.cand;
		ck.cand = now;
	}
	/* The first rates are short-based: re-draw soon, then every PERIOD_NS. */
	int64_t next = mid(now.mono) - mid(ck.ref.mono);
	if (next > PERIOD_NS)
		next = PERIOD_NS;
	ck.due = c + (uint64_t)(((unsigned __int128)next << VCLOCK_SHIFT) / mm);
}

void clock_tick(void)
{
	if (!ck.tsc)
		return;
	/* Not due, unless the TSC went back past the lines' base (a host suspend reset it). */
	uint64_t now = ck.src.tsc();
	if (ck.due && now < ck.due && now >= ck.own.base_tsc)
		return;
	/* Before the first line, the cheap check: is there a baseline yet? */
	if (!ck.due && host_ns(CLOCK_MONOTONIC) - mid(ck.ref.mono) < MIN_BASELINE_NS)
		return;
	redraw();
}

/* Whether the host's TSC keeps time: it ticks at one rate whatever the CPU's frequency and
 * state (constant_tsc, nonstop_tsc), and the kernel has not given up on it as a clock
 * source (it is no longer listed once the kernel finds it unstable). */
static const char *host_tsc_looked_up(void)
{
	const char *env = getenv("MINISENTRY_VDSO_CLOCK");
	char line[4096];
	bool constant = false, nonstop = false;
	FILE *f;

	if (env && !strcmp(env, "syscall"))
		return "MINISENTRY_VDSO_CLOCK=syscall";
	if (!(f = fopen("/proc/cpuinfo", "re")))
		return "/proc/cpuinfo is unreadable";
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	if (!constant || !nonstop)
		return "the CPU has no constant_tsc and nonstop_tsc";
	f = fopen("/sys/devices/system/clocksource/clocksource0/available_clocksource", "re");
	if (f) {
		bool listed = fgets(line, sizeof(line), f) && strstr(line, "tsc");
		fclose(f);
		if (!listed)
			return "the kernel does not trust the TSC as a clock source";
	}
	return NULL;
}

/* Looked up once: a warm slot's Sentry sets its clock up once locked in, where /proc/cpuinfo
 * is out of reach (clock_probe_host, before its lock). */
static const char *host_tsc_unusable(void)
{
	static const char *why;
	static bool known;

	if (!known) {
		why = host_tsc_looked_up();
		known = true;
	}
	return why;
}

void clock_probe_host(void)
{
	host_tsc_unusable();
}

static int64_t host_res(clockid_t clk)
{
	struct timespec ts = {0, 0};

	return clock_getres(clk, &ts) ? 0 : ts_ns(ts);
}

void clock_init(struct vclock_page *page)
{
	uint32_t seq = 0;

	ck.page = page ? page : &unmapped_page;
	ck.why = ck.src.tsc == host_rdtsc ? host_tsc_unusable()
		 : ck.src.tsc_usable	  ? NULL
					  : "the test said so";
	ck.tsc = !ck.why;
	/* A random count: a guest thread a checkpoint stopped inside the vDSO, between its two
	 * reads of the count, must see it change across the restore and read again. */
	if (getrandom(&seq, sizeof(seq), 0) != sizeof(seq))
		seq = 0;
	memset(&ck.own, 0, sizeof(ck.own));
	ck.own.seq = seq & ~1u;
	ck.own.mode = VCLOCK_MODE_SYSCALL;
	ck.own.coarse_res = (uint64_t)host_res(CLOCK_MONOTONIC_COARSE);
	ck.own.hres_res = (uint64_t)host_res(CLOCK_MONOTONIC);
	memset(ck.page, 0, sizeof(*ck.page));
	write_begin();
	write_end();
	ck.ref = (struct ref){take(CLOCK_MONOTONIC), take(CLOCK_MONOTONIC_RAW)};
	ck.cand = (struct ref){{0, 0, 0}, {0, 0, 0}};
	ck.due = 0;
	ck.redraws = ck.jumps = 0;
	ck.worst = 0;
}

/* Guest clock CLK in ns, from the page, else from the host. */
static int guest_ns(clockid_t clk, int64_t *ns)
{
	if (clk == CLOCK_REALTIME_ALARM)
		clk = CLOCK_REALTIME;
	if (clk == CLOCK_BOOTTIME_ALARM)
		clk = CLOCK_BOOTTIME;
	if (!vclock_read(&ck.own, clk, ck.src.tsc, ns))
		return 0;
	struct timespec ts;
	if (ck.src.host(clk, &ts))
		return -EINVAL;
	*ns = ts_ns(ts);
	switch (clk) {
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_RAW:
	case CLOCK_MONOTONIC_COARSE:
	case CLOCK_BOOTTIME:
		*ns += ck.off;
	}
	return 0;
}

struct timespec mono_now(void)
{
	int64_t ns = 0;

	guest_ns(CLOCK_MONOTONIC, &ns);
	return ns_ts(ns);
}

int clock_now(clockid_t clk, struct timespec *ts)
{
	int64_t ns;
	int err = guest_ns(clk, &ns);

	if (!err)
		*ts = ns_ts(ns);
	return err;
}

void mono_continue_from(struct timespec guest_now)
{
	ck.off = ts_ns(guest_now) - host_ns(CLOCK_MONOTONIC);
	/* Lines drawn before are of another clock: the next re-draw starts afresh. */
	if (ck.own.mode == VCLOCK_MODE_TSC) {
		write_begin();
		ck.own.mode = VCLOCK_MODE_SYSCALL;
		write_end();
		ck.due = 0;
	}
}

int64_t clock_host_offset(void)
{
	int64_t g = 0;

	guest_ns(CLOCK_MONOTONIC, &g);
	return g - host_ns(CLOCK_MONOTONIC);
}

void clock_print_stats(FILE *f)
{
	const struct vclock_page *p = &ck.own;

	if (p->mode != VCLOCK_MODE_TSC) {
		fprintf(f, "minisentry: stats: clock: syscall mode (%s)\n",
			ck.why ? ck.why : "not calibrated yet");
		return;
	}
	fprintf(f,
		"minisentry: stats: clock: tsc mode, %.3f GHz, %llu re-draws, %llu jumps, largest "
		"correction %lld ns\n",
		(double)(1ULL << VCLOCK_SHIFT) / (double)p->mono.mult,
		(unsigned long long)ck.redraws, (unsigned long long)ck.jumps, (long long)ck.worst);
}
