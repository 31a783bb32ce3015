/* The kernel's event loop and the life of a sandbox: start init, serve every stop of every
 * guest thread, park tasks that would block and re-run their syscall when the host
 * descriptor they wait on is ready, and end when init exits. */
#include "sentry/kernel.h"
#include "sentry/fasync.h"
#include "sentry/mqueue.h"
#include "sentry/pidfd.h"
#include "sentry/caps.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "common/limits.h"
#include "common/units.h"
#include "sentry/bind.h"
#include "sentry/upper.h"
#include "sentry/vdso.h"
#include "sentry/checkpoint.h"
#include "sentry/control.h"
#include "sentry/exec.h"
#include "sentry/fdtable.h"
#include "mem/memfile.h"
#include "sentry/mm.h"
#include "sentry/marks.h"
#include "sentry/membarrier.h"
#include "sentry/oom.h"
#include "sentry/sched.h"
#include "sentry/seccomp.h"
#include "sentry/signal.h"
#include "sentry/syscall.h"
#include "sentry/task.h"
#include "sentry/tty.h"
#include "sentry/timer.h"
#include "fs-proc/procfs.h"
#include "fs-sys/sysfs.h"
#include "vfs/kernfs.h"
#include "vfs/vfs.h"

struct kernel kernel;

/* The platform a sandbox gets when neither --platform nor MINISENTRY_PLATFORM says: the
 * faster one (docs/platform.md, "Which is the default"), where the host can run it. */
#define DEFAULT_PLATFORM PLATFORM_SECCOMP

/* Host signals the Sentry acts on: SIGCHLD (a guest thread stopped), SIGALRM (the tick) and the
 * ones sent to minisentry itself: terminal signals go on to the guest's foreground process group;
 * SIGTERM and SIGHUP end the sandbox. All of them stay blocked for the Sentry's whole life and are
 * taken only at the loop's wait point (wait_for_work), from the signalfd or by sigwaitinfo. So a
 * signal that comes while the loop is busy waits, pending, until the next look; it can never slip
 * in between a check and a wait, and no other wait of the Sentry (an injection's waitpid, an image
 * write) is ever cut short by EINTR. */
static const int forwarded[] = {SIGINT, SIGQUIT, SIGTSTP, SIGWINCH, SIGTERM, SIGHUP};
static sigset_t host_sigs;
static int host_sigfd = -1;
/* The platform's descriptors in the loop's epoll set. */
static int platform_fd_tag, platform_exit_tag;

static void act_on_host_signal(int sig)
{
	switch (sig) {
	case SIGCHLD:
		return; /* a guest stop: the loop's platform_wait takes it */
	case SIGALRM:
		if (kernel.cfg.placement == PLACEMENT_AUTO)
			platform_placement_tick();
		clock_tick();
		return;
	case SIGTERM:
	case SIGHUP:
		if (kernel.frozen) {
			kernel.thaw_signal = sig; /* as a paused container's init gets it: later */
			return;
		}
		kernel.done = true;
		kernel.exit_status = 128 + sig;
		return;
	}
	siginfo_t si = {.si_signo = sig, .si_code = SI_KERNEL};
	for_each_process(p)
		if (!p->zombie && p->pgid == kernel.tty_fg_pgid)
			signal_send_process_from_host(p, sig, &si);
}

/* Acts on every host signal pending now, without waiting. */
static void take_host_signals(void)
{
	struct signalfd_siginfo si[8];
	ssize_t n;

	while ((n = read(host_sigfd, si, sizeof(si))) > 0)
		for (size_t i = 0; i < (size_t)n / sizeof(si[0]); i++) {
			if (si[i].ssi_signo == SIGCHLD)
				platform_note_sigchld((pid_t)si[i].ssi_pid);
			act_on_host_signal((int)si[i].ssi_signo);
		}
}

void kernel_free_dead(void)
{
	while (kernel.dead) {
		struct task *t = kernel.dead;
		kernel.dead = t->next;
		task_free(t);
	}
}

/* A memory-file-backed file changed size: every address space's shared mappings of it follow.
 * An address space with a stopped thread is changed now; the others before they run again. */
static void file_resized(struct mobj *mo, uint64_t size)
{
	static unsigned int visit;

	if (mo->refs <= 1)
		return; /* only the file holds it: nothing maps it */
	visit++;
	for_each_task(t) {
		if (!t->mm || t->mm->visit == visit)
			continue;
		t->mm->visit = visit;
		struct task *stopped = NULL;
		for (struct task *u = t; u && !stopped; u = u->next)
			if (u->mm == t->mm && u->pt && !u->running)
				stopped = u;
		if (stopped)
			t->mm->via = stopped->pt;
		mm_file_resized(t->mm, mo, size, stopped != NULL);
	}
}

void kernel_resume(struct task *t)
{
	if (t->group_leader->stopped) {
		t->parked = true; /* SIGCONT resumes it */
		return;
	}
	if (kernel.frozen)
		return; /* held: the thaw resumes it (sentry/freeze.c) */
	if (t->mm && t->mm->host_stale) {
		t->mm->via = t->pt;
		mm_sync_host(t->mm);
	}
	t->running = true;
	t->resumes++;
	platform_resume(t->pt, 0);
}

static bool is_restart(long ret)
{
	return ret <= -ERESTARTSYS && ret >= -ERESTARTNOHAND;
}

/* Answers T's syscall with RET, delivers what is pending and lets T run, unless it blocked or
 * is gone. */
static void finish_syscall(struct task *t, long ret);

void kernel_finish_syscall(struct task *t, long ret)
{
	finish_syscall(t, ret);
}

static void finish_syscall(struct task *t, long ret)
{
	if (t->exited || t->zombie || t->thread_gone)
		return;
	if (ret == -ESENTRY_BLOCK) {
		if (t->pt)
			platform_blocked(t->pt);
		return;
	}
	bool in_syscall = !t->regs_set;
	t->blk.retry = false;
	t->blk.timed_out = false;
	t->regs_set = false;
	t->blk.intr_ret = 0;
	if (signal_pending(t) || t->has_saved_sigmask || (in_syscall && is_restart(ret))) {
		if (!signal_deliver(t, ret, in_syscall))
			return;
	} else if (in_syscall) {
		platform_set_return(t->pt, ret);
	}
	kernel_resume(t);
}

