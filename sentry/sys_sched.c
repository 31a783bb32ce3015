/* Scheduling and accounting syscalls: CPU affinity over the --cpus CPUs the guest sees,
 * scheduling policies that are kept but not applied, and CPU times (a process's CPU time is its
 * stub's). */
#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>

#include "common/units.h"
#include "common/limits.h"
#include "fs-proc/procinfo.h"
#include "sentry/kernel.h"
#include "sentry/caps.h"
#include "sentry/mm.h"
#include "sentry/sched.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"

/* Bytes of a cpumask for --cpus CPUs, as Linux's cpumask_size(): whole longs. */
static size_t mask_bytes(void)
{
	return ((size_t)kernel.cfg.cpus + 63) / 64 * 8;
}

static struct task *target(struct task *t, pid_t pid)
{
	return pid == 0 ? t : task_by_tid(pid);
}

void sched_default_affinity(struct task *t)
{
	memset(t->affinity, 0, sizeof(t->affinity));
	for (int c = 0; c < kernel.cfg.cpus; c++)
		t->affinity[c / 64] |= 1ULL << (c % 64);
}

long sys_sched_getaffinity(struct task *t, const unsigned long *a)
{
	struct task *p = target(t, arg_int(a, 0));
	size_t len = a[1];

	if (len * 8 < (size_t)kernel.cfg.cpus || (len & 7))
		return -EINVAL;
	if (!p || p->zombie)
		return -ESRCH;
	size_t n = len < mask_bytes() ? len : mask_bytes();
	return copy_out(t->mm, a[2], p->affinity, n) ? -EFAULT : (long)n;
}

long sys_sched_setaffinity(struct task *t, const unsigned long *a)
{
	struct task *p = target(t, arg_int(a, 0));
	uint64_t mask[CPU_MASK_WORDS] = {0}, online[CPU_MASK_WORDS] = {0};
	size_t len = a[1] < sizeof(mask) ? a[1] : sizeof(mask);
	bool any = false;

	if (!p || p->zombie)
		return -ESRCH;
	if (copy_in(t->mm, mask, a[2], len))
		return -EFAULT;
	for (int c = 0; c < kernel.cfg.cpus; c++)
		online[c / 64] |= 1ULL << (c % 64);
	for (int w = 0; w < CPU_MASK_WORDS; w++) {
		mask[w] &= online[w];
		any |= mask[w] != 0;
	}
	if (!any)
		return -EINVAL;
	memcpy(p->affinity, mask, sizeof(mask));
	return 0;
}

/* Scheduling policies, as Linux's kernel/sched/syscalls.c keeps them: per thread, inherited
 * by fork and clone (SCHED_RESET_ON_FORK gives the child SCHED_OTHER back), kept by exec. The
 * host scheduler does not see them, as it does not see nice values. */
#define RR_TIMESLICE_NS (100 * NSEC_PER_MSEC) /* Linux's RR_TIMESLICE */

static bool rt_policy(int policy)
{
	return policy == SCHED_FIFO || policy == SCHED_RR;
}

long sys_sched_getscheduler(struct task *t, const unsigned long *a)
{
	struct task *p = target(t, arg_int(a, 0));

	if (arg_int(a, 0) < 0)
		return -EINVAL;
	if (!p)
		return -ESRCH;
	return p->sched_policy | (p->sched_reset_on_fork ? SCHED_RESET_ON_FORK : 0);
}

long sys_sched_getparam(struct task *t, const unsigned long *a)
{
	struct task *p = target(t, arg_int(a, 0));
	struct sched_param sp = {0};

	if (arg_int(a, 0) < 0 || !a[1])
		return -EINVAL;
	if (!p)
		return -ESRCH;
	sp.sched_priority = p->sched_priority;
	return copy_out(t->mm, a[1], &sp, sizeof(sp));
}

/* __sched_setscheduler's checks for a thread P given *POLICY (-1: P's own, which it is set
 * to; else with SCHED_RESET_ON_FORK, which goes to *RESET) and PRIORITY. */
