/* System V IPC's common part (ipc.h): the registries of ids and keys, get(2)'s rules, the
 * permission checks of ipc(7), the exit hooks and the "ipc" checkpoint section. The three
 * kinds are ipc_shm.c, ipc_sem.c and ipc_msg.c. */
#include "sentry/ipc.h"

#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/stat.h>

#include "sentry/caps.h"
#include "sentry/clock.h"
#include "sentry/task.h"
#include "state/codec.h"

#define IPC_MIN_CYCLE 64 /* Linux's ipc_min_cycle (RADIX_TREE_MAP_SIZE) */

struct ipc_limits ipc_limits = {.shmmax = SHM_MAX,
				.shmall = SHM_ALL,
				.shmmni = SHM_MNI,
				.semmsl = SEM_MSL,
				.semmns = SEM_MNS,
				.semopm = SEM_OPM,
				.semmni = SEM_MNI,
				.msgmax = MSG_MAX,
				.msgmnb = MSG_MNB,
				.msgmni = MSG_MNI};

/* Parses N whitespace-separated integers of VALUE into OUT, each in [LO, HI]. */
static int parse_ints(const char *value, long long *out, int n, long long lo, long long hi)
{
	for (int i = 0; i < n; i++) {
		char *end;
		errno = 0;
		out[i] = strtoll(value, &end, 10);
		if (end == value || errno || out[i] < lo || out[i] > hi)
			return -EINVAL;
		value = end;
	}
	while (*value == ' ' || *value == '\t' || *value == '\n')
		value++;
	return *value ? -EINVAL : 0;
}

int ipc_set_limit(const char *name, const char *value)
{
	long long v[4];
	int *one = NULL;
	long long hi = INT_MAX;

	if (!strcmp(name, "shmmax") || !strcmp(name, "shmall")) {
		/* proc_doulongvec_minmax; the sysctl keeps what it parsed as a long long. */
		char *end;
		errno = 0;
		unsigned long long x = strtoull(value, &end, 10);
		if (end == value || errno || *value == '-')
			return -EINVAL;
		*(name[3] == 'm' ? &ipc_limits.shmmax : &ipc_limits.shmall) = x;
		return 0;
	}
	if (!strcmp(name, "sem")) {
		/* semmsl semmns semopm semmni; semmni at most IPCMNI, as Linux. */
		if (parse_ints(value, v, 4, 0, INT_MAX) || v[0] > SEM_MSL_MAX ||
		    v[2] > SEM_OPM_MAX || v[3] > IPC_MNI)
			return -EINVAL;
		ipc_limits.semmsl = (int)v[0];
		ipc_limits.semmns = (int)v[1];
		ipc_limits.semopm = (int)v[2];
		ipc_limits.semmni = (int)v[3];
		return 0;
	}
	if (!strcmp(name, "shmmni"))
		one = &ipc_limits.shmmni, hi = IPC_MNI;
	else if (!strcmp(name, "msgmni"))
		one = &ipc_limits.msgmni, hi = IPC_MNI;
	else if (!strcmp(name, "msgmax"))
		one = &ipc_limits.msgmax;
	else if (!strcmp(name, "msgmnb"))
		one = &ipc_limits.msgmnb;
	if (!one || parse_ints(value, v, 1, 0, hi))
		return -EINVAL;
	*one = (int)v[0];
	return 0;
}

struct ipc_obj *ipc_find_id(struct ipc_ids *ids, int id)
{
	if (id < 0)
		return NULL;
	int idx = id & ((1 << IPC_ID_SHIFT) - 1);
	if (idx >= ids->cap || !ids->v[idx] || ids->v[idx]->seq != (unsigned int)id >> IPC_ID_SHIFT)
		return NULL;
	return ids->v[idx];
}

struct ipc_obj *ipc_find_key(struct ipc_ids *ids, int32_t key)
{
	for (int i = 0; i < ids->cap; i++)
		if (ids->v[i] && ids->v[i]->key == key)
			return ids->v[i];
	return NULL;
}

int ipc_max_idx(const struct ipc_ids *ids)
{
	for (int i = ids->cap - 1; i >= 0; i--)
		if (ids->v[i])
			return i;
	return -1;
}

/* A free index as idr_alloc_cyclic over [0, max) from LAST_IDX + 1, or -1. */
static int free_idx(struct ipc_ids *ids)
{
	int max = ids->in_use * 3 / 2;

	if (max < IPC_MIN_CYCLE)
		max = IPC_MIN_CYCLE;
	if (max > *ids->mni)
		max = *ids->mni;
	int start = ids->last_idx + 1 < max ? ids->last_idx + 1 : 0;
	for (int n = 0; n < max; n++) {
		int i = (start + n) % max;
		if (i >= ids->cap || !ids->v[i])
			return i;
	}
	return -1;
}