/* The handler runs once more knowing it was interrupted (t->blk.interrupted), so it can finish
 * with what it has (a partial write, the time left of a sleep); if it would block again the
 * syscall ends with t->blk.intr_ret. */
void kernel_interrupt_syscall(struct task *t)
{
	t->blk.retry = true;
	t->blk.interrupted = true;
	t->mm->via = t->pt;
	long ret = syscall_dispatch(t);
	if (ret == -ESENTRY_BLOCK) {
		task_cancel_wait(t);
		ret = t->blk.intr_ret ? t->blk.intr_ret : -ERESTARTSYS;
		if (kernel.cfg.strace)
			strace_print(t, ret);
	}
	t->blk.interrupted = false;
	t->blk.sigwait_set = 0;
	finish_syscall(t, ret);
}

void kernel_retry_syscall(struct task *t)
{
	t->mm->via = t->pt; /* injections go through the stopped thread */
	finish_syscall(t, syscall_dispatch(t));
}

/* T entered the syscall in t->sc, from IP as its seccomp filters see it: they decide first
 * (sentry/seccomp.c; a task without any pays one test), then the handler serves it. */
static void enter_syscall(struct task *t, unsigned long ip)
{
	long ret;

	t->blk.retry = false;
	t->blk.timed_out = false;
	if (!t->seccomp.mode || gseccomp_allows(t, ip, &ret)) {
		kernel_retry_syscall(t);
		return;
	}
	if (t->exited || t->zombie || t->thread_gone)
		return; /* killed by its filter */
	t->mm->via = t->pt;
	if (kernel.cfg.strace) {
		kernel.current = t;
		strace_enter(t);
		strace_print(t, ret);
	}
	finish_syscall(t, ret);
}

/* The legacy vsyscall page: gettimeofday, time and getcpu at fixed addresses, which old
 * static binaries still call. Such a call makes no syscall stop: the host kernel emulates the
 * page, asks the stub's seccomp filter (which traps, since the call does not come from the
 * stub's gadget), performs the `ret`, and stops the thread with a SIGSYS whose si_syscall is
 * the call's number. It is served here as the syscall it stands for. */
#define VSYSCALL_ADDR 0xffffffffff600000UL
#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1 /* si_code of a seccomp SIGSYS */
#endif

static bool vsyscall_trap(struct task *t)
{
	struct user_regs_struct regs;
	siginfo_t si;

	if (platform_get_siginfo(t->pt, &si) || si.si_code != SYS_SECCOMP ||
	    (uintptr_t)si.si_call_addr - VSYSCALL_ADDR >= 4096)
		return false;
	if (si.si_syscall != SYS_gettimeofday && si.si_syscall != SYS_time &&
	    si.si_syscall != SYS_getcpu)
		return false;
	if (platform_get_regs(t->pt, &regs))
		return false;
	t->sc = (struct platform_syscall){
	    .nr = si.si_syscall,
	    .args = {regs.rdi, regs.rsi, regs.rdx},
	    .ip = regs.rip,
	    .sp = regs.rsp,
	    .native = true,
	};
	/* A filter sees the call at the vsyscall address, where Linux's emulation asks it. */
	enter_syscall(t, (uintptr_t)si.si_call_addr);
	return true;
}

/* `int $0x80` on a host without IA-32 emulation: the host faults it (#GP: a SIGSEGV with
 * SI_KERNEL, at the instruction) where a host with it makes a syscall entry, which the
 * sandbox refuses (syscall_dispatch: i386 calls are ENOSYS). The Sentry makes that entry
 * itself, past the instruction, with i386's registers, so that a guest sees one behaviour on
 * every host and its seccomp filters see the call as AUDIT_ARCH_I386. signal_fault asks, with
 * the registers it has read, for a SIGSEGV with SI_KERNEL only. */
bool kernel_int80_fault(struct task *t, struct user_regs_struct *regs)
{
	unsigned char insn[2];

	if (copy_in(t->mm, insn, regs->rip, sizeof(insn)) || insn[0] != 0xcd || insn[1] != 0x80)
		return false;
	regs->rip += sizeof(insn);
	if (platform_set_regs(t->pt, regs))
		return false;
	t->sc = (struct platform_syscall){
	    .nr = (uint32_t)regs->rax,
	    .args = {(uint32_t)regs->rbx, (uint32_t)regs->rcx, (uint32_t)regs->rdx,
		     (uint32_t)regs->rsi, (uint32_t)regs->rdi, (uint32_t)regs->rbp},
	    .ip = regs->rip,
	    .sp = regs->rsp,
	    .native = false,
	};
	enter_syscall(t, regs->rip);
	return true;
}

static void handle_event(const struct platform_event *ev)
{
	struct task *t = task_by_host_tid(ev->tid);

	if (!t) {
		/* A host thread on its way out (released, or its stub torn down). */
		if (ev->kind != PEV_EXITED)
			platform_continue_stray(ev->tid);
		return;
	}
	t->running = false;
	if (t->pt && ev->kind != PEV_EXITED)
		platform_thread_stopped(t->pt);
	switch (ev->kind) {
	case PEV_SYSCALL:
		if (platform_syscall_info(t->pt, &t->sc)) {
			kernel_exit_group(t, SIGKILL);
			return;
		}
		if (signal_stub_syscall(t))
			break;
		enter_syscall(t, t->sc.ip);
		break;
	case PEV_SIGNAL:
		switch (ev->sig) {
		case SIGSEGV:
		case SIGBUS:
		case SIGILL:
		case SIGFPE:
		case SIGTRAP:
			signal_fault(t, ev->sig);
			break;
		case SIGSYS:
			if (!vsyscall_trap(t))
				signal_fault(t, ev->sig);
			break;
		default:
			/* Host signals aimed at a stub are not the guest's: drop them. */
			kernel_resume(t);
		}
		break;
	case PEV_STOP:
		/* An interrupt we asked for: deliver what is pending. */
		if (!t->blk.blocked && signal_deliver(t, 0, false))
			kernel_resume(t);
		break;
	case PEV_EXITED:
		/* The host thread died under us (killed from outside). */
		t->pt->tid = -1;
		kernel_exit_group(t, ev->sig ? ev->sig : ev->exit_status << 8);
		break;
	}
}

