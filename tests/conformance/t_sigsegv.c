/*
 * t_sigsegv: signals raised by faults, with the siginfo the kernel fills in. SIGSEGV with
 * SEGV_MAPERR for an unmapped address and SEGV_ACCERR for a protection fault (write to a
 * read-only page, read of PROT_NONE, execution of a non-executable page), with si_addr the
 * data address; a handler can fix the fault and return to retry the instruction; SIGFPE
 * FPE_INTDIV, SIGILL ILL_ILLOPN and SIGTRAP from int3 carry the instruction address (int3:
 * SI_KERNEL, rip after the int3); hlt is a privileged-instruction SIGSEGV (SI_KERNEL, address
 * 0); SIGBUS BUS_ADRERR past the end of a mapped file. Unhandled, or handled but blocked, a
 * fault kills the process with the signal, with no core dump reported when RLIMIT_CORE is 0.
 */
#include "check.h"
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <ucontext.h>

/* Instructions at known addresses. */
void do_div0(void);
void do_ud2(void);
void do_int3(void);
void do_hlt(void);
extern char div0_insn[], ud2_insn[], int3_insn[], int3_after[], hlt_insn[];
__asm__(".text\n"
	".globl do_div0\n.type do_div0,@function\ndo_div0:\n"
	"  xor %ecx, %ecx\n  mov $1, %eax\n  cltd\n"
	".globl div0_insn\ndiv0_insn:\n  idiv %ecx\n  ret\n"
	".globl do_ud2\n.type do_ud2,@function\ndo_ud2:\n"
	".globl ud2_insn\nud2_insn:\n  ud2\n  ret\n"
	".globl do_int3\n.type do_int3,@function\ndo_int3:\n"
	".globl int3_insn\nint3_insn:\n  int3\n"
	".globl int3_after\nint3_after:\n  ret\n"
	".globl do_hlt\n.type do_hlt,@function\ndo_hlt:\n"
	".globl hlt_insn\nhlt_insn:\n  hlt\n  ret\n");

static sigjmp_buf jb;
static siginfo_t got;
static uintptr_t got_rip;
static volatile int mode_fix; /* SIGSEGV handler: make the page writable and retry */

static void on_fault(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	(void)sig;
	got = *si;
	got_rip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	if (mode_fix) {
		mode_fix = 0; /* once: a second fault goes to the siglongjmp below */
		mprotect((void *)((uintptr_t)si->si_addr & ~(uintptr_t)4095), 4096,
			 PROT_READ | PROT_WRITE);
		return;
	}
	/* int3 is a trap: returning resumes after it. */
	if (si->si_signo == SIGTRAP)
		return;
	siglongjmp(jb, 1);
}

static void install_all(void)
{
	struct sigaction sa;
	int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP};

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		CHECK_EQ(sigaction(sigs[i], &sa, NULL), 0);
}

/* Runs fn and reports whether it faulted into the handler. */
static int faults(void (*fn)(void *), void *arg)
{
	memset(&got, 0, sizeof(got));
	got_rip = 0;
	if (sigsetjmp(jb, 1) == 0) {
		fn(arg);
		return 0;
	}
	return 1;
}

static void write_byte(void *p)
{
	*(volatile char *)p = 42;
}

static void read_byte(void *p)
{
	(void)*(volatile char *)p;
}

static void call_at(void *p)
{
	((void (*)(void))p)();
}

static void test_segv(void)
{
	char *page =
	    mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(page != MAP_FAILED);
	/* page+0: unmapped; page+4096: read-only; page+8192: PROT_NONE. */
	CHECK_EQ(munmap(page, 4096), 0);
	CHECK_EQ(mprotect(page + 4096, 4096, PROT_READ), 0);
	CHECK_EQ(mprotect(page + 8192, 4096, PROT_NONE), 0);

	CHECK(faults(write_byte, page + 123));
	CHECK_EQ(got.si_signo, SIGSEGV);
	CHECK_EQ(got.si_code, SEGV_MAPERR);
	CHECK_EQ(got.si_addr, page + 123);

	CHECK(faults(read_byte, page + 7));
	CHECK_EQ(got.si_code, SEGV_MAPERR);
	CHECK_EQ(got.si_addr, page + 7);

	CHECK(faults(write_byte, page + 4096 + 5));
	CHECK_EQ(got.si_signo, SIGSEGV);
	CHECK_EQ(got.si_code, SEGV_ACCERR);
	CHECK_EQ(got.si_addr, page + 4096 + 5);
	CHECK(!faults(read_byte, page + 4096 + 5)); /* reading it is fine */

	CHECK(faults(read_byte, page + 8192 + 9));
	CHECK_EQ(got.si_code, SEGV_ACCERR);
	CHECK_EQ(got.si_addr, page + 8192 + 9);

	/* Jumping into a readable, non-executable page faults at the target. */
	CHECK_EQ(mprotect(page + 4096, 4096, PROT_READ | PROT_WRITE), 0);
	memset(page + 4096, 0xc3, 16); /* ret */
	CHECK(faults(call_at, page + 4096));
	CHECK_EQ(got.si_signo, SIGSEGV);
	CHECK_EQ(got.si_code, SEGV_ACCERR);
	CHECK_EQ(got.si_addr, page + 4096);
	CHECK_EQ(got_rip, (uintptr_t)(page + 4096));

	/* Null pointer. */
	CHECK(faults(read_byte, NULL));
	CHECK_EQ(got.si_code, SEGV_MAPERR);
	CHECK_EQ(got.si_addr, NULL);

	/* The handler fixes the protection and returns: the write is retried and lands. */
	CHECK_EQ(mprotect(page + 4096, 4096, PROT_READ), 0);
	memset(&got, 0, sizeof(got));
	mode_fix = 1;
	CHECK(!faults(write_byte, page + 4096 + 100));
	CHECK_EQ(mode_fix, 0);
	CHECK_EQ(got.si_code, SEGV_ACCERR);
	CHECK_EQ(got.si_addr, page + 4096 + 100);
	CHECK_EQ(page[4096 + 100], 42);
	maybe_save();
	munmap(page + 4096, 8192);
}

