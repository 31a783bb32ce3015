/* The guests' seccomp: strict mode and filter stacks, checked and run by the Sentry on every
 * syscall a filtered task enters (kernel.c calls gseccomp_allows before the syscall table). The
 * verifier follows Linux's bpf_check_classic, check_load_and_stores and seccomp_check_filter;
 * the interpreter is classic BPF over struct seccomp_data; the actions and their precedence
 * are __seccomp_filter's. docs/seccomp.md says what is there and what is not. */
#include "sentry/seccomp.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "sentry/caps.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/signal.h"
#include "sentry/syscall.h"
#include "sentry/task.h"
#include "state/codec.h"

_Static_assert(sizeof(struct seccomp_insn) == sizeof(struct sock_filter), "sock_filter");
_Static_assert(sizeof(struct seccomp_data_) == sizeof(struct seccomp_data), "seccomp_data");

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif
#define FILTER_FLAGS                                                                               \
	(SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW |    \
	 SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC_ESRCH |                      \
	 SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
#define MAX_ERRNO 4095
#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1 /* si_code of a seccomp SIGSYS */
#endif

/* --- the verifier ------------------------------------------------------------------------ */

static bool is_cond_jump(uint16_t code)
{
	switch (code) {
	case BPF_JMP | BPF_JEQ | BPF_K:
	case BPF_JMP | BPF_JEQ | BPF_X:
	case BPF_JMP | BPF_JGE | BPF_K:
	case BPF_JMP | BPF_JGE | BPF_X:
	case BPF_JMP | BPF_JGT | BPF_K:
	case BPF_JMP | BPF_JGT | BPF_X:
	case BPF_JMP | BPF_JSET | BPF_K:
	case BPF_JMP | BPF_JSET | BPF_X:
		return true;
	}
	return false;
}

/* The opcodes seccomp_check_filter lets through (a subset of classic BPF's: no packet loads
 * but the 32-bit absolute one, no MOD, no MSH). */
static bool seccomp_code_allowed(uint16_t code)
{
	switch (code) {
	case BPF_LD | BPF_W | BPF_ABS:
	case BPF_LD | BPF_W | BPF_LEN:
	case BPF_LDX | BPF_W | BPF_LEN:
	case BPF_RET | BPF_K:
	case BPF_RET | BPF_A:
	case BPF_ALU | BPF_ADD | BPF_K:
	case BPF_ALU | BPF_ADD | BPF_X:
	case BPF_ALU | BPF_SUB | BPF_K:
	case BPF_ALU | BPF_SUB | BPF_X:
	case BPF_ALU | BPF_MUL | BPF_K:
	case BPF_ALU | BPF_MUL | BPF_X:
	case BPF_ALU | BPF_DIV | BPF_K:
	case BPF_ALU | BPF_DIV | BPF_X:
	case BPF_ALU | BPF_AND | BPF_K:
	case BPF_ALU | BPF_AND | BPF_X:
	case BPF_ALU | BPF_OR | BPF_K:
	case BPF_ALU | BPF_OR | BPF_X:
	case BPF_ALU | BPF_XOR | BPF_K:
	case BPF_ALU | BPF_XOR | BPF_X:
	case BPF_ALU | BPF_LSH | BPF_K:
	case BPF_ALU | BPF_LSH | BPF_X:
	case BPF_ALU | BPF_RSH | BPF_K:
	case BPF_ALU | BPF_RSH | BPF_X:
	case BPF_ALU | BPF_NEG:
	case BPF_LD | BPF_IMM:
	case BPF_LDX | BPF_IMM:
	case BPF_MISC | BPF_TAX:
	case BPF_MISC | BPF_TXA:
	case BPF_LD | BPF_MEM:
	case BPF_LDX | BPF_MEM:
	case BPF_ST:
	case BPF_STX:
	case BPF_JMP | BPF_JA:
		return true;
	}
	return is_cond_jump(code);
}

/* check_load_and_stores: scratch memory is read only where every path to the read wrote it. */
static int check_memory(const struct seccomp_insn *insns, unsigned int len)
{
	uint16_t *masks = malloc(len * sizeof(*masks)), valid = 0;
	int ret = 0;

	if (!masks)
		return -ENOMEM;
	memset(masks, 0xff, len * sizeof(*masks));
	for (unsigned int pc = 0; pc < len; pc++) {
		const struct seccomp_insn *in = &insns[pc];
		valid &= masks[pc];
		switch (in->code) {
		case BPF_ST:
		case BPF_STX:
			valid |= 1 << in->k;
			break;
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
			if (!(valid & (1 << in->k))) {
				ret = -EINVAL;
				goto out;
			}
			break;
		case BPF_JMP | BPF_JA:
			masks[pc + 1 + in->k] &= valid;
			valid = 0xffff;
			break;
		default:
			if (is_cond_jump(in->code)) {
				masks[pc + 1 + in->jt] &= valid;
				masks[pc + 1 + in->jf] &= valid;
				valid = 0xffff;
			}
		}
	}
out:
	free(masks);
	return ret;
}

int gseccomp_check_prog(const struct seccomp_insn *insns, unsigned int len)
{
	if (len == 0 || len > SECCOMP_MAX_INSNS)
		return -EINVAL;
	for (unsigned int pc = 0; pc < len; pc++) {
		const struct seccomp_insn *in = &insns[pc];
		if (!seccomp_code_allowed(in->code))
			return -EINVAL;
		switch (in->code) {
		case BPF_ALU | BPF_DIV | BPF_K:
			if (in->k == 0)
				return -EINVAL;
			break;
		case BPF_ALU | BPF_LSH | BPF_K:
		case BPF_ALU | BPF_RSH | BPF_K:
			if (in->k >= 32)
				return -EINVAL;
			break;
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
		case BPF_ST:
		case BPF_STX:
			if (in->k >= BPF_MEMWORDS)
				return -EINVAL;
			break;
		case BPF_JMP | BPF_JA:
			if (in->k >= len - pc - 1)
				return -EINVAL;
			break;
		case BPF_LD | BPF_W | BPF_ABS:
			/* 32-bit aligned, within struct seccomp_data. */
			if (in->k >= sizeof(struct seccomp_data_) || (in->k & 3))
				return -EINVAL;
			break;
		default:
			if (is_cond_jump(in->code) &&
			    (pc + in->jt + 1 >= len || pc + in->jf + 1 >= len))
				return -EINVAL;
		}
	}
	uint16_t last = insns[len - 1].code;
	if (last != (BPF_RET | BPF_K) && last != (BPF_RET | BPF_A))
		return -EINVAL;
	return check_memory(insns, len);
}

/* --- the interpreter --------------------------------------------------------------------- */

uint32_t gseccomp_run(const struct seccomp_filter *f, const struct seccomp_data_ *sd)
{
	const uint8_t *data = (const uint8_t *)sd;
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};

	for (unsigned int pc = 0; pc < f->len; pc++) {
		const struct seccomp_insn *in = &f->insns[pc];
		uint32_t k = in->k;
		switch (in->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			memcpy(&a, data + k, sizeof(a));
			break;
		case BPF_LD | BPF_W | BPF_LEN:
			a = sizeof(*sd);
			break;
		case BPF_LDX | BPF_W | BPF_LEN:
			x = sizeof(*sd);
			break;
		case BPF_LD | BPF_IMM:
			a = k;
			break;
		case BPF_LDX | BPF_IMM:
			x = k;
			break;
		case BPF_LD | BPF_MEM:
			a = mem[k];
			break;
		case BPF_LDX | BPF_MEM:
			x = mem[k];
			break;
		case BPF_ST:
			mem[k] = a;
			break;
		case BPF_STX:
			mem[k] = x;
			break;
		case BPF_MISC | BPF_TAX:
			x = a;
			break;
		case BPF_MISC | BPF_TXA:
			a = x;
			break;
		case BPF_ALU | BPF_ADD | BPF_K:
			a += k;
			break;
		case BPF_ALU | BPF_ADD | BPF_X:
			a += x;
			break;
		case BPF_ALU | BPF_SUB | BPF_K:
			a -= k;
			break;
		case BPF_ALU | BPF_SUB | BPF_X:
			a -= x;
			break;
		case BPF_ALU | BPF_MUL | BPF_K:
			a *= k;
			break;
		case BPF_ALU | BPF_MUL | BPF_X:
			a *= x;
			break;
		case BPF_ALU | BPF_DIV | BPF_K:
			a /= k;
			break;
		case BPF_ALU | BPF_DIV | BPF_X:
			if (!x)
				return 0; /* classic BPF: a division by zero ends the program with 0
					   */
			a /= x;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= k;
			break;
		case BPF_ALU | BPF_AND | BPF_X:
			a &= x;
			break;
		case BPF_ALU | BPF_OR | BPF_K:
			a |= k;
			break;
		case BPF_ALU | BPF_OR | BPF_X:
			a |= x;
			break;
		case BPF_ALU | BPF_XOR | BPF_K:
			a ^= k;
			break;
		case BPF_ALU | BPF_XOR | BPF_X:
			a ^= x;
			break;
		case BPF_ALU | BPF_LSH | BPF_K:
			a <<= k;
			break;
		case BPF_ALU | BPF_LSH | BPF_X:
			a <<= x & 31; /* what Linux's 32-bit shifts do with a count past 31 */
			break;
		case BPF_ALU | BPF_RSH | BPF_K:
			a >>= k;
			break;
		case BPF_ALU | BPF_RSH | BPF_X:
			a >>= x & 31;
			break;
		case BPF_ALU | BPF_NEG:
			a = -a;
			break;
		case BPF_RET | BPF_K:
			return k;
		case BPF_RET | BPF_A:
			return a;
		case BPF_JMP | BPF_JA:
			pc += k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += a == k ? in->jt : in->jf;
			break;
		case BPF_JMP | BPF_JEQ | BPF_X:
			pc += a == x ? in->jt : in->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			pc += a > k ? in->jt : in->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_X:
			pc += a > x ? in->jt : in->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += a >= k ? in->jt : in->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_X:
			pc += a >= x ? in->jt : in->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += (a & k) ? in->jt : in->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_X:
			pc += (a & x) ? in->jt : in->jf;
			break;
		default:
			return 0; /* not reached: the verifier let no other code in */
		}
	}
	return 0; /* not reached: a checked program ends in a RET */
}