/* A warm slot's restore client (sentry/warm.c), which stands where a launcher would: its
 * connection closes when it dies, and the sandbox then ends as at a hangup (a launcher's death
 * kills its Sentry; here the slot is still reset). It sends nothing else once the guest runs. */
static int client_fd = -1;

int kernel_watch_client(int fd)
{
	struct epoll_event e = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = &client_fd};

	if (epoll_ctl(kernel.epfd, EPOLL_CTL_ADD, fd, &e))
		return -errno;
	client_fd = fd;
	return 0;
}

static void client_gone(void)
{
	epoll_ctl(kernel.epfd, EPOLL_CTL_DEL, client_fd, NULL);
	client_fd = -1;
	act_on_host_signal(SIGHUP);
}

/* The loop's one wait point. With BLOCK, waits for a guest stop, a host signal or, when tasks
 * wait on host descriptors or deadlines or a control socket listens, one of those; without,
 * takes only what is there already. Host signals pending at the call end it at once. */
static void wait_for_work(bool block)
{
	struct epoll_event evs[16];

	clock_tick(); /* a TSC read when nothing is due */
	if (!sched_needs_events() && !control_active() && platform_event_fd() < 0 &&
	    client_fd < 0) {
		/* The fast path: only a guest stop (SIGCHLD) or a host signal can wake anyone. */
		siginfo_t si;
		if (!block)
			take_host_signals();
		else if (sigwaitinfo(&host_sigs, &si) > 0) {
			if (si.si_signo == SIGCHLD)
				platform_note_sigchld(si.si_pid);
			act_on_host_signal(si.si_signo);
		}
		return;
	}
	sched_arm_timer();
	int n = epoll_wait(kernel.epfd, evs, 16, block ? -1 : 0);
	for (int i = 0; i < n; i++) {
		if (evs[i].data.ptr == &host_sigfd)
			take_host_signals();
		else if (evs[i].data.ptr == &platform_fd_tag)
			; /* a guest thread's event: the loop's platform_wait finds it */
		else if (evs[i].data.ptr == &platform_exit_tag)
			platform_take_fd_events();
		else if (evs[i].data.ptr == &client_fd)
			client_gone();
		else if (!control_handle_event(evs[i].data.ptr))
			sched_handle_event(evs[i].data.ptr, evs[i].events);
	}
}

/* A steady stream of guest stops never leaves the loop without work to wait for, so it looks
 * at host signals, descriptors and the tick after this many events in a row. */
#define EVENTS_BETWEEN_LOOKS 16

static void loop(void)
{
	struct platform_event ev;
	unsigned int in_a_row = 0;

	while (!kernel.done) {
		fasync_deliver();
		sched_run_woken();
		kernel_free_dead();
		if (kernel.done)
			break;
		/* A stop may be waiting without a SIGCHLD of its own (several stops raise one), so
		 * the stops there are come first, and the wait only once there are none. */
		int r = platform_wait(&ev, false);
		if (r == 0) {
			handle_event(&ev);
			if (++in_a_row >= EVENTS_BETWEEN_LOOKS) {
				in_a_row = 0;
				wait_for_work(false);
			}
			continue;
		}
		if (r == -ECHILD)
			break;
		in_a_row = 0;
		wait_for_work(true);
	}
}

void kernel_teardown(void)
{
	struct task *t;

	kernel_free_dead();
	/* A slot's reset follows what its guests wrote: that is read while their stubs exist and
	 * none of their threads runs (one that runs on could write after the read). A killed
	 * stub takes its written bits with it, and then all its memory counts as changed. */
	if (memfile_slot_active() && kernel_quiesce() == 0)
		for_each_task(u)
			if (u->pt)
				mm_collect_writes(u->mm);
	while ((t = task_list_pop())) {
		task_cancel_wait(t);
		if (t->pt)
			platform_kill(t->pt);
		task_free(t);
	}
	platform_kill_all(); /* stubs no task owns: a restore that failed half-way */
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
}

static int setup_events(void)
{
	kernel.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (kernel.epfd < 0)
		return -errno;
	sigemptyset(&host_sigs);
	sigaddset(&host_sigs, SIGCHLD);
	sigaddset(&host_sigs, SIGALRM);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&host_sigs, forwarded[i]);
	sigprocmask(SIG_BLOCK, &host_sigs, NULL);
	host_sigfd = signalfd(-1, &host_sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	if (host_sigfd < 0)
		return -errno;
	struct epoll_event e = {.events = EPOLLIN, .data.ptr = &host_sigfd};
	if (epoll_ctl(kernel.epfd, EPOLL_CTL_ADD, host_sigfd, &e))
		return -errno;
	if (platform_event_fd() >= 0) {
		struct epoll_event d = {.events = EPOLLIN | EPOLLET, .data.ptr = &platform_fd_tag};
		e.data.ptr = &platform_exit_tag;
		if (epoll_ctl(kernel.epfd, EPOLL_CTL_ADD, platform_event_fd(), &d) ||
		    epoll_ctl(kernel.epfd, EPOLL_CTL_ADD, platform_exit_fd(), &e))
			return -errno;
	}
	int err = sched_init(kernel.epfd);
	if (err)
		return err;
	signal(SIGPIPE, SIG_IGN); /* a closed stdout is the guest's EPIPE, not our death */
	return 0;
}

/* The tick: --placement auto looks at running guest threads every PLACEMENT_TICK_US, and the
 * guests' clocks are re-drawn on it (clock_tick; CLOCK_TICK_US apart at most without auto).
 * The loop may sit in its wait for as long as every thread computes, and it is exactly then
 * that a computing thread should leave the Sentry's CPU, and that a guest reading the time
 * through its vDSO makes no syscall. The interval timer's SIGALRM is a host signal like the
 * others: the wait point takes it. */
#define PLACEMENT_TICK_US 5000
#define CLOCK_TICK_US 100000

static void start_tick(void)
{
	long us = kernel.cfg.placement == PLACEMENT_AUTO ? PLACEMENT_TICK_US : CLOCK_TICK_US;
	struct itimerval every = {{0, us}, {0, us}};

	setitimer(ITIMER_REAL, &every, NULL);
}

enum platform_kind kernel_default_platform(void)
{
	const char *p = getenv("MINISENTRY_PLATFORM");

