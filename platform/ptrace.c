/* The ptrace platform: stub processes forked from a stub factory that the Sentry made and
 * seized at start-up, attached from their birth with EXITKILL, guest syscalls intercepted
 * with PTRACE_SYSEMU, address-space changes injected at the stub page's syscall gadget. The
 * stub's seccomp filter is the second wall: only the syscalls the Sentry injects, and only
 * from the gadget, reach the host. */
#include "platform/platform.h"
#include "platform/stub.h"
#include "platform/internal.h"
#include "platform/systrap.h"

#include <cpuid.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/userfaultfd.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/rseq.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/units.h"

/* Below every randomised region of a 47-bit address space (stack, mmap base, PIE): a fixed
 * address, so a restored sandbox finds its stub where the saved one was. */
#define STUB_PREFERRED_BASE 0x7e0000000000UL

struct platform_state plat;

void platform_set_stub_hook(void (*hook)(void))
{
	plat.stub_hook = hook;
}

uintptr_t platform_stub_base(void)
{
	return plat.stub_base;
}

size_t platform_stub_len(void)
{
	return STUB_LEN;
}

uintptr_t platform_user_top(void)
{
	return plat.user_top;
}

size_t platform_fpstate_size(void)
{
	return plat.fpstate_size;
}

uint64_t platform_xfeatures(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

/* munmap refuses ranges beyond TASK_SIZE, so a page at 2^47 tells 5-level paging apart. */
static uintptr_t detect_user_top(void)
{
	if (munmap((void *)(1UL << 47), PAGE) == 0)
		return (1UL << 56) - PAGE;
	return (1UL << 47) - PAGE;
}

/* The 64-bit user code segment (__USER_CS): injections run the gadget in it, whatever mode the
 * guest thread was in. */
#define USER_CS_64 0x33

/* Where a field of the parameter page lies in every stub and in the factory. */
#define PARAM_ADDR(field) (plat.stub_base + PAGE + offsetof(struct stub_params, field))

/* The factory's filter (installed by the stub page's entry) and every stub's (installed in it
 * over the factory's by the Sentry), both into the parameter page. */
static int build_filters(struct stub_params *p)
{
	struct stub_filter_spec spec = {
	    .ip = plat.stub_base + STUB_GADGET_OFFSET + 2, /* seccomp sees the next insn */
	    .ip2 = STUB_CODE_ADDR(stub_systrap_gadget) + 2,
	    .memfd = plat.memfd,
	    .thread_flags = STUB_THREAD_FLAGS,
	    .sysfd = -1,
	    .doorbell = -1,
	    .systrap_thread_flags = SYSTRAP_THREAD_FLAGS,
	    .stub_base = plat.stub_base,
	    .stub_len = STUB_LEN,
	    .fdsock = plat.fdsock_stub,
	};
	systrap_stub_filter_fds(&spec.sysfd, &spec.doorbell);
	/* A stub of the seccomp platform is driven through its handler's gadget alone once its
	 * own filter is in: a guest that jumps to the ptrace gadget traps, as on Linux a jump to
	 * an unmapped page faults (docs/security.md). */
	struct stub_filter_spec own = spec;
	if (plat.kind == PLATFORM_SECCOMP)
		own.ip = own.ip2;
	int n = stub_filter_build(p->stub_filter, STUB_MAX_FILTER, &own);

	if (n < 0)
		return n;
	p->stub_prog.len = (unsigned short)n;
	p->stub_prog.filter = (struct sock_filter *)PARAM_ADDR(stub_filter);
	spec.fork_flags = STUB_FORK_FLAGS;
	spec.stub_prog = PARAM_ADDR(stub_prog);
	if ((n = stub_filter_build(p->filter, STUB_MAX_FILTER, &spec)) < 0)
		return n;
	p->prog.len = (unsigned short)n;
	p->prog.filter = (struct sock_filter *)PARAM_ADDR(filter);
	return 0;
}

static int map_stub_page(void)
{
	uintptr_t base = STUB_PREFERRED_BASE;
	void *m = MAP_FAILED;

	/* Step lower if something of the Sentry already sits there. */
	for (int tries = 0; tries < 64 && m == MAP_FAILED; tries++, base -= 0x100000000UL)
		m = mmap((void *)base, STUB_LEN, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	if (mprotect(m, STUB_PAGES_LEN, PROT_READ | PROT_WRITE))
		return -errno;
	plat.stub_base = (uintptr_t)m;
	memcpy(m, stub_code_begin, stub_code_end - stub_code_begin);

	struct stub_params *p = (struct stub_params *)((char *)m + PAGE);
	p->low_start = 0;
	p->low_len = plat.stub_base;
	p->high_start = plat.stub_base + STUB_LEN;
	p->high_len = plat.user_top - p->high_start;
	int err = build_filters(p);
	if (err)
		return err;
	stubfd_message(&p->fdmsg, plat.fdmsg_fds);
	if (mprotect(m, PAGE, PROT_READ | PROT_EXEC) || mprotect((char *)m + PAGE, PAGE, PROT_READ))
		return -errno;
	return 0;
}

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* --placement other: every guest thread on one CPU of their own. Under seccomp a thread the
 * Sentry wakes there must not preempt the one running, which is usually about to block in the
 * Sentry itself (a ping-pong's sender, its recvfrom next): a preemption costs a reschedule
 * IPI from the Sentry's CPU and a switch more. SCHED_BATCH threads do not preempt on wake-up;
 * the woken one runs when the other blocks or its slice ends (docs/network.md). Not under
 * ptrace: there every syscall's resume is such a wake-up, and one that waits for a host
 * process's slice to end made a connect round trip 4 times slower on a loaded machine. */
static void guests_on_their_cpu(void)
{
	struct sched_param none = {0};

	pin_to(plat.guest_cpu);
	if (plat.kind == PLATFORM_SECCOMP)
		sched_setscheduler(0, SCHED_BATCH, &none);
}

static void choose_cpus(void)
{
	cpu_set_t set;
	int cur = sched_getcpu();

	plat.sentry_cpu = plat.guest_cpu = cur < 0 ? 0 : cur;
	if (sched_getaffinity(0, sizeof(plat.all_cpus), &plat.all_cpus) != 0) {
		CPU_ZERO(&plat.all_cpus);
		CPU_SET(plat.sentry_cpu, &plat.all_cpus);
	}
	/* The next CPU the Sentry may use: where --placement other pins every guest thread, and
	 * where auto sends a thread on trial under seccomp (platform/placement.c). */
	plat.away_cpu = -1;
	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		for (int c = 1; c < CPU_SETSIZE; c++) {
			int cand = (plat.sentry_cpu + c) % CPU_SETSIZE;
			if (CPU_ISSET(cand, &set)) {
				plat.away_cpu = cand;
				break;
			}
		}
	}
	if (plat.placement == PLACEMENT_OTHER && plat.away_cpu >= 0)
		plat.guest_cpu = plat.away_cpu;
	/* Opened while the Sentry can (before it locks itself); without it, auto sends no thread
	 * away. */
	plat.stat_fd = -1;
	plat.away_idle_pct = 0;
	if (plat.placement == PLACEMENT_AUTO && plat.kind == PLATFORM_SECCOMP && plat.away_cpu >= 0)
		plat.stat_fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	plat_place_init();
	pin_to(plat.sentry_cpu);
}

void platform_start_cpus(cpu_set_t *set)
{
	*set = plat.all_cpus;
}

int platform_init(int memfd, enum platform_placement placement, enum platform_kind kind)
{
	unsigned int a, b, c, d;
	int err;

	plat.kind = kind;
	plat.memfd = memfd;
	plat.placement = placement;
	plat.user_top = detect_user_top();
	plat.fpstate_size = 512 + 64;
	if (__get_cpuid_count(0xd, 0, &a, &b, &c, &d) && b > plat.fpstate_size)
		plat.fpstate_size = b;
	choose_cpus();
	if (kind == PLATFORM_SECCOMP && (err = systrap_init()))
		return err;
	int sv[2];
	if ((err = stubfd_socketpair(sv)))
		return err;
	plat.fdsock = sv[0];
	plat.fdsock_stub = sv[1];
	/* A stub holds only the descriptors the factory kept: the userfaultfd it makes gets the
	 * lowest number that is none of those. */
	int kept[4] = {memfd, plat.fdsock_stub, -1, -1};
	systrap_stub_filter_fds(&kept[2], &kept[3]);
	for (int fd = 0, n = 0; n < STUB_FDMSG_FDS; fd++) {
		bool taken = false;
		for (int i = 0; i < 4; i++)
			taken |= kept[i] == fd;
		if (!taken)
			plat.fdmsg_fds[n++] = fd;
	}
	return map_stub_page();
}

/* glibc registers rseq in the thread's TLS; the stub unmaps the TLS, so the kernel would fault
 * on the next resume. glibc 2.36 registered 32 bytes whatever __rseq_size says. */
static void unregister_rseq(void)
{
	void *area = (char *)__builtin_thread_pointer() + __rseq_offset;

	if (__rseq_size == 0)
		return;
	if (syscall(SYS_rseq, area, __rseq_size, RSEQ_FLAG_UNREGISTER, RSEQ_SIG) != 0)
		syscall(SYS_rseq, area, 32, RSEQ_FLAG_UNREGISTER, RSEQ_SIG);
}

/* Closes every descriptor but the NKEEP in KEEP. */
static void close_all_but(int *keep, int nkeep)
{
	for (int i = 1; i < nkeep; i++) /* sorted: there are at most a few */
		for (int j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int x = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = x;
		}
	unsigned int from = 0;
	for (int i = 0; i < nkeep; i++) {
		if ((unsigned int)keep[i] > from)
			syscall(SYS_close_range, from, keep[i] - 1, 0);
		from = (unsigned int)keep[i] + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0);
}

/* The stub factory, a fork of the Sentry made at start-up (platform_start). It waits on GO_FD
 * until the Sentry has seized it, so it can never reach its int3 untraced; it takes the stubs'
 * credentials and gives up everything a stub gives up, and the stub page's entry then unmaps
 * the rest of the Sentry's image: what it forks copies two pages, however big the Sentry has
 * grown since. Everything here is inherited by every stub. */
static __attribute__((noreturn)) void factory_child(int go_fd)
{
	char c;
	sigset_t none;

	if (read(go_fd, &c, 1) != 1)
		_exit(126);
	/* Not the caller's working directory, a host directory that would stay reachable from
	 * the detached old root: "/", which the Sentry's pivot_root moves to the empty root (or
	 * is already, when the lock came first). */
	if (chdir("/"))
		_exit(126);
	setsid(); /* terminal signals go to the Sentry, which forwards them */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Its stubs are reaped by the Sentry, their tracer; the factory itself never waits. */
	signal(SIGCHLD, SIG_IGN);
	if (plat.guest_cpu != plat.sentry_cpu)
		guests_on_their_cpu();
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		_exit(126);
	if (plat.stub_hook)
		plat.stub_hook();
	unregister_rseq();
	int keep[4] = {plat.memfd, plat.fdsock_stub}, nkeep = 2;
	if (plat.kind == PLATFORM_SECCOMP)
		systrap_factory_prepare(keep, &nkeep);
	close_all_but(keep, nkeep);
	__asm__ volatile("jmp *%0" ::"r"(plat.stub_base + STUB_ENTRY_OFFSET),
			 "D"(plat.stub_base + PAGE)
			 : "memory");
	__builtin_unreachable();
}

/* Every stub not yet freed, so a teardown can kill the ones no task owns (a failed restore). */
static struct platform_stub *all_stubs;

/* --- which host threads may have an event ---------------------------------------------------
 * waitpid(-1) looks at every tracee, and takes each stopped one's signal lock: with 10,000
 * sleeping guest processes one look cost about a millisecond, and the loop made two or three
 * per guest syscall. But the Sentry knows which host threads can report anything: those it
 * resumed or interrupted (the watched list), and those it let go that still have to be reaped
 * (the reap list). platform_wait asks each of them with waitpid(tid, WNOHANG), and once each
 * thread a SIGCHLD named that it was not watching (the hints: mostly stops an injection has
 * already taken, now and then a host signal that reached a parked thread). It looks at
 * everything only when the hints overflow, or once every SCAN_INTERVAL_NS while events flow,
 * for a thread whose SIGCHLD merged with another's. Every event, however found, is matched to
 * its thread by tid. */
#define TID_BUCKETS 4096
#define SCAN_INTERVAL_NS ((uint64_t)NSEC_PER_SEC)

static struct platform_thread *tid_hash[TID_BUCKETS];

static struct {
	struct platform_thread *head, *tail;
} watched;

static struct {
	pid_t *tids;
	size_t n, cap, next; /* NEXT: where the last look stopped */
} reap;

#define MAX_HINTS 64
static struct {
	pid_t tids[MAX_HINTS];
	int n;
} hints;

static bool scan_due;
static uint64_t last_scan_ns;

static void hash_add(struct platform_thread *t)
{
	struct platform_thread **b = &tid_hash[(unsigned)t->tid % TID_BUCKETS];

	t->hash_next = *b;
	*b = t;
}

static void hash_del(struct platform_thread *t)
{
	/* A thread killed from outside has had its tid forgotten (-1): look everywhere. */
	unsigned int from = t->tid >= 0 ? (unsigned)t->tid % TID_BUCKETS : 0;
	unsigned int to = t->tid >= 0 ? from + 1 : TID_BUCKETS;

	for (unsigned int b = from; b < to; b++)
		for (struct platform_thread **pp = &tid_hash[b]; *pp; pp = &(*pp)->hash_next)
			if (*pp == t) {
				*pp = t->hash_next;
				return;
			}
}

static struct platform_thread *thread_by_tid(pid_t tid)
{
	for (struct platform_thread *t = tid_hash[(unsigned)tid % TID_BUCKETS]; t; t = t->hash_next)
		if (t->tid == tid)
			return t;
	return NULL;
}

static void unwatch(struct platform_thread *t)
{
	if (!t->watched)
		return;
	*(t->w_prev ? &t->w_prev->w_next : &watched.head) = t->w_next;
	*(t->w_next ? &t->w_next->w_prev : &watched.tail) = t->w_prev;
	t->w_prev = t->w_next = NULL;
	t->watched = false;
}

static void watch(struct platform_thread *t)
{
	if (t->watched)
		return;
	t->w_prev = watched.tail;
	*(watched.tail ? &watched.tail->w_next : &watched.head) = t;
	watched.tail = t;
	t->watched = true;
}

/* TID was let go and will exit: its exit must still be reaped. */
static void reap_later(pid_t tid)
{
	if (reap.n == reap.cap) {
		size_t cap = reap.cap ? 2 * reap.cap : 64;
		pid_t *n = realloc(reap.tids, cap * sizeof(*n));
		if (!n) {
			scan_due = true; /* a look at everything reaps it */
			return;
		}
		reap.tids = n;
		reap.cap = cap;
	}
	reap.tids[reap.n++] = tid;
}

static void reap_remove(size_t i)
{
	reap.tids[i] = reap.tids[--reap.n];
}

struct platform_thread *platform_thread_by_tid(pid_t tid)
{
	return thread_by_tid(tid);
}

void platform_note_sigchld(pid_t tid)
{
	struct platform_thread *t = thread_by_tid(tid);

	if (t && t->watched)
		return; /* the next platform_wait asks it anyway */
	for (int i = 0; i < hints.n; i++)
		if (hints.tids[i] == tid)
			return;
	if (hints.n == MAX_HINTS)
		scan_due = true;
	else
		hints.tids[hints.n++] = tid;
}

/* The factory's options are every stub's: a stub is attached at its birth (CLONE_PTRACE), with
 * the options of the process it was forked from. */
#define SEIZE_OPTIONS (PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE)

/* The factory's entry ends in int3 once its filter is in place: until then it forks nothing. */
static int factory_ready(void)
{
	pid_t pid = plat.factory->tid;
	int st;

	if (!plat.factory_starting)
		return 0;
	plat.factory_starting = false;
	if (waitpid(pid, &st, __WALL) == pid && WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP)
		return 0;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
	free(plat.factory);
	plat.factory = NULL;
	return -ECHILD;
}

int platform_start(void)
{
	struct platform_thread *t;
	int go[2], err;
	pid_t pid;

	if (plat.factory)
		return 0;
	if (!(t = calloc(1, sizeof(*t))))
		return -ENOMEM;
	if (pipe2(go, O_CLOEXEC)) {
		free(t);
		return -errno;
	}
	pid = fork();
	err = -errno;
	if (pid < 0)
		goto out_close;
	if (pid == 0) {
		close(go[1]);
		factory_child(go[0]);
	}
	/* Our own child, before the lock: any Yama scope but 3 lets us seize it, and nothing
	 * else may ever trace it (nor, being traced from birth, any stub). */
	if (ptrace(PTRACE_SEIZE, pid, 0, SEIZE_OPTIONS) != 0) {
		err = -errno;
		goto out_kill;
	}
	if (write(go[1], "g", 1) != 1) {
		err = -EIO;
		goto out_kill;
	}
	/* Its set-up (credentials, unmapping the Sentry's image, its filter) runs on while we
	 * go on with ours: the first stub waits for it (factory_ready). */
	t->tid = t->host_pid = pid;
	plat.factory = t;
	plat.factory_starting = true;
	t = NULL;
	err = 0;
	goto out_close;
out_kill:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
out_close:
	free(t);
	close(go[0]);
	close(go[1]);
	return err;
}

/* A new stub: a fork injected into the factory. The child is traced from its birth and first
 * stops before it runs anything. The Sentry makes it a session of its own (as each stub was
 * when forked from the Sentry: terminal signals never reach it, and with autogroup scheduling
 * each stub is its own group; stubs sharing the factory's session were starved under load, a
 * fork bomb of 1,000 taking over 30 s instead of 3) and stacks the stubs' filter on the
 * factory's; it is then ready, stopped at the gadget's int3 like the factory. Three injections
 * and a fork of a two-page process, whatever the size of the Sentry or the number of stubs. */
int platform_stub_new(struct platform_thread **out)
{
	const long fork_args[6] = {STUB_FORK_FLAGS, 0, 0, 0, 0, 0};
	const long filter_args[6] = {SECCOMP_SET_MODE_FILTER, 0, (long)PARAM_ADDR(stub_prog)};
	struct platform_thread *t;
	struct platform_stub *stub;
	long pid, r;
	int st;

	if (!plat.factory)
		return -ESRCH;
	if ((r = factory_ready()))
		return (int)r;
	if ((pid = ptrace_inject(plat.factory, SYS_clone, fork_args)) < 0)
		return (int)pid;
	if (waitpid((pid_t)pid, &st, __WALL) != pid || !WIFSTOPPED(st)) {
		r = -ECHILD;
		goto out_kill;
	}
	t = calloc(1, sizeof(*t));
	stub = calloc(1, sizeof(*stub));
	if (!t || !stub) {
		free(t);
		free(stub);
		r = -ENOMEM;
		goto out_kill;
	}
	t->tid = t->host_pid = (pid_t)pid;
	t->stub = stub;
	const long none[6] = {0};
	const long pdeath[6] = {PR_SET_PDEATHSIG, SIGKILL};
	r = ptrace_inject(t, SYS_setsid, none);
	/* Detached from, a stub of the seccomp platform dies with the factory instead. */
	if (r >= 0 && plat.kind == PLATFORM_SECCOMP &&
	    (r = ptrace_inject(t, SYS_prctl, pdeath)) >= 0)
		r = systrap_prepare(t); /* its first area, while the ptrace gadget still works */
	if (r < 0 || (r = ptrace_inject(t, SYS_seccomp, filter_args)) != 0) {
		systrap_unprepare(stub);
		free(t);
		free(stub);
		r = r < 0 ? r : -EIO;
		goto out_kill;
	}
	hash_add(t);
	stub->pid = (pid_t)pid;
	stub->threads = 1;
	stub->next = all_stubs;
	stub->pprev = &all_stubs;
	if (all_stubs)
		all_stubs->pprev = &stub->next;
	all_stubs = stub;
	if (plat.kind == PLATFORM_SECCOMP && (r = systrap_adopt(t)) != 0) {
		platform_thread_release(t);
		return (int)r;
	}
	*out = t;
	return 0;
out_kill:
	kill((pid_t)pid, SIGKILL);
	waitpid((pid_t)pid, NULL, __WALL);
	return (int)r;
}

int platform_stub_new_uffd(struct platform_thread **out, int *uffd)
{
	int err = platform_stub_new(out);

	if (err)
		return err;
	/* The new stub makes it for its own address space, by injection like any other call. */
	int fd = platform_stub_uffd(*out);
	if (fd < 0) {
		platform_thread_release(*out);
		*out = NULL;
		return fd == -EBADF ? -EPERM : fd; /* no descriptor: the stub could not make one */
	}
	*uffd = fd;
	return 0;
}

_Static_assert(STUB_PARAMS_OFFSET == PAGE, "the parameter page follows the code page");

/* T's stub makes a userfaultfd at the number the parameter page's message names, sends it on
 * the stubs' socket and closes its own (docs/security.md, "A stub's userfaultfd"). Whatever
 * was queued before is no answer to this request: dropped first. */
int platform_stub_uffd(struct platform_thread *t)
{
	long args[6] = {O_CLOEXEC | O_NONBLOCK};
	long fd, r = 0;
	int fds[STUB_FDMSG_FDS];

	stubfd_drain(plat.fdsock);
	fd = platform_inject(t, SYS_userfaultfd, args);
	/* vm.unprivileged_userfaultfd=0 and no capability: user-mode faults only, which are
	 * all that tracking the stub's own writes needs. */
	if (fd == -EPERM) {
		args[0] |= UFFD_USER_MODE_ONLY;
		fd = platform_inject(t, SYS_userfaultfd, args);
	}
	if (fd < 0)
		return (int)fd;
	/* Another number: a guest thread of this stub holds the one the message names, which
	 * spoils only its own sandbox's tracking. */
	if (fd != plat.fdmsg_fds[0]) {
		r = -EBUSY;
	} else {
		const long send_args[6] = {plat.fdsock_stub, (long)STUB_FDMSG_ADDR(plat.stub_base),
					   MSG_DONTWAIT | MSG_NOSIGNAL};
		r = platform_inject(t, SYS_sendmsg, send_args);
		r = r == 1 ? 0 : r < 0 ? r : -EIO;
	}
	const long close_args[6] = {fd};
	platform_inject(t, SYS_close, close_args);
	if (r || (r = stubfd_recv(plat.fdsock, t->host_pid, fds)))
		return (int)r;
	return fds[0];
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

int platform_thread_new(struct platform_thread *parent, struct platform_thread **out)
{
	if (parent->systrap)
		return systrap_thread_new(parent, out);

	const long args[6] = {STUB_THREAD_FLAGS, 0, 0, 0, 0, 0};
	struct platform_thread *t;
	int st;
	long tid = platform_inject(parent, SYS_clone, args);

	if (tid < 0)
		return (int)tid;
	/* Auto-attached (TRACECLONE): its first stop comes before any guest instruction that
	 * matters; it waits there for its registers. */
	if (waitpid(tid, &st, __WALL) != tid || !WIFSTOPPED(st)) {
		return -ECHILD;
	}
	if (!(t = calloc(1, sizeof(*t))))
		return -ENOMEM;
	t->tid = tid;
	t->host_pid = parent->host_pid;
	t->stub = parent->stub;
	t->stub->threads++;
	hash_add(t);
	plat_place_new_thread(parent, t);
	*out = t;
	return 0;
}

/* Makes stopped-or-running thread T leave: interrupt it if needed, then inject exit. */
static void thread_exit(struct platform_thread *t)
{
	struct user_regs_struct r;
	int st;

	if (ptrace(PTRACE_GETREGS, t->tid, 0, &r) != 0) {
		/* Running: stop it first. */
		if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) != 0)
			return;
		if (waitpid(t->tid, &st, __WALL) != t->tid || !WIFSTOPPED(st))
			return;
		if (ptrace(PTRACE_GETREGS, t->tid, 0, &r) != 0)
			return;
	}
	r.rip = plat.stub_base + STUB_GADGET_OFFSET;
	r.cs = USER_CS_64;
	r.rax = SYS_exit;
	r.rdi = 0;
	r.orig_rax = -1;
	/* No wait for the exit: a thread-group leader's is only reported once the whole group
	 * is gone. Its stops on the way out are continued by platform_wait's caller. */
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &r) == 0 && ptrace(PTRACE_CONT, t->tid, 0, 0) == 0)
		return;
	scan_due = true; /* it may have died meanwhile: whatever it reports, a look finds it */
}

