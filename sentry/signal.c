/* Signal generation and delivery. Delivery happens whenever a stopped task is about to run
 * guest code again: at the end of a syscall, after an interrupt stop, after a fault. A handler
 * gets an rt_sigframe laid out exactly as Linux's (siginfo, ucontext with sigcontext and an
 * xsave area), so libc's restorer and rt_sigreturn work as on Linux. Also how handler tables
 * and pending signals are saved in an image. */
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif
#include "sentry/signal.h"
#include "sentry/syscall.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ucontext.h>
#include <sys/user.h>

#include "platform/platform.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/oom.h"
#include "sentry/sched.h"
#include "sentry/syscalls.h"
#include "sentry/task.h"
#include "sentry/timer.h"
#include "state/codec.h"

/* The user code segments of x86-64 Linux (64-bit and compatibility mode) and its user data
 * segment. */
#define USER64_CS 0x33
#define USER_DS 0x2b

/* The kernel's x86_64 signal frame (arch/x86/include/uapi/asm/sigcontext.h, ucontext.h). */
struct ksigcontext {
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2;
	uint64_t fpstate;
	uint64_t reserved1[8];
};

struct kstack {
	uint64_t ss_sp;
	int32_t ss_flags;
	int32_t pad;
	uint64_t ss_size;
};

struct kucontext {
	uint64_t uc_flags;
	uint64_t uc_link;
	struct kstack uc_stack;
	struct ksigcontext uc_mcontext;
	uint64_t uc_sigmask;
};

struct rt_sigframe {
	uint64_t pretcode;
	struct kucontext uc;
	siginfo_t info;
};

_Static_assert(sizeof(struct ksigcontext) == 256, "sigcontext layout");
_Static_assert(sizeof(struct rt_sigframe) == 440, "rt_sigframe layout");

#define UC_FP_XSTATE 0x1
#define UC_SIGCONTEXT_SS 0x2
#define UC_STRICT_RESTORE_SS 0x4
#define FP_XSTATE_MAGIC1 0x46505853U
#define FP_XSTATE_MAGIC2 0x46505845U
#define KSA_RESTORER 0x04000000
/* Flags a handler's return may change (Linux's FIX_EFLAGS). */
#define FIX_EFLAGS 0x40dd5UL

static const uint64_t stop_sigs =
    SIGBIT(SIGSTOP) | SIGBIT(SIGTSTP) | SIGBIT(SIGTTIN) | SIGBIT(SIGTTOU);
static const uint64_t ignore_sigs =
    SIGBIT(SIGCHLD) | SIGBIT(SIGURG) | SIGBIT(SIGWINCH) | SIGBIT(SIGCONT);
static const uint64_t core_sigs =
    SIGBIT(SIGQUIT) | SIGBIT(SIGILL) | SIGBIT(SIGTRAP) | SIGBIT(SIGABRT) | SIGBIT(SIGBUS) |
    SIGBIT(SIGFPE) | SIGBIT(SIGSEGV) | SIGBIT(SIGXCPU) | SIGBIT(SIGXFSZ) | SIGBIT(SIGSYS);

/* Whether SIG, ending T's process, reports a core dump (the 0x80 of its wait status,
 * CLD_DUMPED). Linux sets it only when a core file was written, which a soft RLIMIT_CORE of 0
 * (every process's default here, and usual on hosts) prevents. The Sentry writes no core file,
 * so beyond that limit the flag says what Linux would have reported with one written. */
static bool dumps_core(const struct task *t, int sig)
{
	return (core_sigs & SIGBIT(sig)) && t->rlim[RLIMIT_CORE].rlim_cur > 0;
}

static void jobctl_on_send(struct task *leader, int sig);

/* Where a signal comes from, for the sandbox's init. */
enum sig_source {
	FROM_INSIDE, /* a guest, or the kernel acting for one */
	FROM_KERNEL, /* the kernel's own (Linux's SEND_SIG_PRIV): SIGKILL and SIGSTOP go through */
	FROM_HOST,   /* minisentry's own signal, passed on: as it always was */
};

/* Linux's SIGNAL_UNKILLABLE: the init of a PID namespace takes no signal whose action is
 * SIG_DFL, unless it is SIGKILL or SIGSTOP sent from outside the namespace or by the kernel
 * itself (kernel/signal.c sig_task_ignored, and get_signal for what was blocked when sent).
 * A fault's forced signal makes it killable (force_fault). */
static bool init_drops(struct task *t, int sig, enum sig_source src)
{
	struct task *l = t->group_leader;

	if (!l || l->tgid != 1 || l->init_killable || src == FROM_HOST)
		return false;
	if (sig == SIGKILL || sig == SIGSTOP)
		return src == FROM_INSIDE;
	return t->sighand->sa->act[sig - 1].handler == (uint64_t)SIG_DFL;
}