	if (p && !strcmp(p, "ptrace"))
		return PLATFORM_PTRACE;
	if (p && !strcmp(p, "seccomp"))
		return PLATFORM_SECCOMP;
	if (DEFAULT_PLATFORM == PLATFORM_SECCOMP && !platform_seccomp_supported())
		return PLATFORM_PTRACE; /* the one every x86_64 Linux can run */
	return DEFAULT_PLATFORM;
}

void kernel_stop_tick(void)
{
	struct itimerval off = {{0, 0}, {0, 0}};

	setitimer(ITIMER_REAL, &off, NULL);
}

/* The sandbox's stdio: the Sentry's own descriptors 0-2, wrapped as files. A terminal is the
 * sandbox's pseudo-terminal: the file is /dev/pts/0's, so that fstat, /proc/self/fd, ttyname
 * and /proc/PID/stat's tty_nr name it as a container engine's -t pty is named (the host's
 * pty is not the guest's business). */
static int install_stdio(struct task *t)
{
	struct vfs_fs_ctx fs = {.root = kernel.root, .cwd = kernel.root, .umask = 022};

	for (int fd = 0; fd < 3; fd++) {
		int flags = fcntl(fd, F_GETFL);
		if (flags < 0)
			continue; /* closed on the host: closed in the guest */
		struct vfs_file *f;
		int err = vfs_file_host_stdio(fd, flags & ~O_CLOEXEC, &f);
		if (err)
			return err;
		if (isatty(fd))
			vfs_lookup(&fs, NULL, "/dev/pts/0", 0, &f->dentry);
		if (fdtable_install_at(t->files, fd, f, false, 3) < 0)
			return -ENOMEM;
	}
	return 0;
}

static struct task *make_init(void)
{
	struct task *t = task_new(1);

	if (!t)
		return NULL;
	t->group_leader = t;
	caps_init(t, kernel.cfg.caps);
	sched_default_affinity(t);
	t->files = fdtable_new();
	t->sighand = sighand_new();
	if (!t->files || !t->sighand) {
		task_free(t);
		return NULL;
	}
	if (!(t->fs = fs_new(kernel.root, kernel.root,
			     kernel.cfg.umask_set ? kernel.cfg.umask & 0777 : 022))) {
		task_free(t);
		return NULL;
	}
	if (kernel.cfg.user_set) {
		t->uid = t->euid = t->suid = kernel.cfg.uid;
		t->gid = t->egid = t->sgid = kernel.cfg.gid;
	}
	t->no_new_privs = kernel.cfg.no_new_privs;
	if (kernel.cfg.seccomp_len &&
	    gseccomp_attach(t, kernel.cfg.seccomp_prog, kernel.cfg.seccomp_len,
			    kernel.cfg.seccomp_log)) {
		task_free(t);
		return NULL;
	}
	if (kernel.cfg.ngroups > 0) {
		if (!(t->groups = malloc(kernel.cfg.ngroups * sizeof(gid_t)))) {
			task_free(t);
			return NULL;
		}
		memcpy(t->groups, kernel.cfg.groups, kernel.cfg.ngroups * sizeof(gid_t));
		t->ngroups = kernel.cfg.ngroups;
	}
	for (int i = 0; i < kernel.cfg.nrlimits; i++) {
		const struct kernel_rlimit *r = &kernel.cfg.rlimits[i];
		if (r->resource >= 0 && r->resource < RLIM_NLIMITS)
			t->rlim[r->resource] = (struct rlimit){r->soft, r->hard};
	}
	return t;
}

