/*
 * t_escape_syscalls: the escape corpus's syscall-instruction variants. Whatever instruction a
 * guest makes a system call with, and wherever it runs it from, the call is the Sentry's: the
 * host never executes it.
 *
 * - `int $0x80` (from 64-bit code, and from 32-bit code after a far jump to the compatibility
 *   code segment): natively, with the host's IA-32 emulation, an i386 system call (getpid
 *   answers, mkdir makes its directory, exit exits); a host built or booted without it faults
 *   instead, which the test reports and accepts as the native outcome. In the sandbox every
 *   i386 call is unimplemented, on every host: -ENOSYS with nothing done, every register but
 *   rax kept, as Linux keeps them. A host without IA-32 emulation may also have no 32-bit
 *   code segment (the far jump faults): the 32-bit code checks then report it and are skipped,
 *   natively and in the sandbox, which cannot offer a mode the host CPU is not given.
 * - `sysenter` in 64-bit mode: on AMD CPUs an invalid opcode, SIGILL ILL_ILLOPN at the
 *   instruction, natively and in the sandbox alike. (On Intel the host kernel takes it as a
 *   32-bit call returning to a 32-bit vDSO a 64-bit process lacks: not asserted, reported.)
 * - a signal taken in 32-bit code: the handler runs in 64-bit mode (CS 0x33), sees the 32-bit
 *   CS in its frame without UC_STRICT_RESTORE_SS, makes syscalls, and its return goes back to
 *   the 32-bit code.
 * - the vsyscall page, code the process maps (and rewrites) itself, signal handlers (on the
 *   normal and the alternate stack) and raw clone() threads and processes that never touch
 *   libc: each call answers as natively (the caller's own pid and tid).
 * Jumps to the stub's own syscall instruction are t_escape_stub's.
 * conformance: native-proc
 */
#include "check.h"

#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>

#define FUTEX_WAIT 0
#define VSYSCALL_TIME 0xffffffffff600400UL
#define I386_EXIT 1
#define I386_GETPID 20
#define I386_MKDIR 39
#define USER64_CS 0x33
#define USER32_CS 0x23

static int native_ia32 = -1; /* natively: does int $0x80 reach an i386 table here? */
static int int80_usable;     /* an int $0x80 returns here: in the sandbox, or native_ia32 */

static long int80(long nr, long b, long c, long d)
{
	long ret;

	asm volatile("int $0x80"
		     : "=a"(ret)
		     : "a"(nr), "b"(b), "c"(c), "d"(d)
		     : "r8", "r9", "r10", "r11", "memory");
	return ret;
}

static long raw0(long nr)
{
	long ret;

	asm volatile("syscall" : "=a"(ret) : "a"(nr) : "rcx", "r11", "memory");
	return ret;
}

static long vtime(void)
{
	return ((long (*)(long *))VSYSCALL_TIME)(NULL);
}

/* --- int $0x80 from 64-bit code ----------------------------------------------------------- */

/* Registers after an int $0x80 of an i386 number no table has, as set before it. */
unsigned long int80_regs[16] __attribute__((used));

