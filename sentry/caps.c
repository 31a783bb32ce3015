/* Capabilities: per-thread effective, permitted, inheritable, bounding and ambient sets and
 * securebits, with Linux's rules for capget/capset (kernel/capability.c), the capability
 * prctls and the changes at execve and set*uid (security/commoncap.c). No file capabilities
 * (the overlay keeps no security xattrs). Privilege checks elsewhere look at these sets for
 * setuid/setgid (CAP_SETUID, CAP_SETGID) and nice values (CAP_SYS_NICE), and at the
 * effective uid for the rest. */
#include "sentry/caps.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/prctl.h>
#include <linux/securebits.h>
#include <string.h>

#include "sentry/mm.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"

/* Securebits this kernel knows (6.14 added the exec restrictions), and their locks. */
#define SECBITS_BITS                                                                               \
	((1u << SECURE_NOROOT) | (1u << SECURE_NO_SETUID_FIXUP) | (1u << SECURE_KEEP_CAPS) |       \
	 (1u << SECURE_NO_CAP_AMBIENT_RAISE) | (1u << 8) | (1u << 10))
#define SECBITS_LOCKS (SECBITS_BITS << 1)

static bool valid_cap(unsigned long cap)
{
	return cap <= CAPS_LAST_CAP;
}

static bool raised(uint64_t set, unsigned long cap)
{
	return set & (UINT64_C(1) << cap);
}

static bool subset(uint64_t a, uint64_t b)
{
	return !(a & ~b);
}

static void caps_init_root(struct task *t)
{
	t->cap_eff = t->cap_prm = t->cap_bnd = CAPS_ALL;
	t->cap_inh = t->cap_amb = 0;
	t->securebits = 0;
}

void caps_init(struct task *t, const struct caps_sets *s)
{
	if (!s) {
		caps_init_root(t);
		return;
	}
	/* As capset and PR_CAP_AMBIENT_RAISE would leave them: effective within permitted,
	 * ambient within permitted and inheritable (runc sets them that way). */
	t->cap_bnd = s->bounding & CAPS_ALL;
	t->cap_prm = s->permitted & CAPS_ALL;
	t->cap_eff = s->effective & t->cap_prm;
	t->cap_inh = s->inheritable & CAPS_ALL;
	t->cap_amb = s->ambient & t->cap_prm & t->cap_inh;
	t->securebits = 0;
}

bool caps_has(const struct task *t, int cap)
{
	return raised(t->cap_eff, (unsigned long)cap);
}

void caps_on_exec(struct task *t)
{
	bool root = (t->euid == 0 || t->uid == 0) && !(t->securebits & (1u << SECURE_NOROOT));

	/* Root's file is as if it had every file capability: P'(permitted) = inheritable |
	 * bounding, effective if the effective uid is root. Otherwise only the ambient set
	 * passes. */
	t->cap_prm = (root ? (t->cap_inh | t->cap_bnd) : 0) | t->cap_amb;
	t->cap_eff = root && t->euid == 0 ? t->cap_prm : t->cap_amb;
	t->securebits &= ~(1u << SECURE_KEEP_CAPS);
}

void caps_on_setuid(struct task *t, unsigned int old_r, unsigned int old_e, unsigned int old_s)
{
	if (t->securebits & (1u << SECURE_NO_SETUID_FIXUP))
		return;
	if ((old_r == 0 || old_e == 0 || old_s == 0) && t->uid != 0 && t->euid != 0 &&
	    t->suid != 0) {
		if (!(t->securebits & (1u << SECURE_KEEP_CAPS)))
			t->cap_prm = t->cap_eff = 0;
		t->cap_amb = 0;
	}
	if (old_e == 0 && t->euid != 0)
		t->cap_eff = 0;
	if (old_e != 0 && t->euid == 0)
		t->cap_eff = t->cap_prm;
}

/* The header's version: how many 32-bit halves it moves (1 or 2), or -EINVAL after writing
 * the version this kernel prefers back to HDR, as cap_validate_magic does. */
static long check_version(struct task *t, uintptr_t hdr, unsigned int *words)
{
	uint32_t version;

	if (copy_in(t->mm, &version, hdr, sizeof(version)))
		return -EFAULT;
	switch (version) {
	case _LINUX_CAPABILITY_VERSION_1:
		*words = 1;
		return 0;
	case _LINUX_CAPABILITY_VERSION_2:
	case _LINUX_CAPABILITY_VERSION_3:
		*words = 2;
		return 0;
	default:
		version = _LINUX_CAPABILITY_VERSION_3;
		if (copy_out(t->mm, hdr, &version, sizeof(version)))
			return -EFAULT;
		return -EINVAL;
	}
}

/* The header's pid: 0 or a thread id (-ESRCH if none). */
static long header_pid(struct task *t, uintptr_t hdr, int *pid)
{
	if (copy_in(t->mm, pid, hdr + 4, sizeof(*pid)))
		return -EFAULT;
	return *pid < 0 ? -EINVAL : 0;
}

