/*
 * t_signal_handler: delivery to handlers in this process. SA_SIGINFO handlers get si_signo,
 * si_code (SI_USER from kill, SI_TKILL from raise, SI_QUEUE with si_value from sigqueue and
 * rt_sigqueueinfo) and si_pid/si_uid; the signal and sa_mask are blocked while the handler
 * runs (not with SA_NODEFER) and uc_sigmask, restored by sigreturn, is the mask before; a
 * handler sees a fresh FPU state and the interrupted code gets its SSE, x87 and general
 * registers back; SA_RESETHAND is one-shot; pending signals go lowest first, standard ones
 * coalesce and real-time ones queue; an ignored signal that is blocked still pends.
 */
#include "check.h"
#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

static sigset_t mask_of(int a, int b)
{
	sigset_t s;

	sigemptyset(&s);
	if (a)
		sigaddset(&s, a);
	if (b)
		sigaddset(&s, b);
	return s;
}

static sigset_t current_mask(void)
{
	sigset_t s;

	sigprocmask(SIG_BLOCK, NULL, &s);
	return s;
}

static void set_handler(int sig, void (*fn)(int, siginfo_t *, void *), int flags, sigset_t mask)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | flags;
	sa.sa_mask = mask;
	CHECK_EQ(sigaction(sig, &sa, NULL), 0);
}

static void set_default(int sig)
{
	signal(sig, SIG_DFL);
}

/* What the last handler saw. */
static volatile int got_count;
static siginfo_t got_info;
static int got_usr1_blocked, got_usr2_blocked, got_hup_in_uc, got_usr1_in_uc;

static void record(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	sigset_t now = current_mask();

	(void)sig;
	got_info = *si;
	got_usr1_blocked = sigismember(&now, SIGUSR1);
	got_usr2_blocked = sigismember(&now, SIGUSR2);
	got_hup_in_uc = sigismember(&uc->uc_sigmask, SIGHUP);
	got_usr1_in_uc = sigismember(&uc->uc_sigmask, SIGUSR1);
	got_count++;
}

static void test_siginfo_and_masks(void)
{
	sigset_t hup = mask_of(SIGHUP, 0), old;

	set_handler(SIGUSR1, record, 0, mask_of(SIGUSR2, 0));
	CHECK_EQ(sigprocmask(SIG_BLOCK, &hup, &old), 0);

	/* kill: SI_USER with our pid and uid, delivered before kill returns. */
	got_count = 0;
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);
	CHECK_EQ(got_count, 1);
	CHECK_EQ(got_info.si_signo, SIGUSR1);
	CHECK_EQ(got_info.si_code, SI_USER);
	CHECK_EQ(got_info.si_pid, getpid());
	CHECK_EQ(got_info.si_uid, getuid());
	/* While it ran: the signal and sa_mask blocked; uc_sigmask is the mask from before. */
	CHECK(got_usr1_blocked);
	CHECK(got_usr2_blocked);
	CHECK(got_hup_in_uc);
	CHECK(!got_usr1_in_uc);
	/* Afterwards: back to the old mask. */
	sigset_t now = current_mask();
	CHECK(!sigismember(&now, SIGUSR1));
	CHECK(!sigismember(&now, SIGUSR2));
	CHECK(sigismember(&now, SIGHUP));

	/* raise is tgkill: SI_TKILL. */
	CHECK_EQ(raise(SIGUSR1), 0);
	CHECK_EQ(got_count, 2);
	CHECK_EQ(got_info.si_code, SI_TKILL);
	CHECK_EQ(got_info.si_pid, getpid());

	/* SA_NODEFER: the signal itself is not blocked (sa_mask still is). */
	set_handler(SIGUSR1, record, SA_NODEFER, mask_of(SIGUSR2, 0));
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);
	CHECK_EQ(got_count, 3);
	CHECK(!got_usr1_blocked);
	CHECK(got_usr2_blocked);

	/* sigqueue: SI_QUEUE and the value. */
	set_handler(SIGUSR1, record, 0, mask_of(0, 0));
	union sigval v = {.sival_int = 1234};
	CHECK_EQ(sigqueue(getpid(), SIGUSR1, v), 0);
	CHECK_EQ(got_count, 4);
	CHECK_EQ(got_info.si_code, SI_QUEUE);
	CHECK_EQ(got_info.si_value.sival_int, 1234);
	CHECK_EQ(got_info.si_pid, getpid());

	/* rt_sigqueueinfo: the caller's siginfo arrives as given. */
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGUSR1;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_ptr = (void *)0x5eed1234abcdULL;
	CHECK_EQ(syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, &si), 0);
	CHECK_EQ(got_count, 5);
	CHECK_EQ(got_info.si_code, SI_QUEUE);
	CHECK_EQ((uintptr_t)got_info.si_value.sival_ptr, 0x5eed1234abcdULL);
	/* ...and to our own thread with rt_tgsigqueueinfo. */
	si.si_value.sival_int = 77;
	CHECK_EQ(syscall(SYS_rt_tgsigqueueinfo, getpid(), syscall(SYS_gettid), SIGUSR1, &si), 0);
	CHECK_EQ(got_count, 6);
	CHECK_EQ(got_info.si_value.sival_int, 77);
	/* Pretending to be the kernel or kill (si_code >= 0) is only allowed towards oneself. */
	si.si_code = SI_USER;
	CHECK_EQ(syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, &si), 0);
	CHECK_EQ(got_count, 7);
	CHECK_ERR(syscall(SYS_rt_sigqueueinfo, getpid(), 65, &si), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, BAD_PTR), EFAULT);

	CHECK_EQ(sigprocmask(SIG_SETMASK, &old, NULL), 0);
	set_default(SIGUSR1);
}