int ipc_add(struct ipc_ids *ids, struct ipc_obj *o, struct task *t, int32_t key, int mode)
{
	if (ids->in_use >= *ids->mni)
		return -ENOSPC;
	int idx = free_idx(ids);
	if (idx < 0)
		return -ENOSPC;
	if (idx >= ids->cap) {
		int cap = ids->cap ? ids->cap : 16;
		while (cap <= idx)
			cap *= 2;
		struct ipc_obj **v = realloc(ids->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + ids->cap, 0, (cap - ids->cap) * sizeof(*v));
		ids->v = v;
		ids->cap = cap;
	}
	if (idx <= ids->last_idx && ++ids->seq > IPC_SEQ_MAX)
		ids->seq = 0;
	ids->last_idx = idx;
	o->idx = idx;
	o->seq = ids->seq;
	o->key = key;
	o->uid = o->cuid = t->euid;
	o->gid = o->cgid = t->egid;
	o->mode = mode & 0777;
	ids->v[idx] = o;
	ids->in_use++;
	return 0;
}

void ipc_remove(struct ipc_ids *ids, struct ipc_obj *o)
{
	ids->v[o->idx] = NULL;
	ids->in_use--;
}

static bool in_group(const struct task *t, gid_t g)
{
	if (t->egid == g)
		return true;
	for (int i = 0; i < t->ngroups; i++)
		if (t->groups[i] == g)
			return true;
	return false;
}

int ipc_perm_check(struct task *t, const struct ipc_obj *o, int req)
{
	int want = (req >> 6) | (req >> 3) | req, granted = o->mode;

	if (t->euid == o->cuid || t->euid == o->uid)
		granted >>= 6;
	else if (in_group(t, o->cgid) || in_group(t, o->gid))
		granted >>= 3;
	if ((want & ~granted & 07) && !caps_has(t, CAP_IPC_OWNER))
		return -EACCES;
	return 0;
}

int ipc_owner_check(struct task *t, const struct ipc_obj *o)
{
	if (t->euid == o->uid || t->euid == o->cuid || caps_has(t, CAP_SYS_ADMIN))
		return 0;
	return -EPERM;
}

long ipc_get(struct task *t, struct ipc_ids *ids, int32_t key, int flg,
	     long (*create)(struct task *t, int32_t key, int flg, long arg),
	     int (*more)(struct ipc_obj *o, long arg), long arg)
{
	if (key == IPC_PRIVATE)
		return create(t, key, flg, arg);
	struct ipc_obj *o = ipc_find_key(ids, key);
	if (!o)
		return flg & IPC_CREAT ? create(t, key, flg, arg) : -ENOENT;
	if ((flg & IPC_CREAT) && (flg & IPC_EXCL))
		return -EEXIST;
	int err = more ? more(o, arg) : 0;
	if (!err)
		err = ipc_perm_check(t, o, flg);
	return err ? err : ipc_id(o);
}

void ipc_fill_perm(const struct ipc_obj *o, struct ipc_perm *p)
{
	memset(p, 0, sizeof(*p));
	p->__key = o->key;
	p->uid = o->uid;
	p->gid = o->gid;
	p->cuid = o->cuid;
	p->cgid = o->cgid;
	p->mode = o->mode;
	p->__seq = o->seq;
}

void ipc_set_perm(struct ipc_obj *o, const struct ipc_perm *p)
{
	o->uid = p->uid;
	o->gid = p->gid;
	o->mode = (o->mode & ~0777u) | (p->mode & 0777);
}

int64_t ipc_now(void)
{
	struct timespec ts;

	clock_now(CLOCK_REALTIME, &ts);
	return ts.tv_sec;
}

void ipc_on_exit(struct task *leader)
{
	sem_exit(leader->tgid);
	shm_collect();
}

void ipc_on_mm_release(void)
{
	shm_collect();
}

/* Linux's headers (ipc/shm.c, sem.c, msg.c, for 64-bit longs); the lines are the kinds'. */
static const char *const proc_headers[] = {
    "       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  "
    "cgid      atime      dtime      ctime                   rss                  swap\n",
    "       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime\n",
    "       key      msqid perms      cbytes       qnum lspid lrpid   uid   gid  cuid  cgid      "
    "stime      rtime      ctime\n",
};