static bool is_ignored(struct task *t, int sig, enum sig_source src)
{
	const struct ksigaction *a = &t->sighand->sa->act[sig - 1];

	/* A blocked signal stays pending: the action may change before it is unblocked. */
	if (sig != SIGKILL && sig != SIGSTOP && ((t->sigmask | t->blk.sigwait_set) & SIGBIT(sig)))
		return false;
	if (init_drops(t, sig, src))
		return true;
	if (sig == SIGKILL || sig == SIGSTOP)
		return false;
	if (a->handler == (uint64_t)SIG_IGN)
		return true;
	return a->handler == (uint64_t)SIG_DFL && (ignore_sigs & SIGBIT(sig));
}

static void queue(struct sigpending *p, int sig, const siginfo_t *info)
{
	/* Standard signals coalesce; real-time ones queue every instance. */
	if (sig < SIGRTMIN && (p->set & SIGBIT(sig)))
		return;
	struct sigqueued *q = calloc(1, sizeof(*q));
	if (q) {
		q->info = *info;
		struct sigqueued **pp = &p->head;
		while (*pp)
			pp = &(*pp)->next;
		*pp = q;
	}
	p->set |= SIGBIT(sig);
	signalfd_notify();
}

void signal_free_pending(struct sigpending *p)
{
	while (p->head) {
		struct sigqueued *q = p->head;
		p->head = q->next;
		free(q);
	}
	p->set = 0;
}

/* Removes the first instance of SIG from P into INFO. */
static void dequeue(struct sigpending *p, int sig, siginfo_t *info)
{
	struct sigqueued *found = NULL;
	bool more = false;

	memset(info, 0, sizeof(*info));
	info->si_signo = sig;
	info->si_code = SI_KERNEL;
	for (struct sigqueued **pp = &p->head; *pp;) {
		if ((*pp)->info.si_signo != sig) {
			pp = &(*pp)->next;
		} else if (!found) {
			found = *pp;
			*pp = found->next;
		} else {
			more = true; /* another instance keeps the bit set */
			break;
		}
	}
	if (found) {
		*info = found->info;
		free(found);
	}
	if (!more)
		p->set &= ~SIGBIT(sig);
	/* A POSIX timer's signal left the queue: it reports the expiries it stood for. */
	if (info->si_code == SI_TIMER)
		timer_signal_dequeued(info);
}

int signal_dequeue(struct task *t, uint64_t set, siginfo_t *info)
{
	uint64_t mine = t->pending.set & set, shared = t->group_leader->shared_pending.set & set;

	if (mine) {
		int sig = __builtin_ctzll(mine) + 1;
		dequeue(&t->pending, sig, info);
		return sig;
	}
	if (shared) {
		int sig = __builtin_ctzll(shared) + 1;
		dequeue(&t->group_leader->shared_pending, sig, info);
		return sig;
	}
	return 0;
}

static void drop_sig(struct sigpending *p, int sig)
{
	siginfo_t si;

	while (p->set & SIGBIT(sig))
		dequeue(p, sig, &si);
}

void signal_flush_ignored(struct task *t, int sig)
{
	const struct ksigaction *a = &t->sighand->sa->act[sig - 1];
	bool ignored = a->handler == (uint64_t)SIG_IGN ||
		       (a->handler == (uint64_t)SIG_DFL && (ignore_sigs & SIGBIT(sig)));

	if (!ignored || sig == SIGKILL || sig == SIGSTOP)
		return;
	drop_sig(&t->group_leader->shared_pending, sig);
	for_each_thread_of(t->group_leader, o)
		drop_sig(&o->pending, sig);
}

static uint64_t deliverable(struct task *t)
{
	uint64_t set = t->pending.set | (t->group_leader ? t->group_leader->shared_pending.set : 0);

	return set & ~(t->sigmask & ~UNBLOCKABLE);
}

bool signal_pending(struct task *t)
{
	return deliverable(t) != 0;
}

/* Makes T notice SIG: a sigtimedwait for it retries, another blocked syscall ends, a running
 * thread is interrupted. */
static void kick(struct task *t, int sig)
{
	if (t->blk.blocked && (t->blk.sigwait_set & SIGBIT(sig))) {
		task_wake(t);
	} else if (t->blk.blocked) {
		/* Deferred to the loop: the sender may be in the middle of its own syscall. */
		t->blk.interrupt_pending = true;
		task_wake(t);
	} else if (t->running) {
		platform_interrupt(t->pt);
	}
}

void signal_send_thread(struct task *t, int sig, const siginfo_t *info)
{
	siginfo_t si;

	if (!t || t->zombie || t->exited || !t->sighand)
		return;
	if (sig == SIGKILL && init_drops(t, sig, FROM_INSIDE))
		return;
	jobctl_on_send(t->group_leader, sig);
	if (!info) {
		memset(&si, 0, sizeof(si));
		si.si_signo = sig;
		si.si_code = SI_KERNEL;
		info = &si;
	}
	if (is_ignored(t, sig, FROM_INSIDE)) {
		if (kernel.cfg.strace)
			strace_ignored_signal(t, info);
		return;
	}
	queue(&t->pending, sig, info);
	if ((deliverable(t) | t->blk.sigwait_set) & SIGBIT(sig))
		kick(t, sig);
}

