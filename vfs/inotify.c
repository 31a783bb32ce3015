/* inotify (man 7 inotify): an instance is a file whose read(2) returns struct inotify_event
 * records; a watch ties a watch descriptor of one instance to an inode, through a reference to
 * the dentry it was added on (which keeps the dentry cached, so later lookups of that name find
 * the same inode). The VFS's hooks (vfs_notify_*, Linux's fsnotify) find the watches of the
 * inodes an operation touched in one table keyed by inode and queue events, merged and capped
 * as Linux does. Nothing blocks here: an empty read is -EAGAIN and the syscall layer waits on
 * the instance's queue. */
#include "vfs/inotify.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>

#include "vfs/internal.h"
#include "vfs/save.h"
#include "vfs/waitq.h"

/* The flags a watch keeps besides the events it wants (Linux's INOTIFY_USER_MASK). */
#define IN_WATCH_FLAGS (IN_ONESHOT | IN_EXCL_UNLINK)
#define IN_HASH_SIZE 256

struct in_event {
	struct in_event *next;
	int32_t wd;
	uint32_t mask, cookie;
	uint32_t len; /* the name's room as read(2) shows it: NUL-padded to 16 bytes, or 0 */
	char name[];
};

struct inotify;

struct in_watch {
	struct inotify *in; /* NULL once removed (then on the deferred list) */
	int wd;
	uint32_t mask;		   /* IN_ALL_EVENTS bits wanted, and IN_WATCH_FLAGS */
	struct vfs_dentry *dentry; /* a reference: the name the watch was added on */
	struct vfs_inode *inode;   /* DENTRY's, borrowed: the watch's key */
	struct in_watch *next;	   /* the instance's watches; the deferred list */
	struct in_watch *hnext;	   /* the table's chain */
};

struct inotify {
	struct waitq wq;
	struct in_watch *watches;
	int nwatches;
	int last_wd; /* descriptors are handed out cyclically upwards, as Linux's idr does */
	struct in_event *head, **tail, *last; /* LAST: the tail event while HEAD is set */
	unsigned int nevents, max_events;
	size_t bytes;	      /* what FIONREAD reports */
	bool overflow_queued; /* an IN_Q_OVERFLOW is in the queue (one at a time) */
	bool releasing;	      /* the last close: removed watches queue nothing */
	uid_t uid;
	struct inotify *next_instance;
};

static const struct vfs_file_ops inotify_ops;

static struct in_watch *table[IN_HASH_SIZE];
static unsigned int nwatches_all;
static struct inotify *instances;
static uint32_t last_cookie;
/* Watches removed while the table was being walked: their dentries are put afterwards
 * (flush_deferred), since a put can free dentries and reach the hooks again. */
static struct in_watch *deferred;
static long limits[3] = {16384, 128, 8192};

int vfs_inotify_set_limit(int which, long value)
{
	if (which < 0 || which > 2 || value < 0 || value > INT32_MAX)
		return -EINVAL;
	limits[which] = value;
	return 0;
}

static unsigned int hash_of(const struct vfs_inode *ino)
{
	uintptr_t p = (uintptr_t)ino;

	return (unsigned int)((p >> 4) ^ (p >> 12)) % IN_HASH_SIZE;
}

/* --- the queue --------------------------------------------------------------------------- */

static size_t event_size(const struct in_event *ev)
{
	return sizeof(struct inotify_event) + ev->len;
}

/* Appends an event to IN's queue as it is, and wakes readers. */
static void append_event(struct inotify *in, int wd, uint32_t mask, uint32_t cookie,
			 const char *name)
{
	size_t namelen = name ? strlen(name) : 0;
	/* The name's room: its NUL, padded to a multiple of the record's 16 bytes. */
	uint32_t len = namelen ? (uint32_t)((namelen + 1 + 15) & ~(size_t)15) : 0;
	struct in_event *ev = calloc(1, sizeof(*ev) + len);

	if (!ev)
		return; /* Linux queues an overflow then; here memory is the Sentry's */
	ev->wd = wd;
	ev->mask = mask;
	ev->cookie = cookie;
	ev->len = len;
	if (namelen)
		memcpy(ev->name, name, namelen);
	if (mask == IN_Q_OVERFLOW && wd == -1)
		in->overflow_queued = true;
	*in->tail = ev;
	in->tail = &ev->next;
	in->last = ev;
	in->nevents++;
	in->bytes += event_size(ev);
	waitq_wake(&in->wq, POLLIN);
}