void platform_thread_release(struct platform_thread *t)
{
	if (!t)
		return;
	if (t->systrap) {
		systrap_thread_release(t);
		return;
	}
	plat_place_release(t);
	unwatch(t);
	hash_del(t);
	if (!t->exited)
		reap_later(t->tid);
	struct platform_stub *stub = t->stub;
	if (--stub->threads == 0) {
		if (!stub->killed)
			kill(stub->pid, SIGKILL);
		*stub->pprev = stub->next;
		if (stub->next)
			stub->next->pprev = stub->pprev;
		free(stub);
	} else if (!stub->killed) {
		thread_exit(t);
	}
	free(t);
}

int platform_get_regs(struct platform_thread *t, struct user_regs_struct *regs)
{
	if (t->systrap)
		return systrap_get_regs(t, regs);
	return ptrace(PTRACE_GETREGS, t->tid, 0, regs) ? -errno : 0;
}

int platform_set_regs(struct platform_thread *t, const struct user_regs_struct *regs)
{
	if (t->systrap)
		return systrap_set_regs(t, regs);
	return ptrace(PTRACE_SETREGS, t->tid, 0, regs) ? -errno : 0;
}

int platform_get_fpstate(struct platform_thread *t, void *buf, size_t len)
{
	if (t->systrap)
		return systrap_get_fpstate(t, buf, len);
	struct iovec iov = {buf, len};

	return ptrace(PTRACE_GETREGSET, t->tid, NT_X86_XSTATE, &iov) ? -errno : 0;
}