/* --- filters and tasks ------------------------------------------------------------------- */

struct seccomp_filter *gseccomp_get(struct seccomp_filter *f)
{
	if (f)
		f->refs++;
	return f;
}

void gseccomp_put(struct seccomp_filter *f)
{
	/* A chain is freed newest first, without recursion. */
	while (f && --f->refs == 0) {
		struct seccomp_filter *prev = f->prev;
		free(f);
		f = prev;
	}
}

void gseccomp_fork(struct task *c, const struct task *t)
{
	c->seccomp.mode = t->seccomp.mode;
	c->seccomp.nfilters = t->seccomp.nfilters;
	c->seccomp.filter = gseccomp_get(t->seccomp.filter);
}

void gseccomp_release(struct task *t)
{
	gseccomp_put(t->seccomp.filter);
	t->seccomp.filter = NULL;
}

/* --- the check on every syscall ---------------------------------------------------------- */

/* Strict mode's syscalls: read, write, exit (not exit_group) and rt_sigreturn; through
 * int $0x80 their i386 numbers, with sigreturn (mode1_syscalls_32). */
static bool strict_allows(const struct task *t)
{
	static const long native[] = {SYS_read, SYS_write, SYS_exit, SYS_rt_sigreturn};
	static const long i386[] = {3, 4, 1, 119};
	const long *allowed = t->sc.native ? native : i386;

	for (int i = 0; i < 4; i++)
		if (t->sc.nr == allowed[i])
			return true;
	return false;
}