static long check_policy(struct task *t, struct task *p, int *policy_, unsigned int priority,
			 bool *reset_)
{
	bool reset = p->sched_reset_on_fork, cap = caps_has(t, CAP_SYS_NICE);
	int policy = *policy_;

	if (policy < 0) {
		policy = p->sched_policy;
	} else {
		reset = policy & SCHED_RESET_ON_FORK;
		policy &= ~SCHED_RESET_ON_FORK;
		if (policy != SCHED_OTHER && policy != SCHED_BATCH && policy != SCHED_IDLE &&
		    !rt_policy(policy))
			return -EINVAL; /* SCHED_DEADLINE needs sched_setattr's parameters */
	}
	if (priority > 99 || rt_policy(policy) != (priority != 0))
		return -EINVAL;
	if (!cap) {
		rlim_t rt = p->rlim[RLIMIT_RTPRIO].rlim_cur;

		if (rt_policy(policy) && policy != p->sched_policy && !rt)
			return -EPERM;
		if (rt_policy(policy) && priority > (unsigned int)p->sched_priority &&
		    priority > rt)
			return -EPERM;
		if (p->sched_policy == SCHED_IDLE && policy != SCHED_IDLE)
			return -EPERM;
		if (p->uid != t->euid && p->euid != t->euid)
			return -EPERM;
		if (p->sched_reset_on_fork && !reset)
			return -EPERM;
	}
	*policy_ = policy;
	*reset_ = reset;
	return 0;
}

static long set_policy(struct task *t, struct task *p, int policy, unsigned int priority)
{
	bool reset;
	long err = check_policy(t, p, &policy, priority, &reset);

	if (err)
		return err;
	p->sched_policy = policy;
	p->sched_priority = (int)priority;
	p->sched_reset_on_fork = reset;
	return 0;
}

static long set_scheduler(struct task *t, const unsigned long *a, int policy, uintptr_t param)
{
	struct sched_param sp;

	if (arg_int(a, 0) < 0 || !param)
		return -EINVAL;
	if (copy_in(t->mm, &sp, param, sizeof(sp)))
		return -EFAULT;
	struct task *p = target(t, arg_int(a, 0));
	if (!p || p->zombie)
		return -ESRCH;
	return set_policy(t, p, policy, (unsigned int)sp.sched_priority);
}

long sys_sched_setscheduler(struct task *t, const unsigned long *a)
{
	if (arg_int(a, 1) < 0)
		return -EINVAL;
	return set_scheduler(t, a, arg_int(a, 1), a[2]);
}

long sys_sched_setparam(struct task *t, const unsigned long *a)
{
	return set_scheduler(t, a, -1, a[1]);
}

/* What fork and clone give the child: the parent's policy, or SCHED_OTHER (and a nice value
 * no lower than 0) when the parent asked for SCHED_RESET_ON_FORK. */
void sched_inherit(struct task *c, const struct task *p)
{
	c->sched_policy = p->sched_policy;
	c->sched_priority = p->sched_priority;
	c->sched_reset_on_fork = false;
	if (!p->sched_reset_on_fork)
		return;
	if (rt_policy(c->sched_policy)) {
		c->sched_policy = SCHED_OTHER;
		c->sched_priority = 0;
	}
	if (c->nice < 0)
		c->nice = 0;
}

/* The round-robin time slice: Linux's RR_TIMESLICE for SCHED_RR, and 0 for the others
 * (SCHED_FIFO has none; the fair class's slice, under a jiffy, rounds to 0). */
long sys_sched_rr_get_interval(struct task *t, const unsigned long *a)
{
	struct task *p = target(t, arg_int(a, 0));

	if (arg_int(a, 0) < 0)
		return -EINVAL;
	if (!p || p->zombie)
		return -ESRCH;
	struct timespec ts = {0, p->sched_policy == SCHED_RR ? RR_TIMESLICE_NS : 0};
	return copy_out(t->mm, a[1], &ts, sizeof(ts));
}

static long priority_bound(int policy, bool max)
{
	switch (policy) {
	case SCHED_FIFO:
	case SCHED_RR:
		return max ? 99 : 1;
	case SCHED_OTHER:
	case SCHED_BATCH:
	case SCHED_IDLE:
		return 0;
	default:
		return -EINVAL;
	}
}

long sys_sched_get_priority_max(struct task *t, const unsigned long *a)
{
	(void)t;
	return priority_bound(arg_int(a, 0), true);
}

