/* Advisory locks as lists of byte ranges per inode. POSIX locks belong to a process and go
 * when it closes any descriptor of the file or exits; OFD and flock locks belong to an open
 * file description and go when it is released. Ranges are inclusive [start, end]. */
#include "sentry/locks.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>

#include "sentry/fdtable.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/sched.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "state/codec.h"
#include "vfs/vfs.h"
#include "vfs/waitq.h"

#define OFF_MAX INT64_MAX

struct range_lock {
	const void *ino;
	int type; /* F_RDLCK or F_WRLCK */
	off_t start, end;
	void *owner; /* POSIX: the leader task; OFD: the file */
	pid_t pid;   /* reported by F_GETLK: the owner's pid, -1 for OFD locks */
	struct range_lock *next;
};

struct whole_lock {
	const void *ino;
	struct vfs_file *file;
	bool exclusive;
	struct whole_lock *next;
};

static struct range_lock *ranges;
static struct whole_lock *wholes;
static struct waitq unlocked; /* every release wakes the waiters, who look again */

/* The inode, or a pipe's or socket's pseudo inode, that F's locks are kept on. */
static const void *inode_of(struct vfs_file *f)
{
	return vfs_file_lock_key(f);
}

static bool overlap(const struct range_lock *l, off_t start, off_t end)
{
	return l->start <= end && start <= l->end;
}

static struct range_lock *conflict(const void *ino, void *owner, int type, off_t start, off_t end)
{
	for (struct range_lock *l = ranges; l; l = l->next)
		if (l->ino == ino && l->owner != owner && overlap(l, start, end) &&
		    (type == F_WRLCK || l->type == F_WRLCK))
			return l;
	return NULL;
}

/* Removes OWNER's locks on INO within [start, end], splitting those that stick out. */
static int cut(const void *ino, void *owner, off_t start, off_t end)
{
	for (struct range_lock **pp = &ranges; *pp;) {
		struct range_lock *l = *pp;
		if (l->ino != ino || l->owner != owner || !overlap(l, start, end)) {
			pp = &l->next;
			continue;
		}
		if (l->start < start && l->end > end) {
			struct range_lock *tail = malloc(sizeof(*tail));
			if (!tail)
				return -ENOLCK;
			*tail = *l;
			tail->start = end + 1;
			l->end = start - 1;
			tail->next = l->next;
			l->next = tail;
			pp = &tail->next;
		} else if (l->start < start) {
			l->end = start - 1;
			pp = &l->next;
		} else if (l->end > end) {
			l->start = end + 1;
			pp = &l->next;
		} else {
			*pp = l->next;
			free(l);
		}
	}
	return 0;
}

static void release_where(bool (*match)(const struct range_lock *, void *), void *arg)
{
	bool any = false;

	for (struct range_lock **pp = &ranges; *pp;) {
		struct range_lock *l = *pp;
		if (match(l, arg)) {
			*pp = l->next;
			free(l);
			any = true;
		} else {
			pp = &l->next;
		}
	}
	if (any)
		waitq_wake(&unlocked, 0);
}

/* The guest's struct flock as an inclusive range; -EINVAL for a negative start. */
static long to_range(struct vfs_file *f, const struct flock *fl, off_t *start, off_t *end)
{
	off_t base = 0;

	switch (fl->l_whence) {
	case SEEK_SET:
		break;
	case SEEK_CUR:
		base = f->pos;
		break;
	case SEEK_END: {
		struct stat st;
		if (!f->ops->getattr || f->ops->getattr(f, &st))
			return -EINVAL;
		base = st.st_size;
		break;
	}
	default:
		return -EINVAL;
	}
	off_t s = base + fl->l_start;
	if (fl->l_len > 0) {
		*start = s;
		*end = s + fl->l_len - 1;
	} else if (fl->l_len == 0) {
		*start = s;
		*end = OFF_MAX;
	} else {
		*start = s + fl->l_len;
		*end = s - 1;
	}
	return *start < 0 ? -EINVAL : 0;
}

