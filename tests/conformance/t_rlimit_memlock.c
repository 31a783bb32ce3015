/*
 * t_rlimit_memlock: memory locks count against RLIMIT_MEMLOCK as in Linux: for a user without
 * CAP_IPC_LOCK a zero limit is EPERM and locking past the limit ENOMEM (pages locked twice
 * count once, munlock gives them back, a fork's child inherits no locks); root locks past it;
 * unmapped ranges are ENOMEM and bad flags EINVAL; /proc/self/status's VmLck counts them.
 * RLIMIT_CORE reads back what was set.
 */
#include "check.h"
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define UID 54321
#define KB 1024UL

/* VmLck from /proc/self/status in kB, or -1 without /proc. */
static long vm_lck_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static int user_part(char *p)
{
	struct rlimit zero = {0, 0}, lim = {64 * KB, 64 * KB};

	if (setrlimit(RLIMIT_MEMLOCK, &lim) != 0)
		return 20;
	if (setresuid(UID, UID, UID) != 0)
		return 10;
	if (mlock(p, 32 * KB) != 0)
		return 11;
	if (mlock(p, 32 * KB) != 0 || mlock(p + 16 * KB, 32 * KB) != 0)
		return 12; /* 48 KiB locked in all */
	maybe_save();
	errno = 0;
	if (mlock(p + 48 * KB, 32 * KB) != -1 || errno != ENOMEM)
		return 13;
	if (munlock(p, 48 * KB) != 0 || mlock(p + 48 * KB, 64 * KB) != 0)
		return 14;
	pid_t pid = fork();
	if (pid == 0)
		_exit(mlock(p, 64 * KB) == 0 ? 0 : 1); /* the parent's locks are not the child's */
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 15;
	if (munlockall() != 0)
		return 16;
	errno = 0;
	if (mlockall(MCL_CURRENT) != -1 || errno != ENOMEM)
		return 17;
	if (setrlimit(RLIMIT_MEMLOCK, &zero) != 0)
		return 18;
	errno = 0;
	if (mlock(p, 4 * KB) != -1 || errno != EPERM)
		return 19;
	return 0;
}

int main(void)
{
	char *p = mmap(NULL, 256 * KB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	memset(p, 1, 256 * KB);

	/* Root holds CAP_IPC_LOCK: no limit applies. */
	struct rlimit orig, lim = {0, RLIM_INFINITY}, got;
	CHECK_EQ(getrlimit(RLIMIT_MEMLOCK, &orig), 0);
	if (getuid() == 0) {
		lim.rlim_max = orig.rlim_max;
		CHECK_EQ(setrlimit(RLIMIT_MEMLOCK, &lim), 0);
		CHECK_EQ(mlock(p, 128 * KB), 0);
		long lck = vm_lck_kb();
		CHECK(lck == 128 ||
		      (lck == -1 && !in_sandbox())); /* natively, /proc may be absent */
		CHECK_EQ(munlock(p, 128 * KB), 0);
		lck = vm_lck_kb();
		CHECK(lck == 0 || (lck == -1 && !in_sandbox()));
		CHECK_EQ(setrlimit(RLIMIT_MEMLOCK, &orig), 0);
	}
	CHECK_EQ(munlock(p, 256 * KB), 0);
	CHECK_ERR(munmap(p + 128 * KB, 4 * KB) ? -1 : mlock(p + 124 * KB, 8 * KB), ENOMEM);
	CHECK_ERR(mlock2(p, 4 * KB, 0x100), EINVAL);
	CHECK_ERR(mlockall(0), EINVAL);
	CHECK_ERR(mlockall(MCL_ONFAULT), EINVAL);

	/* RLIMIT_CORE is kept and read back. */
	CHECK_EQ(getrlimit(RLIMIT_CORE, &orig), 0);
	lim.rlim_cur = 0;
	lim.rlim_max = orig.rlim_max;
	CHECK_EQ(setrlimit(RLIMIT_CORE, &lim), 0);
	CHECK_EQ(getrlimit(RLIMIT_CORE, &got), 0);
	CHECK_EQ(got.rlim_cur, 0);
	CHECK_EQ(got.rlim_max, orig.rlim_max);

	/* A user without CAP_IPC_LOCK, in a child (natively without real root, unshare -r maps
	 * no other uid: that part is skipped there). */
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(user_part(p));
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	if (!(WEXITSTATUS(status) == 10 && !in_sandbox()))
		CHECK_EQ(WEXITSTATUS(status), 0);
	return check_done();
}