int platform_set_fpstate(struct platform_thread *t, const void *buf, size_t len)
{
	if (t->systrap)
		return systrap_set_fpstate(t, buf, len);
	struct iovec iov = {(void *)buf, len};

	return ptrace(PTRACE_SETREGSET, t->tid, NT_X86_XSTATE, &iov) ? -errno : 0;
}

int platform_get_siginfo(struct platform_thread *t, siginfo_t *si)
{
	if (t->systrap)
		return systrap_get_siginfo(t, si);
	return ptrace(PTRACE_GETSIGINFO, t->tid, 0, si) ? -errno : 0;
}

long platform_inject(struct platform_thread *t, long nr, const long args[6])
{
	if (t->systrap)
		return systrap_inject(t, nr, args);
	return ptrace_inject(t, nr, args);
}

long ptrace_inject(struct platform_thread *t, long nr, const long args[6])
{
	struct user_regs_struct saved, r;
	long ret;
	int st, err;

	if ((err = platform_get_regs(t, &saved)))
		return err;
	r = saved;
	r.rip = plat.stub_base + STUB_GADGET_OFFSET;
	r.cs = USER_CS_64; /* the guest may be in 32-bit code: the gadget is 64-bit */
	r.rax = nr;
	r.orig_rax = -1; /* no syscall restart on the way out of this stop */
	r.rdi = args[0];
	r.rsi = args[1];
	r.rdx = args[2];
	r.r10 = args[3];
	r.r8 = args[4];
	r.r9 = args[5];
	if ((err = platform_set_regs(t, &r)))
		return err;
	if (ptrace(PTRACE_CONT, t->tid, 0, 0))
		return -errno;
	for (;;) {
		if (waitpid(t->tid, &st, __WALL) != t->tid)
			return -errno;
		if (!WIFSTOPPED(st))
			return -ESRCH;
		if (WSTOPSIG(st) == SIGTRAP && (st >> 16) == 0)
			break;
		/* A fault of the gadget itself would come back at every retry: give up. */
		if ((st >> 16) == 0 &&
		    (WSTOPSIG(st) == SIGSEGV || WSTOPSIG(st) == SIGBUS || WSTOPSIG(st) == SIGILL)) {
			platform_set_regs(t, &saved);
			return -EFAULT;
		}
		/* Something else stopped it on the way (a signal sent to the stub): drop it. */
		if (ptrace(PTRACE_CONT, t->tid, 0, 0))
			return -errno;
	}
	errno = 0;
	ret = ptrace(PTRACE_PEEKUSER, t->tid, offsetof(struct user_regs_struct, rax), 0);
	if (errno)
		return -errno;
	if ((err = platform_set_regs(t, &saved)))
		return err;
	return ret;
}