long locks_fcntl(struct task *t, struct vfs_file *f, int cmd, unsigned long arg)
{
	bool ofd = cmd == F_OFD_GETLK || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW;
	bool wait = cmd == F_SETLKW || cmd == F_OFD_SETLKW;
	void *owner = ofd ? (void *)f : (void *)t->group_leader;
	const void *ino = inode_of(f);
	struct flock fl;
	off_t start, end;
	long err;

	if (copy_in(t->mm, &fl, arg, sizeof(fl)))
		return -EFAULT;
	if (!ino)
		return -EINVAL;
	if (ofd && fl.l_pid != 0)
		return -EINVAL;
	if ((err = to_range(f, &fl, &start, &end)))
		return err;
	if (cmd == F_GETLK || cmd == F_OFD_GETLK) {
		if (fl.l_type != F_RDLCK && fl.l_type != F_WRLCK)
			return -EINVAL;
		struct range_lock *c = conflict(ino, owner, fl.l_type, start, end);
		if (!c) {
			fl.l_type = F_UNLCK;
		} else {
			fl.l_type = c->type;
			fl.l_whence = SEEK_SET;
			fl.l_start = c->start;
			fl.l_len = c->end == OFF_MAX ? 0 : c->end - c->start + 1;
			fl.l_pid = c->pid;
		}
		return copy_out(t->mm, arg, &fl, sizeof(fl));
	}
	switch (fl.l_type) {
	case F_UNLCK:
		err = cut(ino, owner, start, end);
		waitq_wake(&unlocked, 0);
		return err;
	case F_RDLCK:
		if ((f->flags & O_ACCMODE) == O_WRONLY)
			return -EBADF;
		break;
	case F_WRLCK:
		if ((f->flags & O_ACCMODE) == O_RDONLY)
			return -EBADF;
		break;
	default:
		return -EINVAL;
	}
	if (conflict(ino, owner, fl.l_type, start, end)) {
		if (!wait)
			return -EAGAIN;
		if ((err = task_wait_queue(t, &unlocked, 0)))
			return err;
		return task_block(t); /* a signal ends it with EINTR (ERESTARTSYS) */
	}
	struct range_lock *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOLCK;
	if ((err = cut(ino, owner, start, end))) {
		free(l);
		return err;
	}
	*l = (struct range_lock){ino, fl.l_type, start, end, owner, ofd ? -1 : t->tgid, ranges};
	ranges = l;
	waitq_wake(&unlocked, 0); /* a downgrade may let readers in */
	return 0;
}

static bool posix_of(const struct range_lock *l, void *arg)
{
	const void **key = arg; /* {leader, inode or NULL for all} */

	return l->owner == key[0] && l->pid != -1 && (!key[1] || l->ino == key[1]);
}

static bool ofd_of(const struct range_lock *l, void *file)
{
	return l->owner == file;
}

static void drop_whole(struct vfs_file *f)
{
	for (struct whole_lock **pp = &wholes; *pp;) {
		if ((*pp)->file == f) {
			struct whole_lock *w = *pp;
			*pp = w->next;
			free(w);
			waitq_wake(&unlocked, 0);
		} else {
			pp = &(*pp)->next;
		}
	}
}

long locks_flock(struct task *t, struct vfs_file *f, int op)
{
	const void *ino = inode_of(f);
	int kind = op & ~LOCK_NB;

	if (op & 32)
		return 0; /* LOCK_MAND: Linux has ignored it since 5.15 */
	if (kind != LOCK_SH && kind != LOCK_EX && kind != LOCK_UN)
		return -EINVAL;
	if (!ino)
		return -EINVAL;
	if (kind == LOCK_UN) {
		drop_whole(f);
		return 0;
	}
	for (struct whole_lock *w = wholes; w; w = w->next)
		if (w->ino == ino && w->file != f && (w->exclusive || kind == LOCK_EX)) {
			if (op & LOCK_NB)
				return -EWOULDBLOCK;
			long err = task_wait_queue(t, &unlocked, 0);
			return err ? err : task_block(t);
		}
	for (struct whole_lock *w = wholes; w; w = w->next)
		if (w->file == f) {
			w->exclusive = kind == LOCK_EX; /* a conversion */
			waitq_wake(&unlocked, 0);
			return 0;
		}
	struct whole_lock *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOLCK;
	*w = (struct whole_lock){ino, f, kind == LOCK_EX, wholes};
	wholes = w;
	return 0;
}

void locks_on_close(struct task *t, struct vfs_file *f)
{
	const void *key[2] = {t->group_leader, inode_of(f)};

	if (key[1])
		release_where(posix_of, (void *)key);
	if (f->refs == 1) { /* the description dies with this close */
		release_where(ofd_of, f);
		drop_whole(f);
	}
}

void locks_on_exit(struct task *leader)
{
	void *key[2] = {leader, NULL};

	release_where(posix_of, key);
}

long sys_flock(struct task *t, const unsigned long *a)
{
	int op = arg_int(a, 1) & ~LOCK_NB;
	struct vfs_file *f = arg_file_nopath(t, arg_int(a, 0));

	/* The operation is checked before the descriptor, as Linux does. */
	if (op != LOCK_SH && op != LOCK_EX && op != LOCK_UN)
		return -EINVAL;
	if (!f)
		return -EBADF;
	return locks_flock(t, f, arg_int(a, 1));
}

/* --- checkpoint ---------------------------------------------------------------------------- */

