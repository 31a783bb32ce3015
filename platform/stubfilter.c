/* The seccomp filters of the stub factory and of the stubs (docs/security.md, "The stubs'
 * filter"): the factory's entry installs its own before it first stops, and every stub forked
 * from it gets its own stacked on top before any guest instruction runs. libseccomp cannot
 * test the instruction pointer, so a hand-written prefix sends every system call not made
 * from the stub page's syscall instruction to SIGSYS (under SYSEMU only the vsyscall page's
 * get there, for the Sentry to emulate); behind it, an allowlist built with libseccomp admits
 * exactly the calls the Sentry injects, with their arguments pinned where they can be, and
 * kills the process for anything else. */
#include "platform/stub.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#define PREFIX_LEN 6

int stub_filter_build(struct sock_filter *out, size_t max, const struct stub_filter_spec *spec)
{
	const uint64_t ip = spec->ip, ip2 = spec->ip2 ? spec->ip2 : spec->ip;
	/* seccomp sees the address after the syscall instruction; both gadgets lie in the one
	 * code page, so their high halves are the same. */
	const struct sock_filter prefix[PREFIX_LEN] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)ip, 1, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)ip2, 0, 2),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		     offsetof(struct seccomp_data, instruction_pointer) + 4),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(ip >> 32), 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
	};
	if ((ip >> 32) != (ip2 >> 32))
		return -EINVAL;
	/* Under the seccomp platform a call refused here traps to the stub's handler, which the
	 * Sentry answers as Linux answers a jump to an unmapped page: SIGSEGV at the gadget. Under
	 * ptrace nothing of the guest's reaches this (SYSEMU stops it first): a refused call is
	 * the stub's own bug, and kills it. */
	scmp_filter_ctx ctx =
	    seccomp_init(spec->sysfd >= 0 ? SCMP_ACT_TRAP : SCMP_ACT_KILL_PROCESS);
	int err, fd = -1;

	if (!ctx)
		return -ENOMEM;
	if ((err = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)))
		goto out;
	/* Guest memory: pages of the memory file at fixed guest addresses, the only mappings
	 * the Sentry makes (sentry/mm.c), and the memory file is the stub's one descriptor. */
	if ((err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 2,
				    SCMP_A3(SCMP_CMP_EQ, MAP_SHARED | MAP_FIXED),
				    SCMP_A4(SCMP_CMP_EQ, (uint64_t)spec->memfd))) ||
	    (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 0)) ||
	    (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(munmap), 0)) ||
	    /* A guest thread: a host thread of this process, traced from its birth. */
	    (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				    SCMP_A0(SCMP_CMP_EQ, spec->thread_flags))) ||
	    (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(exit), 0)) ||
	    /* Write tracking after a checkpoint and lazy restores (docs/checkpoint.md): a
	     * userfaultfd only the stub can make for its address space, which the Sentry takes
	     * with pidfd_getfd and then closes in the stub. */
	    (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(userfaultfd), 1,
				    SCMP_A0(SCMP_CMP_EQ, O_CLOEXEC | O_NONBLOCK))) ||
	    (err = seccomp_rule_add(
		 ctx, SCMP_ACT_ALLOW, SCMP_SYS(userfaultfd), 1,
		 SCMP_A0(SCMP_CMP_EQ, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY))) ||
	    (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(close), 0)))
		goto out;
	/* The seccomp platform's handler (docs/security.md): its thread areas are slots of its
	 * own memory file, it rings the Sentry's doorbell and waits on a futex in its area,
	 * returns with rt_sigreturn, and makes its threads itself (their tid cleared in the
	 * area at exit), each taking its area as its signal stack with every signal unblocked. */
	if (spec->sysfd >= 0 &&
	    ((err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 2,
				     SCMP_A3(SCMP_CMP_EQ, MAP_SHARED | MAP_FIXED),
				     SCMP_A4(SCMP_CMP_EQ, (uint64_t)spec->sysfd))) ||
	     (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 2,
				     SCMP_A0(SCMP_CMP_EQ, (uint64_t)spec->doorbell),
				     SCMP_A2(SCMP_CMP_EQ, 8))) ||
	     (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(futex), 1,
				     SCMP_A1(SCMP_CMP_EQ, FUTEX_WAIT))) ||
	     (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(futex), 1,
				     SCMP_A1(SCMP_CMP_EQ, FUTEX_WAKE))) ||
	     (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(rt_sigreturn), 0)) ||
	     (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sigaltstack), 0)) ||
	     (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(rt_sigprocmask), 0)) ||
	     (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				     SCMP_A0(SCMP_CMP_EQ, spec->systrap_thread_flags)))))
		goto out;
	/* The factory: a new stub is a fork of it, traced from its birth (CLONE_PTRACE), which
	 * the Sentry makes a session of its own and in which it then installs the stubs'
	 * filter, the one filter this allows: a stub can neither fork nor install another. */
	if (spec->fork_flags &&
	    ((err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				     SCMP_A0(SCMP_CMP_EQ, spec->fork_flags))) ||
	     (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(setsid), 0)) ||
	     /* A stub dies with the factory, which dies with the Sentry (EXITKILL): the
	      * seccomp platform detaches from its stubs. */
	     (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 2,
				     SCMP_A0(SCMP_CMP_EQ, PR_SET_PDEATHSIG),
				     SCMP_A1(SCMP_CMP_EQ, SIGKILL))) ||
	     (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(seccomp), 3,
				     SCMP_A0(SCMP_CMP_EQ, SECCOMP_SET_MODE_FILTER),
				     SCMP_A1(SCMP_CMP_EQ, 0),
				     SCMP_A2(SCMP_CMP_EQ, spec->stub_prog)))))
		goto out;
	fd = memfd_create("stub-filter", MFD_CLOEXEC);
	if (fd < 0 || (err = seccomp_export_bpf(ctx, fd))) {
		err = fd < 0 ? -errno : err;
		goto out;
	}
	off_t len = lseek(fd, 0, SEEK_END);
	size_t n = len > 0 ? (size_t)len / sizeof(struct sock_filter) : 0;
	if (n == 0 || PREFIX_LEN + n > max) {
		err = -E2BIG;
		goto out;
	}
	for (int i = 0; i < PREFIX_LEN; i++)
		out[i] = prefix[i];
	if (pread(fd, out + PREFIX_LEN, n * sizeof(struct sock_filter), 0) !=
	    (ssize_t)(n * sizeof(struct sock_filter))) {
		err = -EIO;
		goto out;
	}
	err = (int)(PREFIX_LEN + n);
out:
	if (fd >= 0)
		close(fd);
	seccomp_release(ctx);
	return err;
}
