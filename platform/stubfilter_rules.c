/* The stubs' allowlist (docs/security.md, "Layer 4"): exactly the calls the Sentry injects
 * into a stub or the factory, and under the seccomp platform the handler's own, each pinned
 * to the form it is made in, compiled with libseccomp. The build compiles it once with
 * placeholders for the descriptors and addresses a start knows only then
 * (scripts/gen-seccomp.c); platform/stubfilter.c puts them in and the prefix before it. */
#include "platform/stub.h"
#include "platform/systrap.h"

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
#include <sys/socket.h>
#include <unistd.h>

/* The handler's calls name its own thread area, at a fixed offset in it: an address with the
 * stub's high bits (the first 128 MiB from its base hold the stub's pages and every area) and
 * that offset within a 16 KiB area. */
#define STUB_WINDOW (128UL << 20)
#define AREA_MASK (~(uint64_t)(STUB_WINDOW - 1) | (SYSTRAP_AREA - 1))
#define IN_AREA(arg, base, off) SCMP_CMP((arg), SCMP_CMP_MASKED_EQ, AREA_MASK, (base) + (off))

/* A mapping call (NR, with the comparisons of ARGS on its other arguments) only where it does
 * not start in the stub's range [base, base + len): below it, or above. Seccomp cannot add a
 * length to an address, so one that starts below and reaches into the range still passes; the
 * Sentry never injects one (sentry/mm.c clips every range around the stub). */
static int add_outside_stub(scmp_filter_ctx ctx, int nr, const struct stub_filter_spec *spec,
			    unsigned int n, const struct scmp_arg_cmp *args)
{
	struct scmp_arg_cmp cmp[6];
	int err;

	if (!spec->stub_len)
		return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, n, args);
	for (unsigned int i = 0; i < n; i++)
		cmp[i + 1] = args[i];
	cmp[0] = SCMP_A0(SCMP_CMP_LT, spec->stub_base);
	if ((err = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, n + 1, cmp)))
		return err;
	cmp[0] = SCMP_A0(SCMP_CMP_GE, spec->stub_base + spec->stub_len);
	return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, n + 1, cmp);
}

