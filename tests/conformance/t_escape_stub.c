/*
 * t_escape_stub: the escape corpus's tampering with the stub page. In the sandbox every guest
 * address space holds the Sentry's two-page stub (its `syscall; int3` gadget at offset 0) at
 * 0x7e0000000000 or a multiple of 4 GiB below (docs/platform.md), a range the guest was never
 * given; on Linux a process has nothing there. So, as Linux answers for a range the process has
 * nothing mapped in: munmap succeeds and takes the guest's own pages around it with it;
 * mprotect, madvise, mlock and msync fail with ENOMEM (mprotect having changed the mapped pages
 * before the hole); mremap from it fails with EFAULT, and so does a syscall given a pointer
 * into it; a write to it, or running code from it (a call, or a jump to the gadget with the
 * guest's own registers set for kill(parent, SIGKILL)), is SIGSEGV SEGV_MAPERR at that address
 * with the registers as they were, which kills the guest process alone. Where Linux would make
 * a mapping there (MAP_FIXED, MAP_FIXED_NOREPLACE, MREMAP_FIXED) the sandbox cannot give the
 * range up: ENOMEM, and what the guest had in the range is kept (natively the mapping is made:
 * checked as such). Not checked, because the sandbox differs: a load from the stub's pages
 * succeeds (docs/security.md, "What is not defended yet").
 * conformance: native-proc
 */
#include "check.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>

#define STUB_TOP 0x7e0000000000UL
#define STEP (4UL << 30)
#define PAGE 4096UL

static sigjmp_buf jb;
static volatile siginfo_t got;
static volatile long got_rip, got_rax;

static void on_fault(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	(void)sig;
	got = *si;
	got_rip = uc->uc_mcontext.gregs[REG_RIP];
	got_rax = uc->uc_mcontext.gregs[REG_RAX];
	siglongjmp(jb, 1);
}

static void catch_faults(void)
{
	struct sigaction sa = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO | SA_NODEFER};

	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
}

/* Calls TARGET with rax, rdi and rsi set: it never returns (the fault handler jumps out). The
 * red zone is stepped over, since the call pushes. */
static void call_with(uintptr_t target, long rax, long rdi, long rsi)
{
	asm volatile("sub $128, %%rsp\n\tcall *%0"
		     :
		     : "r"(target), "a"(rax), "D"(rdi), "S"(rsi)
		     : "rcx", "rdx", "r8", "r9", "r10", "r11", "memory");
}

/* After an access that must fault: a check that it did not. The barrier keeps the compiler
 * from counting the failure before the access (the handler jumps out past the print). */
#define NOT_REACHED(what)                                                                          \
	do {                                                                                       \
		asm volatile("" ::: "memory");                                                     \
		CHECK(!what);                                                                      \
	} while (0)

/* Expects the last fault to be SIGSEGV SEGV_MAPERR at ADDR, with rip RIP. */
#define CHECK_MAPERR(addr, rip)                                                                    \
	do {                                                                                       \
		CHECK_EQ(got.si_signo, SIGSEGV);                                                   \
		CHECK_EQ(got.si_code, SEGV_MAPERR);                                                \
		CHECK_EQ((uintptr_t)got.si_addr, (addr));                                          \
		CHECK_EQ(got_rip, (rip));                                                          \
	} while (0)

/* Whether /proc/self/maps lists anything in [a, b). */
static int maps_overlap(uintptr_t a, uintptr_t b)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long s, e;
	char line[512];
	int hit = 0;

	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < b && e > a)
			hit = 1;
	if (f)
		fclose(f);
	return hit;
}

/* The subject: natively the first free candidate (nothing is mapped there); in the sandbox the
 * stub, the one candidate where a mapping cannot be made (ENOMEM). */
static uintptr_t find_subject(void)
{
	uintptr_t found = 0;
	int stubs = 0;

	for (int k = 0; k < 16; k++) {
		uintptr_t a = STUB_TOP - k * STEP;
		errno = 0;
		void *p = mmap((void *)a, PAGE, PROT_READ,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == (void *)a) {
			munmap(p, PAGE);
			if (!in_sandbox() && !found)
				found = a;
		} else if (p == MAP_FAILED && errno == ENOMEM) {
			stubs++;
			if (in_sandbox() && !found)
				found = a;
		}
	}
	CHECK_EQ(stubs, in_sandbox() ? 1 : 0);
	CHECK(found != 0);
	return found;
}