/* Range locks, in list order (F_GETLK reports the first conflict):
 *	u8 posix, then u32 tgid (POSIX) or nothing (OFD: the file below is the owner),
 *	CK_FILE ref of a file on the locked inode, u32 type, i64 start, i64 end;
 * then flock locks: CK_FILE ref of the owner, bool exclusive. */

/* A file open on INO in some fd table, those of LEADER's process first; NULL if none. */
static struct vfs_file *file_on(const void *ino, struct task *leader)
{
	for (int pass = 0; pass < 2; pass++)
		for_each_task(t) {
			if ((t->group_leader == leader) != (pass == 0) || !t->files)
				continue;
			for (int fd = 0; fd < t->files->n; fd++) {
				struct vfs_file *f = t->files->fds[fd].file;
				if (f && inode_of(f) == ino)
					return f;
			}
		}
	return NULL;
}

int locks_save(struct enc *e)
{
	uint64_t n = 0;

	for (struct range_lock *l = ranges; l; l = l->next)
		n++;
	enc_u64(e, n);
	for (struct range_lock *l = ranges; l; l = l->next) {
		bool posix = l->pid != -1;
		struct vfs_file *f = posix ? file_on(l->ino, l->owner) : l->owner;
		if (!f)
			return enc_fail(e, "a POSIX lock on a file no process has open");
		enc_bool(e, posix);
		if (posix)
			enc_u32(e, (uint32_t)((struct task *)l->owner)->tgid);
		enc_ref(e, CK_FILE, f);
		enc_u32(e, (uint32_t)l->type);
		enc_i64(e, l->start);
		enc_i64(e, l->end);
	}
	n = 0;
	for (struct whole_lock *w = wholes; w; w = w->next)
		n++;
	enc_u64(e, n);
	for (struct whole_lock *w = wholes; w; w = w->next) {
		enc_ref(e, CK_FILE, w->file);
		enc_bool(e, w->exclusive);
	}
	return enc_ok(e) ? 0 : -EOPNOTSUPP;
}

static void drop_all(void)
{
	while (ranges) {
		struct range_lock *l = ranges;
		ranges = l->next;
		free(l);
	}
	while (wholes) {
		struct whole_lock *w = wholes;
		wholes = w->next;
		free(w);
	}
}

static int load_ranges(struct dec *d)
{
	struct range_lock **tail = &ranges;
	uint64_t n = dec_u64(d);

	while (*tail)
		tail = &(*tail)->next;
	for (uint64_t i = 0; i < n && dec_ok(d); i++) {
		bool posix = dec_bool(d);
		pid_t tgid = posix ? (pid_t)dec_u32(d) : -1;
		struct vfs_file *f = dec_ref(d, CK_FILE);
		int type = (int)dec_u32(d);
		off_t start = dec_i64(d), end = dec_i64(d);
		struct task *leader = posix ? task_by_tid(tgid) : NULL;
		struct range_lock *l;

		if (!dec_ok(d))
			break;
		if (!f || !inode_of(f) || (type != F_RDLCK && type != F_WRLCK) || start < 0 ||
		    end < start || (posix && (!leader || leader->group_leader != leader)))
			return dec_fail(d, "bad record lock");
		if (!(l = malloc(sizeof(*l))))
			return dec_fail(d, "out of memory");
		*l = (struct range_lock){
		    inode_of(f), type, start, end, posix ? (void *)leader : (void *)f, tgid, NULL};
		*tail = l;
		tail = &l->next;
	}
	return dec_ok(d) ? 0 : -EINVAL;
}

static int load_wholes(struct dec *d)
{
	struct whole_lock **tail = &wholes;
	uint64_t n = dec_u64(d);

	while (*tail)
		tail = &(*tail)->next;
	for (uint64_t i = 0; i < n && dec_ok(d); i++) {
		struct vfs_file *f = dec_ref(d, CK_FILE);
		bool exclusive = dec_bool(d);
		struct whole_lock *w;

		if (!dec_ok(d))
			break;
		if (!f || !inode_of(f))
			return dec_fail(d, "bad flock lock");
		for (w = wholes; w; w = w->next)
			if (w->file == f)
				return dec_fail(d, "a file with two flock locks");
		if (!(w = malloc(sizeof(*w))))
			return dec_fail(d, "out of memory");
		*w = (struct whole_lock){inode_of(f), f, exclusive, NULL};
		*tail = w;
		tail = &w->next;
	}
	return dec_ok(d) ? 0 : -EINVAL;
}

int locks_load(struct dec *d)
{
	if (load_ranges(d) || load_wholes(d) || !dec_ok(d)) {
		drop_all();
		return dec_fail(d, "bad file lock record");
	}
	return 0;
}