static bool other_threads_live(const struct task *t)
{
	for_each_thread_of(t->group_leader, o)
		if (o != t && !o->thread_gone && !o->zombie && !o->exited)
			return true;
	return false;
}

bool gseccomp_allows(struct task *t, unsigned long ip, long *ret)
{
	*ret = 0;
	if (t->seccomp.mode == SECCOMP_MODE_STRICT) {
		if (strict_allows(t))
			return true;
		kernel_exit_thread(t, SIGKILL); /* Linux's do_exit(SIGKILL): this thread */
		return false;
	}
	struct seccomp_data_ sd = {
	    .nr = (int32_t)t->sc.nr,
	    .arch = t->sc.native ? AUDIT_ARCH_X86_64 : AUDIT_ARCH_I386,
	    .instruction_pointer = ip,
	};
	memcpy(sd.args, t->sc.args, sizeof(sd.args));
	/* Every filter runs; the most restrictive action wins (the actions' values compared as
	 * signed numbers), and among equal ones the newest filter's data. */
	uint32_t verdict = SECCOMP_RET_ALLOW;
	for (const struct seccomp_filter *f = t->seccomp.filter; f; f = f->prev) {
		uint32_t r = gseccomp_run(f, &sd);
		if ((int32_t)(r & SECCOMP_RET_ACTION_FULL) <
		    (int32_t)(verdict & SECCOMP_RET_ACTION_FULL))
			verdict = r;
	}
	uint32_t data = verdict & SECCOMP_RET_DATA;
	switch (verdict & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_ALLOW:
	case SECCOMP_RET_LOG: /* Linux's audit log has no counterpart here: allowed */
		return true;
	case SECCOMP_RET_ERRNO:
		*ret = -(long)(data > MAX_ERRNO ? MAX_ERRNO : data);
		return false;
	case SECCOMP_RET_TRAP: {
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		si.si_signo = SIGSYS;
		si.si_code = SYS_SECCOMP;
		si.si_errno = (int)data;
		si.si_call_addr = (void *)ip;
		si.si_syscall = sd.nr;
		si.si_arch = sd.arch;
		signal_force(t, SIGSYS, &si);
		/* The handler sees the registers as they were: rax still the syscall number. */
		*ret = t->sc.nr;
		return false;
	}
	case SECCOMP_RET_TRACE:	     /* no tracer can exist (ptrace(2) traces no one): as Linux */
	case SECCOMP_RET_USER_NOTIF: /* no filter has a listener (NEW_LISTENER is ENOSYS) */
		*ret = -ENOSYS;
		return false;
	case SECCOMP_RET_KILL_THREAD:
		if (other_threads_live(t)) {
			kernel_exit_thread(t, SIGSYS);
			return false;
		}
		/* the last thread dumps core as KILL_PROCESS does */
		__attribute__((fallthrough));
	default: /* SECCOMP_RET_KILL_PROCESS, and actions Linux does not know */
		kernel_exit_group(t, SIGSYS | (signal_dumps_core(t, SIGSYS) ? 0x80 : 0));
		return false;
	}
}

