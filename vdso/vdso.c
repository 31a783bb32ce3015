/* The guests' vDSO: clock_gettime, gettimeofday, time, clock_getres and getcpu, under the names
 * and version (LINUX_2.6) glibc and musl look up. Clocks come from the clock page the Sentry
 * keeps (vclock.h), mapped one page below this image; whatever the page cannot answer is the
 * real syscall, which the Sentry serves. Built without libc as a shared object of its own
 * (Makefile, vdso.lds, vdso.map) and embedded in minisentry. */
#include "vdso/vclock.h"

#include <stddef.h>

#define SYS_gettimeofday 96
#define SYS_time 201
#define SYS_clock_gettime 228
#define SYS_clock_getres 229
#define SYS_getcpu 309

#define EXPORT __attribute__((visibility("default")))

struct vdso_timespec {
	long tv_sec, tv_nsec;
};
struct vdso_timeval {
	long tv_sec, tv_usec;
};
struct vdso_timezone {
	int tz_minuteswest, tz_dsttime;
};

/* The clock page is the page before this image's first byte, which the linker names
 * __ehdr_start (the ELF header). Addressed relative to the instruction pointer, so right
 * wherever the image is mapped; in assembly, since to C it lies outside every object. */
static inline const struct vclock_page *page(void)
{
	const struct vclock_page *p;

	__asm__("lea __ehdr_start-4096(%%rip), %0" : "=r"(p));
	return p;
}

static inline long sys3(long nr, long a, long b, long c)
{
	long r;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return r;
}

static inline void split(int64_t ns, struct vdso_timespec *ts)
{
	ts->tv_sec = ns / VCLOCK_NSEC_PER_SEC;
	ts->tv_nsec = ns % VCLOCK_NSEC_PER_SEC;
}

EXPORT int __vdso_clock_gettime(int clk, struct vdso_timespec *ts)
{
	int64_t ns;

	if (vclock_read(page(), clk, vclock_rdtsc, &ns))
		return (int)sys3(SYS_clock_gettime, clk, (long)ts, 0);
	split(ns, ts);
	return 0;
}

EXPORT int __vdso_gettimeofday(struct vdso_timeval *tv, struct vdso_timezone *tz)
{
	int64_t ns;

	if (tv) {
		if (vclock_read(page(), VCLOCK_REALTIME, vclock_rdtsc, &ns))
			return (int)sys3(SYS_gettimeofday, (long)tv, (long)tz, 0);
		tv->tv_sec = ns / VCLOCK_NSEC_PER_SEC;
		tv->tv_usec = ns % VCLOCK_NSEC_PER_SEC / 1000;
	}
	if (tz) {
		/* The Sentry keeps no timezone: UTC, no daylight saving, as sys_gettimeofday. */
		tz->tz_minuteswest = 0;
		tz->tz_dsttime = 0;
	}
	return 0;
}

/* Seconds of the coarse realtime clock, as Linux's vDSO reads the last tick's. */
EXPORT long __vdso_time(long *t)
{
	int64_t ns;

	if (vclock_read(page(), VCLOCK_REALTIME_COARSE, vclock_rdtsc, &ns))
		return sys3(SYS_time, (long)t, 0, 0);
	long s = ns / VCLOCK_NSEC_PER_SEC;
	if (t)
		*t = s;
	return s;
}

EXPORT int __vdso_clock_getres(int clk, struct vdso_timespec *res)
{
	int64_t ns;

	if (vclock_res(page(), clk, &ns))
		return (int)sys3(SYS_clock_getres, clk, (long)res, 0);
	if (res)
		split(ns, res);
	return 0;
}

/* The CPU a thread runs on is the Sentry's answer in the guest's numbering (--cpus), a value
 * of the thread that one shared page cannot hold: always the syscall. */
EXPORT long __vdso_getcpu(unsigned *cpu, unsigned *node, void *cache)
{
	return sys3(SYS_getcpu, (long)cpu, (long)node, (long)cache);
}

/* The plain names, as Linux's vDSO has them too. */
int clock_gettime(int, struct vdso_timespec *)
    __attribute__((weak, alias("__vdso_clock_gettime"), visibility("default")));
int gettimeofday(struct vdso_timeval *, struct vdso_timezone *)
    __attribute__((weak, alias("__vdso_gettimeofday"), visibility("default")));
long time(long *) __attribute__((weak, alias("__vdso_time"), visibility("default")));
int clock_getres(int, struct vdso_timespec *)
    __attribute__((weak, alias("__vdso_clock_getres"), visibility("default")));
long getcpu(unsigned *, unsigned *, void *)
    __attribute__((weak, alias("__vdso_getcpu"), visibility("default")));
