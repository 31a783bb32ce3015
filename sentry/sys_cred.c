/* Credentials: real, effective and saved user and group ids, and supplementary groups, with
 * Linux's rules for who may change what: CAP_SETUID and CAP_SETGID (caps.c) allow any change,
 * and a change of uids moves root's capabilities as Linux does. The filesystem ids follow the
 * effective ones. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>

#include "sentry/mm.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "sentry/caps.h"

#define NGROUPS_MAX 65536
#define KEEP ((unsigned int)-1)

static bool privileged_for(struct task *t, bool gid)
{
	return caps_has(t, gid ? CAP_SETGID : CAP_SETUID);
}

/* Applies to every thread of T's process: Linux's set*id change the whole process through
 * libc's broadcast, and a process here shares one identity. */
static void set_ids(struct task *t, uid_t r, uid_t e, uid_t s, bool gid)
{
	for (struct task *o = t; o; o = NULL) {
		if (gid) {
			o->gid = r, o->egid = e, o->sgid = s;
		} else {
			uid_t or = o->uid, oe = o->euid, os = o->suid;
			o->uid = r, o->euid = e, o->suid = s;
			caps_on_setuid(o, or, oe, os);
		}
	}
}

static bool one_of(unsigned int id, unsigned int a, unsigned int b, unsigned int c)
{
	return id == a || id == b || id == c;
}

long sys_setuid(struct task *t, const unsigned long *a)
{
	uid_t uid = arg_uint(a, 0);

	if (uid == KEEP)
		return -EINVAL;
	if (privileged_for(t, false))
		set_ids(t, uid, uid, uid, false);
	else if (uid == t->uid || uid == t->suid)
		set_ids(t, t->uid, uid, t->suid, false);
	else
		return -EPERM;
	return 0;
}

long sys_setgid(struct task *t, const unsigned long *a)
{
	gid_t gid = arg_uint(a, 0);

	if (gid == KEEP)
		return -EINVAL;
	if (privileged_for(t, true))
		set_ids(t, gid, gid, gid, true);
	else if (gid == t->gid || gid == t->sgid)
		t->egid = gid;
	else
		return -EPERM;
	return 0;
}

/* setreuid/setregid: the saved id follows the new effective one when the real one is set or
 * the effective one moves away from the old real one. */
static long set_re(struct task *t, unsigned int r, unsigned int e, bool gid)
{
	unsigned int or = gid ? t->gid : t->uid, oe = gid ? t->egid : t->euid;
	unsigned int os = gid ? t->sgid : t->suid;

	if (!privileged_for(t, gid)) {
		if (r != KEEP && r != or &&r != oe)
			return -EPERM;
		if (e != KEEP && !one_of(e, or, oe, os))
			return -EPERM;
	}
	unsigned int nr = r == KEEP ? or : r, ne = e == KEEP ? oe : e;
	unsigned int ns = (r != KEEP || (e != KEEP && e != or)) ? ne : os;
	set_ids(t, nr, ne, ns, gid);
	return 0;
}

long sys_setreuid(struct task *t, const unsigned long *a)
{
	return set_re(t, arg_uint(a, 0), arg_uint(a, 1), false);
}

long sys_setregid(struct task *t, const unsigned long *a)
{
	return set_re(t, arg_uint(a, 0), arg_uint(a, 1), true);
}

static long set_res(struct task *t, unsigned int r, unsigned int e, unsigned int s, bool gid)
{
	unsigned int or = gid ? t->gid : t->uid, oe = gid ? t->egid : t->euid;
	unsigned int os = gid ? t->sgid : t->suid;

	if (!privileged_for(t, gid))
		for (int i = 0; i < 3; i++) {
			unsigned int id = i == 0 ? r : i == 1 ? e : s;
			if (id != KEEP && !one_of(id, or, oe, os))
				return -EPERM;
		}
	set_ids(t, r == KEEP ? or : r, e == KEEP ? oe : e, s == KEEP ? os : s, gid);
	return 0;
}

long sys_setresuid(struct task *t, const unsigned long *a)
{
	return set_res(t, arg_uint(a, 0), arg_uint(a, 1), arg_uint(a, 2), false);
}

long sys_setresgid(struct task *t, const unsigned long *a)
{
	return set_res(t, arg_uint(a, 0), arg_uint(a, 1), arg_uint(a, 2), true);
}

/* The filesystem ids are the effective ones here: setfs*id reports them and changes nothing
 * it could not change through the effective id. */
long sys_setfsuid(struct task *t, const unsigned long *a)
{
	uid_t old = t->euid, id = arg_uint(a, 0);

	if (id != KEEP && (privileged_for(t, false) || one_of(id, t->uid, t->euid, t->suid)))
		t->euid = id;
	return old;
}

long sys_setfsgid(struct task *t, const unsigned long *a)
{
	gid_t old = t->egid, id = arg_uint(a, 0);

	if (id != KEEP && (privileged_for(t, true) || one_of(id, t->gid, t->egid, t->sgid)))
		t->egid = id;
	return old;
}

long sys_setgroups(struct task *t, const unsigned long *a)
{
	long n = arg_long(a, 0);

	if (n < 0 || n > NGROUPS_MAX)
		return -EINVAL;
	if (!privileged_for(t, true))
		return -EPERM;
	gid_t *g = n ? malloc(n * sizeof(gid_t)) : NULL;
	if (n && !g)
		return -ENOMEM;
	if (n && copy_in(t->mm, g, a[1], n * sizeof(gid_t))) {
		free(g);
		return -EFAULT;
	}
	free(t->groups);
	t->groups = g;
	t->ngroups = (int)n;
	return 0;
}

long sys_getgroups(struct task *t, const unsigned long *a)
{
	int size = arg_int(a, 0);

	if (size < 0)
		return -EINVAL;
	if (size == 0)
		return t->ngroups;
	if (size < t->ngroups)
		return -EINVAL;
	if (t->ngroups && copy_out(t->mm, a[1], t->groups, t->ngroups * sizeof(gid_t)))
		return -EFAULT;
	return t->ngroups;
}