static const char *env_lookup(char **envp, const char *key)
{
	size_t n = strlen(key);

	for (; envp && *envp; envp++)
		if (!strncmp(*envp, key, n) && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

/* Starts ARGV (with ENVP, in CWD when set) in new task T, which has no program yet: MSG gets
 * why it could not, in one line. */
static int start_program(struct task *t, char **argv, char **envp, const char *cwd, char *msg,
			 size_t size)
{
	const char *cmd = argv[0];
	char found[4096];
	int err;

	if (cwd) {
		struct vfs_dentry *d;
		err = vfs_lookup(t->fs, NULL, cwd, VFS_LOOKUP_FOLLOW | VFS_LOOKUP_DIRECTORY, &d);
		if (err) {
			snprintf(msg, size, "--cwd %s: %s", cwd, strerror(-err));
			return err;
		}
		vfs_dentry_put(t->fs->cwd);
		t->fs->cwd = d;
	}
	if (!strchr(cmd, '/')) {
		if (exec_find_in_path(t, cmd, env_lookup(envp, "PATH"), found, sizeof(found))) {
			snprintf(msg, size, "%s: command not found in the sandbox", cmd);
			return -ENOENT;
		}
		cmd = found;
	}
	if ((err = exec_load(t, cmd, argv, envp))) {
		snprintf(msg, size, "%s: %s", cmd,
			 err == -ENOEXEC
			     ? "not an executable this sandbox can run (Exec format error)"
			     : strerror(-err));
		return err;
	}
	if (kernel.cfg.strace) {
		/* The new stack holds argc, argv's pointers and NULL, then envp's. */
		struct user_regs_struct regs = {0};
		int argc = 0, envc = 0;
		while (argv[argc])
			argc++;
		while (envp && envp[envc])
			envc++;
		platform_get_regs(t->pt, &regs);
		strace_exec_init(t, cmd, argv, regs.rsp + 8 * ((unsigned long)argc + 2), envc);
	}
	return 0;
}

static int start_init(struct task *t)
{
	char msg[4200];
	int err =
	    start_program(t, kernel.cfg.argv, kernel.cfg.envp, kernel.cfg.cwd, msg, sizeof(msg));

	if (err)
		fprintf(stderr, "minisentry: %s\n", msg);
	return err;
}

int kernel_spawn(const struct kernel_spawn *s, pid_t *pid, char *msg, size_t size)
{
	rlim_t bound = kernel.cfg.pids > 0 ? kernel.cfg.pids : DEFAULT_PIDS, n = 0;
	struct task *t;
	int err;

	for_each_task(o)
		n++;
	if (n >= bound) {
		snprintf(msg, size, "the sandbox holds its most tasks (%lu)", (unsigned long)bound);
		return -EAGAIN;
	}
	if (!(t = task_new(kernel.next_pid))) {
		snprintf(msg, size, "out of memory");
		return -ENOMEM;
	}
	t->group_leader = t;
	sched_default_affinity(t);
	t->files = fdtable_new();
	t->sighand = sighand_new();
	if (!t->files || !t->sighand || !(t->fs = fs_new(kernel.root, kernel.root, 022))) {
		task_free(t);
		snprintf(msg, size, "out of memory");
		return -ENOMEM;
	}
	t->uid = t->euid = t->suid = s->uid;
	t->gid = t->egid = t->sgid = s->gid;
	caps_init(t, s->caps ? s->caps : kernel.cfg.caps);
	t->no_new_privs = s->no_new_privs < 0 ? kernel.cfg.no_new_privs : s->no_new_privs;
	if (s->seccomp_len &&
	    (err = (int)gseccomp_attach(t, s->seccomp_prog, s->seccomp_len, s->seccomp_log))) {
		task_free(t);
		snprintf(msg, size, "its seccomp filter: %s", strerror(-err));
		return err;
	}
	if (s->ngroups > 0) {
		if (!(t->groups = malloc((size_t)s->ngroups * sizeof(gid_t)))) {
			task_free(t);
			snprintf(msg, size, "out of memory");
			return -ENOMEM;
		}
		memcpy(t->groups, s->groups, (size_t)s->ngroups * sizeof(gid_t));
		t->ngroups = s->ngroups;
	}
	for (int fd = 0; fd < 3; fd++) {
		int flags = fcntl(s->stdio[fd], F_GETFL), dup;
		struct vfs_file *f;
		if (flags < 0 || (dup = fcntl(s->stdio[fd], F_DUPFD_CLOEXEC, 3)) < 0)
			continue;
		if (!(f = vfs_file_host_fd(dup, flags & ~O_CLOEXEC, true))) {
			close(dup);
			continue;
		}
		if (fdtable_install_at(t->files, fd, f, false, 3) < 0)
			vfs_file_put(f);
	}
	kernel.next_pid++;
	task_link(t);
	if ((err = start_program(t, s->argv, s->envp, s->cwd, msg, size))) {
		kernel_exit_group(t, 127 << 8); /* no parent: it is freed at once */
		return err;
	}
	kernel_resume(t);
	*pid = t->tgid;
	return 0;
}

/* devfs on the rootfs's /dev, when it has one (a rootfs without /dev runs without devices). */
static void mount_devfs(void)
{
	struct vfs_fs_ctx fs = {.root = kernel.root, .cwd = kernel.root, .umask = 022};
	struct vfs_dentry *dev, *devroot;

	if (vfs_lookup(&fs, NULL, "/dev", VFS_LOOKUP_FOLLOW | VFS_LOOKUP_DIRECTORY, &dev))
		return;
	if (vfs_devfs_new(&devroot) == 0) {
		vfs_mount(dev, devroot); /* the mount keeps its own references */
		vfs_dentry_put(devroot);
	}
	vfs_dentry_put(dev);
}

/* procfs on /proc and sysfs on /sys, when the rootfs has those directories. */
static struct vfs_dentry *proc_root, *sys_root; /* for --stats; held by their mounts */

int kernel_new_procfs(struct vfs_dentry **root)
{
	return procfs_new(&kernel_procinfo, kernel.cfg.eager_kernfs, root);
}

int kernel_new_sysfs(struct vfs_dentry **root)
{
	return sysfs_new(kernel.cfg.cpus, kernel.cfg.eager_kernfs, root);
}

static struct vfs_dentry *mount_kernfs(const char *path, bool proc)
{
	struct vfs_fs_ctx fs = {.root = kernel.root, .cwd = kernel.root, .umask = 022};
	struct vfs_dentry *mp, *root = NULL;
	int err;

	if (vfs_lookup(&fs, NULL, path, VFS_LOOKUP_FOLLOW | VFS_LOOKUP_DIRECTORY, &mp))
		return NULL;
	err = proc ? kernel_new_procfs(&root) : kernel_new_sysfs(&root);
	if (!err && vfs_mount(mp, root))
		err = -EBUSY;
	if (root)
		vfs_dentry_put(root);
	vfs_dentry_put(mp);
	return err ? NULL : root; /* the mount keeps it alive */
}

/* A line of /proc/self/status ("VmHWM:", "VmRSS:") in KiB, or -1. */
static long self_status_kib(const char *key)
{
	char line[256];
	long v = -1;
	size_t len = strlen(key);
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && sscanf(line + len, "%ld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

static void print_kernfs_stats(void)
{
	struct kernfs_stats st;

	/* The Sentry's peak resident size: what a sandbox of many processes costs it. */
	fprintf(stderr, "minisentry: stats: sentry: peak rss %ld KiB\n", self_status_kib("VmHWM:"));
	clock_print_stats(stderr);

	if (proc_root && kernfs_stats(proc_root, &st) == 0)
		fprintf(stderr,
			"minisentry: stats: proc: %lu inodes, %lu dentries, %lu populated dirs\n",
			st.inodes, st.dentries, st.populated_dirs);
	if (sys_root && kernfs_stats(sys_root, &st) == 0)
		fprintf(stderr,
			"minisentry: stats: sysfs: %lu inodes, %lu dentries, %lu populated dirs\n",
			st.inodes, st.dentries, st.populated_dirs);
}

/* A fresh tmpfs on PATH, when the tree has that directory. */
static void mount_tmpfs(const char *path)
{
	struct vfs_fs_ctx fs = {.root = kernel.root, .cwd = kernel.root, .umask = 022};
	struct vfs_dentry *mp, *root;

	if (vfs_lookup(&fs, NULL, path, VFS_LOOKUP_FOLLOW | VFS_LOOKUP_DIRECTORY, &mp))
		return;
	if (vfs_tmpfs_new(&root) == 0) {
		vfs_mount_fs(mp, root, "tmpfs", "tmpfs", 0, NULL);
		vfs_dentry_put(root);
	}
	vfs_dentry_put(mp);
}

/* The filesystems of CFG->fsmounts, each on its path (made in the sandbox's own layer when the
 * rootfs lacks it); one already there of the same type (the /proc every sandbox gets) stays. */
static int mount_extra(const struct kernel_config *cfg)
{
	struct vfs_fs_ctx fs = {.root = kernel.root, .cwd = kernel.root, .umask = 022};

	for (int i = 0; i < cfg->nfsmounts; i++) {
		const struct kernel_fsmount *m = &cfg->fsmounts[i];
		struct vfs_dentry *mp, *root = NULL;
		int err;
		if ((err = bind_make_mountpoint(&fs, m->dst, true)) ||
		    (err = vfs_lookup(&fs, NULL, m->dst, VFS_LOOKUP_FOLLOW | VFS_LOOKUP_DIRECTORY,
				      &mp))) {
			fprintf(stderr, "minisentry: %s mount on '%s': %s\n", m->type, m->dst,
				strerror(-err));
			return err;
		}
		/* A walk lands on what is mounted there: the same kind again is nothing to do. */
		const char *have =
		    mp->inode->ops->fs_type ? mp->inode->ops->fs_type(mp->inode) : NULL;
		if (have && !strcmp(have, m->type)) {
			vfs_dentry_put(mp);
			continue;
		}
		if (!strcmp(m->type, "proc"))
			err = kernel_new_procfs(&root);
		else if (!strcmp(m->type, "sysfs"))
			err = kernel_new_sysfs(&root);
		else if (!strcmp(m->type, "tmpfs"))
			err = vfs_tmpfs_new(&root);
		else
			err = -ENODEV;
		if (!err)
			err = vfs_mount_fs(mp, root, m->type, m->type, 0, NULL);
		if (root)
			vfs_dentry_put(root);
		vfs_dentry_put(mp);
		if (err) {
			fprintf(stderr, "minisentry: %s mount on '%s': %s\n", m->type, m->dst,
				strerror(-err));
			return err;
		}
	}
	return 0;
}

/* The memory file, bounded by --memory (or its default). Without the privilege to make a tmpfs
 * (only --unsafe-no-confine as an ordinary user) the default falls back to an unbounded memfd;
 * an explicit --memory is then refused. */
static int init_memory(const struct kernel_config *cfg)
{
	struct sysinfo si;
	uint64_t host = sysinfo(&si) == 0 ? (uint64_t)si.totalram * si.mem_unit : 0;
	uint64_t limit = cfg->memory ? cfg->memory : host / DEFAULT_MEMORY_SHARE;
	int err;

	if (limit < MEMORY_MIN)
		limit = MEMORY_MIN;
	limit &= ~(uint64_t)(PAGE_SIZE - 1);
	confine_maps_ready();
	/* A claimed slot is the memory file (the pool's tmpfs bounds it). */
	if (memfile_slot_fd() >= 0)
		return memfile_init();
	err = memfile_init_bounded(limit);
	if (err && !cfg->memory)
		return memfile_init();
	if (err) {
		fprintf(stderr,
			"minisentry: --memory: cannot make the sandbox's bounded memory (a tmpfs "
			"of its own): %s\n",
			strerror(-err));
		return err;
	}
	memfile_set_full_hook(oom_kill);
	return 0;
}

/* File times are the guest's realtime (vfs_set_clock). */
static struct timespec realtime_now(void)
{
	struct timespec ts;

	clock_now(CLOCK_REALTIME, &ts);
	return ts;
}

/* A loopback TCP connection queues up to its 4 MiB send buffer in messages of the Sentry's
 * heap (vfs/inet.c). glibc gives the freed top of the heap back beyond 128 KiB, so a reader
 * that drained the queue left the next writes to fault every page in again: 14 faults per
 * 64 KiB write, TCP at 0.3-0.4 GB/s under --placement other, 0.7-1.8 without them. Keeping
 * twice that queue, and taking messages up to its size from the heap (as glibc's own sliding
 * threshold would after the first), stops that; a checkpoint's eviction still trims. */
#define HEAP_KEEP (16 << 20)
#define HEAP_MMAP_ABOVE (4 << 20)

static void keep_heap_for_messages(void)
{
	mallopt(M_TRIM_THRESHOLD, HEAP_KEEP);
	mallopt(M_MMAP_THRESHOLD, HEAP_MMAP_ABOVE);
}

/* A warm slot's Sentry sets up before it has its slot: the guests' vDSO, which lives in the
 * memory file (the slot), waits for the claim (kernel_warm_restore). */
static bool warm_setup;

static int setup_vdso(void)
{
	int err = vdso_init();

	if (err)
		fprintf(stderr, "minisentry: cannot set up the guests' vDSO: %s\n", strerror(-err));
	return err;
}

/* What every sandbox needs before its first task: the memory file, the platform, the event
 * loop's descriptors, and the control socket when it has a name. */
static int setup_kernel(const struct kernel_config *cfg)
{
	int err;

	keep_heap_for_messages();
	kernel.cfg = *cfg;
	snprintf(kernel.hostname, sizeof(kernel.hostname), "%s",
		 cfg->hostname ? cfg->hostname : "minisentry");
	strcpy(kernel.domainname, "(none)");
	syscall_quiet = cfg->quiet;
	vfs_set_resize_hook(file_resized);
	signalfd_register_kind(); /* -ENOMEM only means a checkpoint will refuse them */
	pidfd_register_kind();
	mqueue_register_kind();
	timerfd_register_kind();
	tty_init(); /* pseudo-terminals' hooks into job control */
	mark("setup_kernel");
	if ((err = init_memory(cfg)))
		return err; /* the message is printed */
	if (!warm_setup && (err = setup_vdso()))
		return err;
	mark("memory, vdso");
	vfs_set_clock(realtime_now);
	if (cfg->platform == PLATFORM_SECCOMP && !platform_seccomp_supported()) {
		fprintf(stderr, "minisentry: --platform seccomp needs the FSGSBASE instructions "
				"(Linux 5.9 or later on such a CPU); use --platform ptrace\n");
		return -ENOTSUP;
	}
	if ((err = platform_init(memfile_fd(), cfg->placement, cfg->platform)) ||
	    (err = setup_events())) {
		fprintf(stderr, "minisentry: cannot set up the sandbox: %s\n", strerror(-err));
		return err;
	}
	mark("platform, events");
	if ((err = confine_prepare_stubs()))
		return err; /* the message is printed */
	mark("stubs userns");
	membarrier_host_init(); /* before the factory: it and its stubs inherit it */
	/* New address spaces are forked from the factory, never from the growing Sentry. */
	if ((err = platform_start())) {
		fprintf(stderr, "minisentry: cannot start the stub factory: %s\n", strerror(-err));
		return err;
	}
	mark("factory");
	/* The control socket is made in the sandbox's network namespace (a named sandbox waits
	 * for it here, an unnamed one only at the lock). */
	if (cfg->id &&
	    ((err = confine_join_network()) || (err = control_listen(cfg->id, kernel.epfd))))
		return err; /* the message is printed */
	return 0;
}

/* Whether, once init has exited, nothing the Sentry still does can change the exit status or
 * be seen: no upper layer to save, no --stats or trace lines to write, no terminal to restore,
 * no control socket to remove, no save-restore chain. */
static bool quiet_end(bool tty)
{
	const struct kernel_config *c = &kernel.cfg;

	return !tty && !c->upper && !c->export_upper && !c->stats && !c->strace && !c->id &&
	       !c->save_restore_test && !memfile_slot_active();
}

/* A run whose end nothing can change after init's exit (quiet_end): the launcher is told the
 * exit status then, not after every stub is killed and reaped (0.2-0.4 ms) and init's own exit
 * is done with. If it ends us before we are done, the end of our PID namespace kills what is
 * left. */
static bool end_early;

void kernel_init_exiting(int status)
{
	if (!end_early)
		return;
	fflush(NULL);
	mark("init exit_group");
	confine_exiting((status & 0x7f) ? 128 + (status & 0x7f) : (status >> 8) & 0xff);
}

/* Runs the sandbox until init exits, then takes it down. */
static int serve(bool tty, const struct termios *saved_tty)
{
	clock_tick();
	start_tick();
	loop();
	if (end_early) { /* said at init's exit, unless a host signal ended the sandbox */
		fflush(NULL);
		confine_exiting(kernel.exit_status);
	}
	kernel_stop_tick();
	kernel_teardown();
	if (upper_save() && !kernel.exit_status)
		kernel.exit_status = 1;
	control_close();
	if (kernel.cfg.stats)
		print_kernfs_stats();
	vfs_umount_all();
	if (tty)
		tcsetattr(0, TCSADRAIN, saved_tty); /* whatever the guest left it in */
	return kernel.exit_status;
}

/* --strace -o FILE, opened in the Sentry once it holds only its own descriptors and while it
 * can still reach host paths (between confine_launch and confine_lock). 0, or the usage
 * error's status 2 with one line said: FILE is the user's mistake, not the guest's. */
static int open_trace(const struct kernel_config *cfg, const char *cmd)
{
	int err;

	if (!cfg->strace_file || !(err = strace_open(cfg->strace_file, cfg->strace_append)))
		return 0;
	fprintf(stderr, "minisentry: %s: --strace -o '%s': %s\n", cmd, cfg->strace_file,
		strerror(-err));
	return 2;
}

int kernel_run(const struct kernel_config *cfg)
{
	int err;
	struct task *init;

	kernel.cfg = *cfg;
	if ((err = confine_launch(&cfg->confine, cfg)) || (err = open_trace(cfg, "run")))
		return err;
	mark("launched");
	kernel.next_pid = 2;
	kernel.boot_mono = mono_now();
	clock_gettime(CLOCK_REALTIME, &kernel.boot_real);
	kernel.tty_fg_pgid = 1;
	/* A terminal on stdin is the sandbox's controlling terminal, init's session its own. */
	struct termios saved_tty;
	bool tty = tcgetattr(0, &saved_tty) == 0;
	kernel.tty_sid = tty ? 1 : 0;
	const char *rootfs = confine_rootfs(cfg->rootfs);
	err = rootfs ? vfs_mount_overlay_root(rootfs, &kernel.root) : -errno;
	if (err) {
		fprintf(stderr, "minisentry: rootfs '%s': %s\n", cfg->rootfs, strerror(-err));
		return err;
	}
	mark("rootfs");
	if ((err = setup_kernel(cfg)) || (err = upper_open(cfg)))
		return err;
	mark("set up");
	mount_devfs();
	mount_tmpfs("/tmp");
	mount_tmpfs("/dev/shm");
	proc_root = mount_kernfs("/proc", true);
	sys_root = mount_kernfs("/sys", false);
	if ((err = mount_extra(cfg)) || (err = bind_mount_all(cfg)))
		return err; /* the message is printed */
	if (cfg->root_readonly)
		vfs_overlay_set_rdonly(true);
	if (!(init = make_init()) || install_stdio(init)) {
		fprintf(stderr, "minisentry: cannot set up the sandbox: out of memory\n");
		return -ENOMEM;
	}
	mark("mounts, init");
	task_link(init);
	/* Set up: from here on the guest's input (its ELF files first) meets a locked Sentry. */
	if ((err = confine_lock())) {
		kernel_teardown();
		return err;
	}
	mark("locked");
	if (cfg->confine.selftest)
		return confine_selftest(cfg->confine.selftest);
	if ((err = start_init(init))) {
		kernel_teardown();
		return err;
	}
	mark("exec done");
	clock_tick(); /* the guests' clocks take the TSC before the first guest instruction */
	kernel_resume(init);
	end_early = quiet_end(tty);
	return serve(tty, &saved_tty);
}

/* --stats of a restore: its wall time since main() began, the process's CPU time, and the
 * resident size of the restored Sentry. */
static void print_restore_stats(void)
{
	struct timespec now, cpu;
	long rss = self_status_kib("VmRSS:");

	clock_gettime(CLOCK_MONOTONIC, &now);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	fprintf(stderr, "minisentry: stats: restore: wall %.2f ms, cpu %.2f ms, rss %ld KiB\n",
		(now.tv_sec - kernel_main_start.tv_sec) * (double)MSEC_PER_SEC +
		    (now.tv_nsec - kernel_main_start.tv_nsec) / (double)NSEC_PER_MSEC,
		(cpu.tv_sec - kernel_cpu_start.tv_sec) * (double)MSEC_PER_SEC +
		    (cpu.tv_nsec - kernel_cpu_start.tv_nsec) / (double)NSEC_PER_MSEC,
		rss);
}

struct timespec kernel_main_start, kernel_cpu_start;

void kernel_slot_done(void)
{
	struct memfile_slot_stats st;
	struct timespec a, b;

	if (!memfile_slot_active())
		return;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int e = memfile_slot_reset(&st);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (e) {
		/* Left in use: the next claimer resets it fully. */
		fprintf(stderr, "minisentry: slot: cannot reset: %s (the next claim recovers it)\n",
			strerror(-e));
		return;
	}
	memfile_slot_release();
	if (kernel.cfg.stats)
		fprintf(stderr, "minisentry: stats: slot: reset %llu pages (%s) in %.2f ms\n",
			(unsigned long long)st.pages, st.tracked ? "tracked" : "by comparison",
			(b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
}

/* A restore whose image is loaded (its tasks stopped): tracking starts, the guest runs, and
 * the sandbox is served until it ends; then the slot, if any, is reset and released. */
static int restore_loaded(const struct kernel_config *cfg, const struct kernel_restore_opts *o,
			  bool tty, const struct termios *saved_tty)
{
	int ret;

	if (kernel.cfg.root_readonly)
		vfs_overlay_set_rdonly(true);
	confine_note_loaded();
	/* Writes from here on are tracked against the image, for a later checkpoint --parent
	 * (a lazy restore starts tracking at its next checkpoint, once its pages are in). Every
	 * task is still stopped: one already running could write before it is watched. */
	if (!o->lazy)
		checkpoint_track_base();
	memfile_mark("track-base");
	task_load_resume();
	memfile_mark("resume");
	/* The guest is ready to run: a lazy restore's background load starts with it. */
	if ((ret = memfile_lazy_start())) {
		fprintf(stderr, "minisentry: restore: cannot start loading memory: %s\n",
			strerror(-ret));
		kernel_teardown();
		control_close();
		kernel_slot_done();
		return ret;
	}
	if (cfg->stats) {
		print_restore_stats();
		bool recovered;
		int i = memfile_slot_index(&recovered);
		if (i >= 0)
			fprintf(stderr, "minisentry: stats: slot: claimed slot.%d%s%s\n", i,
				recovered ? " (recovered: a dead Sentry had left it)" : "",
				warm_setup ? " by its waiting Sentry" : "");
		memfile_marks_print(stderr, &kernel_main_start);
		fprintf(stderr,
			"minisentry: stats: restore: memory loaded in %.2f ms (%llu MiB in huge "
			"pages)\n",
			memfile_load_ms(), (unsigned long long)(memfile_load_huge() >> 20));
	}
	ret = serve(tty, saved_tty);
	kernel_slot_done();
	/* The save-restore test's chain ends here: its golden image and pool go. */
	if (cfg->save_restore_slots && cfg->srt_slots)
		control_srt_slots_remove(cfg->srt_slots);
	return ret;
}

int kernel_restore(const struct kernel_config *cfg, const char *image,
		   const struct kernel_restore_opts *o, bool delete_image)
{
	struct termios saved_tty;
	bool tty = tcgetattr(0, &saved_tty) == 0;
	char *err = NULL;
	int ret;

	kernel.cfg = *cfg;
	memfile_marks_detail(cfg->stats);
	if ((ret = confine_launch(&cfg->confine, cfg)) || (ret = open_trace(cfg, "restore")))
		return ret;
	/* A slot is claimed before the memory file is made: it is the memory file. */
	memfile_mark("launch");
	if (o->slots && ((ret = memfile_slot_claim(o->slots, &err)) ||
			 (cfg->save_restore_slots && (ret = memfile_slot_check(&err))))) {
		fprintf(stderr, "minisentry: restore: %s\n", err ? err : strerror(-ret));
		free(err);
		return ret; /* a slot that failed its check stays in use: the next claim resets it
			     */
	}
	memfile_mark("claim");
	if ((ret = setup_kernel(cfg))) {
		kernel_slot_done();
		return ret;
	}
	memfile_mark("setup");
	/* Before the lock only what needs the host's paths: the image's files read and checked
	 * (and its MAC), the kernel record that names the rootfs and the bind mounts, and the
	 * memory section (its data files and the images it refers to). Everything else an image
	 * says is decoded by a Sentry already locked in. */
	struct checkpoint_restore *r = NULL;
	bind_restore_init(o->binds, o->nbinds);
	ret = checkpoint_load_begin(image, o, &r, &err);
	if (delete_image)
		control_remove_image(image);
	if (!ret && !confine_rootfs(kernel.cfg.rootfs)) {
		ret = -errno;
		if (asprintf(&err, "rootfs '%s': %s", kernel.cfg.rootfs, strerror(errno)) < 0)
			err = NULL;
	}
	memfile_mark("load-begin");
	if (!ret && (ret = confine_lock())) {
		checkpoint_load_abort(r);
		bind_restore_done();
		kernel_teardown();
		control_close();
		kernel_slot_done();
		return ret; /* the message is printed */
	}
	memfile_mark("lock");
	if (!ret)
		ret = checkpoint_load_finish(r, o, &err);
	else
		checkpoint_load_abort(r);
	bind_restore_done();
	if (ret) {
		fprintf(stderr, "minisentry: restore: %s\n", err ? err : strerror(-ret));
		free(err);
		kernel_teardown();
		control_close();
		kernel_slot_done();
		return ret;
	}
	return restore_loaded(cfg, o, tty, &saved_tty);
}

/* A warm slot's Sentry (sentry/warm.c): set up, its slot prepared, and locked in, before it
 * knows its image. */
int kernel_warm_setup(const struct kernel_config *cfg)
{
	kernel.cfg = *cfg;
	warm_setup = true;
	clock_probe_host();
	return setup_kernel(cfg);
}

int kernel_warm_restore(const struct kernel_config *cfg, const char *image,
			const struct kernel_restore_opts *o)
{
	struct termios saved_tty;
	bool tty = tcgetattr(0, &saved_tty) == 0;
	struct checkpoint_restore *r = NULL;
	char *err = NULL;
	int ret;

	kernel.cfg = *cfg;
	syscall_quiet = cfg->quiet;
	memfile_marks_detail(cfg->stats);
	memfile_mark("warm-start");
	bind_restore_init(o->binds, o->nbinds);
	if (!(ret = setup_vdso()) && (memfile_mark("vdso"), 1) &&
	    !(ret = checkpoint_load_begin(image, o, &r, &err)))
		ret = checkpoint_load_finish(r, o, &err);
	bind_restore_done();
	if (ret) {
		if (err)
			fprintf(stderr, "minisentry: restore: %s\n", err);
		free(err);
		kernel_teardown();
		control_close();
		kernel_slot_done();
		return ret;
	}
	return restore_loaded(cfg, o, tty, &saved_tty);
}
