/* The seccomp platform (--platform seccomp, docs/platform.md). A stub is made as under ptrace
 * (forked from the factory, set up by injection), given its first thread's area, and then
 * detached from: from there on nothing is ptrace. Every syscall a guest thread makes is
 * refused by the stub's seccomp filter with SIGSYS (it does not come from the stub's own
 * syscall instruction); the stub's handler, on the thread's alternate stack in its area, posts
 * the event in the area's control block, rings the Sentry's doorbell (an eventfd) and waits on
 * a futex in the area. The Sentry reads the syscall from the signal frame through its own
 * mapping of the area, answers by rewriting the frame (a return value, or whole registers for
 * a signal delivery, an execve, a restore), and lets the handler return: rt_sigreturn loads
 * the frame. Faults come the same way (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP), a thread is
 * stopped by PLATFORM_SIGPARK, and address-space changes are calls the waiting handler makes
 * at the Sentry's request.
 *
 * Nothing in the area is trusted: the guest can write it (it is in its address space), so
 * every pointer read from it is checked to lie inside the area, and a thread that lies about
 * its state only confuses itself. */
#include "common/units.h"
#include "platform/internal.h"
#include "platform/stub.h"
#include "platform/systrap.h"

#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <time.h>
#include <unistd.h>

#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE (1 << 1)
#endif
#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif
#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif

/* Every area of every stub is a slot of one memory file, mapped whole in the Sentry. */
#define MAX_SLOTS 65536

struct platform_systrap_stub {
	int pidfd;
	bool dead;  /* its process is gone */
	int *slots; /* global slot of each local area index, -1 where none yet */
	bool *used; /* whether a live thread has it */
	int nlocal;
	struct platform_thread *threads; /* its threads not yet released */
	/* Let go of (its last thread released) and not yet gone: in the dying list. */
	struct platform_systrap_stub *dying_next, **dying_pprev;
};

/* Stubs let go of whose processes are not yet gone: a teardown frees what they hold. */
static struct platform_systrap_stub *dying;

static struct {
	int sysfd, doorbell, ep;
	struct systrap_global *global; /* slot 0 */
	char *slots;		       /* the Sentry's mapping of all slots */
	int *free_slots;
	int nfree, next_unused;
	pid_t *exits; /* PEV_EXITED events to report: threads of a stub that died */
	size_t nexits, cap_exits;
} st = {.sysfd = -1, .doorbell = -1, .ep = -1};

/* The tag of the doorbell in the platform's epoll set (its stubs' pidfds are tagged with
 * their struct platform_systrap_stub). */
static int doorbell_tag;

static struct systrap_area *slot_area(int slot)
{
	return (struct systrap_area *)(st.slots + (size_t)slot * SYSTRAP_AREA);
}

static uintptr_t local_addr(int local)
{
	return plat.stub_base + SYSTRAP_AREAS_OFF + (uintptr_t)local * SYSTRAP_AREA;
}

int systrap_stub_filter_fds(int *sysfd, int *doorbell)
{
	if (plat.kind != PLATFORM_SECCOMP)
		return 0;
	*sysfd = st.sysfd;
	*doorbell = st.doorbell;
	return 0;
}

/* The handler reads and loads the guest's fs and gs bases itself, which needs the FSGSBASE
 * instructions (Linux 5.9 and an Ivy Bridge or later CPU). */
bool platform_seccomp_supported(void)
{
	return getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE;
}

int systrap_init(void)
{
	if (!platform_seccomp_supported())
		return -ENOTSUP;
	st.sysfd = memfd_create("minisentry-areas", MFD_CLOEXEC);
	if (st.sysfd < 0)
		return -errno;
	if (ftruncate(st.sysfd, (off_t)MAX_SLOTS * SYSTRAP_AREA))
		return -errno;
	st.slots = mmap(NULL, (size_t)MAX_SLOTS * SYSTRAP_AREA, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_NORESERVE, st.sysfd, 0);
	if (st.slots == MAP_FAILED)
		return -errno;
	st.global = (struct systrap_global *)st.slots;
	st.next_unused = 1;
	st.global->sentry_cpu = -1;
	unsigned int a, b, c, d;
	if (__get_cpuid(0x80000001, &a, &b, &c, &d) && (d & (1U << 27)))
		st.global->sentry_cpu = plat.sentry_cpu; /* rdtscp tells a handler its CPU */
	st.doorbell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	st.ep = epoll_create1(EPOLL_CLOEXEC);
	if (st.doorbell < 0 || st.ep < 0)
		return -errno;
	/* Edge-triggered: each write is one wake-up, and nothing needs reading. */
	struct epoll_event e = {.events = EPOLLIN | EPOLLET, .data.ptr = &doorbell_tag};
	if (epoll_ctl(st.ep, EPOLL_CTL_ADD, st.doorbell, &e))
		return -errno;
	return 0;
}

