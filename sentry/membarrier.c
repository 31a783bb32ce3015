/* membarrier(2). The Sentry serialises syscalls, but guest threads run in parallel on host
 * CPUs, so a guest's barrier must reach every CPU that runs guest code at that moment: a
 * thread stopped in the Sentry has passed a context switch (a full barrier) already, a running
 * one has not. The host does that for us: the Sentry registers for the host's global expedited
 * barrier before it forks the stub factory (a registration lives in the mm and fork keeps it),
 * so every stub is registered, and a guest barrier is one host MEMBARRIER_CMD_GLOBAL_EXPEDITED,
 * an IPI to each CPU running a stub thread. On x86 the IPI returns to user mode through IRET,
 * which serialises the core: that is the SYNC_CORE variant too (Linux's own x86 argument).
 * A host without it (nohz_full, an old kernel) gets the slow MEMBARRIER_CMD_GLOBAL.
 * The guest's registrations are per address space (mm->membarrier), kept across fork, dropped
 * by exec, saved with the mm. Restartable sequences are not offered, so the RSEQ commands are
 * EINVAL, as on a Linux built without CONFIG_RSEQ. */
#include "sentry/membarrier.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sentry/mm.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"

#ifndef MEMBARRIER_CMD_GET_REGISTRATIONS
#define MEMBARRIER_CMD_GET_REGISTRATIONS (1 << 9) /* Linux 6.3 */
#endif

/* The commands offered: all but the RSEQ ones. */
#define OFFERED                                                                                    \
	(MEMBARRIER_CMD_GLOBAL | MEMBARRIER_CMD_GLOBAL_EXPEDITED |                                 \
	 MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED | MEMBARRIER_CMD_PRIVATE_EXPEDITED |             \
	 MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED | MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE |  \
	 MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE | MEMBARRIER_CMD_GET_REGISTRATIONS)

static int host_cmd = -1; /* the host barrier that reaches the stubs, or -1: none */

void membarrier_host_init(void)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0)
		host_cmd = MEMBARRIER_CMD_GLOBAL_EXPEDITED;
	else if (syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0) > 0 &&
		 (syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0) & MEMBARRIER_CMD_GLOBAL))
		host_cmd = MEMBARRIER_CMD_GLOBAL;
}

static long barrier(void)
{
	if (host_cmd < 0 || syscall(SYS_membarrier, host_cmd, 0, 0) != 0)
		return -EINVAL;
	return 0;
}

/* The commands the guest is told about: the barriers only where the host gives one. */
static long offered(void)
{
	return host_cmd < 0 ? MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED |
				  MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED |
				  MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE |
				  MEMBARRIER_CMD_GET_REGISTRATIONS
			    : OFFERED;
}

long sys_membarrier(struct task *t, const unsigned long *a)
{
	int cmd = arg_int(a, 0);
	unsigned int flags = (unsigned int)a[1];
	struct mm *mm = t->mm;

	if (flags)
		return -EINVAL; /* MEMBARRIER_CMD_FLAG_CPU is for the RSEQ command only */
	switch (cmd) {
	case MEMBARRIER_CMD_QUERY:
		return offered();
	case MEMBARRIER_CMD_GLOBAL:
	case MEMBARRIER_CMD_GLOBAL_EXPEDITED:
		return barrier();
	case MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED:
	case MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED:
	case MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE:
		mm->membarrier |= cmd;
		return 0;
	case MEMBARRIER_CMD_PRIVATE_EXPEDITED:
		if (!(mm->membarrier & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED))
			return -EPERM;
		return barrier();
	case MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE:
		if (!(mm->membarrier & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE))
			return -EPERM;
		return barrier();
	case MEMBARRIER_CMD_GET_REGISTRATIONS:
		return mm->membarrier;
	default:
		return -EINVAL;
	}
}