/* --- seccomp(2) and prctl ---------------------------------------------------------------- */

static int set_mode_strict(struct task *t)
{
	if (t->seccomp.mode && t->seccomp.mode != SECCOMP_MODE_STRICT)
		return -EINVAL;
	t->seccomp.mode = SECCOMP_MODE_STRICT;
	return 0;
}

/* NULL is everyone's ancestor. */
static bool is_ancestor(const struct seccomp_filter *parent, const struct seccomp_filter *child)
{
	if (!parent)
		return true;
	for (; child; child = child->prev)
		if (child == parent)
			return true;
	return false;
}

/* TSYNC: every other live thread must have no filter or an ancestor of T's chain; the first
 * that has not is named by its tid (or -ESRCH with TSYNC_ESRCH), as Linux does. */
static long can_sync_threads(struct task *t, unsigned int flags)
{
	for_each_thread_of(t->group_leader, o) {
		if (o == t || o->thread_gone || o->zombie || o->exited)
			continue;
		if (o->seccomp.mode == SECCOMP_MODE_DISABLED ||
		    (o->seccomp.mode == SECCOMP_MODE_FILTER &&
		     is_ancestor(o->seccomp.filter, t->seccomp.filter)))
			continue;
		return (flags & SECCOMP_FILTER_FLAG_TSYNC_ESRCH) ? -ESRCH : o->tid;
	}
	return 0;
}