/* Linux's fsnotify_add_event with inotify_merge: an event identical to the last one queued is
 * dropped, and a full queue takes one IN_Q_OVERFLOW (wd -1) instead of anything more. */
static void queue_event(struct inotify *in, int wd, uint32_t mask, uint32_t cookie,
			const char *name)
{
	struct in_event *last = in->head ? in->last : NULL;

	if (in->releasing)
		return;
	if (in->nevents >= in->max_events) {
		if (!in->overflow_queued)
			append_event(in, -1, IN_Q_OVERFLOW, 0, NULL);
		return;
	}
	if (last && last->wd == wd && last->mask == mask && last->cookie == cookie &&
	    (name ? last->len && strcmp(last->name, name) == 0 : !last->len))
		return;
	append_event(in, wd, mask, cookie, name);
}

static struct in_event *dequeue(struct inotify *in)
{
	struct in_event *ev = in->head;

	if (!ev)
		return NULL;
	if (!(in->head = ev->next))
		in->tail = &in->head;
	in->nevents--;
	in->bytes -= event_size(ev);
	if (ev->mask == IN_Q_OVERFLOW && ev->wd == -1)
		in->overflow_queued = false;
	return ev;
}

/* --- watches ----------------------------------------------------------------------------- */

static void table_add(struct in_watch *w)
{
	unsigned int h = hash_of(w->inode);

	w->hnext = table[h];
	table[h] = w;
	nwatches_all++;
}

static void table_del(struct in_watch *w)
{
	struct in_watch **pp = &table[hash_of(w->inode)];

	while (*pp != w)
		pp = &(*pp)->hnext;
	*pp = w->hnext;
	nwatches_all--;
}

/* Takes W out of its instance and the table, queues IN_IGNORED for it (Linux's
 * inotify_ignored_and_remove_idr) and defers the put of its dentry. */
static void watch_remove(struct in_watch *w)
{
	struct inotify *in = w->in;
	struct in_watch **pp = &in->watches;

	while (*pp != w)
		pp = &(*pp)->next;
	*pp = w->next;
	in->nwatches--;
	table_del(w);
	queue_event(in, w->wd, IN_IGNORED, 0, NULL);
	w->in = NULL;
	w->next = deferred;
	deferred = w;
}

static void flush_deferred(void)
{
	struct in_watch *w;

	while ((w = deferred)) {
		deferred = w->next;
		vfs_dentry_put(w->dentry);
		free(w);
	}
}

static struct in_watch *find_watch(struct inotify *in, struct vfs_inode *ino)
{
	for (struct in_watch *w = in->watches; w; w = w->next)
		if (w->inode == ino)
			return w;
	return NULL;
}

/* The next free descriptor after the last handed out (wrapping at INT_MAX back to 1). */
static int next_wd(struct inotify *in)
{
	int wd = in->last_wd;

	for (;;) {
		bool used = false;

		wd = wd == INT32_MAX ? 1 : wd + 1;
		for (struct in_watch *w = in->watches; w && !used; w = w->next)
			used = w->wd == wd;
		if (!used)
			return wd;
	}
}

static int user_count(uid_t uid, bool watches)
{
	int n = 0;

	for (struct inotify *in = instances; in; in = in->next_instance)
		if (in->uid == uid)
			n += watches ? in->nwatches : 1;
	return n;
}

static struct inotify *inotify_of(struct vfs_file *f)
{
	return f->priv;
}

int vfs_inotify_add_watch(struct vfs_file *f, struct vfs_dentry *d, uint32_t mask)
{
	struct inotify *in = inotify_of(f);
	uint32_t keep = mask & (IN_ALL_EVENTS | IN_WATCH_FLAGS);
	struct in_watch *w = find_watch(in, d->inode);

	if (w) {
		if (mask & IN_MASK_CREATE)
			return -EEXIST;
		w->mask = (mask & IN_MASK_ADD) ? w->mask | keep : keep;
		return w->wd;
	}
	if (user_count(in->uid, true) >= limits[2])
		return -ENOSPC;
	if (!(w = calloc(1, sizeof(*w))))
		return -ENOMEM;
	w->in = in;
	w->wd = in->last_wd = next_wd(in);
	w->mask = keep;
	w->dentry = vfs_dentry_get(d);
	w->inode = d->inode;
	w->next = in->watches;
	in->watches = w;
	in->nwatches++;
	table_add(w);
	return w->wd;
}

