/* The guest-side syscall fuzzer: run as init of a sandbox (tests/fuzz/run.sh, under the
 * sanitized Sentry), it forks workers that issue random syscalls with random arguments for
 * SECONDS, and says what it did. What is tested is the Sentry: it must neither crash nor hang
 * whatever a guest asks, and the run ends normally. The guest may ruin itself (unmap its own
 * code, jump through a forged signal frame, block forever): a worker that dies of a signal or
 * stops making progress is replaced by the next one (a stuck worker is killed after a second).
 *
 *   sysfuzz SEED SECONDS
 *
 * Arguments are drawn from classes rather than uniformly: small integers, descriptors, flag
 * bits, raw 64-bit values, and pointers into memory that is read-write (holding strings, an
 * iovec array, a sockaddr and other structs with plausible values), read-only, inaccessible,
 * unmapped, NULL, the top of user space, the stub page's region and kernel addresses. Only
 * what would end the run for no reason is held back: exit and exit_group, fatal signals to
 * anyone (kill & co get a signal every process here ignores or handles), and a fork's child
 * carrying on fuzzing (it exits at once). Workers never write to stdio (it is /dev/null). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NR_MAX 512	      /* the syscall table's size in the Sentry */
#define CALLS_PER_WORKER 3000 /* then a fresh worker: state a worker wrecked goes with it */
#define STUCK_NS 1000000000LL /* a worker without progress this long is killed */
#define WATCHDOG_US 10000     /* SIGALRM ends a call that blocks after this long */
#define AREA (16 * 4096UL)

/* Shared between init and its workers (MAP_SHARED before the forks). */
struct stats {
	volatile uint64_t progress; /* calls made by the current worker */
	volatile long last_nr;
	volatile uint64_t died_after[NR_MAX]; /* the call a worker made last before its death */
	volatile uint64_t calls[NR_MAX];
	volatile uint64_t not_enosys[NR_MAX];
	volatile uint64_t succeeded[NR_MAX];
	volatile uint64_t other_calls; /* numbers outside the table */
};

static struct stats *st;
static uint64_t rng;
static char *rw, *ro, *none, *unmapped;
static pid_t worker_pid;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* --- what the read-write area holds ------------------------------------------------------ */

static const char *const strings[] = {
    "/tmp/fz",
    "/tmp/fz/a",
    "/tmp/fz/b",
    "/proc/self/status",
    "/proc/self/maps",
    "/proc/1/fd",
    "/dev/null",
    "/dev/zero",
    "/etc/passwd",
    ".",
    "..",
    "/",
    "/tmp/fz/sock",
    "",
    "/sys/devices/system/cpu",
    "fz",
    "/proc/sys/kernel/randomize_va_space",
};
#define NSTRINGS (sizeof(strings) / sizeof(strings[0]))
#define STR_OFF(i) (256 * (i)) /* each string at its own 256-byte slot */
#define STRUCT_OFF (256 * 32)  /* plausible structs after the strings */

/* Random bytes, then the strings and structs at their places. */
static void fill_rw(void)
{
	for (size_t i = 0; i < AREA; i += 8) {
		uint64_t v = rnd();
		memcpy(rw + i, &v, 8);
	}
	for (size_t i = 0; i < NSTRINGS; i++)
		strcpy(rw + STR_OFF(i), strings[i]);
	char *s = rw + STRUCT_OFF;
	struct iovec *iov = (struct iovec *)s;
	for (int i = 0; i < 4; i++)
		iov[i] = (struct iovec){rw + 4096 * (i + 4) + below(64), below(8192)};
	s += 4 * sizeof(*iov);
	struct timespec *ts = (struct timespec *)s;
	ts[0] = (struct timespec){0, (long)below(2000000)};
	ts[1] = (struct timespec){0, 0};
	s += 2 * sizeof(*ts);
	struct sockaddr_un *un = (struct sockaddr_un *)s;
	un->sun_family = AF_UNIX;
	strcpy(un->sun_path, "/tmp/fz/sock");
	s += sizeof(*un);
	int *fds = (int *)s;
	for (int i = 0; i < 4; i++)
		fds[i] = (int)below(16);
}

static uint64_t pointer(void)
{
	switch (below(12)) {
	case 0:
	case 1:
		return (uint64_t)(rw + STR_OFF(below(NSTRINGS)));
	case 2:
		return (uint64_t)(rw + STRUCT_OFF + 8 * below(16));
	case 3:
	case 4:
		return (uint64_t)(rw + below(AREA));
	case 5:
		return (uint64_t)(rw + AREA - below(64)); /* running off the end */
	case 6:
		return (uint64_t)(ro + below(AREA));
	case 7:
		return (uint64_t)(none + below(AREA));
	case 8:
		return (uint64_t)(unmapped + below(AREA));
	case 9:
		return below(3) == 0 ? 0 : below(4096);
	case 10:
		return 0x7ffffffff000ULL - below(8192); /* the top of user space */
	default:
		return below(2) ? 0x7e0000000000ULL + below(8192) /* where the stub page goes */
				: 0xffff800000000000ULL + (rnd() & 0xffffffff);
	}
}