static void sync_threads(struct task *t)
{
	for_each_thread_of(t->group_leader, o) {
		if (o == t || o->thread_gone || o->zombie || o->exited)
			continue;
		gseccomp_put(o->seccomp.filter);
		o->seccomp.filter = gseccomp_get(t->seccomp.filter);
		o->seccomp.nfilters = t->seccomp.nfilters;
		if (t->no_new_privs)
			o->no_new_privs = true;
		o->seccomp.mode = SECCOMP_MODE_FILTER;
	}
}

/* Checks F's program and stacks F on T's filters (TSYNC in FLAGS: on all its threads). On
 * success T owns F; on failure the caller still does. */
static long push_filter(struct task *t, struct seccomp_filter *f, unsigned int flags)
{
	long ret;

	if ((ret = gseccomp_check_prog(f->insns, f->len)))
		return ret;
	if (t->seccomp.mode && t->seccomp.mode != SECCOMP_MODE_FILTER)
		return -EINVAL;
	unsigned long total = f->len;
	for (const struct seccomp_filter *w = t->seccomp.filter; w; w = w->prev)
		total += w->len + 4; /* Linux's 4-instruction penalty per filter */
	if (total > SECCOMP_MAX_PATH_INSNS)
		return -ENOMEM;
	if ((flags & SECCOMP_FILTER_FLAG_TSYNC) && (ret = can_sync_threads(t, flags)))
		return ret;
	f->prev = t->seccomp.filter; /* T's reference passes to F */
	t->seccomp.filter = f;
	t->seccomp.nfilters++;
	t->seccomp.mode = SECCOMP_MODE_FILTER;
	if (flags & SECCOMP_FILTER_FLAG_TSYNC)
		sync_threads(t);
	return 0;
}

static long set_mode_filter(struct task *t, unsigned int flags, unsigned long uargs)
{
	struct {
		uint16_t len;
		uint64_t filter;
	} fprog; /* struct sock_fprog */
	long ret;

	if (flags & ~FILTER_FLAGS)
		return -EINVAL;
	if ((flags & SECCOMP_FILTER_FLAG_TSYNC) && (flags & SECCOMP_FILTER_FLAG_NEW_LISTENER) &&
	    !(flags & SECCOMP_FILTER_FLAG_TSYNC_ESRCH))
		return -EINVAL;
	if ((flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV) &&
	    !(flags & SECCOMP_FILTER_FLAG_NEW_LISTENER))
		return -EINVAL;
	/* User notification is not offered: refused before anything else is looked at, so that
	 * a probe with a NULL program (libseccomp's) sees ENOSYS rather than Linux's EFAULT. */
	if (flags & SECCOMP_FILTER_FLAG_NEW_LISTENER)
		return syscall_unsupported(t, -ENOSYS, "SECCOMP_FILTER_FLAG_NEW_LISTENER");
	_Static_assert(sizeof(fprog) == sizeof(struct sock_fprog), "sock_fprog");
	if (copy_in(t->mm, &fprog, uargs, sizeof(fprog)))
		return -EFAULT;
	if (fprog.len == 0 || fprog.len > SECCOMP_MAX_INSNS)
		return -EINVAL;
	/* Installing a filter needs no_new_privs or CAP_SYS_ADMIN. */
	if (!t->no_new_privs && !caps_has(t, CAP_SYS_ADMIN))
		return -EACCES;
	if (!fprog.filter)
		return -EINVAL;
	struct seccomp_filter *f = calloc(1, sizeof(*f) + fprog.len * sizeof(struct seccomp_insn));
	if (!f)
		return -ENOMEM;
	f->refs = 1;
	f->len = fprog.len;
	f->log = flags & SECCOMP_FILTER_FLAG_LOG;
	if (copy_in(t->mm, f->insns, fprog.filter, f->len * sizeof(struct seccomp_insn))) {
		ret = -EFAULT;
		goto out;
	}
	if ((ret = push_filter(t, f, flags)))
		goto out;
	return 0;
out:
	free(f);
	return ret;
}