static void send_process(struct task *leader, int sig, const siginfo_t *info, enum sig_source src)
{
	siginfo_t si;

	if (!leader || leader->zombie || leader->exited || !leader->sighand)
		return;
	if (sig == SIGKILL && init_drops(leader, sig, src))
		return;
	jobctl_on_send(leader, sig);
	if (!info) {
		memset(&si, 0, sizeof(si));
		si.si_signo = sig;
		si.si_code = SI_KERNEL;
		info = &si;
	}
	if (is_ignored(leader, sig, src)) {
		if (kernel.cfg.strace)
			strace_ignored_signal(leader, info);
		return;
	}
	if (src == FROM_HOST && leader->tgid == 1)
		leader->host_sigs |= SIGBIT(sig);
	queue(&leader->shared_pending, sig, info);
	/* Wake one thread that does not block it, the leader first. */
	for_each_thread_of(leader, t)
		if (!t->zombie && t->blk.blocked && (t->blk.sigwait_set & SIGBIT(sig))) {
			kick(t, sig);
			return;
		}
	for_each_thread_of(leader, t)
		if (!t->zombie && !((t->sigmask & ~UNBLOCKABLE) & SIGBIT(sig))) {
			kick(t, sig);
			return;
		}
}

void signal_send_process(struct task *leader, int sig, const siginfo_t *info)
{
	send_process(leader, sig, info, FROM_INSIDE);
}

void signal_send_process_forced(struct task *leader, int sig, const siginfo_t *info)
{
	send_process(leader, sig, info, FROM_KERNEL);
}

void signal_send_process_from_host(struct task *leader, int sig, const siginfo_t *info)
{
	send_process(leader, sig, info, FROM_HOST);
}

siginfo_t *signal_child_info(struct task *c, siginfo_t *si)
{
	memset(si, 0, sizeof(*si));
	si->si_signo = SIGCHLD;
	si->si_pid = c->tgid;
	si->si_uid = c->uid;
	if (c->exit_status & 0x7f) {
		si->si_code = (c->exit_status & 0x80) ? CLD_DUMPED : CLD_KILLED;
		si->si_status = c->exit_status & 0x7f;
	} else {
		si->si_code = CLD_EXITED;
		si->si_status = (c->exit_status >> 8) & 0xff;
	}
	return si;
}

/* Notifies the parent of LEADER's process of a stop or continue, per its SA_NOCLDSTOP. */
static void notify_parent_jobctl(struct task *leader, int code, int status)
{
	struct task *parent = leader->parent;

	waitq_wake(parent ? &parent->child_wait : &leader->child_wait, 0);
	if (!parent || !parent->sighand ||
	    (parent->sighand->sa->act[SIGCHLD - 1].flags & SA_NOCLDSTOP))
		return;
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGCHLD;
	si.si_code = code;
	si.si_pid = leader->tgid;
	si.si_uid = leader->uid;
	si.si_status = status;
	signal_send_process(parent, SIGCHLD, &si);
}

/* Stops the whole thread group of T: threads park as they next return to the guest. */
static void group_stop(struct task *t, int sig)
{
	struct task *l = t->group_leader;

	if (l->stopped)
		return;
	l->stopped = true;
	l->stop_sig = sig;
	l->stop_report = true;
	l->cont_report = false;
	for_each_thread_of(l, o)
		if (o != t && o->running)
			platform_interrupt(o->pt);
	notify_parent_jobctl(l, CLD_STOPPED, sig);
}

/* SIGCONT at generation: a stopped group runs again, whatever SIGCONT's action. */
static void group_continue(struct task *l)
{
	if (!l->stopped)
		return;
	l->stopped = false;
	l->stop_report = false;
	l->cont_report = true;
	/* No delivery from here (the sender is mid-syscall): signals that waited for the
	 * group to run again are noticed through an interrupt stop. */
	for_each_thread_of(l, o)
		if (o->parked) {
			o->parked = false;
			kernel_resume(o);
			if (signal_pending(o))
				platform_interrupt(o->pt);
		}
	notify_parent_jobctl(l, CLD_CONTINUED, SIGCONT);
}

/* Stop and continue signals cancel each other's pending instances when generated. */
static void jobctl_on_send(struct task *leader, int sig)
{
	siginfo_t si;

	if (sig == SIGCONT || sig == SIGKILL) {
		for (int s = 1; s <= NSIG_GUEST; s++)
			if (stop_sigs & SIGBIT(s)) {
				while (leader->shared_pending.set & SIGBIT(s))
					dequeue(&leader->shared_pending, s, &si);
				for_each_thread_of(leader, o)
					while (o->pending.set & SIGBIT(s))
						dequeue(&o->pending, s, &si);
			}
		group_continue(leader);
	} else if (stop_sigs & SIGBIT(sig)) {
		while (leader->shared_pending.set & SIGBIT(SIGCONT))
			dequeue(&leader->shared_pending, SIGCONT, &si);
	}
}