static void decode_status(struct platform_event *ev, pid_t tid, int st)
{
	memset(ev, 0, sizeof(*ev));
	ev->tid = tid;
	if (WIFEXITED(st)) {
		ev->kind = PEV_EXITED;
		ev->exit_status = WEXITSTATUS(st);
	} else if (WIFSIGNALED(st)) {
		ev->kind = PEV_EXITED;
		ev->sig = WTERMSIG(st);
	} else if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
		ev->kind = PEV_SYSCALL;
	} else if ((st >> 16) != 0) {
		ev->kind = PEV_STOP;
		ev->sig = WSTOPSIG(st);
	} else {
		ev->kind = PEV_SIGNAL;
		ev->sig = WSTOPSIG(st);
	}
	/* Whoever reported, it is not running now: no longer watched, and once it has exited
	 * there is nothing left to reap. */
	struct platform_thread *t = thread_by_tid(tid);
	if (t) {
		unwatch(t);
		t->exited = ev->kind == PEV_EXITED;
	}
}

/* The hints, the watched threads, then the reap list from where the last look stopped: the
 * first event there is, or -EAGAIN. */
static int wait_candidates(struct platform_event *ev)
{
	int st;

	/* Each hint is asked once: an event it has is the one its SIGCHLD announced. */
	while (hints.n > 0) {
		pid_t tid = hints.tids[--hints.n];
		if (waitpid(tid, &st, __WALL | WNOHANG) == tid) {
			decode_status(ev, tid, st);
			return 0;
		}
	}

	for (struct platform_thread *t = watched.head, *next; t; t = next) {
		next = t->w_next;
		pid_t r = waitpid(t->tid, &st, __WALL | WNOHANG);
		if (r == t->tid) {
			decode_status(ev, r, st);
			return 0;
		}
		if (r < 0) /* gone without our seeing it: nothing to wait for */
			unwatch(t);
	}
	for (size_t looked = 0; looked < reap.n;) {
		if (reap.next >= reap.n)
			reap.next = 0;
		size_t i = reap.next;
		pid_t tid = reap.tids[i];
		pid_t r = waitpid(tid, &st, __WALL | WNOHANG);
		if (r == tid || r < 0 || thread_by_tid(tid)) {
			/* Reaped now, or already (its tid is free or someone else's, watched if
			 * it runs): either way, no longer ours to reap. */
			reap_remove(i);
			if (r == tid) {
				decode_status(ev, r, st);
				return 0;
			}
			continue;
		}
		reap.next++;
		looked++;
	}
	return -EAGAIN;
}