int platform_event_fd(void)
{
	return st.doorbell;
}

int platform_exit_fd(void)
{
	return st.ep;
}

const char *platform_name(void)
{
	return plat.kind == PLATFORM_SECCOMP ? "seccomp" : "ptrace";
}

/* In the factory, before its filter: every stub inherits the handlers (which run on the
 * thread's alternate stack with every signal blocked, and return through the stub's
 * restorer) and the two descriptors. */
void systrap_factory_prepare(int *keep, int *nkeep)
{
	struct {
		unsigned long handler, flags, restorer, mask;
	} sa = {
	    .handler = STUB_CODE_ADDR(stub_systrap_handler),
	    .flags = SA_SIGINFO | SA_ONSTACK | SA_RESTORER,
	    .restorer = STUB_CODE_ADDR(stub_systrap_restorer),
	    .mask = ~0UL,
	};
	static const int sigs[] = {SIGSYS, SIGSEGV, SIGBUS,	     SIGFPE,
				   SIGILL, SIGTRAP, PLATFORM_SIGPARK};

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (syscall(SYS_rt_sigaction, sigs[i], &sa, NULL, 8))
			_exit(126);
	/* What every stub's first thread inherits: its signal stack in area 0 (which the Sentry
	 * maps in each stub) and the shared page. */
	stack_t ss = {.ss_sp = (void *)(local_addr(0) + SYSTRAP_STACK_OFF),
		      .ss_size = SYSTRAP_STACK_LEN};
	/* The shared page through a read-only descriptor: no mprotect can make it writable (it
	 * tells every stub of the sandbox whether to ring the doorbell). */
	char self_fd[32];
	snprintf(self_fd, sizeof(self_fd), "/proc/self/fd/%d", st.sysfd);
	int ro = open(self_fd, O_RDONLY | O_CLOEXEC);
	if (ro < 0 || sigaltstack(&ss, NULL) ||
	    mmap((void *)(plat.stub_base + SYSTRAP_GLOBAL_OFF), PAGE, PROT_READ,
		 MAP_SHARED | MAP_FIXED, ro, 0) == MAP_FAILED)
		_exit(126);
	close(ro);
	keep[(*nkeep)++] = st.sysfd;
	keep[(*nkeep)++] = st.doorbell;
}

static int slot_alloc(void)
{
	if (st.nfree > 0)
		return st.free_slots[--st.nfree];
	if (st.next_unused >= MAX_SLOTS)
		return -EAGAIN;
	return st.next_unused++;
}

static void slot_free(int slot)
{
	if (slot < 0)
		return;
	if (!(st.nfree % 256)) {
		int *n = realloc(st.free_slots, (st.nfree + 256) * sizeof(*n));
		if (!n)
			return; /* lost: one slot fewer */
		st.free_slots = n;
	}
	st.free_slots[st.nfree++] = slot;
}

static void area_init(struct systrap_area *a)
{
	memset(a, 0, sizeof(*a));
	a->one = 1;
	a->doorbell = st.doorbell;
}

static bool stub_alive(struct platform_systrap_stub *s)
{
	struct pollfd p = {.fd = s->pidfd, .events = POLLIN};

	if (s->dead)
		return false;
	if (s->pidfd >= 0 && poll(&p, 1, 0) == 1)
		return false;
	return true;
}

static long futex(uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, word, op, val, ts, NULL, 0);
}

static uint32_t state_of(struct platform_thread *t)
{
	return __atomic_load_n(&t->area->state, __ATOMIC_ACQUIRE);
}

/* Hands the thread a new state, waking its handler only if it sleeps (one that spins on
 * another CPU sees the store). */
static void set_state(struct systrap_area *a, uint32_t s)
{
	__atomic_store_n(&a->state, s, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&a->stub_sleeping, __ATOMIC_SEQ_CST))
		futex(&a->state, FUTEX_WAKE, 1, NULL);
}

static void take_events(int timeout);
static void stub_dispose(struct platform_systrap_stub *s);

/* How long the Sentry waits for a stub to do what it asked: it never takes this long unless
 * the guest tampered with its stub. */
#define WAIT_NS (5 * (uint64_t)NSEC_PER_SEC)

/* Waits until area A leaves state FROM (a call made) or, with FROM = SYSTRAP_RUNNING, until
 * it posts an event: a new thread's first. The handler wakes the futex after a call; an event
 * rings the doorbell instead, once the Sentry says it may sleep. Gives up after a few seconds
 * or when the stub is gone. */
