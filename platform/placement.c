/* --placement auto: where each guest thread runs, decided from what it does (docs/platform.md,
 * "Placement"). Three places:
 *
 * - home: the Sentry's CPU, where a thread starts. Under ptrace a syscall round trip is a few
 *   µs there against tens of µs across CPUs (a cross-CPU wake-up, DESIGN.md §9); under seccomp
 *   it costs two context switches (the caller's handler sleeps, the Sentry runs, and back).
 * - spread: every CPU the Sentry started with, for a thread that computes for milliseconds
 *   between syscalls: sharing one CPU with the Sentry and every other guest thread would cost
 *   it far more (make -j2 would run on one CPU).
 * - away (seccomp only): one other CPU, SCHED_BATCH, as --placement other puts every thread,
 *   for a thread that spends its time in syscall round trips. There the handler and the Sentry
 *   spin on the area's state word instead of switching, so a round trip is a trap and no
 *   switch: a UDP ping-pong makes 2 switches instead of 8, a getpid costs 3 µs instead of 8.
 *   But it is worth it only while that CPU is free, and not for a process that forks and
 *   execs (each of the Sentry's calls into its stub is then a cross-CPU wake-up): so a thread
 *   goes there on trial and stays only while it makes its syscalls faster there than at home.
 *
 * Spreading: the tick (every few ms) lets a thread run anywhere once it has been in one
 * run since the tick's previous look at it and its process used AUTO_SPREAD_NS of CPU
 * meanwhile: CPU time, not wall time, since a thread whose stop the busy Sentry has not taken
 * yet looks running too. A spread thread that stops again within AUTO_SHORT_NS of its resume
 * AUTO_REPIN_RUNS times in a row comes home.
 *
 * What the tick costs must not grow with the number of threads (reading a CPU clock is a
 * syscall and a pid lookup: with every thread read every tick, 2,800 processes took 98% of
 * the Sentry's CPU). Only running threads not yet spread can be spread, so only they are in
 * the look queue, in the order they were last resumed or looked at, and a tick looks at the
 * AUTO_LOOKS_PER_TICK at its head, putting each back at the tail: every running thread is
 * looked at in turn, and all of them at every tick while there are few.
 *
 * Going away: each thread's events (its syscalls, faults, stops) are counted in windows of
 * AWAY_WINDOW, timed with one clock read an event (the vDSO's). A home thread whose window
 * took under AWAY_HOT_NS an event is busy with syscalls (eight syscall-bound threads that share
 * the Sentry's CPU take ~80 µs an event each; a shell that forks and execs, ~200 µs) and goes
 * away on trial, if that CPU was idle AWAY_IDLE_PCT of the time lately (/proc/stat, sampled by
 * the tick every AWAY_IDLE_SAMPLE_NS: where another process of the host runs, a thread woken
 * there under SCHED_BATCH waits for the end of its slice). Its first AWAY_SETTLE events there are
 * not counted (the move itself); of its next AWAY_TRIAL_WINDOWS windows the best must be
 * AWAY_GAIN_PCT faster than its last one at home, or it comes back and its next trial waits
 * AWAY_BACKOFF_NS, twice as long after each failed one up to AWAY_BACKOFF_MAX_NS. Several windows,
 * because a thread's pace depends on its peers': a ping-pong's end is slower away while the other
 * end is still at home, and the other end's trial starts within a window of it. Once it has stayed,
 * it comes home when AWAY_SLOW_WINDOWS windows in a row are AWAY_GAIN_PCT slower than home was
 * (that CPU got busy: other processes of the host), when a window takes AWAY_COLD_NS an event (it
 * mostly waits now: a wake-up across CPUs is the dearest kind), and when the Sentry calls into its
 * stub AWAY_INJECTS times in one window (a fork, an exec: each call a cross-CPU wake-up of a
 * handler asleep). An away thread that computes is spread by the tick as a home one is: a
 * compiler that read its headers with a burst of syscalls must not keep to one CPU.
 *
 * A move is a sched_setaffinity of the thread by the Sentry (4-10 µs) and a sched_setscheduler
 * its handler makes on the Sentry's CPU, before it leaves and once it is back (only the thread
 * itself may; 10-40 µs): a few a second at most. */
#include "platform/internal.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "common/units.h"

#define AUTO_SPREAD_NS 3000000ULL
#define AUTO_SHORT_NS 200000ULL
#define AUTO_REPIN_RUNS 16
#define AUTO_LOOKS_PER_TICK 16