/* A handler can change the mask the interrupted code returns to through uc_sigmask. */
static void add_winch_to_uc(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	(void)sig;
	(void)si;
	sigaddset(&uc->uc_sigmask, SIGWINCH);
	got_count++;
}

static void test_sigreturn_restores_uc_sigmask(void)
{
	sigset_t old;

	CHECK_EQ(sigprocmask(SIG_BLOCK, NULL, &old), 0);
	set_handler(SIGUSR2, add_winch_to_uc, 0, mask_of(0, 0));
	got_count = 0;
	CHECK_EQ(kill(getpid(), SIGUSR2), 0);
	CHECK_EQ(got_count, 1);
	sigset_t now = current_mask();
	CHECK(sigismember(&now, SIGWINCH));
	CHECK(!sigismember(&now, SIGUSR2));
	CHECK_EQ(sigprocmask(SIG_SETMASK, &old, NULL), 0);
	set_default(SIGUSR2);
}

/* SA_RESETHAND: the first delivery resets the action to SIG_DFL. */
static void test_resethand(void)
{
	struct sigaction cur;

	set_handler(SIGUSR1, record, SA_RESETHAND, mask_of(0, 0));
	got_count = 0;
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);
	CHECK_EQ(got_count, 1);
	CHECK_EQ(sigaction(SIGUSR1, NULL, &cur), 0);
	CHECK(cur.sa_handler == SIG_DFL); /* (Linux leaves sa_flags as they were) */
}

/* Nesting: a handler raising another unblocked signal runs it to completion first. */
static char order[16];
static volatile int order_len;

static void note(char c)
{
	if (order_len < (int)sizeof(order) - 1)
		order[order_len++] = c;
}

static void nest_inner(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	note('i');
}

static int outer_entries;

static void nest_outer(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	note('(');
	raise(SIGUSR2);
	/* Our own signal is blocked here: it stays pending until we return. */
	if (outer_entries++ == 0)
		raise(SIGUSR1);
	note(')');
}

static void test_nesting(void)
{
	set_handler(SIGUSR1, nest_outer, 0, mask_of(0, 0));
	set_handler(SIGUSR2, nest_inner, 0, mask_of(0, 0));
	order_len = 0;
	outer_entries = 0;
	memset(order, 0, sizeof(order));
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);
	/* The inner handler nests; the second SIGUSR1 waits for the first to return. */
	order[order_len] = '\0';
	CHECK_STREQ(order, "(i)(i)");
	set_default(SIGUSR1);
	set_default(SIGUSR2);
}