static uint64_t argument(void)
{
	switch (below(10)) {
	case 0:
	case 1:
	case 2:
		return pointer();
	case 3:
	case 4:
		return (uint64_t)((int64_t)below(70) - 5); /* small, some negative */
	case 5:
		return below(20); /* a descriptor */
	case 6:
		return 1ULL << below(64);
	case 7:
		return rnd() & rnd(); /* a few bits */
	case 8:
		return (uint64_t)-100; /* AT_FDCWD */
	default:
		return rnd();
	}
}

static long number(void)
{
	switch (below(20)) {
	case 0:
		return (long)below(1100) - 50; /* past the table, and negative */
	case 1:
		return 0x40000000L | (long)below(550); /* the x32 ABI */
	default:
		return (long)below(463);
	}
}

/* --- workers ----------------------------------------------------------------------------- */

static void on_alarm(int sig)
{
	(void)sig;
}

/* A signal every process here either ignores (init) or handles (the worker's SIGALRM) or
 * that does nothing by default. */
static uint64_t harmless_signal(void)
{
	static const int sigs[] = {0, SIGUSR1, SIGUSR2, SIGCHLD, SIGURG, SIGWINCH, SIGALRM};

	return (uint64_t)sigs[below(sizeof(sigs) / sizeof(sigs[0]))];
}

/* Keeps calls that would end the run for nothing from doing so. */
static void tame(long *nr, uint64_t a[6])
{
	switch (*nr) {
	case SYS_exit:
	case SYS_exit_group:
		*nr = SYS_getpid;
		break;
	case SYS_rt_sigreturn: /* on a frame of random bytes: the worker's end, mostly */
		if (below(8))
			*nr = SYS_getpid;
		break;
	case SYS_kill:
	case SYS_tkill:
	case SYS_rt_sigqueueinfo:
		a[1] = harmless_signal();
		break;
	case SYS_tgkill:
	case SYS_rt_tgsigqueueinfo:
		a[2] = harmless_signal();
		break;
	case SYS_pidfd_send_signal:
		a[1] = harmless_signal();
		break;
	case SYS_clone:
		/* A fork-like clone: a new stack or shared memory would be the worker's own
		 * undoing, not the Sentry's. */
		a[0] &= ~(uint64_t)(CLONE_VM | CLONE_VFORK | CLONE_THREAD | CLONE_SIGHAND |
				    CLONE_SETTLS);
		a[1] = 0;
		break;
	case SYS_clone3:
	case SYS_vfork: /* through syscall(3) the child would return on its parent's stack */
		*nr = SYS_fork;
		break;
	case SYS_reboot: /* in a pid namespace, the end of init */
		*nr = SYS_getpid;
		break;
	case SYS_rt_sigaction:
		if (a[0] == SIGALRM) /* the watchdog's */
			a[0] = SIGUSR2;
		break;
	case SYS_prlimit64:
		/* A worker's own limits are its business; init's (RLIMIT_CPU, RLIMIT_NPROC) are
		 * not. */
		a[0] = 0;
		break;
	}
}

static void worker(uint64_t seed, int null)
{
	pid_t me = getpid();
	struct sigaction sa = {.sa_handler = on_alarm};

	rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	sigaction(SIGALRM, &sa, NULL);
	for (int fd = 0; fd < 3; fd++)
		dup2(null, fd);
	close(null);
	mkdir("/tmp/fz", 0777);
	fill_rw();
	for (int i = 0; i < CALLS_PER_WORKER; i++) {
		long nr = number();
		uint64_t a[6];
		for (int k = 0; k < 6; k++)
			a[k] = argument();
		tame(&nr, a);
		if (i % 64 == 0)
			fill_rw();
		st->last_nr = nr;
		struct itimerval watchdog = {{0, 0}, {0, WATCHDOG_US}};
		setitimer(ITIMER_REAL, &watchdog, NULL);
		long r = syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		if (getpid() != me)
			_exit(0); /* a fork's child: the worker is its parent */
		if (nr >= 0 && nr < NR_MAX) {
			st->calls[nr]++;
			if (!(r == -1 && errno == ENOSYS))
				st->not_enosys[nr]++;
			if (r != -1)
				st->succeeded[nr]++;
		} else {
			st->other_calls++;
		}
		st->progress++;
	}
	_exit(0);
}

/* --- init -------------------------------------------------------------------------------- */

/* An area with an unmapped page after it: what runs off its end faults, and lands in nothing
 * of init's. */