static int wait_area(struct systrap_area *a, uint32_t from, struct platform_systrap_stub *s)
{
	const struct timespec slice = {0, 200000};
	uint64_t deadline = 0;

	for (int i = 0;; i++) {
		if (__atomic_load_n(&a->state, __ATOMIC_ACQUIRE) != from)
			return 0;
		if (i < 50) {
			__builtin_ia32_pause();
			continue;
		}
		if (!deadline)
			deadline = plat_now_ns() + WAIT_NS;
		else if (plat_now_ns() > deadline)
			return -ETIMEDOUT;
		if (s && (i & 15) == 0 && !stub_alive(s))
			return -ESRCH;
		if (from == SYSTRAP_RUNNING) {
			__atomic_store_n(&st.global->sentry_sleeping, 1, __ATOMIC_SEQ_CST);
			if (__atomic_load_n(&a->state, __ATOMIC_SEQ_CST) == from)
				take_events(1);
			continue;
		}
		__atomic_store_n(&a->sentry_waiting, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&a->state, __ATOMIC_SEQ_CST) == from)
			futex(&a->state, FUTEX_WAIT, from, &slice);
		__atomic_store_n(&a->sentry_waiting, 0, __ATOMIC_RELAXED);
	}
}

static long inject(struct platform_thread *t, long nr, const long args[6]);

long systrap_inject(struct platform_thread *t, long nr, const long args[6])
{
	plat_place_injected(t);
	return inject(t, nr, args);
}

/* Stopped thread T's host scheduling policy: SCHED_BATCH (BATCH) or SCHED_OTHER. Only T can
 * set its own (the Sentry's is refused: another user's thread, and CAP_SYS_NICE would have to
 * be the initial namespace's), so its handler makes the call, with a zero priority read from
 * its own area (the call's unused sixth argument). */
int systrap_set_batch(struct platform_thread *t, bool batch)
{
	const long args[6] = {0,
			      batch ? SCHED_BATCH : SCHED_OTHER,
			      (long)(local_addr(t->local) + offsetof(struct systrap_area, args[5])),
			      0,
			      0,
			      0};
	long r = inject(t, SYS_sched_setscheduler, args);

	return r < 0 ? (int)r : 0;
}

static long inject(struct platform_thread *t, long nr, const long args[6])
{
	struct systrap_area *a = t->area;
	int err;

	if (t->stub->sys->dead)
		return -ESRCH;
	a->nr = (uint64_t)nr;
	for (int i = 0; i < 6; i++)
		a->args[i] = (uint64_t)args[i];
	set_state(a, SYSTRAP_CMD);
	if ((err = wait_area(a, SYSTRAP_CMD, t->stub->sys)))
		return err;
	return (long)a->result;
}

static void thread_link(struct platform_thread *t, int local)
{
	struct platform_systrap_stub *s = t->stub->sys;

	t->systrap = true;
	t->local = local;
	t->area = slot_area(s->slots[local]);
	t->sib_next = s->threads;
	t->sib_pprev = &s->threads;
	if (s->threads)
		s->threads->sib_pprev = &t->sib_next;
	s->threads = t;
}

static void thread_unlink(struct platform_thread *t)
{
	*t->sib_pprev = t->sib_next;
	if (t->sib_next)
		t->sib_next->sib_pprev = t->sib_pprev;
}

/* A new stub, still traced and stopped: map its first area, make it the thread's signal
 * stack, have the kernel clear its tid there at exit, and let it go to the park, where its
 * first trap is its first event. From then on the stub is driven through its areas only. */
/* A new stub, still traced, before its own filter (which refuses the ptrace gadget): its first
 * area, mapped by injection. */
int systrap_prepare(struct platform_thread *t)
{
	struct platform_systrap_stub *s = calloc(1, sizeof(*s));
	long r;
	int err;

	if (!s)
		return -ENOMEM;
	s->pidfd = -1;
	s->slots = malloc(sizeof(*s->slots));
	s->used = malloc(sizeof(*s->used));
	if (!s->slots || !s->used) {
		err = -ENOMEM;
		goto out_free;
	}
	s->slots[0] = slot_alloc();
	s->used[0] = true;
	s->nlocal = 1;
	if ((err = s->slots[0]) < 0)
		goto out_free;
	int slot = s->slots[0];
	struct systrap_area *a = slot_area(slot);
	area_init(a);
	a->tid = t->tid;
	uintptr_t area = local_addr(0);
	const long map[6] = {(long)area,
			     SYSTRAP_AREA,
			     PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_FIXED,
			     st.sysfd,
			     (long)slot * SYSTRAP_AREA};
	if ((r = ptrace_inject(t, SYS_mmap, map)) != (long)area) {
		err = r < 0 ? (int)r : -EIO;
		goto out_free;
	}
	t->stub->sys = s;
	return 0;
out_free:
	stub_dispose(s);
	return err;
}