static void int80_keeps_registers(void)
{
	/* The red zone is stepped over: the pushes would land in it. */
	asm volatile(
	    "sub $128, %%rsp\n\tpush %%rbx\n\tpush %%rbp\n\tpush %%r12\n\tpush %%r13\n\tpush "
	    "%%r14\n\t"
	    "push %%r15\n\t"
	    "mov $0x1111, %%rbx\n\tmov $0x2222, %%rcx\n\tmov $0x3333, %%rdx\n\t"
	    "mov $0x4444, %%rsi\n\tmov $0x5555, %%rdi\n\tmov $0x6666, %%rbp\n\t"
	    "mov $0x8888, %%r8\n\tmov $0x9999, %%r9\n\tmov $0xaaaa, %%r10\n\t"
	    "mov $0xbbbb, %%r11\n\tmov $0xcccc, %%r12\n\tmov $0xdddd, %%r13\n\t"
	    "mov $0xeeee, %%r14\n\tmov $0xffff, %%r15\n\t"
	    "mov $1000, %%eax\n\t"
	    "int $0x80\n\t"
	    "mov %%rax, int80_regs+0(%%rip)\n\tmov %%rbx, int80_regs+8(%%rip)\n\t"
	    "mov %%rcx, int80_regs+16(%%rip)\n\tmov %%rdx, int80_regs+24(%%rip)\n\t"
	    "mov %%rsi, int80_regs+32(%%rip)\n\tmov %%rdi, int80_regs+40(%%rip)\n\t"
	    "mov %%rbp, int80_regs+48(%%rip)\n\tmov %%r8, int80_regs+64(%%rip)\n\t"
	    "mov %%r9, int80_regs+72(%%rip)\n\tmov %%r10, int80_regs+80(%%rip)\n\t"
	    "mov %%r11, int80_regs+88(%%rip)\n\tmov %%r12, int80_regs+96(%%rip)\n\t"
	    "mov %%r13, int80_regs+104(%%rip)\n\tmov %%r14, int80_regs+112(%%rip)\n\t"
	    "mov %%r15, int80_regs+120(%%rip)\n\t"
	    "pop %%r15\n\tpop %%r14\n\tpop %%r13\n\tpop %%r12\n\tpop %%rbp\n\tpop %%rbx\n\t"
	    "add $128, %%rsp"
	    :
	    :
	    : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory");
	CHECK_EQ((long)int80_regs[0], -ENOSYS);
	static const unsigned long want[16] = {0,      0x1111, 0x2222, 0x3333, 0x4444, 0x5555,
					       0x6666, 0,      0x8888, 0x9999, 0xaaaa, 0xbbbb,
					       0xcccc, 0xdddd, 0xeeee, 0xffff};
	for (int i = 1; i < 16; i++)
		if (i != 7)
			CHECK_EQ(int80_regs[i], want[i]);
}

static void int80_from_64bit(char *low)
{
	int st;
	pid_t pid = fork();

	if (pid == 0)
		_exit(int80(I386_GETPID, 0, 0, 0) == getpid() ? 0 : 1);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	if (!in_sandbox()) {
		native_ia32 = !WIFSIGNALED(st);
		if (!native_ia32) {
			dprintf(1, "native: this host has no IA-32 emulation: int $0x80 faults "
				   "(SIGSEGV), which is then the outcome\n");
			CHECK_EQ(WTERMSIG(st), SIGSEGV);
			return;
		}
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	} else {
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);
		CHECK_EQ(int80(I386_GETPID, 0, 0, 0), -ENOSYS);
	}
	int80_keeps_registers();
	CHECK_EQ(int80(0xffffffffL, 0, 0, 0), -ENOSYS);

	/* i386 mkdir of a path below 4 GiB (the pointers are 32-bit). */
	strcpy(low, "/tmp/int80-dir");
	rmdir(low);
	long r = int80(I386_MKDIR, (long)(uintptr_t)low, 0755, 0);
	struct stat sb;
	if (in_sandbox()) {
		CHECK_EQ(r, -ENOSYS);
		CHECK_ERR(stat(low, &sb), ENOENT);
	} else {
		CHECK_EQ(r, 0);
		CHECK_EQ(stat(low, &sb), 0);
		rmdir(low);
	}
	/* i386 exit: natively the process ends with the code; in the sandbox it goes on. */
	pid = fork();
	if (pid == 0) {
		int80(I386_EXIT, 7, 0, 0);
		_exit(8);
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), in_sandbox() ? 8 : 7);
}

/* --- 32-bit code -------------------------------------------------------------------------- */

/* The low region (MAP_32BIT): 32-bit code at +0, a landing for the way back at +256, its
 * stack at the top. */
#define LOW_SIZE (64 << 10)

static volatile int h_cs, h_saved_cs, h_sig, h_code;
static volatile long h_pid, h_addr, h_flags;

static void on_ill(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	unsigned short cs;

	asm volatile("mov %%cs, %0" : "=r"(cs));
	h_cs = cs;
	h_saved_cs = uc->uc_mcontext.gregs[REG_CSGSFS] & 0xffff;
	h_flags = uc->uc_flags;
	h_sig = sig;
	h_code = si->si_code;
	h_addr = (long)si->si_addr;
	h_pid = raw0(SYS_getpid);
	uc->uc_mcontext.gregs[REG_RIP] += 2; /* past the ud2 */
}

