/*
 * t_membarrier: QUERY offers the global, private expedited and sync-core commands and
 * GET_REGISTRATIONS; a private expedited barrier before its registration is EPERM, after it 0
 * (with a thread running beside it); registrations belong to the address space: kept by fork
 * and across a checkpoint, dropped by exec. Flags, unknown commands and RSEQ (not offered
 * here) are EINVAL; the global barriers need no registration.
 */
#include "check.h"
#include <pthread.h>
#include <sys/wait.h>

/* <linux/membarrier.h>'s commands (musl has no kernel headers). */
enum {
	MEMBARRIER_CMD_QUERY = 0,
	MEMBARRIER_CMD_GLOBAL = 1 << 0,
	MEMBARRIER_CMD_GLOBAL_EXPEDITED = 1 << 1,
	MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED = 1 << 2,
	MEMBARRIER_CMD_PRIVATE_EXPEDITED = 1 << 3,
	MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED = 1 << 4,
	MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE = 1 << 5,
	MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE = 1 << 6,
	MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ = 1 << 7,
	MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ = 1 << 8,
	MEMBARRIER_CMD_GET_REGISTRATIONS = 1 << 9,
};

static long mb(int cmd, unsigned int flags)
{
	return syscall(SYS_membarrier, cmd, flags, 0);
}

static volatile int stop;

static void *spin(void *arg)
{
	(void)arg;
	while (!stop)
		__asm__ volatile("pause");
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "after-exec") ==
			    0) { /* after exec: a new address space has no registration */
		CHECK_EQ(mb(MEMBARRIER_CMD_GET_REGISTRATIONS, 0), 0);
		CHECK_ERR(mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0), EPERM);
		return check_failures ? 1 : 0;
	}
	long want =
	    MEMBARRIER_CMD_GLOBAL | MEMBARRIER_CMD_GLOBAL_EXPEDITED |
	    MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED | MEMBARRIER_CMD_PRIVATE_EXPEDITED |
	    MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED | MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE |
	    MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE | MEMBARRIER_CMD_GET_REGISTRATIONS;
	long q = mb(MEMBARRIER_CMD_QUERY, 0);
	CHECK_EQ(q & want, want);
	CHECK_EQ(q & MEMBARRIER_CMD_QUERY, 0);

	CHECK_EQ(mb(MEMBARRIER_CMD_GET_REGISTRATIONS, 0), 0);
	CHECK_ERR(mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0), EPERM);
	CHECK_ERR(mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0), EPERM);
	CHECK_EQ(mb(MEMBARRIER_CMD_GLOBAL, 0), 0);
	CHECK_EQ(mb(MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0), 0);

	CHECK_EQ(mb(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0), 0);
	CHECK_EQ(mb(MEMBARRIER_CMD_GET_REGISTRATIONS, 0),
		 MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED);
	CHECK_EQ(mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0), 0);
	/* The plain registration does not cover the sync-core barrier. */
	CHECK_ERR(mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0), EPERM);
	CHECK_EQ(mb(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0), 0);
	CHECK_EQ(mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0), 0);
	CHECK_EQ(mb(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0), 0);
	long all = MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED |
		   MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE |
		   MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED;
	CHECK_EQ(mb(MEMBARRIER_CMD_GET_REGISTRATIONS, 0), all);
	CHECK_EQ(mb(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0), 0); /* again: no change */

	/* Barriers with another thread of the process running on a CPU. */
	pthread_t th;
	CHECK_EQ(pthread_create(&th, NULL, spin, NULL), 0);
	for (int i = 0; i < 20; i++) {
		CHECK_EQ(mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0), 0);
		CHECK_EQ(mb(MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0), 0);
	}
	maybe_save();
	CHECK_EQ(mb(MEMBARRIER_CMD_GET_REGISTRATIONS, 0), all);
	CHECK_EQ(mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0), 0);
	stop = 1;
	CHECK_EQ(pthread_join(th, NULL), 0);

	/* Errors. */
	CHECK_ERR(mb(MEMBARRIER_CMD_QUERY, 1), EINVAL);
	CHECK_ERR(mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 1), EINVAL);
	CHECK_ERR(mb(MEMBARRIER_CMD_GLOBAL, 1), EINVAL);
	CHECK_ERR(mb(1 << 20, 0), EINVAL);
	CHECK_ERR(mb(-1, 0), EINVAL);
	if (!(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ))
		CHECK_ERR(mb(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0), EINVAL);

	/* fork keeps the registrations, exec drops them. */
	pid_t pid = fork();
	if (pid == 0) {
		if (mb(MEMBARRIER_CMD_GET_REGISTRATIONS, 0) != all ||
		    mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) != 0)
			_exit(2);
		execl(argv[0], argv[0], "after-exec", (char *)NULL);
		_exit(3);
	}
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return check_done();
}