char *ipc_proc_text(int kind)
{
	char *text = NULL;
	size_t len = 0;

	if (kind < 0 || kind > 2)
		return NULL;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	fputs(proc_headers[kind], f);
	if (kind == 0) {
		shm_collect();
		shm_proc_lines(f);
	} else if (kind == 1) {
		sem_proc_lines(f);
	} else {
		msg_proc_lines(f);
	}
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

/* --- Checkpoint -------------------------------------------------------------------------- */

void ipc_ids_save(struct enc *e, const struct ipc_ids *ids,
		  void (*save_one)(struct enc *e, const struct ipc_obj *o))
{
	enc_u32(e, ids->seq);
	enc_i64(e, ids->last_idx);
	enc_u32(e, ids->in_use);
	for (int i = 0; i < ids->cap; i++) {
		const struct ipc_obj *o = ids->v[i];
		if (!o)
			continue;
		enc_u32(e, o->idx);
		enc_u32(e, o->seq);
		enc_u32(e, (uint32_t)o->key);
		enc_u32(e, o->uid);
		enc_u32(e, o->gid);
		enc_u32(e, o->cuid);
		enc_u32(e, o->cgid);
		enc_u32(e, o->mode);
		save_one(e, o);
	}
}

int ipc_ids_load(struct dec *d, struct ipc_ids *ids, struct ipc_obj *(*load_one)(struct dec *d))
{
	ids->seq = dec_u32(d);
	int64_t last = dec_i64(d);
	uint32_t n = dec_u32(d);
	if (!dec_ok(d) || ids->seq > IPC_SEQ_MAX || last < -1 || last >= IPC_MNI || n > IPC_MNI)
		return dec_fail(d, "bad ipc registry");
	ids->last_idx = (int)last;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t idx = dec_u32(d), seq = dec_u32(d);
		int32_t key = (int32_t)dec_u32(d);
		uid_t uid = dec_u32(d);
		gid_t gid = dec_u32(d);
		uid_t cuid = dec_u32(d);
		gid_t cgid = dec_u32(d);
		unsigned int mode = dec_u32(d);
		if (!dec_ok(d) || idx >= IPC_MNI || seq > IPC_SEQ_MAX ||
		    ((int)idx < ids->cap && ids->v[idx]))
			return dec_fail(d, "bad ipc object");
		struct ipc_obj *o = load_one(d);
		if (!o)
			return dec_fail(d, "bad ipc object %u", idx);
		if ((int)idx >= ids->cap) {
			int cap = ids->cap ? ids->cap : 16;
			while (cap <= (int)idx)
				cap *= 2;
			struct ipc_obj **v = realloc(ids->v, cap * sizeof(*v));
			if (!v)
				return dec_fail(d, "out of memory");
			memset(v + ids->cap, 0, (cap - ids->cap) * sizeof(*v));
			ids->v = v;
			ids->cap = cap;
		}
		o->idx = (int)idx;
		o->seq = seq;
		o->key = key;
		o->uid = uid;
		o->gid = gid;
		o->cuid = cuid;
		o->cgid = cgid;
		o->mode = mode;
		ids->v[idx] = o;
		ids->in_use++;
	}
	return dec_ok(d) ? 0 : -EINVAL;
}

#define IPC_SAVE_VERSION 1

int ipc_save(struct enc *e)
{
	shm_collect();
	enc_u32(e, IPC_SAVE_VERSION);
	enc_u64(e, ipc_limits.shmmax);
	enc_u64(e, ipc_limits.shmall);
	const int *lim[] = {&ipc_limits.shmmni, &ipc_limits.semmsl, &ipc_limits.semmns,
			    &ipc_limits.semopm, &ipc_limits.semmni, &ipc_limits.msgmax,
			    &ipc_limits.msgmnb, &ipc_limits.msgmni};
	for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++)
		enc_u32(e, (uint32_t)*lim[i]);
	shm_save(e);
	sem_save(e);
	msg_save(e);
	return enc_ok(e) ? 0 : -ENOMEM;
}

int ipc_load(struct dec *d)
{
	if (dec_u32(d) != IPC_SAVE_VERSION)
		return dec_fail(d, "unknown ipc version");
	struct ipc_limits l = {.shmmax = dec_u64(d), .shmall = dec_u64(d)};
	int *lim[] = {&l.shmmni, &l.semmsl, &l.semmns, &l.semopm,
		      &l.semmni, &l.msgmax, &l.msgmnb, &l.msgmni};
	for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
		uint32_t v = dec_u32(d);
		*lim[i] = v > INT_MAX ? -1 : (int)v;
	}
	if (!dec_ok(d) || l.shmmni < 0 || l.shmmni > IPC_MNI || l.semmsl < 0 ||
	    l.semmsl > SEM_MSL_MAX || l.semmns < 0 || l.semopm < 0 || l.semopm > SEM_OPM_MAX ||
	    l.semmni < 0 || l.semmni > IPC_MNI || l.msgmax < 0 || l.msgmnb < 0 || l.msgmni < 0 ||
	    l.msgmni > IPC_MNI)
		return dec_fail(d, "bad ipc limits");
	ipc_limits = l;
	int err = shm_load(d);
	if (!err)
		err = sem_load(d);
	if (!err)
		err = msg_load(d);
	return err ? err : dec_ok(d) ? 0 : -EINVAL;
}