/* Runs BODY (BODYLEN bytes of 32-bit code) with eax = EAX in compatibility mode; returns eax
 * as it left it. */
static long run32(unsigned char *low, const unsigned char *body, int bodylen, long eax)
{
	unsigned char *code = low, *back = low + 256;
	uint32_t back32 = (uint32_t)(uintptr_t)back;
	int n = 0;
	long ret;

	memset(low, 0, LOW_SIZE); /* every page written from 64-bit code first */
	memcpy(code, body, bodylen);
	n = bodylen;
	code[n++] = 0x6a; /* push $0x33 */
	code[n++] = USER64_CS;
	code[n++] = 0x68; /* push $back */
	memcpy(code + n, &back32, 4);
	n += 4;
	code[n++] = 0xcb; /* lret */
	back[0] = 0x41;	  /* jmp *%r12 */
	back[1] = 0xff;
	back[2] = 0xe4;
	uint64_t stack = (uintptr_t)low + LOW_SIZE - 64;
	asm volatile("mov %%rsp, %%r13\n\t"
		     "mov %[stack], %%rsp\n\t"
		     "lea 1f(%%rip), %%r12\n\t"
		     "pushq %[cs32]\n\t"
		     "pushq %[code]\n\t"
		     "lretq\n\t"
		     "1: mov %%r13, %%rsp\n\t"
		     : "=a"(ret)
		     : "a"(eax), [stack] "r"(stack), [code] "r"((uint64_t)(uintptr_t)code),
		       [cs32] "i"(USER32_CS)
		     : "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13",
		       "memory");
	return ret & 0xffffffff;
}

static void code_32bit(unsigned char *low)
{
	static const unsigned char int80_body[] = {0xcd, 0x80};
	static const unsigned char ud2_body[] = {0x0f, 0x0b, 0xb8, 42, 0, 0, 0}; /* mov $42 */
	long r = run32(low, int80_body, sizeof(int80_body), I386_GETPID);

	if (in_sandbox())
		CHECK_EQ(r, (uint32_t)-ENOSYS);
	else if (native_ia32)
		CHECK_EQ(r, getpid());
	CHECK_EQ(run32(low, int80_body, sizeof(int80_body), 1000), (uint32_t)-ENOSYS);

	struct sigaction sa = {.sa_sigaction = on_ill, .sa_flags = SA_SIGINFO};
	sigaction(SIGILL, &sa, NULL);
	CHECK_EQ(run32(low, ud2_body, sizeof(ud2_body), 0), 42);
	CHECK_EQ(h_sig, SIGILL);
	CHECK_EQ(h_code, ILL_ILLOPN);
	CHECK_EQ(h_addr, (long)(uintptr_t)low);
	CHECK_EQ(h_cs, USER64_CS);
	CHECK_EQ(h_saved_cs, USER32_CS);
	CHECK_EQ(h_flags & 4 /* UC_STRICT_RESTORE_SS */, 0);
	CHECK_EQ(h_pid, getpid());
	signal(SIGILL, SIG_DFL);
}

/* --- sysenter ----------------------------------------------------------------------------- */

static int is_amd(void)
{
	unsigned int a = 0, b, c, d;

	asm volatile("cpuid" : "+a"(a), "=b"(b), "=c"(c), "=d"(d));
	return (b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163) || /* AuthenticAMD */
	       (b == 0x6f677948 && d == 0x6e65476e && c == 0x656e6975);	  /* HygonGenuine */
}

static sigjmp_buf jb;
static volatile int j_sig, j_code;
static volatile long j_addr;

static void on_jump(int sig, siginfo_t *si, void *ucv)
{
	(void)ucv;
	j_sig = sig;
	j_code = si->si_code;
	j_addr = (long)si->si_addr;
	siglongjmp(jb, 1);
}