/* Linux's on_sig_stack: an SS_AUTODISARM stack is never the one T runs on (disarmed while a
 * handler runs there; a stack pointer corrupted to point near its end still gets a frame). */
bool signal_on_altstack(const struct task *t, uint64_t sp)
{
	if (t->altstack.ss_flags & SS_AUTODISARM)
		return false;
	return t->altstack.ss_size && sp > (uint64_t)t->altstack.ss_sp &&
	       sp <= (uint64_t)t->altstack.ss_sp + t->altstack.ss_size;
}

int signal_set_altstack(struct task *t, const stack_t *ss, uint64_t sp)
{
	stack_t n = *ss;
	int mode = n.ss_flags & ~(int)SS_AUTODISARM;

	if (signal_on_altstack(t, sp))
		return -EPERM;
	if (mode != SS_DISABLE && mode != SS_ONSTACK && mode != 0)
		return -EINVAL;
	if (mode == SS_DISABLE) {
		n.ss_sp = NULL;
		n.ss_size = 0;
		n.ss_flags = SS_DISABLE;
	} else {
		if (n.ss_size < (size_t)MINSIGSTKSZ)
			return -ENOMEM;
		n.ss_flags &= SS_AUTODISARM;
	}
	t->altstack = n;
	return 0;
}

stack_t signal_get_altstack(const struct task *t, uint64_t sp)
{
	stack_t o = t->altstack;

	o.ss_flags = (!o.ss_size		  ? SS_DISABLE
		      : signal_on_altstack(t, sp) ? SS_ONSTACK
						  : 0) |
		     (t->altstack.ss_flags & SS_AUTODISARM);
	return o;
}

/* Builds the frame for SIG on T's stack and points T at the handler. */
static int setup_frame(struct task *t, int sig, const siginfo_t *info,
		       struct user_regs_struct *regs, const struct ksigaction *act)
{
	size_t xsize = platform_fpstate_size();
	unsigned char *xsave = aligned_alloc(64, (xsize + 63) & ~63UL);
	struct rt_sigframe f;
	uint64_t sp = regs->rsp - 128, fp, frame;
	int err = -EFAULT;

	if (!xsave)
		return -ENOMEM;
	memset(xsave, 0, xsize);
	if (platform_get_fpstate(t->pt, xsave, xsize))
		goto out;
	if ((act->flags & SA_ONSTACK) && t->altstack.ss_size &&
	    !(t->altstack.ss_flags & SS_DISABLE) && !signal_on_altstack(t, regs->rsp))
		sp = (uint64_t)t->altstack.ss_sp + t->altstack.ss_size;
	fp = (sp - (xsize + 4)) & ~63UL;
	frame = ((fp - sizeof(f)) & ~15UL) - 8;

	/* The software-reserved bytes of the fxsave area describe the xsave layout. */
	uint32_t *sw = (uint32_t *)(xsave + 464);
	sw[0] = FP_XSTATE_MAGIC1;
	sw[1] = xsize + 4;
	uint64_t xfeatures = platform_xfeatures();
	memcpy(&sw[2], &xfeatures, 8);
	sw[4] = xsize;
	uint32_t magic2 = FP_XSTATE_MAGIC2;

	memset(&f, 0, sizeof(f));
	f.pretcode = act->restorer;
	f.info = *info;
	f.uc.uc_flags =
	    UC_FP_XSTATE | UC_SIGCONTEXT_SS | (regs->cs == USER64_CS ? UC_STRICT_RESTORE_SS : 0);
	/* The stack as it is set (Linux's flags as stored: 0, SS_DISABLE or SS_AUTODISARM), which
	 * rt_sigreturn sets again. */
	f.uc.uc_stack.ss_sp = (uint64_t)t->altstack.ss_sp;
	f.uc.uc_stack.ss_size = t->altstack.ss_size;
	f.uc.uc_stack.ss_flags = t->altstack.ss_flags;
	struct ksigcontext *sc = &f.uc.uc_mcontext;
	sc->r8 = regs->r8, sc->r9 = regs->r9, sc->r10 = regs->r10, sc->r11 = regs->r11;
	sc->r12 = regs->r12, sc->r13 = regs->r13, sc->r14 = regs->r14, sc->r15 = regs->r15;
	sc->rdi = regs->rdi, sc->rsi = regs->rsi, sc->rbp = regs->rbp, sc->rbx = regs->rbx;
	sc->rdx = regs->rdx, sc->rax = regs->rax, sc->rcx = regs->rcx, sc->rsp = regs->rsp;
	sc->rip = regs->rip, sc->eflags = regs->eflags;
	sc->cs = regs->cs, sc->ss = regs->ss;
	sc->trapno = t->fault_trapno;
	sc->err = t->fault_err;
	sc->cr2 = t->fault_addr;
	sc->oldmask = t->has_saved_sigmask ? t->saved_sigmask : t->sigmask;
	sc->fpstate = fp;
	f.uc.uc_sigmask = sc->oldmask;