#define AWAY_WINDOW 128
#define AWAY_SETTLE 32
#define AWAY_HOT_NS 150000ULL
#define AWAY_COLD_NS 1000000ULL
#define AWAY_GAIN_PCT 10
#define AWAY_INJECTS 4
#define AWAY_BACKOFF_NS (100 * NSEC_PER_MSEC)
#define AWAY_BACKOFF_MAX_NS (5 * NSEC_PER_SEC)
#define AWAY_TRIAL_WINDOWS 3
#define AWAY_IDLE_PCT 50
#define AWAY_IDLE_SAMPLE_NS (50 * NSEC_PER_MSEC)
#define AWAY_IDLE_FIRST_NS (20 * NSEC_PER_MSEC)
#define AWAY_SLOW_WINDOWS 2

/* Threads away now: while there are, the away CPU's idle figure counts them too. */
static int nr_away;

/* The look queue: running pinned threads, the one resumed or looked at longest ago first. */
static struct {
	struct platform_thread *head, *tail;
	int len;
} looks;

static void look_dequeue(struct platform_thread *t)
{
	if (!t->look_queued)
		return;
	*(t->look_prev ? &t->look_prev->look_next : &looks.head) = t->look_next;
	*(t->look_next ? &t->look_next->look_prev : &looks.tail) = t->look_prev;
	t->look_prev = t->look_next = NULL;
	t->look_queued = false;
	looks.len--;
}

static void look_enqueue(struct platform_thread *t)
{
	look_dequeue(t);
	t->look_prev = looks.tail;
	*(looks.tail ? &looks.tail->look_next : &looks.head) = t;
	looks.tail = t;
	t->look_queued = true;
	looks.len++;
}

static bool away_possible(void)
{
	return plat.placement == PLACEMENT_AUTO && plat.kind == PLATFORM_SECCOMP &&
	       plat.away_cpu >= 0;
}

enum place { HOME, AWAY, SPREAD };

/* Stopped thread T takes the host policy of its place: a call its handler makes, two context
 * switches on the Sentry's CPU but a cross-CPU wake-up elsewhere (50-600 µs measured), so made
 * before it leaves and after it is back. One the tick moved while it ran takes it at its next
 * stop. */
static void fix_policy(struct platform_thread *t)
{
	if (t->batch != t->away && t->systrap && systrap_set_batch(t, t->away) == 0)
		t->batch = t->away;
}

/* Puts T at its place: its CPUs, and its policy if it is stopped (fix_policy). Away it runs
 * SCHED_BATCH: a thread the Sentry wakes there must not preempt the one running, which is
 * usually about to block in the Sentry itself (a ping-pong's sender, its recv next), as under
 * --placement other (docs/network.md). */
static void place(struct platform_thread *t, enum place where)
{
	cpu_set_t one;

	nr_away += (where == AWAY) - t->away;
	t->away = where == AWAY;
	if (t->away && !t->running)
		fix_policy(t);
	CPU_ZERO(&one);
	CPU_SET(t->away ? plat.away_cpu : plat.guest_cpu, &one);
	sched_setaffinity(t->tid, sizeof(cpu_set_t), where == SPREAD ? &plat.all_cpus : &one);
	if (!t->running)
		fix_policy(t);
	t->spread = where == SPREAD;
	t->short_runs = 0;
	t->win_events = where == AWAY ? -AWAY_SETTLE : 0;
	t->win_injects = 0;
	t->trial = AWAY_TRIAL_WINDOWS;
	t->best_ns = UINT64_MAX;
	t->slow = 0;
	if (where == SPREAD)
		look_dequeue(t);
}

/* The CPU time of host process PID so far (a process clock: Linux lets any process read
 * another's, not another's thread clock), or 0. */