static __attribute__((noinline)) void sysenter(void)
{
	extern char sysenter_at[];

	if (!is_amd()) {
		dprintf(1, "sysenter: not an AMD CPU, where 64-bit code cannot use it: the host "
			   "takes it as a 32-bit call (not asserted)\n");
		return;
	}
	struct sigaction sa = {.sa_sigaction = on_jump, .sa_flags = SA_SIGINFO};
	sigaction(SIGILL, &sa, NULL);
	if (!sigsetjmp(jb, 1)) {
		asm volatile("sysenter_at: sysenter" ::: "memory");
		CHECK(!"sysenter returned");
	} else {
		CHECK_EQ(j_sig, SIGILL);
		CHECK_EQ(j_code, ILL_ILLOPN);
		CHECK_EQ(j_addr, (long)sysenter_at);
	}
	signal(SIGILL, SIG_DFL);
}

/* --- code the process maps itself --------------------------------------------------------- */

static void fresh_code(void)
{
	/* mov $NR, %eax; syscall; ret */
	unsigned char code[] = {0xb8, SYS_getpid, 0, 0, 0, 0x0f, 0x05, 0xc3};
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED);
	memcpy(p, code, sizeof(code));
	CHECK_EQ(mprotect(p, 4096, PROT_READ | PROT_EXEC), 0);
	CHECK_EQ(((long (*)(void))p)(), getpid());
	/* Rewritten in place: the new number is the one served. */
	CHECK_EQ(mprotect(p, 4096, PROT_READ | PROT_WRITE | PROT_EXEC), 0);
	p[1] = SYS_getppid;
	CHECK_EQ(((long (*)(void))p)(), getppid());
	p[1] = SYS_gettid;
	CHECK_EQ(((long (*)(void))p)(), syscall(SYS_gettid));
	munmap(p, 4096);

	/* Two views of one shared page: written through one, run through the other. */
	int fd = syscall(SYS_memfd_create, "code", 0);
	CHECK(fd >= 0);
	CHECK_EQ(ftruncate(fd, 4096), 0);
	char *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	char *x = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	CHECK(w != MAP_FAILED && x != MAP_FAILED);
	code[1] = SYS_getpid;
	memcpy(w, code, sizeof(code));
	CHECK_EQ(((long (*)(void))x)(), getpid());
	w[1] = SYS_getppid;
	CHECK_EQ(((long (*)(void))x)(), getppid());
	munmap(w, 4096);
	munmap(x, 4096);
	close(fd);
}

/* --- signal handlers ---------------------------------------------------------------------- */

static volatile long s_pid, s_tid, s_time, s_i80, s_onstack;
static volatile unsigned long s_mask;

static void on_usr1(int sig)
{
	stack_t ss;
	unsigned long mask = 0;

	(void)sig;
	s_pid = raw0(SYS_getpid);
	s_tid = raw0(SYS_gettid);
	s_time = vtime();
	s_i80 = int80_usable ? int80(I386_GETPID, 0, 0, 0) : 0;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &mask, 8);
	s_mask = mask;
	syscall(SYS_sigaltstack, NULL, &ss);
	s_onstack = ss.ss_flags & SS_ONSTACK;
}

static void check_handler_calls(int onstack)
{
	CHECK_EQ(s_pid, getpid());
	CHECK_EQ(s_tid, syscall(SYS_gettid));
	CHECK(labs(s_time - (long)time(NULL)) <= 2);
	if (in_sandbox())
		CHECK_EQ(s_i80, -ENOSYS);
	else if (native_ia32)
		CHECK_EQ(s_i80, getpid());
	CHECK(s_mask & (1UL << (SIGUSR1 - 1)));
	CHECK_EQ(s_onstack, onstack ? SS_ONSTACK : 0);
}

static void in_handlers(void)
{
	struct sigaction sa = {.sa_handler = on_usr1};
	static char altstack[64 << 10];
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};

	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	check_handler_calls(0);
	CHECK_EQ(sigaltstack(&ss, NULL), 0);
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	check_handler_calls(1);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	signal(SIGUSR1, SIG_DFL);
}

/* --- raw clone ---------------------------------------------------------------------------- */

static volatile long c_tid, c_pid, c_time, c_i80, c_fresh;
static char *c_code;