	if (copy_out(t->mm, fp, xsave, xsize) || copy_out(t->mm, fp + xsize, &magic2, 4) ||
	    copy_out(t->mm, frame, &f, sizeof(f)))
		goto out;

	regs->rdi = sig;
	regs->rsi = frame + offsetof(struct rt_sigframe, info);
	regs->rdx = frame + offsetof(struct rt_sigframe, uc);
	regs->rax = 0;
	regs->rsp = frame;
	regs->rip = act->handler;
	/* The handler runs in 64-bit mode even when the signal came in 32-bit code (a far jump
	 * to the compatibility code segment); rt_sigreturn goes back to the frame's segments. */
	regs->cs = USER64_CS;
	regs->ss = USER_DS;
	regs->eflags &= ~(0x100UL | 0x400UL | 0x10000UL); /* TF, DF, RF */
	regs->orig_rax = -1;
	/* SS_AUTODISARM: the stack is given up while the handler runs (its frame says how to
	 * set it again), so that a handler may leave by swapcontext. */
	if (t->altstack.ss_flags & SS_AUTODISARM)
		t->altstack = (stack_t){.ss_flags = SS_DISABLE};
	/* The handler starts with a clean FPU state, as on Linux. */
	memset(xsave, 0, xsize);
	((uint16_t *)xsave)[0] = 0x37f;	      /* FCW */
	((uint32_t *)xsave)[6] = 0x1f80;      /* MXCSR */
	((uint64_t *)(xsave + 512))[0] = 0x3; /* XSTATE_BV: x87, SSE */
	err = platform_set_fpstate(t->pt, xsave, xsize);
out:
	free(xsave);
	return err;
}

/* Converts an interrupted syscall's RET for a delivery with (HANDLER, ACT) and adjusts REGS. */
static void fix_restart(struct user_regs_struct *regs, long ret, bool handler,
			const struct ksigaction *act)
{
	bool restart;

	switch (-ret) {
	case ERESTARTNOINTR:
		restart = true;
		break;
	case ERESTARTSYS:
		restart = !handler || (act->flags & SA_RESTART);
		break;
	case ERESTARTNOHAND:
		restart = !handler;
		break;
	default:
		return;
	}
	if (restart) {
		regs->rax = regs->orig_rax;
		regs->rip -= 2; /* back onto the syscall instruction */
	} else {
		regs->rax = -EINTR;
	}
}

static int pick_signal(struct task *t)
{
	uint64_t set = deliverable(t);

	if (set & SIGBIT(SIGKILL))
		return SIGKILL;
	return set ? __builtin_ctzll(set) + 1 : 0;
}

/* SIG's action in T's table back to SIG_DFL (SA_RESETHAND; a fault that may not be blocked or
 * ignored away). A table shared since fork that the Sentry has no memory to copy leaves
 * nothing right to do but end the process. */
static void set_default(struct task *t, int sig)
{
	struct sighand *sh = t->sighand;

	if (sh->sa->act[sig - 1].handler == (uint64_t)SIG_DFL)
		return;
	if (sighand_own(sh)) {
		signal_send_process_forced(t->group_leader, SIGKILL, NULL);
		return;
	}
	sh->sa->act[sig - 1].handler = (uint64_t)SIG_DFL;
	sighand_changed(sh);
}

