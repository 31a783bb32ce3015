/* A platform without processes, for the fuzz harnesses: stubs and threads are bookkeeping
 * only, injected host calls succeed as the host would answer them (mmap at the fixed address
 * asked for), and registers live in memory. Harnesses drive the Sentry's decoders and loaders
 * in-process, thousands of times a second; a real stub per address space would cost a fork
 * and a ptrace attach each, and would leave processes behind when an input crashes. Guest
 * memory is the memory file, as on the real platform, so copy_in/copy_out are the real ones. */
#include <cpuid.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "platform/platform.h"

#define PAGE 4096UL
#define STUB_LEN (2 * PAGE)
#define STUB_BASE 0x7e0000000000UL
#define USER_TOP ((1UL << 47) - PAGE)
/* Host ids no process has (pid_max is at most 2^22): kill or /proc of them fails cleanly. */
#define FAKE_PID_BASE (INT_MAX - (1 << 20))

struct fake_thread {
	struct platform_thread pt;
	struct user_regs_struct regs;
	unsigned char fp[4096];
};

static size_t fpstate_size = 512 + 64;
static struct platform_stub *all_stubs;
static int next_fake_pid = FAKE_PID_BASE;

int platform_init(int memfd, enum platform_placement placement, enum platform_kind kind)
{
	unsigned int a, b, c, d;

	(void)memfd, (void)placement, (void)kind;
	if (__get_cpuid_count(0xd, 0, &a, &b, &c, &d) && b > fpstate_size)
		fpstate_size = b;
	if (fpstate_size > sizeof(((struct fake_thread *)0)->fp))
		return -ENOSYS;
	return 0;
}

/* No CPU to run a helper thread on: the fuzzed Sentry stays single-threaded. */
void platform_start_cpus(cpu_set_t *set)
{
	CPU_ZERO(set);
}

uintptr_t platform_stub_base(void)
{
	return STUB_BASE;
}

size_t platform_stub_len(void)
{
	return STUB_LEN;
}

uintptr_t platform_user_top(void)
{
	return USER_TOP;
}

size_t platform_fpstate_size(void)
{
	return fpstate_size;
}

uint64_t platform_xfeatures(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

static struct platform_thread *thread_new(struct platform_stub *stub)
{
	struct fake_thread *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->pt.tid = next_fake_pid++;
	f->pt.host_pid = stub->pid;
	f->pt.stub = stub;
	stub->threads++;
	if (next_fake_pid == INT_MAX)
		next_fake_pid = FAKE_PID_BASE;
	return &f->pt;
}

int platform_stub_new(struct platform_thread **out)
{
	struct platform_stub *stub = calloc(1, sizeof(*stub));

	if (!stub)
		return -ENOMEM;
	stub->pid = next_fake_pid;
	if (!(*out = thread_new(stub))) {
		free(stub);
		return -ENOMEM;
	}
	stub->next = all_stubs;
	all_stubs = stub;
	return 0;
}

/* A fake stub has no address space for a userfaultfd to watch: restores take the path of a
 * host without one (no lazy loading, no write tracking). */
int platform_stub_new_uffd(struct platform_thread **out, int *uffd)
{
	(void)out, (void)uffd;
	return -ENOSYS;
}

int platform_stub_uffd(struct platform_thread *t)
{
	(void)t;
	return -ENOSYS;
}

int platform_thread_new(struct platform_thread *parent, struct platform_thread **out)
{
	return (*out = thread_new(parent->stub)) ? 0 : -ENOMEM;
}

void platform_thread_release(struct platform_thread *t)
{
	if (!t)
		return;
	struct platform_stub *stub = t->stub;
	if (--stub->threads == 0) {
		for (struct platform_stub **pp = &all_stubs; *pp; pp = &(*pp)->next)
			if (*pp == stub) {
				*pp = stub->next;
				break;
			}
		free(stub);
	}
	free((struct fake_thread *)t);
}

long platform_inject(struct platform_thread *t, long nr, const long args[6])
{
	(void)t;
	switch (nr) {
	case SYS_mmap:
		return args[0];
	case SYS_mremap:
		return args[4];
	default:
		return 0;
	}
}

int platform_wait(struct platform_event *ev, bool block)
{
	(void)ev, (void)block;
	return -EAGAIN;
}

int platform_syscall_info(struct platform_thread *t, struct platform_syscall *sc)
{
	const struct user_regs_struct *r = &((struct fake_thread *)t)->regs;

	*sc = (struct platform_syscall){
	    .nr = (long)r->orig_rax,
	    .args = {r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9},
	    .ip = r->rip,
	    .sp = r->rsp,
	    .native = true,
	};
	return 0;
}

int platform_set_return(struct platform_thread *t, long ret)
{
	((struct fake_thread *)t)->regs.rax = (unsigned long)ret;
	return 0;
}

int platform_resume(struct platform_thread *t, int sig)
{
	(void)t, (void)sig;
	return 0;
}

void platform_blocked(struct platform_thread *t)
{
	(void)t;
}

void platform_thread_stopped(struct platform_thread *t)
{
	(void)t;
}

void platform_placement_tick(void)
{
}

int platform_get_regs(struct platform_thread *t, struct user_regs_struct *regs)
{
	*regs = ((struct fake_thread *)t)->regs;
	return 0;
}

int platform_set_regs(struct platform_thread *t, const struct user_regs_struct *regs)
{
	((struct fake_thread *)t)->regs = *regs;
	return 0;
}

int platform_get_fpstate(struct platform_thread *t, void *buf, size_t len)
{
	if (len > fpstate_size)
		return -EINVAL;
	memcpy(buf, ((struct fake_thread *)t)->fp, len);
	return 0;
}

int platform_set_fpstate(struct platform_thread *t, const void *buf, size_t len)
{
	if (len > fpstate_size)
		return -EINVAL;
	memcpy(((struct fake_thread *)t)->fp, buf, len);
	return 0;
}

int platform_get_siginfo(struct platform_thread *t, siginfo_t *si)
{
	(void)t;
	memset(si, 0, sizeof(*si));
	return 0;
}

void platform_continue_stray(pid_t tid)
{
	(void)tid;
}

int platform_interrupt(struct platform_thread *t)
{
	(void)t;
	return 0;
}

void platform_kill(struct platform_thread *t)
{
	t->stub->killed = true;
}

void platform_kill_all(void)
{
	for (struct platform_stub *s = all_stubs; s; s = s->next)
		s->killed = true;
}

/* No stubs are forked here, so there is nothing for a hook to run in. */
void platform_set_stub_hook(void (*hook)(void))
{
	(void)hook;
}

/* No stub is forked, so there is no factory to start. */
int platform_start(void)
{
	return 0;
}

void platform_note_sigchld(pid_t tid)
{
	(void)tid;
}

/* No host thread ever reports here. */
struct platform_thread *platform_thread_by_tid(pid_t tid)
{
	(void)tid;
	return NULL;
}

int platform_event_fd(void)
{
	return -1;
}

int platform_exit_fd(void)
{
	return -1;
}

void platform_take_fd_events(void)
{
}

const char *platform_name(void)
{
	return "fake";
}

bool platform_seccomp_supported(void)
{
	return false;
}