/* Frees what systrap_prepare made, for a stub that never got further. */
void systrap_unprepare(struct platform_stub *stub)
{
	if (stub->sys)
		stub_dispose(stub->sys);
	stub->sys = NULL;
}

/* The prepared stub, its own filter in place: sent to the park and let go, where its first
 * trap is its first event. From then on it is driven through its areas only. */
int systrap_adopt(struct platform_thread *t)
{
	struct platform_systrap_stub *s = t->stub->sys;
	struct systrap_area *a = slot_area(s->slots[0]);
	uintptr_t area = local_addr(0);
	struct user_regs_struct regs;
	int err;

	if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs))
		return -errno;
	regs.rip = STUB_CODE_ADDR(stub_systrap_park);
	regs.rsp = area + SYSTRAP_AREA;
	regs.orig_rax = -1;
	s->pidfd = (int)syscall(SYS_pidfd_open, t->host_pid, 0);
	struct epoll_event e = {.events = EPOLLIN, .data.ptr = s};
	if (s->pidfd < 0 || epoll_ctl(st.ep, EPOLL_CTL_ADD, s->pidfd, &e) ||
	    ptrace(PTRACE_SETREGS, t->tid, 0, &regs) || ptrace(PTRACE_DETACH, t->tid, 0, 0))
		return -errno;
	plat_unwatch(t);
	thread_link(t, 0);
	if ((err = wait_area(a, SYSTRAP_RUNNING, s)))
		return err;
	return a->sig == SIGTRAP ? 0 : -EIO;
}

int systrap_thread_new(struct platform_thread *parent, struct platform_thread **out)
{
	struct platform_stub *stub = parent->stub;
	struct platform_systrap_stub *s = stub->sys;
	struct platform_thread *t;
	int local = -1, err;

	for (int i = 0; i < s->nlocal && local < 0; i++)
		if (!s->used[i] &&
		    __atomic_load_n(&slot_area(s->slots[i])->tid, __ATOMIC_ACQUIRE) == 0)
			local = i;
	if (local >= 0) {
		s->used[local] = true;
	} else {
		if (s->nlocal >= SYSTRAP_MAX_LOCAL)
			return -EAGAIN;
		int slot = slot_alloc();
		if (slot < 0)
			return slot;
		int *ns = realloc(s->slots, (s->nlocal + 1) * sizeof(*ns));
		if (ns)
			s->slots = ns;
		bool *nu = realloc(s->used, (s->nlocal + 1) * sizeof(*nu));
		if (nu)
			s->used = nu;
		if (!ns || !nu) {
			slot_free(slot);
			return -ENOMEM;
		}
		local = s->nlocal;
		const long map[6] = {
		    (long)local_addr(local), SYSTRAP_AREA, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_FIXED,  st.sysfd,	   (long)slot * SYSTRAP_AREA};
		long r = systrap_inject(parent, SYS_mmap, map);
		if (r != (long)local_addr(local)) {
			slot_free(slot);
			return r < 0 ? (int)r : -EIO;
		}
		s->slots[local] = slot;
		s->used[local] = true;
		s->nlocal++;
	}
	struct systrap_area *a = slot_area(s->slots[local]);
	area_init(a);
	uintptr_t area = local_addr(local);
	/* clone's child returns from the gadget's syscall onto this stack: its ret goes to
	 * the thread start. */
	*(uint64_t *)((char *)a + SYSTRAP_AREA - 8) = STUB_CODE_ADDR(stub_systrap_thread_start);
	const long args[6] = {SYSTRAP_THREAD_FLAGS,
			      (long)(area + SYSTRAP_AREA - 8),
			      0,
			      (long)(area + offsetof(struct systrap_area, tid)),
			      0,
			      0};
	long tid = systrap_inject(parent, SYS_clone, args);
	if (tid <= 0) {
		s->used[local] = false;
		return tid < 0 ? (int)tid : -EIO;
	}
	if (!(t = calloc(1, sizeof(*t)))) {
		s->used[local] = false;
		return -ENOMEM;
	}
	t->tid = (pid_t)tid;
	t->host_pid = parent->host_pid;
	t->stub = stub;
	stub->threads++;
	plat_hash_add(t);
	thread_link(t, local);
	if ((err = wait_area(a, SYSTRAP_RUNNING, s)) || a->sig != SIGTRAP) {
		*out = NULL;
		platform_thread_release(t);
		return err ? err : -EIO;
	}
	plat_place_new_thread(parent, t);
	*out = t;
	return 0;
}