bool signal_deliver(struct task *t, long ret, bool in_syscall)
{
	struct user_regs_struct regs;
	bool have_regs = false;
	int sig;

	while ((sig = pick_signal(t))) {
		siginfo_t info;
		struct sigpending *from =
		    (t->pending.set & SIGBIT(sig)) ? &t->pending : &t->group_leader->shared_pending;
		dequeue(from, sig, &info);
		if (kernel.cfg.strace)
			strace_signal(t, &info);
		struct ksigaction act = t->sighand->sa->act[sig - 1];

		if (act.handler == (uint64_t)SIG_IGN && sig != SIGKILL && sig != SIGSTOP)
			continue;
		if (act.handler == (uint64_t)SIG_DFL || sig == SIGKILL || sig == SIGSTOP) {
			if (ignore_sigs & SIGBIT(sig))
				continue;
			/* Init drops what waited, blocked, with no handler (SIGKILL and SIGSTOP
			 * were queued only if they may end it); a host's signal still acts. */
			struct task *l = t->group_leader;
			bool from_host = l->host_sigs & SIGBIT(sig);
			l->host_sigs &= ~SIGBIT(sig);
			if (sig != SIGKILL && sig != SIGSTOP && !from_host &&
			    init_drops(t, sig, FROM_KERNEL))
				continue;
			if (stop_sigs & SIGBIT(sig)) {
				group_stop(t, sig);
				continue; /* T parks when it resumes (kernel_resume) */
			}
			kernel_exit_group(t, sig | (dumps_core(t, sig) ? 0x80 : 0));
			return false;
		}
		if (!have_regs && platform_get_regs(t->pt, &regs))
			goto fatal;
		have_regs = true;
		if (in_syscall) {
			regs.rax = ret;
			fix_restart(&regs, ret, true, &act);
			in_syscall = false;
		}
		if (!(act.flags & KSA_RESTORER) || setup_frame(t, sig, &info, &regs, &act)) {
			/* No way back from the handler, or no room for the frame: Linux forces
			 * SIGSEGV. */
			kernel_exit_group(t, SIGSEGV | 0x80);
			return false;
		}
		t->sigmask = (t->has_saved_sigmask ? t->saved_sigmask : t->sigmask) | act.mask;
		t->has_saved_sigmask = false;
		if (!(act.flags & SA_NODEFER))
			t->sigmask |= SIGBIT(sig);
		t->sigmask &= ~UNBLOCKABLE;
		if (act.flags & SA_RESETHAND)
			set_default(t, sig);
		break; /* one frame per return to the guest, like Linux's single pass */
	}
	if (t->has_saved_sigmask && !have_regs) {
		/* sigsuspend returned with no handler run: the old mask comes back now. */
		t->sigmask = t->saved_sigmask;
		t->has_saved_sigmask = false;
	}
	if (in_syscall) {
		if (ret <= -ERESTARTSYS && ret >= -ERESTARTNOHAND) {
			if (platform_get_regs(t->pt, &regs))
				goto fatal;
			regs.rax = ret;
			fix_restart(&regs, ret, false, NULL);
			have_regs = true;
		} else {
			platform_set_return(t->pt, ret);
		}
	}
	if (have_regs && platform_set_regs(t->pt, &regs))
		goto fatal;
	return true;
fatal:
	kernel_exit_group(t, SIGKILL);
	return false;
}

/* A write to memory shared copy-on-write is the Sentry's to resolve, not the guest's fault:
 * true if T goes on (resumed). An instruction fetch (si_addr is the instruction's) never is;
 * a fault let through unresolved twice at one address, with no copy-on-write change in the
 * address space between (a new fork shares it again), is the guest's after all. */
static bool write_fault(struct task *t, const siginfo_t *si, const struct user_regs_struct *regs)
{
	uint64_t addr = (uint64_t)si->si_addr;
	bool resolved;

	if (!t->mm || !regs || regs->rip == addr)
		return false;
	t->mm->via = t->pt;
	if (!mm_write_fault(t->mm, addr, &resolved))
		return false;
	if (!resolved) {
		if (t->write_fault_retried == addr && t->write_fault_epoch == t->mm->cow_epoch)
			return false;
		t->write_fault_retried = addr;
		t->write_fault_epoch = t->mm->cow_epoch;
	} else {
		t->write_fault_retried = 0;
	}
	kernel_resume(t);
	return true;
}

/* Sends T a fault it cannot block or ignore away: Linux makes a blocked or ignored fault
 * fatal rather than let the instruction fault forever. */
bool signal_dumps_core(const struct task *t, int sig)
{
	return dumps_core(t, sig);
}

void signal_force(struct task *t, int sig, const siginfo_t *si)
{
	const struct ksigaction *act = &t->sighand->sa->act[sig - 1];

	if ((t->sigmask & SIGBIT(sig)) || act->handler == (uint64_t)SIG_IGN)
		set_default(t, sig);
	act = &t->sighand->sa->act[sig - 1];
	/* Linux's force_sig_info_to_task: a fault init cannot handle kills it. */
	if (act->handler == (uint64_t)SIG_DFL)
		t->group_leader->init_killable = true;
	t->sigmask &= ~SIGBIT(sig);
	queue(&t->pending, sig, si);
}

static void force_fault(struct task *t, int sig, const siginfo_t *si)
{
	t->fault_addr = (uint64_t)si->si_addr;
	signal_force(t, sig, si);
	if (signal_deliver(t, 0, false))
		kernel_resume(t);
}

static bool in_stub(uint64_t addr)
{
	return addr - platform_stub_base() < platform_stub_len();
}

/* The stub page lies in every guest address space at a range the guest was never given
 * (docs/platform.md): on Linux nothing is mapped there, so an instruction the guest runs from
 * it (a jump to the stub's `syscall` or `int3` with its own registers) is a fetch from an
 * unmapped page: SIGSEGV, SEGV_MAPERR, at the instruction, with the registers as they were
 * before it. REGS are T's, at ADDR. */