static void *map(int prot)
{
	char *p = mmap(NULL, AREA + 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("sysfuzz: mmap");
		exit(2);
	}
	munmap(p + AREA, 4096);
	return p;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: sysfuzz SEED SECONDS\n");
		return 2;
	}
	uint64_t seed = strtoull(argv[1], NULL, 0);
	int64_t deadline = now_ns() + (int64_t)(atof(argv[2]) * 1e9);
	uint64_t workers = 0, died = 0, killed = 0, by_sig[65] = {0};

	/* Far from the areas the workers' pointers go to. */
	st = mmap((void *)0x500000000000, sizeof(*st), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (st == MAP_FAILED) {
		perror("sysfuzz: mmap");
		return 2;
	}
	rw = map(PROT_READ | PROT_WRITE);
	ro = map(PROT_READ | PROT_WRITE);
	rng = seed + 1;
	fill_rw();
	memcpy(ro, rw, AREA);
	mprotect(ro, AREA, PROT_READ);
	none = map(PROT_NONE);
	unmapped = map(PROT_NONE);
	munmap(unmapped, AREA);
	/* Workers' stdio, whatever they did to /dev (a mount over it). */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0) {
		perror("sysfuzz: /dev/null");
		return 2;
	}
	/* Whatever a worker sends init is ignored; SIGCHLD stays, for waitpid. */
	for (int s = 1; s < 65; s++)
		if (s != SIGKILL && s != SIGSTOP && s != SIGCHLD)
			signal(s, SIG_IGN);

	while (now_ns() < deadline) {
		st->progress = 0;
		worker_pid = fork();
		if (worker_pid < 0) {
			perror("sysfuzz: fork");
			return 1;
		}
		if (worker_pid == 0)
			worker(seed + workers, null);
		workers++;
		uint64_t seen = 0;
		int64_t since = now_ns();
		bool stuck = false;
		int status;
		for (;;) {
			pid_t w = waitpid(-1, &status, WNOHANG);
			if (w == worker_pid)
				break;
			if (w > 0)
				continue; /* a fork's child the worker left behind */
			if (st->progress != seen) {
				seen = st->progress;
				since = now_ns();
			} else if (now_ns() - since > STUCK_NS || now_ns() > deadline) {
				kill(worker_pid, SIGKILL);
				if (!stuck && now_ns() <= deadline)
					killed++; /* once, however long its death takes */
				stuck = true;
				usleep(2000);
				continue;
			}
			usleep(2000);
		}
		if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) {
			died++;
			by_sig[WTERMSIG(status) <= 64 ? WTERMSIG(status) : 0]++;
			if (st->last_nr >= 0 && st->last_nr < NR_MAX)
				st->died_after[st->last_nr]++;
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	kill(-1, SIGKILL); /* what workers' forks left running */
	while (waitpid(-1, NULL, 0) > 0)
		;

	uint64_t calls = st->other_calls, tried = 0, answered = 0, succeeded = 0;
	for (int nr = 0; nr < NR_MAX; nr++) {
		calls += st->calls[nr];
		tried += st->calls[nr] > 0;
		answered += st->not_enosys[nr] > 0;
		succeeded += st->succeeded[nr] > 0;
	}
	printf("sysfuzz: seed %llu: %llu calls by %llu workers (%llu died of their own signals, "
	       "%llu stuck and killed)\n",
	       (unsigned long long)seed, (unsigned long long)calls, (unsigned long long)workers,
	       (unsigned long long)died, (unsigned long long)killed);
	printf("sysfuzz: syscall numbers tried: %llu of 0..%d; answered other than ENOSYS: %llu; "
	       "succeeded at least once: %llu\n",
	       (unsigned long long)tried, NR_MAX - 1, (unsigned long long)answered,
	       (unsigned long long)succeeded);
	/* The numbers, for run.sh to set against the Sentry's syscall table. */
	printf("sysfuzz: answered:");
	for (int nr = 0; nr < NR_MAX; nr++)
		if (st->not_enosys[nr])
			printf(" %d", nr);
	printf("\nsysfuzz: succeeded:");
	for (int nr = 0; nr < NR_MAX; nr++)
		if (st->succeeded[nr])
			printf(" %d", nr);
	printf("\n");
	printf("sysfuzz: worker deaths by signal:");
	for (int s = 1; s < 65; s++)
		if (by_sig[s]) {
			if (sigabbrev_np(s))
				printf(" SIG%s %llu", sigabbrev_np(s),
				       (unsigned long long)by_sig[s]);
			else
				printf(" signal %d %llu", s, (unsigned long long)by_sig[s]);
		}
	printf("\n");
	printf("sysfuzz: the last call of workers that died:");
	for (int nr = 0; nr < NR_MAX; nr++)
		if (st->died_after[nr])
			printf(" %d:%llu", nr, (unsigned long long)st->died_after[nr]);
	printf("\n");
	return 0;
}