/* Runs on its own stack with no libc: raw syscalls only. */
static void clone_child(void)
{
	c_tid = raw0(SYS_gettid);
	c_pid = raw0(SYS_getpid);
	c_time = vtime();
	c_i80 = int80_usable ? int80(I386_GETPID, 0, 0, 0) : 0;
	c_fresh = ((long (*)(void))c_code)();
}

static long raw_clone(unsigned long flags, void *stack, int *ptid, int *ctid)
{
	register long r10 asm("r10") = (long)ctid;
	register long r8 asm("r8") = 0;
	long ret;

	asm volatile("syscall\n\t"
		     "test %%rax, %%rax\n\t"
		     "jnz 1f\n\t"
		     "call *%[fn]\n\t"
		     "mov $60, %%eax\n\t" /* exit(0) */
		     "xor %%edi, %%edi\n\t"
		     "syscall\n\t"
		     "hlt\n\t"
		     "1:"
		     : "=a"(ret)
		     : "a"(SYS_clone), "D"(flags), "S"(stack), "d"(ptid), "r"(r10),
		       "r"(r8), [fn] "b"(clone_child)
		     : "rcx", "r11", "memory");
	return ret;
}

static void raw_clones(void)
{
	static char stack[64 << 10] __attribute__((aligned(16)));
	static const unsigned char code[] = {0xb8, SYS_gettid, 0, 0, 0, 0x0f, 0x05, 0xc3};
	static int ptid, ctid;
	int st;

	c_code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	CHECK(c_code != MAP_FAILED);
	memcpy(c_code, code, sizeof(code));

	/* A thread. */
	ctid = -1;
	long tid = raw_clone(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
				 CLONE_SYSVSEM | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID,
			     stack + sizeof(stack), &ptid, &ctid);
	CHECK(tid > 0);
	struct timespec limit = {5, 0};
	int seen;
	while ((seen = __atomic_load_n(&ctid, __ATOMIC_SEQ_CST)) != 0)
		if (syscall(SYS_futex, &ctid, FUTEX_WAIT, seen, &limit) && errno == ETIMEDOUT)
			break;
	CHECK_EQ(ctid, 0);
	CHECK_EQ(ptid, tid);
	CHECK_EQ(c_tid, tid);
	CHECK_EQ(c_pid, getpid());
	CHECK(labs(c_time - (long)time(NULL)) <= 2);
	if (in_sandbox())
		CHECK_EQ(c_i80, -ENOSYS);
	else if (native_ia32)
		CHECK_EQ(c_i80, getpid());
	CHECK_EQ(c_fresh, tid);

	/* A process sharing the memory. */
	c_tid = c_pid = 0;
	long pid = raw_clone(CLONE_VM | SIGCHLD, stack + sizeof(stack), NULL, NULL);
	CHECK(pid > 0);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(c_pid, pid);
	CHECK_EQ(c_tid, pid);
	CHECK_EQ(c_fresh, pid);
	munmap(c_code, 4096);
}

/* Does the far jump to the compatibility code segment work here (and come back)? A host
 * without IA-32 emulation may have no 32-bit segment: the jump faults with SIGSEGV. */
static bool has_compat_mode(unsigned char *low)
{
	static const unsigned char nop[] = {0x90};
	int st;
	pid_t pid = fork();

	if (pid == 0)
		_exit(run32(low, nop, sizeof(nop), 5) == 5 ? 0 : 1);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV) {
		dprintf(1,
			"%s: this host has no 32-bit code segment: the far jump faults; the "
			"32-bit code checks are skipped\n",
			in_sandbox() ? "sandbox" : "native");
		return false;
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return true;
}

int main(void)
{
	char *low = mmap(NULL, LOW_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

	CHECK(low != MAP_FAILED && (uintptr_t)low + LOW_SIZE <= 0x80000000UL);
	if (low == MAP_FAILED)
		return check_done();
	int80_from_64bit(low);
	int80_usable = in_sandbox() || native_ia32;
	bool compat = has_compat_mode((unsigned char *)low);
	if (compat && int80_usable)
		code_32bit((unsigned char *)low);
	maybe_save();
	sysenter();
	fresh_code();
	in_handlers();
	raw_clones();
	maybe_save();
	if (compat && int80_usable)
		code_32bit((unsigned char *)low);
	return check_done();
}