static void stub_fetch_fault(struct task *t, struct user_regs_struct *regs, uint64_t addr)
{
	siginfo_t si;

	regs->rip = addr;
	if (platform_set_regs(t->pt, regs)) {
		kernel_exit_group(t, SIGKILL);
		return;
	}
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGSEGV;
	si.si_code = SEGV_MAPERR;
	si.si_addr = (void *)addr;
	t->fault_trapno = 14;	   /* a page fault */
	t->fault_err = 0x4 | 0x10; /* from user mode, an instruction fetch, page not present */
	t->write_fault_retried = 0;
	force_fault(t, SIGSEGV, &si);
}

bool signal_stub_syscall(struct task *t)
{
	struct user_regs_struct regs;

	if (!in_stub(t->sc.ip - 2))
		return false;
	if (platform_get_regs(t->pt, &regs)) {
		kernel_exit_group(t, SIGKILL);
		return true;
	}
	/* Not a syscall: the `syscall` instruction never ran. */
	regs.rax = regs.orig_rax;
	regs.orig_rax = -1;
	stub_fetch_fault(t, &regs, t->sc.ip - 2);
	return true;
}

void signal_fault(struct task *t, int sig)
{
	siginfo_t si;
	struct user_regs_struct regs;
	bool have_regs = platform_get_regs(t->pt, &regs) == 0;

	memset(&si, 0, sizeof(si));
	platform_get_siginfo(t->pt, &si);
	si.si_signo = sig;
	if (have_regs) {
		/* An int3 reports the address after it. */
		uint64_t at = sig == SIGTRAP && si.si_code == SI_KERNEL ? regs.rip - 1 : regs.rip;
		if (in_stub(at)) {
			stub_fetch_fault(t, &regs, at);
			return;
		}
		if (sig == SIGSEGV && si.si_code == SI_KERNEL && kernel_int80_fault(t, &regs))
			return;
	}
	/* Its second page is readable on the host, not writable: to the guest it is not there. */
	if (sig == SIGSEGV && in_stub((uint64_t)si.si_addr))
		si.si_code = SEGV_MAPERR;
	if (sig == SIGSEGV && si.si_code == SEGV_ACCERR &&
	    write_fault(t, &si, have_regs ? &regs : NULL))
		return;
	t->write_fault_retried = 0;
	if (sig == SIGBUS && si.si_code == BUS_ADRERR && oom_fault(t, (uintptr_t)si.si_addr))
		return;
	if (sig == SIGSEGV && mm_past_eof(t->mm, (uintptr_t)si.si_addr)) {
		/* The host saw an inaccessible page; the guest touched a file past its end. */
		sig = si.si_signo = SIGBUS;
		si.si_code = BUS_ADRERR;
	}
	t->fault_trapno = 0;
	t->fault_err = 0;
	force_fault(t, sig, &si);
}

long sys_rt_sigreturn(struct task *t, const unsigned long *a)
{
	struct user_regs_struct regs;
	struct rt_sigframe f;
	size_t xsize = platform_fpstate_size();

	(void)a;
	if (platform_get_regs(t->pt, &regs))
		return -EFAULT;
	uint64_t frame_sp = regs.rsp;
	/* The handler's ret popped pretcode: the frame starts 8 bytes below rsp. */
	if (copy_in(t->mm, &f, regs.rsp - 8, sizeof(f)))
		goto bad;
	const struct ksigcontext *sc = &f.uc.uc_mcontext;
	regs.r8 = sc->r8, regs.r9 = sc->r9, regs.r10 = sc->r10, regs.r11 = sc->r11;
	regs.r12 = sc->r12, regs.r13 = sc->r13, regs.r14 = sc->r14, regs.r15 = sc->r15;
	regs.rdi = sc->rdi, regs.rsi = sc->rsi, regs.rbp = sc->rbp, regs.rbx = sc->rbx;
	regs.rdx = sc->rdx, regs.rax = sc->rax, regs.rcx = sc->rcx, regs.rsp = sc->rsp;
	regs.rip = sc->rip;
	regs.eflags = (regs.eflags & ~FIX_EFLAGS) | (sc->eflags & FIX_EFLAGS);
	/* As Linux: the frame's segments with user privilege (a selector the host refuses
	 * makes the frame bad); without UC_STRICT_RESTORE_SS, 64-bit code gets the user data
	 * segment for SS whatever the frame says. */
	regs.cs = sc->cs | 3;
	regs.ss = sc->ss | 3;
	if (!(f.uc.uc_flags & UC_STRICT_RESTORE_SS) && regs.cs == USER64_CS)
		regs.ss = USER_DS;
	regs.orig_rax = -1; /* no restart on the way out */
	if (sc->fpstate) {
		void *xsave = aligned_alloc(64, (xsize + 63) & ~63UL);
		if (!xsave)
			goto bad;
		int err = copy_in(t->mm, xsave, sc->fpstate, xsize) ||
			  platform_set_fpstate(t->pt, xsave, xsize);
		free(xsave);
		if (err)
			goto bad;
	}
	t->sigmask = f.uc.uc_sigmask & ~UNBLOCKABLE;
	/* Set again as sigaltstack would, from where the frame is: refused (silently, as on
	 * Linux) while that is on an armed alternate stack. */
	stack_t ss = {.ss_sp = (void *)f.uc.uc_stack.ss_sp,
		      .ss_size = f.uc.uc_stack.ss_size,
		      .ss_flags = (int)f.uc.uc_stack.ss_flags};
	(void)signal_set_altstack(t, &ss, frame_sp);
	if (platform_set_regs(t->pt, &regs))
		goto bad;
	t->regs_set = true;
	return 0;
bad:
	/* A frame that cannot be read back is fatal, as on Linux. */
	kernel_exit_group(t, SIGSEGV | 0x80);
	return 0;
}