long gseccomp_attach(struct task *t, const void *prog, unsigned int len, bool log)
{
	struct seccomp_filter *f;
	long ret;

	if (len == 0 || len > SECCOMP_MAX_INSNS)
		return -EINVAL;
	if (!(f = calloc(1, sizeof(*f) + len * sizeof(struct seccomp_insn))))
		return -ENOMEM;
	f->refs = 1;
	f->len = len;
	f->log = log;
	memcpy(f->insns, prog, len * sizeof(struct seccomp_insn));
	if ((ret = push_filter(t, f, 0)))
		free(f);
	return ret;
}

static long get_action_avail(struct task *t, unsigned long uargs)
{
	uint32_t action;

	if (copy_in(t->mm, &action, uargs, sizeof(action)))
		return -EFAULT;
	switch (action) {
	case SECCOMP_RET_KILL_PROCESS:
	case SECCOMP_RET_KILL_THREAD:
	case SECCOMP_RET_TRAP:
	case SECCOMP_RET_ERRNO:
	case SECCOMP_RET_USER_NOTIF: /* a filter may return it: ENOSYS, as with no listener */
	case SECCOMP_RET_TRACE:
	case SECCOMP_RET_LOG:
	case SECCOMP_RET_ALLOW:
		return 0;
	}
	return -EOPNOTSUPP;
}

long gseccomp_op(struct task *t, unsigned int op, unsigned int flags, unsigned long uargs)
{
	switch (op) {
	case SECCOMP_SET_MODE_STRICT:
		if (flags || uargs)
			return -EINVAL;
		return set_mode_strict(t);
	case SECCOMP_SET_MODE_FILTER:
		return set_mode_filter(t, flags, uargs);
	case SECCOMP_GET_ACTION_AVAIL:
		if (flags)
			return -EINVAL;
		return get_action_avail(t, uargs);
	case SECCOMP_GET_NOTIF_SIZES: {
		if (flags)
			return -EINVAL;
		/* The structures' sizes, as Linux reports them. */
		struct seccomp_notif_sizes sizes = {
		    .seccomp_notif = sizeof(struct seccomp_notif),
		    .seccomp_notif_resp = sizeof(struct seccomp_notif_resp),
		    .seccomp_data = sizeof(struct seccomp_data),
		};
		return copy_out(t->mm, uargs, &sizes, sizeof(sizes)) ? -EFAULT : 0;
	}
	}
	return -EINVAL;
}

long gseccomp_prctl_set(struct task *t, unsigned long mode, unsigned long filter)
{
	/* prctl has no flags; strict mode through it always ignored the third argument. */
	switch (mode) {
	case SECCOMP_MODE_STRICT:
		return gseccomp_op(t, SECCOMP_SET_MODE_STRICT, 0, 0);
	case SECCOMP_MODE_FILTER:
		return gseccomp_op(t, SECCOMP_SET_MODE_FILTER, 0, filter);
	}
	return -EINVAL;
}

/* --- checkpoint (CK_SECCOMP) ------------------------------------------------------------- */