static int wait_any(struct platform_event *ev, bool block)
{
	int st;
	pid_t tid = waitpid(-1, &st, __WALL | (block ? 0 : WNOHANG));

	if (tid < 0)
		return -errno;
	if (tid == 0)
		return -EAGAIN;
	decode_status(ev, tid, st);
	return 0;
}

int platform_wait(struct platform_event *ev, bool block)
{
	if (plat.kind == PLATFORM_SECCOMP)
		return systrap_wait(ev, block);
	if (block)
		return wait_any(ev, true);
	if (wait_candidates(ev) == 0)
		return 0;
	uint64_t now = now_ns();
	if (!scan_due && now - last_scan_ns < SCAN_INTERVAL_NS)
		return -EAGAIN;
	scan_due = false;
	last_scan_ns = now;
	return wait_any(ev, false);
}

int platform_syscall_info(struct platform_thread *t, struct platform_syscall *sc)
{
	if (t->systrap)
		return systrap_syscall_info(t, sc);
	struct __ptrace_syscall_info info;

	if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof(info), &info) < 0)
		return -errno;
	if (info.op != PTRACE_SYSCALL_INFO_ENTRY)
		return -EINVAL;
	sc->nr = info.entry.nr;
	for (int i = 0; i < 6; i++)
		sc->args[i] = info.entry.args[i];
	sc->ip = info.instruction_pointer;
	sc->sp = info.stack_pointer;
	sc->native = info.arch == AUDIT_ARCH_X86_64;
	return 0;
}