/* A stub whose process is gone or going: its slots come back once it is gone. */
static void stub_dispose(struct platform_systrap_stub *s)
{
	if (s->dying_pprev) {
		*s->dying_pprev = s->dying_next;
		if (s->dying_next)
			s->dying_next->dying_pprev = s->dying_pprev;
	}
	for (int i = 0; i < s->nlocal; i++)
		slot_free(s->slots[i]);
	if (s->pidfd >= 0) {
		epoll_ctl(st.ep, EPOLL_CTL_DEL, s->pidfd, NULL);
		close(s->pidfd);
	}
	free(s->slots);
	free(s->used);
	free(s);
}

void systrap_thread_release(struct platform_thread *t)
{
	struct platform_stub *stub = t->stub;
	struct platform_systrap_stub *s = stub->sys;

	plat_place_release(t);
	plat_unwatch(t);
	plat_hash_del(t);
	thread_unlink(t);
	if (--stub->threads == 0) {
		plat_stub_unlink(stub);
		if (s && !s->dead) {
			if (!stub->killed)
				kill(stub->pid, SIGKILL);
			/* Its slots are free once the process is gone: the pidfd says when. */
			s->threads = NULL;
			s->dead = true;
			s->dying_next = dying;
			s->dying_pprev = &dying;
			if (dying)
				dying->dying_pprev = &s->dying_next;
			dying = s;
		} else if (s) {
			stub_dispose(s);
		}
		free(stub);
	} else if (s && !s->dead && !stub->killed) {
		/* The handler leaves at its next look: now if it waits, at once if it runs. */
		__atomic_fetch_or(&t->area->flags, SYSTRAP_F_EXIT, __ATOMIC_SEQ_CST);
		futex(&t->area->state, FUTEX_WAKE, 1, NULL);
		syscall(SYS_tgkill, t->host_pid, t->tid, PLATFORM_SIGPARK);
		s->used[t->local] = false;
	}
	free(t);
}

void systrap_kill(struct platform_thread *t)
{
	kill(t->host_pid, SIGKILL);
	t->stub->killed = true;
}

static void queue_exit(pid_t tid)
{
	if (st.nexits == st.cap_exits) {
		size_t cap = st.cap_exits ? 2 * st.cap_exits : 64;
		pid_t *n = realloc(st.exits, cap * sizeof(*n));
		if (!n)
			return;
		st.exits = n;
		st.cap_exits = cap;
	}
	st.exits[st.nexits++] = tid;
}

/* What the platform's epoll set says, waiting up to TIMEOUT ms: a stub whose process is gone
 * reports every thread it still had as exited (killed), or gives its slots back if it was
 * already let go. */
static void take_events(int timeout)
{
	struct epoll_event evs[16];
	int n = epoll_wait(st.ep, evs, 16, timeout);

	for (int i = 0; i < n; i++) {
		if (evs[i].data.ptr == &doorbell_tag)
			continue;
		struct platform_systrap_stub *s = evs[i].data.ptr;
		if (s->dead && !s->threads) {
			stub_dispose(s);
			continue;
		}
		s->dead = true;
		epoll_ctl(st.ep, EPOLL_CTL_DEL, s->pidfd, NULL);
		for (struct platform_thread *t = s->threads; t; t = t->sib_next)
			queue_exit(t->tid);
	}
}

void systrap_teardown(void)
{
	while (dying)
		stub_dispose(dying);
	free(st.free_slots);
	free(st.exits);
	st.free_slots = NULL;
	st.exits = NULL;
	st.nfree = 0;
	st.nexits = st.cap_exits = 0;
}

void platform_take_fd_events(void)
{
	take_events(0);
}

static bool is_vsyscall(const siginfo_t *si)
{
	return (uintptr_t)si->si_call_addr - 0xffffffffff600000UL < 4096;
}

/* The frame's siginfo and ucontext in the Sentry's view, checked to lie in the area. */
static siginfo_t *frame_info(struct platform_thread *t)
{
	uintptr_t base = local_addr(t->local), p = t->area->info;

	if (p < base + SYSTRAP_STACK_OFF || p > base + SYSTRAP_AREA - sizeof(siginfo_t))
		return NULL;
	return (siginfo_t *)((char *)t->area + (p - base));
}