/* What exec (and clone3's CLONE_CLEAR_SIGHAND) leaves of action A, as Linux's
 * flush_signal_handlers: SIG_DFL, or SIG_IGN for an ignored signal, without flags or mask. */
static struct ksigaction flushed(const struct ksigaction *a)
{
	return (struct ksigaction){.handler = a->handler == (uint64_t)SIG_IGN ? a->handler : 0};
}

int sighand_exec_prepare(struct sighand *sh)
{
	for (int i = 0; i < NSIG_GUEST; i++) {
		const struct ksigaction *a = &sh->sa->act[i], f = flushed(a);
		if (memcmp(a, &f, sizeof(f)))
			return sighand_own(sh);
	}
	return 0;
}

void sighand_exec_reset(struct sighand *sh)
{
	if (sh->sa->refs > 1)
		return; /* shared: sighand_exec_prepare found nothing to reset */
	for (int i = 0; i < NSIG_GUEST; i++)
		sh->sa->act[i] = flushed(&sh->sa->act[i]);
	sighand_changed(sh);
}

/* --- checkpoint and restore ----------------------------------------------------------------- */

/* Handler tables are a kind of their own (CK_SIGHAND), saved once however many threads share
 * one; pending signals are part of the task record. */
void sighand_changed(struct sighand *sh)
{
	sh->ignored = sh->caught = 0;
	for (int s = 1; s <= NSIG_GUEST; s++) {
		uint64_t h = sh->sa->act[s - 1].handler;
		if (h == (uint64_t)SIG_IGN)
			sh->ignored |= SIGBIT(s);
		else if (h != (uint64_t)SIG_DFL)
			sh->caught |= SIGBIT(s);
	}
}

int sighand_save(struct enc *e, const void *obj)
{
	const struct sighand *sh = obj;

	for (int i = 0; i < NSIG_GUEST; i++) {
		enc_u64(e, sh->sa->act[i].handler);
		enc_u64(e, sh->sa->act[i].flags);
		enc_u64(e, sh->sa->act[i].restorer);
		enc_u64(e, sh->sa->act[i].mask);
	}
	return 0;
}

void *sighand_load(struct dec *d)
{
	struct sighand *sh = sighand_new();

	if (!sh) {
		dec_fail(d, "out of memory");
		return NULL;
	}
	for (int i = 0; i < NSIG_GUEST; i++) {
		sh->sa->act[i].handler = dec_u64(d);
		sh->sa->act[i].flags = dec_u64(d);
		sh->sa->act[i].restorer = dec_u64(d);
		sh->sa->act[i].mask = dec_u64(d);
	}
	if (!dec_ok(d)) {
		sighand_put(sh);
		return NULL;
	}
	sighand_changed(sh);
	return sh;
}

void sighand_drop(void *obj)
{
	sighand_put(obj);
}

void sigpending_save(struct enc *e, const struct sigpending *p)
{
	uint64_t n = 0;

	enc_u64(e, p->set);
	for (const struct sigqueued *q = p->head; q; q = q->next)
		n++;
	enc_u64(e, n);
	for (const struct sigqueued *q = p->head; q; q = q->next)
		enc_raw(e, &q->info, sizeof(q->info));
}

void sigpending_load(struct dec *d, struct sigpending *p)
{
	struct sigqueued **tail = &p->head;

	p->set = dec_u64(d);
	uint64_t n = dec_max(d, 1 << 16, "signal queue");
	for (uint64_t i = 0; i < n && dec_ok(d); i++) {
		struct sigqueued *q = calloc(1, sizeof(*q));
		if (!q) {
			dec_fail(d, "out of memory");
			return;
		}
		*tail = q;
		tail = &q->next;
		dec_raw(d, &q->info, sizeof(q->info));
		if (q->info.si_signo < 1 || q->info.si_signo > NSIG_GUEST ||
		    !(p->set & SIGBIT(q->info.si_signo)))
			dec_fail(d, "bad queued signal");
	}
}