long sys_sched_get_priority_min(struct task *t, const unsigned long *a)
{
	(void)t;
	return priority_bound(arg_int(a, 0), false);
}

/* Nice values, as Linux's kernel/sys.c keeps them: per thread, PRIO_PROCESS naming a thread,
 * PRIO_PGRP every thread of a process group, PRIO_USER every thread whose real uid is WHO.
 * Privilege is CAP_SYS_NICE (caps.c). */
#define NICE_MIN (-20)
#define NICE_MAX 19

static bool prio_matches(struct task *t, struct task *o, int which, int who)
{
	if (o->zombie || o->thread_gone)
		return false;
	switch (which) {
	case PRIO_PROCESS:
		return o->tid == (who ? who : t->tid);
	case PRIO_PGRP:
		return o->pgid == (who ? who : t->pgid);
	default: /* PRIO_USER */
		return o->uid == (who ? (uid_t)who : t->uid);
	}
}

long sys_getpriority(struct task *t, const unsigned long *a)
{
	int which = arg_int(a, 0), who = arg_int(a, 1);
	long best = -ESRCH;

	if (which < PRIO_PROCESS || which > PRIO_USER)
		return -EINVAL;
	for_each_task(o)
		if (prio_matches(t, o, which, who) && 20 - o->nice > best)
			best =
			    20 - o->nice; /* the raw syscall's 1..40; libc turns it into a nice */
	return best;
}

/* set_one_prio: another user's thread needs CAP_SYS_NICE, and so does lowering a nice value
 * below what RLIMIT_NICE allows (20 - nice <= the limit). */
static long set_one_nice(struct task *t, struct task *o, int nice)
{
	bool cap = caps_has(t, CAP_SYS_NICE);

	if (o->uid != t->euid && o->euid != t->euid && !cap)
		return -EPERM;
	if (nice < o->nice && (rlim_t)(20 - nice) > o->rlim[RLIMIT_NICE].rlim_cur && !cap)
		return -EACCES;
	o->nice = nice;
	return 0;
}

long sys_setpriority(struct task *t, const unsigned long *a)
{
	int which = arg_int(a, 0), who = arg_int(a, 1), nice = arg_int(a, 2);
	long err = -ESRCH;

	if (which < PRIO_PROCESS || which > PRIO_USER)
		return -EINVAL;
	nice = nice < NICE_MIN ? NICE_MIN : nice > NICE_MAX ? NICE_MAX : nice;
	for_each_task(o) {
		if (!prio_matches(t, o, which, who))
			continue;
		long r = set_one_nice(t, o, nice);
		if (r || err == -ESRCH)
			err = r;
	}
	return err;
}

/* The CPU time of T's process: its stub's plus what earlier stubs used, or what it had when it
 * exited. */
struct timespec process_cpu_time(struct task *t)
{
	struct task *l = t->group_leader;
	struct timespec ts = l->cpu_time;
	clockid_t cid;

	if (t->pt && clock_getcpuclockid(t->pt->host_pid, &cid) == 0 &&
	    clock_gettime(cid, &ts) == 0)
		ts = ts_add(ts, l->cpu_base);
	return ts;
}

/* The CPU time of T's own host thread, from the host's accounting (utime + stime). */
struct timespec thread_cpu_time(struct task *t)
{
	char path[64], buf[512];
	unsigned long ut = 0, st = 0;
	long hz = sysconf(_SC_CLK_TCK);

	if (!t->pt)
		return (struct timespec){0, 0};
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", t->pt->host_pid, t->pt->tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return (struct timespec){0, 0};
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* Fields after the ")" that ends comm: state is 3rd; utime, stime are 14th, 15th. */
	char *p = strrchr(buf, ')');
	if (p)
		sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
	unsigned long ticks = ut + st;
	return (struct timespec){ticks / hz, (ticks % hz) * (NSEC_PER_SEC / hz)};
}

