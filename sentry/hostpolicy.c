/* The Sentry's own seccomp allowlist, installed at the lock (docs/security.md has every row with
 * its reason; sentry/hostpolicy_rules.c holds them): exactly the host system calls a locked
 * Sentry makes, anything else kills it. The build compiled the rows with libseccomp into the
 * programs of gen/hostpolicy_bpf.h, so installing one is a single seccomp call; and the
 * --debug-host-syscalls report of a refused call. */
#include "sentry/hostpolicy.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <ucontext.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hostpolicy_bpf.h"

#define SYSCALL_MAX 512
static const char *const names[SYSCALL_MAX] = {
#include "syscall_names.h"
};

const char *hostpolicy_syscall_name(long nr)
{
	return nr >= 0 && nr < SYSCALL_MAX ? names[nr] : NULL;
}

/* --debug-host-syscalls: name the call, make it fail with ENOSYS, and go on. Only
 * async-signal-safe calls: write(2) of a line built by hand. */
static void report_refused(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	char line[160], num[24];
	const char *name = hostpolicy_syscall_name(si->si_syscall);
	int n = 0, k = 0;
	unsigned long v = (unsigned long)si->si_syscall;

	(void)sig;
	do
		num[k++] = (char)('0' + v % 10);
	while ((v /= 10) && k < (int)sizeof(num));
#define PUT(s)                                                                                     \
	for (const char *p_ = (s); *p_ && n < (int)sizeof(line) - 1; p_++)                         \
		line[n++] = *p_;
	PUT("minisentry: host syscall ");
	while (k && n < (int)sizeof(line) - 1)
		line[n++] = num[--k];
	PUT(" (");
	PUT(name ? name : "?");
	PUT(") is not in the Sentry's seccomp allowlist: ENOSYS\n");
#undef PUT
	if (write(2, line, n) < 0) {
		/* Nowhere else to say it. */
	}
	uc->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
}

const struct sock_filter *hostpolicy_program(enum confine_debug debug, bool host_network,
					     size_t *len)
{
#if defined(__SANITIZE_ADDRESS__)
	const int san = 1;
#else
	const int san = 0;
#endif
	if (debug != CONFINE_DEBUG_OFF && debug != CONFINE_DEBUG_TRAP && debug != CONFINE_DEBUG_LOG)
		return NULL;
	*len = hostpolicy_bpf[debug][host_network][san].len;
	return hostpolicy_bpf[debug][host_network][san].prog;
}

int hostpolicy_install(enum confine_debug debug, bool host_network)
{
	struct sock_fprog prog;
	size_t len;

	if (!(prog.filter = (struct sock_filter *)hostpolicy_program(debug, host_network, &len)))
		return -EINVAL;
	prog.len = (unsigned short)len;
	if (debug == CONFINE_DEBUG_TRAP) {
		struct sigaction sa = {.sa_sigaction = report_refused, .sa_flags = SA_SIGINFO};
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGSYS, &sa, NULL))
			return -errno;
	}
	/* What libseccomp's seccomp_load did: no_new_privs (set already at the lock), then the
	 * filter, with no flag. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return -errno;
	return 0;
}