int stub_filter_allowlist(const struct stub_filter_spec *spec, int fd)
{
	/* Under the seccomp platform a call refused here traps to the stub's handler, which the
	 * Sentry answers as Linux answers a jump to an unmapped page: SIGSEGV at the gadget. Under
	 * ptrace nothing of the guest's reaches this (SYSEMU stops it first): a refused call is
	 * the stub's own bug, and kills it. */
	scmp_filter_ctx ctx =
	    seccomp_init(spec->sysfd >= 0 ? SCMP_ACT_TRAP : SCMP_ACT_KILL_PROCESS);
	int err;

	if (!ctx)
		return -ENOMEM;
	if ((err = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)))
		goto out;
	/* Guest memory: pages of the memory file at fixed guest addresses, the only mappings
	 * the Sentry makes (sentry/mm.c), and the memory file is the stub's one descriptor;
	 * none of them, nor a change of protection or an unmapping, starts in the stub. */
	const struct scmp_arg_cmp guest_map[2] = {SCMP_A3(SCMP_CMP_EQ, MAP_SHARED | MAP_FIXED),
						  SCMP_A4(SCMP_CMP_EQ, (uint64_t)spec->memfd)};
	if (spec->sysfd >= 0 && (!spec->stub_len || (spec->stub_base & (STUB_WINDOW - 1)))) {
		err = -EINVAL; /* the handler's rows need the stub's place */
		goto out;
	}
	/* The parameter page's message (platform/stubfd.c), which no stub can write. */
	const uint64_t fdmsg = STUB_FDMSG_ADDR(spec->stub_base);
	/* The same, made present at once: a program's text from the file cache (sentry/mm.c). */
	const struct scmp_arg_cmp guest_map_populated[2] = {
	    SCMP_A3(SCMP_CMP_EQ, MAP_SHARED | MAP_FIXED | MAP_POPULATE),
	    SCMP_A4(SCMP_CMP_EQ, (uint64_t)spec->memfd)};
	if ((err = add_outside_stub(ctx, SCMP_SYS(mmap), spec, 2, guest_map)) ||
	    (err = add_outside_stub(ctx, SCMP_SYS(mmap), spec, 2, guest_map_populated)) ||
	    (err = add_outside_stub(ctx, SCMP_SYS(mprotect), spec, 0, NULL)) ||
	    (err = add_outside_stub(ctx, SCMP_SYS(munmap), spec, 0, NULL)) ||
	    /* A guest thread: a host thread of this process, traced from its birth. */
	    (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				    SCMP_A0(SCMP_CMP_EQ, spec->thread_flags))) ||
	    (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(exit), 0)) ||
	    /* Write tracking after a checkpoint and lazy restores (docs/checkpoint.md): a
	     * userfaultfd only the stub can make for its address space, which it sends the
	     * Sentry on the stubs' socket and then closes (docs/security.md, "A stub's
	     * userfaultfd"). */
	    (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(userfaultfd), 1,
				    SCMP_A0(SCMP_CMP_EQ, O_CLOEXEC | O_NONBLOCK))) ||
	    (err = seccomp_rule_add(
		 ctx, SCMP_ACT_ALLOW, SCMP_SYS(userfaultfd), 1,
		 SCMP_A0(SCMP_CMP_EQ, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY))) ||
	    (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendmsg), 3,
				    SCMP_A0(SCMP_CMP_EQ, (uint64_t)spec->fdsock),
				    SCMP_A1(SCMP_CMP_EQ, fdmsg),
				    SCMP_A2(SCMP_CMP_EQ, MSG_DONTWAIT | MSG_NOSIGNAL))) ||
	    (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(close), 0)))
		goto out;
	/* The seccomp platform's handler (docs/security.md, "Layer 4"), each call in exactly
	 * the form stub.c makes it, naming its own area: a slot of the areas' memory file mapped
	 * as an area (never slot 0, the page shared with the Sentry and every stub), the 8 bytes
	 * of the area's `one` written to the Sentry's doorbell, a wait (no timeout) and a wake of
	 * one on the area's state word, rt_sigreturn, its own policy, and a new thread (its stack
	 * the top of its area, its tid there) that takes its area's stack and only unblocks
	 * signals. */
	const uint64_t base = spec->stub_base;
	if (spec->sysfd >= 0 &&
	    ((err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 6, IN_AREA(0, base, 0),
				     SCMP_A1(SCMP_CMP_EQ, SYSTRAP_AREA),
				     SCMP_A2(SCMP_CMP_EQ, PROT_READ | PROT_WRITE),
				     SCMP_A3(SCMP_CMP_EQ, MAP_SHARED | MAP_FIXED),
				     SCMP_A4(SCMP_CMP_EQ, (uint64_t)spec->sysfd),
				     SCMP_A5(SCMP_CMP_GE, SYSTRAP_AREA))) ||
	     (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 3,
				     SCMP_A0(SCMP_CMP_EQ, (uint64_t)spec->doorbell),
				     IN_AREA(1, base, offsetof(struct systrap_area, one)),
				     SCMP_A2(SCMP_CMP_EQ, 8))) ||
	     (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(futex), 3,
				     IN_AREA(0, base, offsetof(struct systrap_area, state)),
				     SCMP_A1(SCMP_CMP_EQ, FUTEX_WAIT), SCMP_A3(SCMP_CMP_EQ, 0))) ||
	     (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(futex), 3,
				     IN_AREA(0, base, offsetof(struct systrap_area, state)),
				     SCMP_A1(SCMP_CMP_EQ, FUTEX_WAKE), SCMP_A2(SCMP_CMP_EQ, 1))) ||
	     (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(rt_sigreturn), 0)) ||
	     /* Its own thread's policy, SCHED_BATCH or back (platform/placement.c). */
	     (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sched_setscheduler), 3,
				     SCMP_A0(SCMP_CMP_EQ, 0), SCMP_A1(SCMP_CMP_EQ, SCHED_BATCH),
				     IN_AREA(2, base, offsetof(struct systrap_area, args[5])))) ||
	     (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sched_setscheduler), 3,
				     SCMP_A0(SCMP_CMP_EQ, 0), SCMP_A1(SCMP_CMP_EQ, SCHED_OTHER),
				     IN_AREA(2, base, offsetof(struct systrap_area, args[5])))) ||
	     (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sigaltstack), 2,
				     IN_AREA(0, base, SYSTRAP_START_SS_OFF),
				     SCMP_A1(SCMP_CMP_EQ, 0))) ||
	     (err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(rt_sigprocmask), 4,
				     SCMP_A0(SCMP_CMP_EQ, SIG_UNBLOCK),
				     IN_AREA(1, base, SYSTRAP_START_SET_OFF),
				     SCMP_A2(SCMP_CMP_EQ, 0), SCMP_A3(SCMP_CMP_EQ, 8))) ||
	     (err = seccomp_rule_add(
		  ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 5,
		  SCMP_A0(SCMP_CMP_EQ, spec->systrap_thread_flags),
		  IN_AREA(1, base, SYSTRAP_CLONE_STACK_OFF), SCMP_A2(SCMP_CMP_EQ, 0),
		  IN_AREA(3, base, offsetof(struct systrap_area, tid)), SCMP_A4(SCMP_CMP_EQ, 0)))))
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
	err = seccomp_export_bpf(ctx, fd);
out:
	seccomp_release(ctx);
	return err;
}