int vfs_inotify_rm_watch(struct vfs_file *f, int wd)
{
	struct inotify *in = inotify_of(f);

	for (struct in_watch *w = in->watches; w; w = w->next) {
		if (w->wd == wd) {
			watch_remove(w);
			flush_deferred();
			return 0;
		}
	}
	return -EINVAL;
}

void vfs_inotify_foreach_watch(struct vfs_file *f,
			       void (*fn)(int wd, uint32_t mask, struct vfs_dentry *d, void *arg),
			       void *arg)
{
	for (struct in_watch *w = inotify_of(f)->watches; w; w = w->next)
		fn(w->wd, w->mask, w->dentry, arg);
}

/* --- delivery ---------------------------------------------------------------------------- */

/* One event to watch W (Linux's inotify_handle_inode_event). UNLINKED: the event comes from an
 * open file whose name is gone, which IN_EXCL_UNLINK watches do not hear of. */
static void watch_send(struct in_watch *w, uint32_t mask, uint32_t cookie, const char *name,
		       bool unlinked)
{
	if (!(w->mask & mask & IN_ALL_EVENTS))
		return;
	if ((w->mask & IN_EXCL_UNLINK) && unlinked)
		return;
	/* Linux never reported IN_ISDIR with these two, and keeps it so. */
	if (mask & (IN_MOVE_SELF | IN_DELETE_SELF))
		mask &= ~(uint32_t)IN_ISDIR;
	queue_event(w->in, w->wd, mask, cookie, name);
	if (w->mask & IN_ONESHOT)
		watch_remove(w);
}

/* To every watch on INO, in the order they were added (older instances first). */
static void inode_send(struct vfs_inode *ino, uint32_t mask, uint32_t cookie, const char *name,
		       bool unlinked)
{
	struct in_watch *w, *next, *hits[64];
	int n = 0;

	if (!ino)
		return;
	/* The chain is newest first: collect, then deliver oldest first. watch_send removes only
	 * the watch it is given, so the others stay valid. */
	for (w = table[hash_of(ino)]; w; w = next) {
		next = w->hnext;
		if (w->inode != ino)
			continue;
		if (n == 64) { /* more watches on one inode than that: deliver in chain order */
			watch_send(w, mask, cookie, name, unlinked);
			continue;
		}
		hits[n++] = w;
	}
	while (n-- > 0)
		watch_send(hits[n], mask, cookie, name, unlinked);
}

static uint32_t isdir_bit(struct vfs_dentry *d)
{
	return vfs_is_dir(d) ? IN_ISDIR : 0;
}

/* Linux's fsnotify_parent then fsnotify_inode: D's parent hears of it with D's name (a root
 * has no parent), then D itself. */
static void dentry_send(struct vfs_dentry *d, uint32_t mask, bool unlinked)
{
	mask |= isdir_bit(d);
	if (d->parent != d)
		inode_send(d->parent->inode, mask, 0, d->name, unlinked);
	inode_send(d->inode, mask, 0, NULL, unlinked);
}

static void file_send(struct vfs_file *f, uint32_t mask)
{
	if (!nwatches_all || !f->dentry || !f->dentry->inode || (f->flags & O_PATH))
		return;
	dentry_send(f->dentry, mask, f->dentry->unhashed);
	flush_deferred();
}

void vfs_notify_open(struct vfs_file *f)
{
	file_send(f, IN_OPEN);
}

void vfs_notify_close(struct vfs_file *f)
{
	file_send(f, (f->flags & O_ACCMODE) == O_RDONLY ? IN_CLOSE_NOWRITE : IN_CLOSE_WRITE);
}

void vfs_notify_access(struct vfs_file *f)
{
	file_send(f, IN_ACCESS);
}

void vfs_notify_modify(struct vfs_file *f)
{
	file_send(f, IN_MODIFY);
}

void vfs_notify_create(struct vfs_dentry *dir, const char *name, bool isdir)
{
	if (!nwatches_all)
		return;
	inode_send(dir->inode, IN_CREATE | (isdir ? IN_ISDIR : 0), 0, name, false);
	flush_deferred();
}

void vfs_notify_link(struct vfs_dentry *old, struct vfs_dentry *dir, const char *name)
{
	if (!nwatches_all)
		return;
	inode_send(old->inode, IN_ATTRIB, 0, NULL, false); /* its link count */
	inode_send(dir->inode, IN_CREATE, 0, name, false);
	flush_deferred();
}