int gseccomp_filter_save(struct enc *e, const void *obj)
{
	const struct seccomp_filter *f = obj;

	enc_bool(e, f->log);
	enc_u32(e, f->len);
	for (unsigned int i = 0; i < f->len; i++) {
		const struct seccomp_insn *in = &f->insns[i];
		enc_u32(e, in->code | (uint32_t)in->jt << 16 | (uint32_t)in->jf << 24);
		enc_u32(e, in->k);
	}
	enc_ref(e, CK_SECCOMP, f->prev); /* an earlier record: gseccomp_save_task saw to it */
	return enc_ok(e) ? 0 : -ENOMEM;
}

void *gseccomp_filter_load(struct dec *d)
{
	bool log = dec_bool(d);
	uint32_t len = dec_u32(d);

	if (!dec_ok(d) || len == 0 || len > SECCOMP_MAX_INSNS) {
		dec_fail(d, "bad seccomp filter length");
		return NULL;
	}
	struct seccomp_filter *f = calloc(1, sizeof(*f) + len * sizeof(struct seccomp_insn));
	if (!f) {
		dec_fail(d, "out of memory");
		return NULL;
	}
	f->refs = 1; /* the load's own */
	f->log = log;
	f->len = len;
	for (unsigned int i = 0; i < len; i++) {
		uint32_t w = dec_u32(d);
		f->insns[i] = (struct seccomp_insn){
		    .code = w & 0xffff, .jt = (w >> 16) & 0xff, .jf = w >> 24, .k = dec_u32(d)};
	}
	f->prev = gseccomp_get(dec_ref(d, CK_SECCOMP));
	/* An image is hostile input: the program is checked as one a guest installs, and the
	 * chain (earlier records only, so it has no cycle) is bounded as Linux bounds it. */
	unsigned long total = 0;
	for (const struct seccomp_filter *w = f; w; w = w->prev)
		total += w->len + 4;
	if (dec_ok(d) &&
	    (gseccomp_check_prog(f->insns, f->len) || total > SECCOMP_MAX_PATH_INSNS + 4))
		dec_fail(d, "bad seccomp filter");
	if (!dec_ok(d)) {
		gseccomp_put(f);
		return NULL;
	}
	return f;
}

void gseccomp_filter_drop(void *f)
{
	gseccomp_put(f);
}

void gseccomp_save_task(struct enc *e, const struct task *t)
{
	if (!t->seccomp.mode)
		return;
	/* Ids oldest first, so that a filter's record refers only to earlier ones. */
	if (e->refs) {
		static const struct seccomp_filter *chain[SECCOMP_MAX_PATH_INSNS / 5 + 1];
		unsigned int n = 0;
		for (const struct seccomp_filter *f = t->seccomp.filter;
		     f && n < sizeof(chain) / sizeof(chain[0]); f = f->prev)
			chain[n++] = f;
		while (n)
			ckpt_refs_id(e->refs, CK_SECCOMP, chain[--n]);
	}
	enc_u32(e, (uint32_t)t->seccomp.mode);
	enc_ref(e, CK_SECCOMP, t->seccomp.filter);
}

void gseccomp_load_task(struct dec *d, struct task *t)
{
	if (dec_at_end(d))
		return; /* no seccomp (and every record of an image from before it) */
	uint32_t mode = dec_u32(d);
	struct seccomp_filter *f = dec_ref(d, CK_SECCOMP);

	if (!dec_ok(d))
		return;
	/* A zombie in filter mode has released its filters (NULL); strict mode has none; mode 0
	 * (none) is written only when fields follow (task.c). */
	if ((mode != SECCOMP_MODE_DISABLED && mode != SECCOMP_MODE_STRICT &&
	     mode != SECCOMP_MODE_FILTER) ||
	    (mode != SECCOMP_MODE_FILTER && f)) {
		dec_fail(d, "bad seccomp mode");
		return;
	}
	t->seccomp.mode = (int)mode;
	t->seccomp.filter = gseccomp_get(f);
	t->seccomp.nfilters = 0;
	for (; f; f = f->prev)
		t->seccomp.nfilters++;
}