/* Peak resident memory of T's stub in KiB (VmHWM): guest memory is mapped there. */
long process_maxrss(struct task *t)
{
	char path[64], line[128];
	long kb = 0;

	if (!t->pt)
		return t->group_leader->maxrss;
	snprintf(path, sizeof(path), "/proc/%d/status", t->pt->host_pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void fill_usage(struct rusage *ru, struct timespec cpu, long maxrss)
{
	memset(ru, 0, sizeof(*ru));
	ru->ru_utime.tv_sec = cpu.tv_sec;
	ru->ru_utime.tv_usec = cpu.tv_nsec / NSEC_PER_USEC;
	ru->ru_maxrss = maxrss;
}

long sys_getrusage(struct task *t, const unsigned long *a)
{
	struct rusage ru;
	int who = arg_int(a, 0);
	struct timespec cpu;
	long maxrss = 0;

	switch (who) {
	case RUSAGE_SELF:
		cpu = process_cpu_time(t);
		maxrss = process_maxrss(t);
		break;
	case RUSAGE_THREAD:
		cpu = thread_cpu_time(t);
		maxrss = process_maxrss(t);
		break;
	case RUSAGE_CHILDREN:
		cpu = t->group_leader->cchild_time;
		maxrss = t->group_leader->cchild_maxrss;
		break;
	default:
		return -EINVAL;
	}
	fill_usage(&ru, cpu, maxrss);
	return copy_out(t->mm, a[1], &ru, sizeof(ru));
}

static clock_t to_ticks(struct timespec ts)
{
	long hz = sysconf(_SC_CLK_TCK);

	return ts.tv_sec * hz + ts.tv_nsec / (NSEC_PER_SEC / hz);
}

long sys_times(struct task *t, const unsigned long *a)
{
	struct tms tms = {0};

	tms.tms_utime = to_ticks(process_cpu_time(t));
	tms.tms_cutime = to_ticks(t->group_leader->cchild_time);
	if (a[0] && copy_out(t->mm, a[0], &tms, sizeof(tms)))
		return -EFAULT;
	return to_ticks(mono_now());
}

/* The sandbox as its /proc shows it (loadavg, uptime, meminfo: its RAM is the --memory bound),
 * not the host: the same figures from the same functions. Uptime in seconds rounds up and the
 * sizes are in bytes (mem_unit 1), as Linux reports them on a 64-bit kernel. */
long sys_sysinfo(struct task *t, const unsigned long *a)
{
	const struct procinfo_ops *o = &kernel_procinfo;
	uint64_t up = o->uptime_ns(), total = o->mem_total(), used = o->mem_used();
	struct sysinfo si;

	memset(&si, 0, sizeof(si));
	si.uptime = (long)(up / NSEC_PER_SEC + (up % NSEC_PER_SEC != 0));
	si.procs = (unsigned short)o->nr_threads();
	si.totalram = total;
	si.freeram = total > used ? total - used : 0;
	si.mem_unit = 1;
	return copy_out(t->mm, a[0], &si, sizeof(si));
}

/* The CPU a thread runs on is the lowest one it may run on: a guest pinned to CPU k sees k.
 * One NUMA node. */
long sys_getcpu(struct task *t, const unsigned long *a)
{
	unsigned int cpu = 0, node = 0;

	for (int c = 0; c < kernel.cfg.cpus; c++)
		if (t->affinity[c / 64] & (1ULL << (c % 64))) {
			cpu = (unsigned int)c;
			break;
		}
	if (a[0] && copy_out(t->mm, a[0], &cpu, sizeof(cpu)))
		return -EFAULT;
	if (a[1] && copy_out(t->mm, a[1], &node, sizeof(node)))
		return -EFAULT;
	return 0;
}

/* --- sched_setattr and sched_getattr: the policies above, and the nice value, in one
 * versioned structure (Linux's copy_struct_from_user size rules). Utilisation clamps are
 * EOPNOTSUPP, as on a kernel built without CONFIG_UCLAMP_TASK (this host's is); SCHED_DEADLINE
 * is checked and then refused with EBUSY, as admission control refuses it where no deadline
 * bandwidth is left (a fair policy's custom slice, sched_runtime, is not kept: 0, as before
 * Linux 6.12). */

struct guest_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
	uint32_t sched_util_min, sched_util_max;
};

#define SCHED_ATTR_SIZE_VER0 48
#define SCHED_ATTR_SIZE_VER1 56
#define SCHED_DEADLINE_POLICY 6
#define SCHED_FLAG_RESET_ON_FORK 0x01
#define SCHED_FLAG_KEEP_POLICY 0x08
#define SCHED_FLAG_KEEP_PARAMS 0x10
#define SCHED_FLAG_UTIL_CLAMP 0x60
#define SCHED_FLAG_ALL 0x7f

static bool fair_policy(int policy)
{
	return policy == SCHED_OTHER || policy == SCHED_BATCH || policy == SCHED_IDLE;
}

/* sched_copy_attr: the guest's structure at UATTR, or -E2BIG with Linux's size written back. */
static long copy_attr_in(struct task *t, uintptr_t uattr, struct guest_sched_attr *at)
{
	uint32_t size, ksize = sizeof(*at);

	memset(at, 0, sizeof(*at));
	if (copy_in(t->mm, &size, uattr, sizeof(size)))
		return -EFAULT;
	if (size == 0)
		size = SCHED_ATTR_SIZE_VER0;
	if (size < SCHED_ATTR_SIZE_VER0 || size > PAGE_SIZE)
		goto too_big;
	if (copy_in(t->mm, at, uattr, size < ksize ? size : ksize))
		return -EFAULT;
	for (uint32_t off = ksize; off < size; off++) { /* a newer structure's fields: unset */
		char c;
		if (copy_in(t->mm, &c, uattr + off, 1))
			return -EFAULT;
		if (c)
			goto too_big;
	}
	at->size = size;
	return 0;
too_big:
	return copy_out(t->mm, uattr, &ksize, sizeof(ksize)) ? -EFAULT : -E2BIG;
}

long sys_sched_setattr(struct task *t, const unsigned long *a)
{
	int pid = arg_int(a, 0);
	struct guest_sched_attr at;
	bool cap = caps_has(t, CAP_SYS_NICE), reset;
	long err;

	if (!a[1] || pid < 0 || a[2])
		return -EINVAL;
	if ((err = copy_attr_in(t, a[1], &at)))
		return err;
	if ((at.sched_flags & SCHED_FLAG_UTIL_CLAMP) && at.size < SCHED_ATTR_SIZE_VER1)
		return -EINVAL;
	int nice = at.sched_nice < NICE_MIN   ? NICE_MIN
		   : at.sched_nice > NICE_MAX ? NICE_MAX
					      : at.sched_nice;
	if ((int)at.sched_policy < 0)
		return -EINVAL;
	int policy = at.sched_flags & SCHED_FLAG_KEEP_POLICY ? -1 : (int)at.sched_policy;
	struct task *p = target(t, pid);
	if (!p || p->zombie)
		return -ESRCH;
	unsigned int priority = at.sched_priority;
	if (at.sched_flags & SCHED_FLAG_KEEP_PARAMS) {
		if (rt_policy(p->sched_policy))
			priority = (unsigned int)p->sched_priority;
		else
			nice = p->nice;
	}
	if (at.sched_flags & ~(uint64_t)SCHED_FLAG_ALL)
		return -EINVAL;
	if (policy == SCHED_DEADLINE_POLICY) {
		if (priority || at.sched_runtime < 1024 || /* __checkparam_dl, in short */
		    (at.sched_period && at.sched_period < at.sched_deadline) ||
		    (at.sched_deadline && at.sched_deadline < at.sched_runtime) ||
		    !at.sched_deadline)
			return -EINVAL;
		return !cap ? -EPERM : syscall_unsupported(t, -EBUSY, "SCHED_DEADLINE");
	}
	if (policy >= 0 && (at.sched_flags & SCHED_FLAG_RESET_ON_FORK))
		policy |= SCHED_RESET_ON_FORK;
	if ((err = check_policy(t, p, &policy, priority, &reset)))
		return err;
	if (fair_policy(policy) && nice < p->nice && !cap &&
	    (rlim_t)(20 - nice) > p->rlim[RLIMIT_NICE].rlim_cur)
		return -EPERM;
	if (at.sched_flags & SCHED_FLAG_UTIL_CLAMP)
		return syscall_unsupported(t, -EOPNOTSUPP, "utilisation clamps");
	p->sched_policy = policy;
	p->sched_priority = (int)priority;
	p->sched_reset_on_fork = reset;
	if (fair_policy(policy))
		p->nice = nice;
	return 0;
}

long sys_sched_getattr(struct task *t, const unsigned long *a)
{
	int pid = arg_int(a, 0);
	unsigned int usize = arg_uint(a, 2);
	struct guest_sched_attr at = {0};

	if (!a[1] || pid < 0 || a[3] || usize > PAGE_SIZE || usize < SCHED_ATTR_SIZE_VER0)
		return -EINVAL;
	struct task *p = target(t, pid);
	if (!p)
		return -ESRCH;
	at.size = usize < sizeof(at) ? usize : sizeof(at);
	at.sched_policy = (uint32_t)p->sched_policy;
	at.sched_flags = p->sched_reset_on_fork ? SCHED_FLAG_RESET_ON_FORK : 0;
	if (rt_policy(p->sched_policy))
		at.sched_priority = (uint32_t)p->sched_priority;
	else
		at.sched_nice = p->nice;
	if (copy_out(t->mm, a[1], &at, at.size))
		return -EFAULT;
	/* A bigger structure than ours reads its unknown fields as zero. */
	static const char zeros[256];
	for (size_t off = sizeof(at); off < usize; off += sizeof(zeros)) {
		size_t n = usize - off < sizeof(zeros) ? usize - off : sizeof(zeros);
		if (copy_out(t->mm, a[1] + off, zeros, n))
			return -EFAULT;
	}
	return 0;
}

/* --- I/O priorities (block/ioprio.c): a class and level per thread, which nothing here
 * schedules by; kept, inherited by fork and clone, reported. Unset (0), a thread's priority is
 * derived from its nice value and policy where a group or user is asked. */
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_CLASS_NONE 0
#define IOPRIO_CLASS_RT 1
#define IOPRIO_CLASS_BE 2
#define IOPRIO_CLASS_IDLE 3
#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_WHO_USER 3

/* __get_task_ioprio: the priority O acts with. */
static int effective_ioprio(const struct task *o)
{
	int cls;

	if ((o->ioprio >> IOPRIO_CLASS_SHIFT) != IOPRIO_CLASS_NONE)
		return o->ioprio;
	cls = o->sched_policy == SCHED_IDLE ? IOPRIO_CLASS_IDLE
	      : rt_policy(o->sched_policy)  ? IOPRIO_CLASS_RT
					    : IOPRIO_CLASS_BE;
	return cls << IOPRIO_CLASS_SHIFT | (o->nice + 20) / 5;
}

long sys_ioprio_get(struct task *t, const unsigned long *a)
{
	int which = arg_int(a, 0), who = arg_int(a, 1);
	long best = -ESRCH;

	if (which < IOPRIO_WHO_PROCESS || which > IOPRIO_WHO_USER)
		return -EINVAL;
	for_each_task(o) {
		if (!prio_matches(t, o, which - 1, who))
			continue;
		/* A thread asked by id answers what was set (0 unset), as Linux does. */
		long p = which == IOPRIO_WHO_PROCESS ? o->ioprio : effective_ioprio(o);
		best = best == -ESRCH || p < best ? p : best;
	}
	return best;
}

long sys_ioprio_set(struct task *t, const unsigned long *a)
{
	int which = arg_int(a, 0), who = arg_int(a, 1), ioprio = arg_int(a, 2);
	int cls = (ioprio >> IOPRIO_CLASS_SHIFT) & 7;
	bool cap = caps_has(t, CAP_SYS_NICE);
	long err = -ESRCH;

	if (which < IOPRIO_WHO_PROCESS || which > IOPRIO_WHO_USER)
		return -EINVAL;
	switch (cls) { /* ioprio_check_cap */
	case IOPRIO_CLASS_RT:
		if (!cap && !caps_has(t, CAP_SYS_ADMIN))
			return -EPERM;
		break;
	case IOPRIO_CLASS_BE:
	case IOPRIO_CLASS_IDLE:
		break;
	case IOPRIO_CLASS_NONE:
		if (ioprio & 7)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	for_each_task(o) {
		if (!prio_matches(t, o, which - 1, who))
			continue;
		long r = 0;
		if (o->uid != t->euid && o->uid != t->uid && !cap)
			r = -EPERM;
		else
			o->ioprio = (uint16_t)ioprio;
		if (r || err == -ESRCH)
			err = r;
	}
	return err;
}