static void run(void *fn)
{
	((void (*)(void))fn)();
}

static void test_cpu_exceptions(void)
{
	CHECK(faults(run, (void *)do_div0));
	CHECK_EQ(got.si_signo, SIGFPE);
	CHECK_EQ(got.si_code, FPE_INTDIV);
	CHECK_EQ(got.si_addr, div0_insn);
	CHECK_EQ(got_rip, (uintptr_t)div0_insn);

	CHECK(faults(run, (void *)do_ud2));
	CHECK_EQ(got.si_signo, SIGILL);
	CHECK_EQ(got.si_code, ILL_ILLOPN);
	CHECK_EQ(got.si_addr, ud2_insn);
	CHECK_EQ(got_rip, (uintptr_t)ud2_insn);

	/* int3 traps: the handler returns and execution continues after it. */
	CHECK(!faults(run, (void *)do_int3));
	CHECK_EQ(got.si_signo, SIGTRAP);
	CHECK_EQ(got.si_code, SI_KERNEL);
	CHECK_EQ(got_rip, (uintptr_t)int3_after);

	/* A privileged instruction is a general protection fault. */
	CHECK(faults(run, (void *)do_hlt));
	CHECK_EQ(got.si_signo, SIGSEGV);
	CHECK_EQ(got.si_code, SI_KERNEL);
	CHECK_EQ(got.si_addr, NULL);
	CHECK_EQ(got_rip, (uintptr_t)hlt_insn);
}

/* A page of a file mapping wholly past the end of the file: SIGBUS. */
static void test_sigbus(void)
{
	int fd = open("/bin/busybox", O_RDONLY);
	struct stat st;

	CHECK(fd >= 0);
	CHECK_EQ(fstat(fd, &st), 0);
	size_t file_pages = ((size_t)st.st_size + 4095) / 4096;
	char *map = mmap(NULL, (file_pages + 1) * 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(map != MAP_FAILED);
	close(fd);
	if (map == MAP_FAILED)
		return;
	CHECK(!faults(read_byte, map + st.st_size - 1));
	char *past = map + file_pages * 4096 + 10;
	CHECK(faults(read_byte, past));
	CHECK_EQ(got.si_signo, SIGBUS);
	CHECK_EQ(got.si_code, BUS_ADRERR);
	CHECK_EQ(got.si_addr, past);
	munmap(map, (file_pages + 1) * 4096);
}

/* Faults that kill: no handler, or a handler whose signal is blocked. */
static void test_fatal_faults(void)
{
	int status;

	for (int blocked = 0; blocked < 2; blocked++) {
		pid_t pid = fork();
		if (pid == 0) {
			/* No core file anywhere. */
			struct rlimit no_core = {0, 0};
			setrlimit(RLIMIT_CORE, &no_core);
			prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
			if (blocked) {
				sigset_t s;
				sigemptyset(&s);
				sigaddset(&s, SIGSEGV);
				sigprocmask(SIG_BLOCK, &s, NULL);
			} else {
				signal(SIGSEGV, SIG_DFL);
			}
			write_byte(NULL);
			_exit(99);
		}
		CHECK_EQ(waitpid(pid, &status, 0), pid);
		CHECK(WIFSIGNALED(status));
		CHECK_EQ(WTERMSIG(status), SIGSEGV);
		CHECK(!WCOREDUMP(status)); /* no core file was written */
	}

	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit no_core = {0, 0};
		setrlimit(RLIMIT_CORE, &no_core);
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		signal(SIGFPE, SIG_DFL);
		do_div0();
		_exit(99);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status));
	CHECK_EQ(WTERMSIG(status), SIGFPE);
	CHECK(!WCOREDUMP(status));
}

int main(void)
{
	install_all();
	test_segv();
	test_cpu_exceptions();
	test_sigbus();
	test_fatal_faults();
	return check_done();
}