static void no_mapping_there(uintptr_t s)
{
	int p[2];
	char buf[16];

	CHECK(!maps_overlap(s, s + 2 * PAGE));
	CHECK_ERR(mprotect((void *)s, PAGE, PROT_READ | PROT_WRITE), ENOMEM);
	CHECK_ERR(mprotect((void *)s, 2 * PAGE, PROT_NONE), ENOMEM);
	CHECK_ERR(madvise((void *)s, 2 * PAGE, MADV_DONTNEED), ENOMEM);
	CHECK_ERR(mlock((void *)s, PAGE), ENOMEM);
	CHECK_ERR(msync((void *)s, PAGE, MS_SYNC), ENOMEM);
	CHECK_ERR(mremap((void *)s, PAGE, 2 * PAGE, MREMAP_MAYMOVE), EFAULT);
	CHECK_EQ(pipe(p), 0);
	CHECK_ERR(write(p[1], (void *)s, 16), EFAULT);
	CHECK_EQ(write(p[1], "0123456789abcdef", 16), 16);
	CHECK_ERR(read(p[0], (void *)(s + PAGE), 16), EFAULT);
	CHECK_EQ(read(p[0], buf, 16), 16);
	close(p[0]);
	close(p[1]);
	CHECK_EQ(munmap((void *)s, 2 * PAGE), 0);
	CHECK_EQ(munmap((void *)s, PAGE), 0);
	CHECK_EQ(syscall(SYS_getpid), getpid()); /* the stub still serves */

	/* A write to either page, a call to it, a jump to the gadget with registers for
	 * kill(parent, SIGKILL) and to the int3 behind it: SIGSEGV at the address, the registers
	 * as they were. */
	catch_faults();
	if (!sigsetjmp(jb, 1)) {
		*(volatile char *)s = 1;
		NOT_REACHED("a write to the stub page went through");
	} else {
		CHECK_EQ(got.si_signo, SIGSEGV);
		CHECK_EQ(got.si_code, SEGV_MAPERR);
		CHECK_EQ((uintptr_t)got.si_addr, s);
	}
	if (!sigsetjmp(jb, 1)) {
		*(volatile char *)(s + PAGE + 8) = 1;
		NOT_REACHED("a write to the stub's second page went through");
	} else {
		CHECK_EQ(got.si_signo, SIGSEGV);
		CHECK_EQ(got.si_code, SEGV_MAPERR);
		CHECK_EQ((uintptr_t)got.si_addr, s + PAGE + 8);
	}
	if (!sigsetjmp(jb, 1)) {
		call_with(s, SYS_kill, getppid(), SIGKILL);
		NOT_REACHED("the call returned");
	} else {
		CHECK_MAPERR(s, s);
		CHECK_EQ(got_rax, SYS_kill);
	}
	if (!sigsetjmp(jb, 1)) {
		call_with(s, SYS_getpid, 0, 0);
	} else {
		CHECK_MAPERR(s, s);
		CHECK_EQ(got_rax, SYS_getpid);
	}
	if (!sigsetjmp(jb, 1))
		call_with(s + 2, SYS_getpid, 0, 0);
	else
		CHECK_MAPERR(s + 2, s + 2);
	if (!sigsetjmp(jb, 1))
		call_with(s + PAGE, SYS_getpid, 0, 0);
	else
		CHECK_MAPERR(s + PAGE, s + PAGE);
	signal(SIGSEGV, SIG_DFL);
}

static int free_at(uintptr_t a)
{
	void *p = mmap((void *)a, PAGE, PROT_READ,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)a)
		return 0;
	munmap(p, PAGE);
	return 1;
}

/* How long the range is: natively the two pages this test takes; in the sandbox what the
 * platform keeps (two pages under ptrace, more under seccomp: its threads' areas follow). */
static uintptr_t kept_len(uintptr_t s)
{
	uintptr_t bad = PAGE, good = 2 * PAGE;

	if (!in_sandbox())
		return 2 * PAGE;
	while (!free_at(s + good) && good < (1UL << 30)) {
		bad = good;
		good *= 2;
	}
	while (good - bad > PAGE) {
		uintptr_t mid = (bad + (good - bad) / 2) & ~(PAGE - 1);
		if (free_at(s + mid))
			good = mid;
		else
			bad = mid;
	}
	return good;
}