static ucontext_t *frame_uctx(struct platform_thread *t)
{
	uintptr_t base = local_addr(t->local), p = t->area->uctx;

	if (p < base + SYSTRAP_STACK_OFF || p > base + SYSTRAP_AREA - sizeof(ucontext_t))
		return NULL;
	return (ucontext_t *)((char *)t->area + (p - base));
}

/* The xsave area of the frame and its size, checked likewise. */
static unsigned char *frame_fpstate(struct platform_thread *t, size_t *len)
{
	ucontext_t *uc = frame_uctx(t);
	uintptr_t base = local_addr(t->local);

	if (!uc)
		return NULL;
	uintptr_t p = (uintptr_t)uc->uc_mcontext.fpregs;
	if (p < base + SYSTRAP_STACK_OFF || p > base + SYSTRAP_AREA - 512)
		return NULL;
	unsigned char *fp = (unsigned char *)t->area + (p - base);
	uint32_t sw[4];
	memcpy(sw, fp + 464, sizeof(sw)); /* magic1, extended_size, xfeatures lo/hi */
	size_t size = 512;
	if (sw[0] == 0x46505853U) {
		uint32_t xsize;
		memcpy(&xsize, fp + 464 + 20, sizeof(xsize)); /* xstate_size */
		if (xsize >= 512 && xsize <= SYSTRAP_AREA)
			size = xsize;
	}
	if (p + size > base + SYSTRAP_AREA)
		return NULL;
	*len = size;
	return fp;
}

/* Whether a thread the Sentry let run is not on the Sentry's CPU (its next event may come
 * within microseconds, sooner than a cross-CPU wake-up: tens of them here), and whether one
 * is (a spin would keep it from running: the spin yields the CPU instead). */
static bool any_elsewhere(bool *any_here)
{
	bool elsewhere = false;

	*any_here = false;
	for (struct platform_thread *t = plat_first_watched(); t; t = t->w_next) {
		if (t->spread || t->away || plat.guest_cpu != plat.sentry_cpu)
			elsewhere = true;
		else
			*any_here = true;
	}
	return elsewhere;
}

#define SPIN_NS 50000

/* A thread that does not stop within this long of its PLATFORM_SIGPARK has blocked it (its
 * code jumped to the stub's gadget to call rt_sigprocmask or rt_sigreturn with a mask of its
 * own): a blocking wait, a checkpoint's, would never end, so its process is killed. Only a
 * guest that tampers with its stub gets there. */
#define DEAF_NS (10 * (uint64_t)NSEC_PER_SEC)

static void kill_the_deaf(void)
{
	uint64_t now = plat_now_ns();

	for (struct platform_thread *t = plat_first_watched(); t; t = t->w_next)
		if (t->interrupted_ns && now - t->interrupted_ns > DEAF_NS && !t->stub->killed) {
			kill(t->host_pid, SIGKILL);
			t->interrupted_ns = 0;
		}
}

static int scan(struct platform_event *ev);

int systrap_wait(struct platform_event *ev, bool block)
{
	int r;

	__atomic_store_n(&st.global->sentry_sleeping, 0, __ATOMIC_RELAXED);
	if ((r = scan(ev)) != -EAGAIN)
		return r;
	bool here;
	if (any_elsewhere(&here)) {
		uint64_t until = plat_now_ns() + SPIN_NS;
		do {
			if (here)
				sched_yield();
			else
				for (int i = 0; i < 64; i++)
					__builtin_ia32_pause();
			if ((r = scan(ev)) != -EAGAIN)
				return r;
		} while (plat_now_ns() < until);
	}
	/* From here an event rings the doorbell; one posted before the flag is seen now. */
	__atomic_store_n(&st.global->sentry_sleeping, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		if ((r = scan(ev)) != -EAGAIN) {
			__atomic_store_n(&st.global->sentry_sleeping, 0, __ATOMIC_RELAXED);
			return r;
		}
		if (!block)
			return -EAGAIN;
		take_events(100);
		kill_the_deaf();
	}
}