long sys_capget(struct task *t, const unsigned long *a)
{
	struct __user_cap_data_struct data[2];
	unsigned int words;
	struct task *o = t;
	int pid;
	long err = check_version(t, a[0], &words);

	if (!a[1] || err)
		return !a[1] && err == -EINVAL ? 0 : err;
	if ((err = header_pid(t, a[0], &pid)))
		return err;
	if (pid && pid != t->tid && !(o = task_by_tid(pid)))
		return -ESRCH;
	if (o->zombie || o->thread_gone)
		return -ESRCH;
	for (unsigned int i = 0; i < 2; i++) {
		data[i].effective = (uint32_t)(o->cap_eff >> (32 * i));
		data[i].permitted = (uint32_t)(o->cap_prm >> (32 * i));
		data[i].inheritable = (uint32_t)(o->cap_inh >> (32 * i));
	}
	return copy_out(t->mm, a[1], data, words * sizeof(data[0]));
}

long sys_capset(struct task *t, const unsigned long *a)
{
	struct __user_cap_data_struct data[2];
	unsigned int words;
	int pid;
	long err = check_version(t, a[0], &words);

	if (err)
		return err;
	if ((err = header_pid(t, a[0], &pid)))
		return err;
	if (pid != 0 && pid != t->tid)
		return -EPERM;
	memset(data, 0, sizeof(data));
	if (copy_in(t->mm, data, a[1], words * sizeof(data[0])))
		return -EFAULT;
	uint64_t eff = (data[0].effective | (uint64_t)data[1].effective << 32) & CAPS_ALL;
	uint64_t prm = (data[0].permitted | (uint64_t)data[1].permitted << 32) & CAPS_ALL;
	uint64_t inh = (data[0].inheritable | (uint64_t)data[1].inheritable << 32) & CAPS_ALL;
	if (!caps_has(t, CAP_SETPCAP) && !subset(inh, t->cap_inh | t->cap_prm))
		return -EPERM;
	if (!subset(inh, t->cap_inh | t->cap_bnd) || !subset(prm, t->cap_prm) || !subset(eff, prm))
		return -EPERM;
	t->cap_eff = eff;
	t->cap_prm = prm;
	t->cap_inh = inh;
	t->cap_amb &= prm & inh;
	return 0;
}

long caps_prctl(struct task *t, int option, const unsigned long *a)
{
	switch (option) {
	case PR_CAPBSET_READ:
		return valid_cap(a[1]) ? raised(t->cap_bnd, a[1]) : -EINVAL;
	case PR_CAPBSET_DROP:
		if (!caps_has(t, CAP_SETPCAP))
			return -EPERM;
		if (!valid_cap(a[1]))
			return -EINVAL;
		t->cap_bnd &= ~(UINT64_C(1) << a[1]);
		return 0;
	case PR_GET_KEEPCAPS:
		return !!(t->securebits & (1u << SECURE_KEEP_CAPS));
	case PR_SET_KEEPCAPS:
		if (a[1] > 1)
			return -EINVAL;
		if (t->securebits & (1u << SECURE_KEEP_CAPS_LOCKED))
			return -EPERM;
		t->securebits = (t->securebits & ~(1u << SECURE_KEEP_CAPS)) |
				((unsigned int)a[1] << SECURE_KEEP_CAPS);
		return 0;
	case PR_GET_SECUREBITS:
		return t->securebits;
	case PR_SET_SECUREBITS: {
		unsigned int old = t->securebits, locks = old & SECBITS_LOCKS;
		if (((locks >> 1) & (old ^ a[1])) || (locks & ~a[1]) ||
		    (a[1] & ~(unsigned long)(SECBITS_BITS | SECBITS_LOCKS)) ||
		    !caps_has(t, CAP_SETPCAP))
			return -EPERM;
		t->securebits = (unsigned int)a[1];
		return 0;
	}
	case PR_CAP_AMBIENT:
		if (a[1] == PR_CAP_AMBIENT_CLEAR_ALL) {
			if (a[2] || a[3] || a[4])
				return -EINVAL;
			t->cap_amb = 0;
			return 0;
		}
		if (!valid_cap(a[2]) || a[3] || a[4])
			return -EINVAL;
		if (a[1] == PR_CAP_AMBIENT_IS_SET)
			return raised(t->cap_amb, a[2]);
		if (a[1] == PR_CAP_AMBIENT_RAISE) {
			if (!raised(t->cap_prm, a[2]) || !raised(t->cap_inh, a[2]) ||
			    (t->securebits & (1u << SECURE_NO_CAP_AMBIENT_RAISE)))
				return -EPERM;
			t->cap_amb |= UINT64_C(1) << a[2];
			return 0;
		}
		if (a[1] == PR_CAP_AMBIENT_LOWER) {
			t->cap_amb &= ~(UINT64_C(1) << a[2]);
			return 0;
		}
		return -EINVAL;
	default:
		return -ENOSYS;
	}
}