/* Whether D's inode is gone with its name: its link count is 0 (a directory always is once
 * removed). Inodes of other filesystems than memfs (the overlay's, the host's) stand for one
 * name each, so the name's removal is theirs. */
static bool inode_gone(struct vfs_dentry *d)
{
	struct stat st;

	if (!memfs_is(d->inode) || S_ISDIR(d->inode->mode))
		return true;
	return vfs_stat(d, &st) == 0 && st.st_nlink == 0;
}

/* True if removed name N is held by watches alone, besides EXTRA references of the caller's
 * on D. */
static bool held_by_watches(struct vfs_dentry *n, struct vfs_dentry *d, int extra)
{
	int held = 0;

	for (struct in_watch *w = table[hash_of(n->inode)]; w; w = w->hnext)
		held += w->dentry == n;
	return n->unhashed && n->refs - (n == d ? extra : 0) == held;
}

/* D (unhashed, with EXTRA references of the caller) is about to lose them. When every name
 * of its inode that is still around — D and those its watches were added on (a hard link's
 * other name) — is held by watches alone, and the inode is gone: IN_DELETE_SELF to the
 * inode's watches, then IN_IGNORED as they go (Linux's dentry_unlink_inode). */
static void check_gone(struct vfs_dentry *d, int extra)
{
	struct in_watch *w, *next;
	bool watched = false;

	if (!d->unhashed || !d->inode || !held_by_watches(d, d, extra))
		return;
	for (w = table[hash_of(d->inode)]; w; w = w->hnext) {
		if (w->inode != d->inode)
			continue;
		if (!held_by_watches(w->dentry, d, extra))
			return;
		watched = true;
	}
	if (!watched || !inode_gone(d))
		return;
	inode_send(d->inode, IN_DELETE_SELF, 0, NULL, false);
	for (w = table[hash_of(d->inode)]; w; w = next) {
		next = w->hnext;
		if (w->inode == d->inode)
			watch_remove(w);
	}
}

void vfs_notify_remove(struct vfs_dentry *dir, struct vfs_dentry *victim, const char *name,
		       bool isdir)
{
	if (!nwatches_all)
		return;
	/* Linux's vfs_unlink: fsnotify_link_count, d_delete (the inode's last name: its
	 * watches go), then fsnotify_delete in the parent. rmdir has no link-count event. */
	if (!isdir)
		inode_send(victim->inode, IN_ATTRIB, 0, NULL, false);
	check_gone(victim, 1);
	inode_send(dir->inode, IN_DELETE | (isdir ? IN_ISDIR : 0), 0, name, false);
	flush_deferred();
}

/* Linux's fsnotify_move: one cookie pairs the two halves. */
static void send_move(struct vfs_dentry *odir, const char *oname, struct vfs_dentry *ndir,
		      const char *nname, struct vfs_dentry *moved, struct vfs_dentry *replaced)
{
	uint32_t cookie = ++last_cookie ? last_cookie : ++last_cookie;
	uint32_t isdir = isdir_bit(moved);

	inode_send(odir->inode, IN_MOVED_FROM | isdir, cookie, oname, false);
	inode_send(ndir->inode, IN_MOVED_TO | isdir, cookie, nname, false);
	if (replaced)
		inode_send(replaced->inode, IN_ATTRIB, 0, NULL, false);
	inode_send(moved->inode, IN_MOVE_SELF | isdir, 0, NULL, false);
}

void vfs_notify_rename(struct vfs_dentry *odir, const char *oname, struct vfs_dentry *src,
		       struct vfs_dentry *ndir, const char *nname, struct vfs_dentry *tgt,
		       bool exchange)
{
	if (!nwatches_all)
		return;
	send_move(odir, oname, ndir, nname, src, exchange ? NULL : tgt);
	if (exchange)
		send_move(ndir, nname, odir, oname, tgt, NULL);
	flush_deferred();
}

/* Linux's fsnotify_change: both times set is utime(s) (IN_ATTRIB), one alone reads as an
 * access or a modification. */