int platform_set_return(struct platform_thread *t, long ret)
{
	if (t->systrap)
		return systrap_set_return(t, ret);
	return ptrace(PTRACE_POKEUSER, t->tid, offsetof(struct user_regs_struct, rax), ret) ? -errno
											    : 0;
}

void platform_blocked(struct platform_thread *t)
{
	if (t->systrap)
		systrap_blocked(t);
}

int platform_resume(struct platform_thread *t, int sig)
{
	watch(t);
	plat_place_resumed(t);
	if (t->systrap)
		return sig ? -EINVAL : systrap_resume(t);
	return ptrace(PTRACE_SYSEMU, t->tid, 0, sig) ? -errno : 0;
}

void platform_continue_stray(pid_t tid)
{
	if (ptrace(PTRACE_CONT, tid, 0, 0) == 0 && !thread_by_tid(tid))
		reap_later(tid);
}

int platform_interrupt(struct platform_thread *t)
{
	if (t->systrap)
		return systrap_interrupt(t);
	watch(t);
	return ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) ? -errno : 0;
}

void platform_kill(struct platform_thread *t)
{
	if (t->systrap) {
		systrap_kill(t);
		return;
	}
	kill(t->host_pid, SIGKILL);
	t->stub->killed = true;
}

void platform_kill_all(void)
{
	for (struct platform_stub *s = all_stubs; s; s = s->next)
		if (!s->killed) {
			kill(s->pid, SIGKILL);
			s->killed = true;
		}
	if (plat.factory) {
		kill(plat.factory->tid, SIGKILL);
		free(plat.factory);
		plat.factory = NULL;
		plat.factory_starting = false;
	}
	if (plat.kind == PLATFORM_SECCOMP)
		systrap_teardown();
}

void plat_watch(struct platform_thread *t)
{
	watch(t);
}

struct platform_thread *plat_first_watched(void)
{
	return watched.head;
}

void plat_unwatch(struct platform_thread *t)
{
	unwatch(t);
}

void plat_hash_add(struct platform_thread *t)
{
	hash_add(t);
}

void plat_hash_del(struct platform_thread *t)
{
	hash_del(t);
}

uint64_t plat_now_ns(void)
{
	return now_ns();
}

void plat_stub_unlink(struct platform_stub *stub)
{
	*stub->pprev = stub->next;
	if (stub->next)
		stub->next->pprev = stub->pprev;
}