static uint64_t process_cpu_ns(pid_t pid)
{
	struct timespec ts;
	clockid_t clock = (clockid_t)((~(unsigned int)pid) << 3) | 2; /* CPUCLOCK_SCHED */

	if (clock_gettime(clock, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* How idle the away CPU was since the last sample, from /proc/stat's line of it (idle and
 * iowait of all its jiffies; the 10 ms jiffies need a longer interval than the tick's). */
static uint64_t last_ns, last_idle, last_total;
static bool have_figure;

static void sample_away_cpu(void)
{
	char buf[4096], name[16];
	uint64_t now = plat_now_ns();

	/* The first figure sooner: until it comes no thread goes away. */
	if (plat.stat_fd < 0 ||
	    (last_ns && now - last_ns < (have_figure ? AWAY_IDLE_SAMPLE_NS : AWAY_IDLE_FIRST_NS)))
		return;
	ssize_t n = pread(plat.stat_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return;
	buf[n] = 0;
	snprintf(name, sizeof(name), "\ncpu%d ", plat.away_cpu);
	const char *line = strstr(buf, name);
	unsigned long long v[8] = {0};
	if (!line || sscanf(line + strlen(name), "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
			    &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 5)
		return;
	uint64_t idle = v[3] + v[4], total = 0;
	for (int i = 0; i < 8; i++)
		total += v[i];
	if (last_ns) {
		if (total <= last_total)
			return; /* no jiffy yet: the figure over a longer interval */
		plat.away_idle_pct = (int)(100 * (idle - last_idle) / (total - last_total));
		have_figure = true;
	}
	last_ns = now;
	last_idle = idle;
	last_total = total;
}

void plat_place_init(void)
{
	last_ns = 0;
	have_figure = false;
	sample_away_cpu(); /* the first figure comes AWAY_IDLE_FIRST_NS after the start */
}

void platform_placement_tick(void)
{
	sample_away_cpu();
	int n = looks.len < AUTO_LOOKS_PER_TICK ? looks.len : AUTO_LOOKS_PER_TICK;

	for (int i = 0; i < n; i++) {
		struct platform_thread *t = looks.head;
		uint64_t cpu = process_cpu_ns(t->host_pid);
		if (t->tick_resumed == t->resumed_ns && cpu &&
		    cpu - t->tick_cpu >= AUTO_SPREAD_NS) {
			place(t, SPREAD);
		} else {
			t->tick_resumed = t->resumed_ns;
			t->tick_cpu = cpu;
			look_enqueue(t);
		}
	}
}

static void trial_failed(struct platform_thread *t, uint64_t now)
{
	t->backoff_ns = t->backoff_ns ? t->backoff_ns * 2 : AWAY_BACKOFF_NS;
	if (t->backoff_ns > AWAY_BACKOFF_MAX_NS)
		t->backoff_ns = AWAY_BACKOFF_MAX_NS;
	t->trial_after_ns = now + t->backoff_ns;
}

/* A window of T's events ended: NS an event. */
static void window_done(struct platform_thread *t, uint64_t ns, uint64_t now)
{
	if (!t->away) {
		t->home_ns = ns;
		if (ns < AWAY_HOT_NS && now >= t->trial_after_ns &&
		    (nr_away > 0 || plat.away_idle_pct >= AWAY_IDLE_PCT))
			place(t, AWAY);
		return;
	}
	if (t->trial > 0) {
		if (ns < t->best_ns)
			t->best_ns = ns;
		if (--t->trial > 0)
			return;
		if (t->best_ns * 100 > t->home_ns * (100 - AWAY_GAIN_PCT)) {
			place(t, HOME);
			trial_failed(t, now);
		} else {
			t->backoff_ns = 0;
		}
		return;
	}
	if (ns >= AWAY_COLD_NS) {
		place(t, HOME);
	} else if (ns * 100 <= t->home_ns * (100 + AWAY_GAIN_PCT)) {
		t->slow = 0;
	} else if (++t->slow >= AWAY_SLOW_WINDOWS) {
		place(t, HOME);
		trial_failed(t, now);
	}
}

void platform_thread_stopped(struct platform_thread *t)
{
	t->running = false;
	if (plat.placement != PLACEMENT_AUTO)
		return;
	look_dequeue(t);
	fix_policy(t);
	uint64_t now = plat_now_ns();
	if (t->spread) {
		if (now - t->resumed_ns >= AUTO_SHORT_NS)
			t->short_runs = 0;
		else if (++t->short_runs >= AUTO_REPIN_RUNS)
			place(t, HOME);
		return;
	}
	if (!away_possible())
		return;
	if (t->win_events++ <= 0) {
		t->win_start_ns = now; /* the window starts at its first counted event */
		t->win_injects = 0;
		return;
	}
	/* Away, a window already slower than home was is judged at once: when another process
	 * holds that CPU, each wake-up there waits for its slice (milliseconds), and a whole
	 * window would take longer than many a program runs. */
	uint64_t elapsed = now - t->win_start_ns;
	if (t->win_events > AWAY_WINDOW ||
	    (t->away && elapsed * 100 > AWAY_WINDOW * t->home_ns * (100 + AWAY_GAIN_PCT))) {
		t->win_events = 0;
		window_done(t, elapsed / AWAY_WINDOW, now);
	}
}

void plat_place_release(struct platform_thread *t)
{
	look_dequeue(t);
	nr_away -= t->away;
	t->away = false;
}

void plat_place_resumed(struct platform_thread *t)
{
	if (plat.placement != PLACEMENT_AUTO)
		return;
	t->resumed_ns = plat_now_ns();
	t->running = true;
	if (!t->spread)
		look_enqueue(t); /* home or away: the tick may spread it */
}

void plat_place_injected(struct platform_thread *t)
{
	if (t->away && ++t->win_injects >= AWAY_INJECTS) {
		place(t, HOME);
		trial_failed(t, plat_now_ns());
	}
}

/* A new thread starts at home, whatever its creator inherited it (its CPUs and policy come
 * from the thread that made it). */
void plat_place_new_thread(struct platform_thread *parent, struct platform_thread *t)
{
	if (parent->spread || parent->away || parent->batch) {
		t->batch = parent->batch;
		place(t, HOME);
	}
}