static int scan(struct platform_event *ev)
{
	{
		if (st.nexits > 0) {
			pid_t tid = st.exits[--st.nexits];
			struct platform_thread *t = platform_thread_by_tid(tid);
			if (t)
				plat_unwatch(t);
			*ev =
			    (struct platform_event){.kind = PEV_EXITED, .tid = tid, .sig = SIGKILL};
			return 0;
		}
		/* Only the threads the Sentry let run can have posted anything. */
		for (struct platform_thread *t = plat_first_watched(); t; t = t->w_next) {
			if (state_of(t) != SYSTRAP_EVENT)
				continue;
			plat_unwatch(t);
			t->interrupted_ns = 0;
			*ev = (struct platform_event){.tid = t->tid, .sig = t->area->sig};
			t->at_syscall = false;
			siginfo_t *si = frame_info(t);
			if (!si || !frame_uctx(t)) {
				ev->kind = PEV_SIGNAL; /* a frame not where it should be */
				ev->sig = SIGSEGV;
			} else if (ev->sig == SIGSYS && si->si_code == SYS_SECCOMP &&
				   !is_vsyscall(si)) {
				ev->kind = PEV_SYSCALL;
				t->at_syscall = true;
			} else if (ev->sig == PLATFORM_SIGPARK) {
				ev->kind = PEV_STOP;
			} else {
				ev->kind = PEV_SIGNAL;
			}
			return 0;
		}
		return -EAGAIN;
	}
}

int systrap_syscall_info(struct platform_thread *t, struct platform_syscall *sc)
{
	siginfo_t *si = frame_info(t);
	ucontext_t *uc = frame_uctx(t);

	if (!si || !uc || !t->at_syscall)
		return -EINVAL;
	const greg_t *g = uc->uc_mcontext.gregs;
	static const int native_regs[6] = {REG_RDI, REG_RSI, REG_RDX, REG_R10, REG_R8, REG_R9};
	/* int $0x80: i386's argument registers, as PTRACE_GET_SYSCALL_INFO reports them (the
	 * guests' seccomp filters read them). */
	static const int i386_regs[6] = {REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI, REG_RBP};
	sc->native = si->si_arch == AUDIT_ARCH_X86_64;
	const int *regs = sc->native ? native_regs : i386_regs;
	sc->nr = si->si_syscall;
	for (int i = 0; i < 6; i++)
		sc->args[i] = (unsigned long)g[regs[i]];
	sc->ip = (unsigned long)g[REG_RIP];
	sc->sp = (unsigned long)g[REG_RSP];
	return 0;
}

int systrap_set_return(struct platform_thread *t, long ret)
{
	ucontext_t *uc = frame_uctx(t);

	if (!uc)
		return -EFAULT;
	uc->uc_mcontext.gregs[REG_RAX] = ret;
	return 0;
}

int systrap_get_regs(struct platform_thread *t, struct user_regs_struct *r)
{
	ucontext_t *uc = frame_uctx(t);
	siginfo_t *si = frame_info(t);

	if (!uc)
		return -EFAULT;
	const greg_t *g = uc->uc_mcontext.gregs;
	memset(r, 0, sizeof(*r));
	r->r8 = g[REG_R8];
	r->r9 = g[REG_R9];
	r->r10 = g[REG_R10];
	r->r11 = g[REG_R11];
	r->r12 = g[REG_R12];
	r->r13 = g[REG_R13];
	r->r14 = g[REG_R14];
	r->r15 = g[REG_R15];
	r->rdi = g[REG_RDI];
	r->rsi = g[REG_RSI];
	r->rbp = g[REG_RBP];
	r->rbx = g[REG_RBX];
	r->rdx = g[REG_RDX];
	r->rax = g[REG_RAX];
	r->rcx = g[REG_RCX];
	r->rsp = g[REG_RSP];
	r->rip = g[REG_RIP];
	r->eflags = g[REG_EFL];
	r->cs = (unsigned long)g[REG_CSGSFS] & 0xffff;
	r->ss = ((unsigned long)g[REG_CSGSFS] >> 48) & 0xffff;
	r->orig_rax = -1;
	/* As a ptrace syscall stop shows it: the number in orig_rax, -ENOSYS in rax (the
	 * kernel's seccomp trap put the number back into rax). */
	if (t->at_syscall && si) {
		r->orig_rax = si->si_syscall;
		if ((unsigned long)g[REG_RAX] == (unsigned long)si->si_syscall)
			r->rax = (unsigned long)-ENOSYS;
	}
	struct systrap_area *a = t->area;
	r->fs_base = (a->flags & SYSTRAP_F_SETFS) ? a->set_fs : a->fs_base;
	r->gs_base = (a->flags & SYSTRAP_F_SETGS) ? a->set_gs : a->gs_base;
	return 0;
}