/* The guest's own pages right below and right above the range. */
static void neighbours(uintptr_t s)
{
	uintptr_t kept = kept_len(s);
	uintptr_t lo = s - PAGE, hi = s + kept;
	char *l = mmap((void *)lo, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	char *h = mmap((void *)hi, PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	CHECK_EQ((uintptr_t)l, lo);
	CHECK_EQ((uintptr_t)h, hi);
	if (l != (char *)lo || h != (char *)hi)
		return;
	memset(l, 'A', PAGE);
	memset(h, 'B', PAGE);

	/* Code that ends with a syscall right at the range: the syscall is served (getpid),
	 * and the next instruction is fetched from nothing. */
	static const unsigned char getpid_code[] = {0xb8, 39, 0, 0, 0, 0x0f, 0x05};
	memcpy(l + PAGE - sizeof(getpid_code), getpid_code, sizeof(getpid_code));
	catch_faults();
	if (!sigsetjmp(jb, 1)) {
		call_with(s - sizeof(getpid_code), 0, 0, 0);
	} else {
		CHECK_MAPERR(s, s);
		CHECK_EQ(got_rax, getpid());
	}
	signal(SIGSEGV, SIG_DFL);
	memset(l + PAGE - sizeof(getpid_code), 'A', sizeof(getpid_code));

	/* Where Linux would map over the range: natively done, in the sandbox ENOMEM with the
	 * guest's pages untouched. */
	if (in_sandbox()) {
		CHECK_EQ(mmap((void *)s, PAGE, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
			 MAP_FAILED);
		CHECK_EQ(errno, ENOMEM);
		CHECK_EQ(mmap((void *)lo, kept + 2 * PAGE, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
			 MAP_FAILED);
		CHECK_EQ(errno, ENOMEM);
		CHECK_EQ(mmap((void *)s, PAGE, PROT_READ,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0),
			 MAP_FAILED);
		CHECK_EQ(errno, ENOMEM);
		CHECK_EQ(mremap(h, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)s),
			 MAP_FAILED);
		CHECK_EQ(errno, ENOMEM);
		CHECK(l[0] == 'A' && l[PAGE - 1] == 'A' && h[0] == 'B' && h[PAGE - 1] == 'B');
	} else {
		char *m = mmap((void *)s, PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		CHECK_EQ((uintptr_t)m, s);
		if (m == (char *)s) {
			CHECK_EQ(m[0], 0);
			m[0] = 1;
			CHECK_EQ(munmap(m, PAGE), 0);
		}
	}

	/* mprotect over the lower page and the range: the lower page changes, then ENOMEM. */
	CHECK_ERR(mprotect(l, 3 * PAGE, PROT_READ), ENOMEM);
	catch_faults();
	if (!sigsetjmp(jb, 1)) {
		l[0] = 'X';
		NOT_REACHED("the page below stayed writable");
	} else {
		CHECK_EQ(got.si_signo, SIGSEGV);
		CHECK_EQ(got.si_code, SEGV_ACCERR);
		CHECK_EQ((uintptr_t)got.si_addr, lo);
	}
	signal(SIGSEGV, SIG_DFL);
	CHECK_EQ(l[0], 'A');

	/* munmap over all of it: the guest's pages go, the call succeeds. */
	CHECK_EQ(munmap(l, kept + 2 * PAGE), 0);
	CHECK(!maps_overlap(lo, hi + PAGE));
	catch_faults();
	if (!sigsetjmp(jb, 1)) {
		(void)*(volatile char *)hi;
		NOT_REACHED("the page above is still there");
	} else {
		CHECK_MAPERR(hi, got_rip);
	}
	signal(SIGSEGV, SIG_DFL);
	char *again = mmap((void *)lo, PAGE, PROT_READ,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	CHECK_EQ((uintptr_t)again, lo);
	CHECK_EQ(again[0], 0);
	CHECK_EQ(munmap(again, PAGE), 0);
}

/* A process that jumps to the gadget with registers for kill(parent, SIGKILL), from its main
 * thread or from another: it dies of SIGSEGV, alone; its parent and a sibling go on. */
static void *jumper(void *arg)
{
	call_with((uintptr_t)arg, SYS_kill, getppid(), SIGKILL);
	return NULL;
}

static void dies_alone(uintptr_t s, int threaded)
{
	int st;
	pid_t sibling = fork();

	if (sibling == 0) {
		pause();
		_exit(0);
	}
	pid_t pid = fork();
	if (pid == 0) {
		if (threaded) {
			pthread_t th;
			if (pthread_create(&th, NULL, jumper, (void *)s) == 0)
				pthread_join(th, NULL);
		} else {
			jumper((void *)s);
		}
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	CHECK_EQ(kill(sibling, 0), 0);
	CHECK_EQ(waitpid(sibling, &st, WNOHANG), 0);
	kill(sibling, SIGKILL);
	CHECK_EQ(waitpid(sibling, &st, 0), sibling);
}

int main(void)
{
	uintptr_t s = find_subject();

	if (!s)
		return check_done();
	no_mapping_there(s);
	neighbours(s);
	dies_alone(s, 0);
	dies_alone(s, 1);
	maybe_save();
	/* The same after a checkpoint. The restored Sentry puts its stub where the saved one was
	 * unless something of its own sits there (its 1 TiB view of the memory file, placed
	 * below a random mmap base, does in about one start in sixty): then a multiple of 4 GiB
	 * lower. */
	s = find_subject();
	no_mapping_there(s);
	neighbours(s);
	return check_done();
}
