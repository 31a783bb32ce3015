/* Signal state syscalls. Handlers and masks are kept per task; delivery comes with the
 * processes milestone. */
#include <errno.h>
#include <signal.h>

#include "sentry/mm.h"
#include "sentry/syscalls.h"
#include "sentry/task.h"

#define SIGBIT(s) (1ULL << ((s) - 1))
#define KNOWN_SA_FLAGS                                                                    \
	(SA_NOCLDSTOP | SA_NOCLDWAIT | SA_SIGINFO | SA_ONSTACK | SA_RESTART | SA_NODEFER |    \
	 SA_RESETHAND | 0x800 /* SA_EXPOSE_TAGBITS */ | 0x04000000 /* SA_RESTORER */)
#define UNBLOCKABLE (SIGBIT(SIGKILL) | SIGBIT(SIGSTOP))

SYSCALL_DECL(rt_sigaction)
{
	int sig = (int)a[0];
	struct ksigaction act;

	if (a[3] != sizeof(uint64_t))
		return -EINVAL;
	if (sig < 1 || sig > NSIG_GUEST)
		return -EINVAL;
	if (a[1] && (sig == SIGKILL || sig == SIGSTOP))
		return -EINVAL;
	if (a[1] && copy_in(t->mm, &act, a[1], sizeof(act)))
		return -EFAULT;
	if (a[2] && copy_out(t->mm, a[2], &t->sighand->act[sig - 1], sizeof(act)))
		return -EFAULT;
	if (a[1]) {
		act.mask &= ~UNBLOCKABLE;
		act.flags &= KNOWN_SA_FLAGS; /* unknown bits read back as clear, as on Linux */
		t->sighand->act[sig - 1] = act;
	}
	return 0;
}

SYSCALL_DECL(rt_sigprocmask)
{
	uint64_t set, old = t->sigmask;

	if (a[3] != sizeof(uint64_t))
		return -EINVAL;
	if (a[1]) {
		if (copy_in(t->mm, &set, a[1], sizeof(set)))
			return -EFAULT;
		switch ((int)a[0]) {
		case SIG_BLOCK:
			t->sigmask |= set;
			break;
		case SIG_UNBLOCK:
			t->sigmask &= ~set;
			break;
		case SIG_SETMASK:
			t->sigmask = set;
			break;
		default:
			return -EINVAL;
		}
		t->sigmask &= ~UNBLOCKABLE;
	}
	if (a[2] && copy_out(t->mm, a[2], &old, sizeof(old))) {
		t->sigmask = old;
		return -EFAULT;
	}
	return 0;
}