void vfs_notify_setattr(struct vfs_dentry *d, unsigned int valid)
{
	unsigned int times = valid & (VFS_ATTR_ATIME | VFS_ATTR_MTIME);
	uint32_t mask = 0;

	if (!nwatches_all)
		return;
	if (valid & (VFS_ATTR_UID | VFS_ATTR_GID | VFS_ATTR_MODE))
		mask |= IN_ATTRIB;
	if (valid & VFS_ATTR_SIZE)
		mask |= IN_MODIFY;
	if (times == (VFS_ATTR_ATIME | VFS_ATTR_MTIME))
		mask |= IN_ATTRIB;
	else if (times == VFS_ATTR_ATIME)
		mask |= IN_ACCESS;
	else if (times == VFS_ATTR_MTIME)
		mask |= IN_MODIFY;
	if (mask)
		dentry_send(d, mask, false);
	flush_deferred();
}

void vfs_notify_dentry_put(struct vfs_dentry *d)
{
	if (!nwatches_all)
		return;
	check_gone(d, 1);
	flush_deferred();
}

/* --- the file ---------------------------------------------------------------------------- */

/* Linux's inotify_read into one buffer: whole events while they fit; -EINVAL if not even
 * the first does, -EAGAIN if there is none. */
static ssize_t read_one(struct inotify *in, char *buf, size_t room)
{
	size_t done = 0;

	while (in->head) {
		struct in_event *ev = in->head;
		struct inotify_event hdr = {
		    .wd = ev->wd, .mask = ev->mask, .cookie = ev->cookie, .len = ev->len};

		if (event_size(ev) > room - done) {
			if (!done)
				return -EINVAL;
			break;
		}
		memcpy(buf + done, &hdr, sizeof(hdr));
		memcpy(buf + done + sizeof(hdr), ev->name, ev->len);
		done += event_size(ev);
		free(dequeue(in));
	}
	return done ? (ssize_t)done : -EAGAIN;
}

/* An instance has a read op and no read_iter in Linux, so readv reads piece by piece and stops
 * at the first piece not filled (do_loop_readv_writev). */
static ssize_t inotify_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	ssize_t total = 0;

	(void)pos;
	for (int i = 0; i < iovcnt; i++) {
		if (!iov[i].iov_len)
			continue;
		ssize_t r = read_one(inotify_of(f), iov[i].iov_base, iov[i].iov_len);
		if (r < 0)
			return total ? total : r;
		total += r;
		if ((size_t)r < iov[i].iov_len)
			break;
	}
	return total;
}

static uint32_t inotify_poll(struct vfs_file *f, struct waitq **wq)
{
	struct inotify *in = inotify_of(f);

	*wq = &in->wq;
	return in->head ? POLLIN | POLLRDNORM : 0;
}

static long inotify_ioctl(struct vfs_file *f, unsigned int cmd, void *arg)
{
	struct inotify *in = inotify_of(f);

	if (cmd != FIONREAD)
		return -ENOTTY;
	*(int *)arg = (int)in->bytes;
	return 0;
}

static void inotify_free(struct inotify *in)
{
	struct inotify **pp = &instances;

	in->releasing = true;
	while (in->watches)
		watch_remove(in->watches);
	while (in->head)
		free(dequeue(in));
	while (*pp && *pp != in)
		pp = &(*pp)->next_instance;
	if (*pp)
		*pp = in->next_instance;
	waitq_detach_all(&in->wq);
	free(in);
	flush_deferred();
}

static void inotify_release(struct vfs_file *f)
{
	inotify_free(inotify_of(f));
}

/* Linux's noop_llseek: lseek succeeds and says 0; pread stays ESPIPE. */
static off_t inotify_llseek(struct vfs_file *f, off_t off, int whence)
{
	(void)f, (void)off, (void)whence;
	return 0;
}

static const struct vfs_file_ops inotify_ops = {
    .read = inotify_read,
    .llseek = inotify_llseek,
    .ioctl = inotify_ioctl,
    .getattr = vfs_anon_getattr,
    .poll = inotify_poll,
    .release = inotify_release,
};

static struct inotify *inotify_alloc(uid_t uid)
{
	struct inotify *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	in->tail = &in->head;
	in->max_events = (unsigned int)limits[0];
	in->uid = uid;
	in->next_instance = instances;
	instances = in;
	return in;
}