/* Pending signals: lowest number first, standard ones coalesce, real-time ones queue. */
static void note_order(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig >= SIGRTMIN)
		note((char)('a' + (sig - SIGRTMIN) * 10 + si->si_value.sival_int));
	else
		note((char)('A' + sig));
}

static void test_pending_order(void)
{
	int sigs[] = {SIGHUP, SIGUSR1, SIGUSR2, SIGRTMIN, SIGRTMIN + 1};
	sigset_t all, old;

	sigemptyset(&all);
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigset_t full;
		sigfillset(&full);
		sigaddset(&all, sigs[i]);
		/* A full sa_mask: each handler finishes before the next signal is taken. */
		set_handler(sigs[i], note_order, 0, full);
	}
	CHECK_EQ(sigprocmask(SIG_BLOCK, &all, &old), 0);
	union sigval v;
	v.sival_int = 1;
	CHECK_EQ(sigqueue(getpid(), SIGRTMIN + 1, v), 0);
	v.sival_int = 2;
	CHECK_EQ(sigqueue(getpid(), SIGRTMIN, v), 0);
	v.sival_int = 3;
	CHECK_EQ(sigqueue(getpid(), SIGRTMIN, v), 0);
	CHECK_EQ(kill(getpid(), SIGUSR2), 0);
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);
	CHECK_EQ(kill(getpid(), SIGUSR1), 0); /* coalesces with the first */
	CHECK_EQ(kill(getpid(), SIGHUP), 0);
	sigset_t pending;
	CHECK_EQ(sigpending(&pending), 0);
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		CHECK(sigismember(&pending, sigs[i]));
	maybe_save(); /* blocked pending signals, some queued with values */
	order_len = 0;
	memset(order, 0, sizeof(order));
	CHECK_EQ(sigprocmask(SIG_SETMASK, &old, NULL), 0);
	/* All delivered before sigprocmask returned. */
	order[order_len] = '\0';
	char want[8] = {
	    (char)('A' + SIGHUP), (char)('A' + SIGUSR1), (char)('A' + SIGUSR2), 'c', 'd', 'l', 0};
	CHECK_STREQ(order, want);
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		set_default(sigs[i]);
}

/* Ignored signals: discarded when sent, except while blocked (Linux queues them then). */
static void test_ignored(void)
{
	sigset_t usr2 = mask_of(SIGUSR2, 0), old, pending;

	signal(SIGUSR2, SIG_IGN);
	CHECK_EQ(kill(getpid(), SIGUSR2), 0);
	CHECK_EQ(sigpending(&pending), 0);
	CHECK(!sigismember(&pending, SIGUSR2));

	CHECK_EQ(sigprocmask(SIG_BLOCK, &usr2, &old), 0);
	CHECK_EQ(kill(getpid(), SIGUSR2), 0);
	CHECK_EQ(sigpending(&pending), 0);
	CHECK(sigismember(&pending, SIGUSR2));
	/* Setting SIG_IGN (again) discards it. */
	signal(SIGUSR2, SIG_IGN);
	CHECK_EQ(sigpending(&pending), 0);
	CHECK(!sigismember(&pending, SIGUSR2));
	CHECK_EQ(sigprocmask(SIG_SETMASK, &old, NULL), 0);

	/* Default-ignored signals do nothing. */
	CHECK_EQ(kill(getpid(), SIGCHLD), 0);
	CHECK_EQ(kill(getpid(), SIGWINCH), 0);
	CHECK_EQ(kill(getpid(), SIGURG), 0);
	set_default(SIGUSR2);
}

/* Register state across a handler that clobbers everything it can. */
static uint32_t handler_mxcsr;
static uint16_t handler_fpucw;