int systrap_set_regs(struct platform_thread *t, const struct user_regs_struct *r)
{
	ucontext_t *uc = frame_uctx(t);
	struct systrap_area *a = t->area;

	if (!uc)
		return -EFAULT;
	greg_t *g = uc->uc_mcontext.gregs;
	g[REG_R8] = (greg_t)r->r8;
	g[REG_R9] = (greg_t)r->r9;
	g[REG_R10] = (greg_t)r->r10;
	g[REG_R11] = (greg_t)r->r11;
	g[REG_R12] = (greg_t)r->r12;
	g[REG_R13] = (greg_t)r->r13;
	g[REG_R14] = (greg_t)r->r14;
	g[REG_R15] = (greg_t)r->r15;
	g[REG_RDI] = (greg_t)r->rdi;
	g[REG_RSI] = (greg_t)r->rsi;
	g[REG_RBP] = (greg_t)r->rbp;
	g[REG_RBX] = (greg_t)r->rbx;
	g[REG_RDX] = (greg_t)r->rdx;
	g[REG_RAX] = (greg_t)r->rax;
	g[REG_RCX] = (greg_t)r->rcx;
	g[REG_RSP] = (greg_t)r->rsp;
	g[REG_RIP] = (greg_t)r->rip;
	g[REG_EFL] = (greg_t)r->eflags;
	/* The code segment: 64-bit or 32-bit (compatibility mode) user code, nothing else; a
	 * signal delivered to 32-bit code runs its handler in 64-bit mode. */
	if (r->cs == 0x33 || r->cs == 0x23)
		g[REG_CSGSFS] = (greg_t)(((unsigned long)g[REG_CSGSFS] & ~0xffffUL) | r->cs);
	/* Registers set whole are no longer a syscall's: nothing to report as one. */
	if (r->orig_rax == (unsigned long)-1)
		t->at_syscall = false;
	uint64_t fs = (a->flags & SYSTRAP_F_SETFS) ? a->set_fs : a->fs_base;
	uint64_t gs = (a->flags & SYSTRAP_F_SETGS) ? a->set_gs : a->gs_base;
	if (r->fs_base != fs) {
		a->set_fs = r->fs_base;
		__atomic_fetch_or(&a->flags, SYSTRAP_F_SETFS, __ATOMIC_SEQ_CST);
	}
	if (r->gs_base != gs) {
		a->set_gs = r->gs_base;
		__atomic_fetch_or(&a->flags, SYSTRAP_F_SETGS, __ATOMIC_SEQ_CST);
	}
	return 0;
}

int systrap_get_fpstate(struct platform_thread *t, void *buf, size_t len)
{
	size_t size;
	unsigned char *fp = frame_fpstate(t, &size);

	if (!fp)
		return -EFAULT;
	memset(buf, 0, len);
	memcpy(buf, fp, size < len ? size : len);
	return 0;
}

int systrap_set_fpstate(struct platform_thread *t, const void *buf, size_t len)
{
	size_t size;
	unsigned char *fp = frame_fpstate(t, &size);
	unsigned char sw[48];

	if (!fp)
		return -EFAULT;
	/* The software-reserved bytes describe the frame's own layout to rt_sigreturn: kept. */
	memcpy(sw, fp + 464, sizeof(sw));
	memcpy(fp, buf, size < len ? size : len);
	memcpy(fp + 464, sw, sizeof(sw));
	if (size > 512 + 8) {
		uint64_t bv, allowed;
		memcpy(&bv, fp + 512, sizeof(bv));
		memcpy(&allowed, sw + 8, sizeof(allowed)); /* fx_sw_bytes.xfeatures */
		bv &= allowed;
		memcpy(fp + 512, &bv, sizeof(bv));
	}
	return 0;
}

int systrap_get_siginfo(struct platform_thread *t, siginfo_t *si)
{
	siginfo_t *f = frame_info(t);

	if (!f)
		return -EFAULT;
	*si = *f;
	return 0;
}

int systrap_resume(struct platform_thread *t)
{
	t->at_syscall = false;
	set_state(t->area, SYSTRAP_RUNNING);
	return 0;
}

/* A plain store, no wake-up: a handler that already sleeps sleeps on, and the resume that
 * ends the wait wakes it; one that spins sees the word change and goes to sleep. Any state
 * but the event's would do for the Sentry, which only looks for events of threads it let
 * run. */
void systrap_blocked(struct platform_thread *t)
{
	uint32_t ev = SYSTRAP_EVENT, done = SYSTRAP_CMD_DONE;

	/* CMD_DONE: the Sentry made a call in the stub while it served the syscall. */
	if (!__atomic_compare_exchange_n(&t->area->state, &ev, SYSTRAP_PARKED, false,
					 __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		__atomic_compare_exchange_n(&t->area->state, &done, SYSTRAP_PARKED, false,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

int systrap_interrupt(struct platform_thread *t)
{
	plat_watch(t);
	if (!t->interrupted_ns)
		t->interrupted_ns = plat_now_ns();
	if (syscall(SYS_tgkill, t->host_pid, t->tid, PLATFORM_SIGPARK))
		return -errno;
	return 0;
}