int vfs_inotify_new(int flags, uid_t uid, struct vfs_file **out)
{
	struct vfs_file *f;
	struct inotify *in;

	if (user_count(uid, false) >= limits[1])
		return -EMFILE;
	if (!(f = calloc(1, sizeof(*f))))
		return -ENOMEM;
	if (!(in = inotify_alloc(uid))) {
		free(f);
		return -ENOMEM;
	}
	f->ops = &inotify_ops;
	f->refs = 1;
	f->flags = O_RDONLY | (flags & O_NONBLOCK);
	f->priv = in;
	*out = f;
	return 0;
}

bool vfs_is_inotify(struct vfs_file *f)
{
	return f->ops == &inotify_ops;
}

/* --- checkpoint -------------------------------------------------------------------------- */

/* The instance's owner, limits and descriptor counter, its watches (wd, mask, and the dentry
 * as a CK_DENTRY reference) newest first, and its unread events in order. Rename cookies are
 * Sentry-wide and not saved: a restore continues past the largest one it loads. */
static int inotify_save(struct enc *e, struct vfs_file *f)
{
	struct inotify *in = inotify_of(f);

	enc_u32(e, (uint32_t)in->uid);
	enc_u32(e, in->max_events);
	enc_u32(e, (uint32_t)in->last_wd);
	enc_u32(e, (uint32_t)in->nwatches);
	for (struct in_watch *w = in->watches; w; w = w->next) {
		enc_u32(e, (uint32_t)w->wd);
		enc_u32(e, w->mask);
		enc_ref(e, CK_DENTRY, w->dentry);
	}
	enc_u32(e, in->nevents);
	for (struct in_event *ev = in->head; ev; ev = ev->next) {
		enc_u32(e, (uint32_t)ev->wd);
		enc_u32(e, ev->mask);
		enc_u32(e, ev->cookie);
		enc_str(e, ev->len ? ev->name : NULL);
	}
	return 0;
}

static int inotify_load(struct dec *d, struct vfs_file *f)
{
	char name[NAME_MAX + 1];
	struct inotify *in;
	struct in_watch **wtail;
	uint32_t uid = dec_u32(d), max_events = dec_u32(d), last_wd = dec_u32(d), n;

	if (!dec_ok(d) || last_wd > INT32_MAX)
		return dec_fail(d, "bad inotify record");
	if (!(in = inotify_alloc((uid_t)uid)))
		return dec_fail(d, "out of memory");
	in->max_events = max_events;
	in->last_wd = (int)last_wd;
	f->priv = in;
	wtail = &in->watches;
	n = dec_u32(d);
	for (uint32_t i = 0; i < n && dec_ok(d); i++) {
		uint32_t wd = dec_u32(d), mask = dec_u32(d);
		struct vfs_dentry *dent = dec_ref(d, CK_DENTRY);
		struct in_watch *w;

		if (!dec_ok(d))
			break;
		if (!dent || !dent->inode || wd == 0 || wd > INT32_MAX ||
		    (mask & ~(uint32_t)(IN_ALL_EVENTS | IN_WATCH_FLAGS)) ||
		    find_watch(in, dent->inode)) {
			dec_fail(d, "bad inotify watch");
			break;
		}
		for (w = in->watches; w && w->wd != (int)wd; w = w->next)
			;
		if (w || !(w = calloc(1, sizeof(*w)))) {
			dec_fail(d, w ? "bad inotify watch" : "out of memory");
			break;
		}
		w->in = in;
		w->wd = (int)wd;
		w->mask = mask;
		w->dentry = vfs_dentry_get(dent);
		w->inode = dent->inode;
		*wtail = w; /* in the saved order */
		wtail = &w->next;
		in->nwatches++;
		table_add(w);
	}
	n = dec_ok(d) ? dec_u32(d) : 0;
	for (uint32_t i = 0; i < n && dec_ok(d); i++) {
		uint32_t wd = dec_u32(d), mask = dec_u32(d), cookie = dec_u32(d);
		char *s = dec_str_buf(d, name, sizeof(name));

		if (!dec_ok(d) || (s && (!*s || strchr(s, '/')))) {
			dec_fail(d, "bad inotify event");
			break;
		}
		/* As it was read: no merging, no cap. */
		append_event(in, (int)wd, mask, cookie, s);
		if (cookie > last_cookie)
			last_cookie = cookie;
	}
	if (!dec_ok(d)) {
		inotify_free(in);
		f->priv = NULL;
		return -EINVAL;
	}
	return 0;
}

const struct vfs_file_kind vfs_inotify_kind = {
    .name = "inotify",
    .ops = &inotify_ops,
    .save = inotify_save,
    .load = inotify_load,
};