static void clobber(int sig, siginfo_t *si, void *uc)
{
	static const uint64_t junk[2] = {0xdeaddeaddeaddeadULL, 0xbeefbeefbeefbeefULL};
	uint32_t mxcsr = 0x3f80; /* round down */
	uint16_t cw = 0x0f7f;	 /* round toward zero, extended precision */

	(void)sig;
	(void)si;
	(void)uc;
	__asm__ volatile("stmxcsr %0" : "=m"(handler_mxcsr));
	__asm__ volatile("fnstcw %0" : "=m"(handler_fpucw));
	__asm__ volatile("movdqu %0, %%xmm0\n\t"
			 "movdqa %%xmm0, %%xmm1\n\tmovdqa %%xmm0, %%xmm2\n\t"
			 "movdqa %%xmm0, %%xmm3\n\tmovdqa %%xmm0, %%xmm4\n\t"
			 "movdqa %%xmm0, %%xmm5\n\tmovdqa %%xmm0, %%xmm6\n\t"
			 "movdqa %%xmm0, %%xmm7\n\tmovdqa %%xmm0, %%xmm8\n\t"
			 "movdqa %%xmm0, %%xmm9\n\tmovdqa %%xmm0, %%xmm10\n\t"
			 "movdqa %%xmm0, %%xmm11\n\tmovdqa %%xmm0, %%xmm12\n\t"
			 "movdqa %%xmm0, %%xmm13\n\tmovdqa %%xmm0, %%xmm14\n\t"
			 "movdqa %%xmm0, %%xmm15\n\t"
			 "ldmxcsr %1\n\t"
			 "fldcw %2\n\t"
			 "mov $0x1111, %%rbx\n\tmov $0x2222, %%rdx\n\tmov $0x3333, %%r8\n\t"
			 "mov $0x4444, %%r9\n\tmov $0x5555, %%r10\n\tmov $0x6666, %%r12\n\t"
			 "mov $0x7777, %%r13\n\t"
			 :
			 : "m"(junk), "m"(mxcsr), "m"(cw)
			 : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
			   "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "rbx",
			   "rdx", "r8", "r9", "r10", "r12", "r13", "memory");
	volatile double d = 1.0;
	for (int i = 0; i < 10; i++)
		d = d * 3.7 + 1.1;
	got_count++;
}

struct regs {
	uint64_t xmm[32];
	uint64_t gp[7]; /* rbx rdx r8 r9 r10 r12 r13 */
};

static void test_registers_preserved(void)
{
	static struct regs in, out;
	uint32_t mxcsr_in = 0x7f80, mxcsr_out = 0; /* round toward zero */
	uint16_t cw_in = 0x077f, cw_out = 0;	   /* round down */

	for (int i = 0; i < 32; i++)
		in.xmm[i] = 0x0101010101010101ULL * (uint64_t)(i + 1) ^ 0x8000000000000000ULL;
	for (int i = 0; i < 7; i++)
		in.gp[i] = 0x1234567800000000ULL + (uint64_t)i;
	memset(&out, 0, sizeof(out));
	set_handler(SIGUSR1, clobber, 0, mask_of(0, 0));
	got_count = 0;
	long nr = SYS_kill;
	__asm__ volatile(
	    "ldmxcsr %[mxin]\n\t"
	    "fldcw %[cwin]\n\t"
	    "movdqu 0(%[in]), %%xmm0\n\tmovdqu 16(%[in]), %%xmm1\n\t"
	    "movdqu 32(%[in]), %%xmm2\n\tmovdqu 48(%[in]), %%xmm3\n\t"
	    "movdqu 64(%[in]), %%xmm4\n\tmovdqu 80(%[in]), %%xmm5\n\t"
	    "movdqu 96(%[in]), %%xmm6\n\tmovdqu 112(%[in]), %%xmm7\n\t"
	    "movdqu 128(%[in]), %%xmm8\n\tmovdqu 144(%[in]), %%xmm9\n\t"
	    "movdqu 160(%[in]), %%xmm10\n\tmovdqu 176(%[in]), %%xmm11\n\t"
	    "movdqu 192(%[in]), %%xmm12\n\tmovdqu 208(%[in]), %%xmm13\n\t"
	    "movdqu 224(%[in]), %%xmm14\n\tmovdqu 240(%[in]), %%xmm15\n\t"
	    "mov 256(%[in]), %%rbx\n\tmov 264(%[in]), %%rdx\n\tmov 272(%[in]), %%r8\n\t"
	    "mov 280(%[in]), %%r9\n\tmov 288(%[in]), %%r10\n\tmov 296(%[in]), %%r12\n\t"
	    "mov 304(%[in]), %%r13\n\t"
	    "syscall\n\t" /* kill(getpid(), SIGUSR1): the handler runs on the way out */
	    "movdqu %%xmm0, 0(%[out])\n\tmovdqu %%xmm1, 16(%[out])\n\t"
	    "movdqu %%xmm2, 32(%[out])\n\tmovdqu %%xmm3, 48(%[out])\n\t"
	    "movdqu %%xmm4, 64(%[out])\n\tmovdqu %%xmm5, 80(%[out])\n\t"
	    "movdqu %%xmm6, 96(%[out])\n\tmovdqu %%xmm7, 112(%[out])\n\t"
	    "movdqu %%xmm8, 128(%[out])\n\tmovdqu %%xmm9, 144(%[out])\n\t"
	    "movdqu %%xmm10, 160(%[out])\n\tmovdqu %%xmm11, 176(%[out])\n\t"
	    "movdqu %%xmm12, 192(%[out])\n\tmovdqu %%xmm13, 208(%[out])\n\t"
	    "movdqu %%xmm14, 224(%[out])\n\tmovdqu %%xmm15, 240(%[out])\n\t"
	    "mov %%rbx, 256(%[out])\n\tmov %%rdx, 264(%[out])\n\tmov %%r8, 272(%[out])\n\t"
	    "mov %%r9, 280(%[out])\n\tmov %%r10, 288(%[out])\n\tmov %%r12, 296(%[out])\n\t"
	    "mov %%r13, 304(%[out])\n\t"
	    "stmxcsr %[mxout]\n\t"
	    "fnstcw %[cwout]\n\t"
	    "ldmxcsr %[mxdef]\n\t"
	    "fldcw %[cwdef]\n\t"
	    : "+a"(nr), [mxout] "=m"(mxcsr_out), [cwout] "=m"(cw_out)
	    : "D"((long)getpid()),
	      "S"((long)SIGUSR1), [in] "r"(&in), [out] "r"(&out), [mxin] "m"(mxcsr_in),
	      [cwin] "m"(cw_in), [mxdef] "m"((uint32_t){0x1f80}), [cwdef] "m"((uint16_t){0x037f})
	    : "rcx", "r11", "rbx", "rdx", "r8", "r9", "r10", "r12", "r13", "xmm0", "xmm1", "xmm2",
	      "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
	      "xmm13", "xmm14", "xmm15", "memory");
	CHECK_EQ(nr, 0);
	CHECK_EQ(got_count, 1);
	for (int i = 0; i < 32; i++)
		CHECK_EQ(out.xmm[i], in.xmm[i]);
	for (int i = 0; i < 7; i++)
		CHECK_EQ(out.gp[i], in.gp[i]);
	CHECK_EQ(mxcsr_out, mxcsr_in);
	CHECK_EQ(cw_out, cw_in);
	/* The handler started from the default FPU state, not the interrupted one. */
	CHECK_EQ(handler_mxcsr, 0x1f80);
	CHECK_EQ(handler_fpucw, 0x037f);
	set_default(SIGUSR1);

	/* Plain C: doubles live across a signal. */
	volatile double a = 1.5, b = 2.25;
	set_handler(SIGUSR1, clobber, 0, mask_of(0, 0));
	double before = a * b;
	raise(SIGUSR1);
	CHECK(a * b == before);
	CHECK(a == 1.5 && b == 2.25);
	set_default(SIGUSR1);
}

int main(void)
{
	test_siginfo_and_masks();
	test_sigreturn_restores_uc_sigmask();
	test_resethand();
	test_nesting();
	test_pending_order();
	test_ignored();
	test_registers_preserved();
	return check_done();
}
