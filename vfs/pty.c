/* Pseudo-terminal pairs (vfs/pty.h), after Linux's pty.c and devpts: each open of /dev/ptmx
 * makes a pair numbered from 1 (0 is the sandbox's own terminal, as a container engine's -t
 * pty is), locked until TIOCSPTLCK unlocks it, whose slave /dev/pts/N exists while the master
 * is open. Master writes are typed input and master reads show the output, through the pair's
 * line discipline (vfs/tty_ldisc.c); the slave is the terminal a program sees. A pair lives
 * while any of its files does; the node goes with the master, after which the slave is hung
 * up (reads give end of file, writes EIO). */
#include "vfs/pty.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <termios.h>

#include "common/units.h"
#include "vfs/internal.h"
#include "vfs/save.h"
#include "vfs/synth.h"
#include "vfs/tty_ldisc.h"
#include "vfs/waitq.h"

#define PTY_SLAVE_MAJOR 136
#define PTY_MAX 4096	     /* /proc/sys/kernel/pty/max */
#define PTY_FIRST 1	     /* 0 is the sandbox's terminal */
#define PTY_INO_BASE 0x10000 /* inode numbers of the pts nodes: past devfs's static ones */

struct pty {
	int index;
	bool locked;	   /* TIOCSPTLCK: the slave cannot be opened */
	int masters;	   /* open master files */
	int slaves;	   /* open slave files */
	bool slave_closed; /* the slave was open and is not any more: master reads give EIO */
	bool hung;	   /* the master is gone: the node too, and the slave is hung up */
	struct tty_ldisc ld;
	struct vfs_tty_ctl ctl;
	struct waitq wq; /* any change of either side's readiness */
	uid_t uid;	 /* the slave node's owner: who opened the master */
	gid_t gid;
	struct pty *next; /* in the table, by index */
};

static struct pty *ptys;
static struct vfs_pty_hooks hooks;
static const struct vfs_file_ops master_ops, slave_ops;

void vfs_pty_set_hooks(const struct vfs_pty_hooks *h)
{
	hooks = *h;
}

static struct pty *pty_find(int index)
{
	for (struct pty *p = ptys; p; p = p->next)
		if (p->index == index)
			return p;
	return NULL;
}

static void pty_signal(void *arg, int sig)
{
	struct pty *p = arg;

	if (p->ctl.pgrp > 0 && hooks.signal_pgrp)
		hooks.signal_pgrp(p->ctl.pgrp, sig);
}

/* A new pair with the lowest free number, entered in the table. */
static struct pty *pty_new(int index)
{
	struct pty *p = calloc(1, sizeof(*p)), **at;

	if (!p)
		return NULL;
	if (tty_ldisc_init(&p->ld)) {
		free(p);
		return NULL;
	}
	p->ld.signal = pty_signal;
	p->ld.arg = p;
	p->ld.ws = (struct winsize){0};
	p->index = index;
	p->locked = true;
	for (at = &ptys; *at && (*at)->index < index; at = &(*at)->next)
		;
	p->next = *at;
	*at = p;
	return p;
}

static int pty_free_index(void)
{
	int index = PTY_FIRST;

	for (struct pty *p = ptys; p && p->index == index; p = p->next)
		index++;
	return index < PTY_MAX ? index : -ENOSPC;
}

static void pty_put_if_unused(struct pty *p)
{
	struct pty **at;

	if (p->masters || p->slaves)
		return;
	for (at = &ptys; *at != p; at = &(*at)->next)
		;
	*at = p->next;
	waitq_detach_all(&p->wq);
	tty_ldisc_free(&p->ld);
	free(p);
}

static size_t iov_total(const struct iovec *iov, int n)
{
	size_t t = 0;

	for (int i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

/* --- the master ------------------------------------------------------------------------------ */

/* Data moves through a bounce buffer: the queues are rings and a read may stop at a line's end,
 * neither of which maps onto the caller's iovecs one to one. */
static void iov_scatter(const struct iovec *iov, int iovcnt, const uint8_t *p, size_t n)
{
	for (int i = 0; i < iovcnt && n; i++) {
		size_t c = iov[i].iov_len < n ? iov[i].iov_len : n;
		memcpy(iov[i].iov_base, p, c);
		p += c;
		n -= c;
	}
}

static size_t iov_gather(const struct iovec *iov, int iovcnt, uint8_t *p, size_t max)
{
	size_t n = 0;

	for (int i = 0; i < iovcnt && n < max; i++) {
		size_t c = iov[i].iov_len < max - n ? iov[i].iov_len : max - n;
		memcpy(p + n, iov[i].iov_base, c);
		n += c;
	}
	return n;
}

static uint8_t bounce[TTY_OUT_SIZE > TTY_IN_SIZE ? TTY_OUT_SIZE : TTY_IN_SIZE];

static ssize_t master_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct pty *p = f->priv;
	size_t want = iov_total(iov, iovcnt), n;

	(void)pos;
	if (want == 0)
		return 0;
	if (!p->ld.out.len)
		return p->slave_closed ? -EIO : -EAGAIN;
	n = tty_ldisc_take_output(&p->ld, bounce, want < sizeof(bounce) ? want : sizeof(bounce));
	iov_scatter(iov, iovcnt, bounce, n);
	waitq_wake(&p->wq, POLLOUT);
	return (ssize_t)n;
}

/* Typed input: as much as the input queue takes; the rest waits for a reader. */
static ssize_t master_write(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct pty *p = f->priv;
	size_t n, done;

	(void)pos;
	if (iov_total(iov, iovcnt) == 0)
		return 0;
	n = iov_gather(iov, iovcnt, bounce, sizeof(bounce));
	done = tty_ldisc_receive(&p->ld, bounce, n);
	if (done) /* input, echoes, and VSTART letting a stopped slave writer go on */
		waitq_wake(&p->wq, 0);
	return done ? (ssize_t)done : -EAGAIN;
}

static uint32_t master_poll(struct vfs_file *f, struct waitq **wq)
{
	struct pty *p = f->priv;
	uint32_t m = 0;

	*wq = &p->wq;
	if (p->ld.out.len)
		m |= POLLIN | POLLRDNORM;
	if (tty_ldisc_receive_room(&p->ld))
		m |= POLLOUT | POLLWRNORM;
	if (p->slave_closed)
		m |= POLLHUP;
	return m;
}

static void pty_hangup(struct pty *p)
{
	pid_t sid = p->ctl.sid, pgrp = p->ctl.pgrp;

	p->hung = true;
	p->ctl.sid = p->ctl.pgrp = 0;
	waitq_wake(&p->wq, 0);
	if (sid && hooks.hangup)
		hooks.hangup(sid, pgrp);
}

static void master_release(struct vfs_file *f)
{
	struct pty *p = f->priv;

	if (!p)
		return;
	if (--p->masters == 0)
		pty_hangup(p);
	pty_put_if_unused(p);
}

/* --- the slave ------------------------------------------------------------------------------- */

/* Linux's n_tty_read with VMIN/VTIME (man 3 termios): canonical reads wait for a line;
 * non-canonical ones for VMIN bytes, or until VTIME tenths of a second passed (since the read
 * began when VMIN is 0, else since data came: here, since the read saw some). */
static ssize_t slave_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct pty *p = f->priv;
	struct tty_ldisc *l = &p->ld;
	size_t want = iov_total(iov, iovcnt), avail, n;
	bool eof, canon = l->t.c_lflag & ICANON, nonblock = f->flags & O_NONBLOCK;
	unsigned int vmin = l->t.c_cc[VMIN], vtime = l->t.c_cc[VTIME];
	int err;

	(void)pos;
	if (p->hung)
		return 0;
	if (hooks.job_check && (err = hooks.job_check(&p->ctl, SIGTTIN)))
		return err;
	if (want == 0)
		return 0;
	avail = tty_ldisc_readable(l);
	if (!canon && !nonblock) {
		if (!avail && !vmin && !vtime)
			return 0;
		if (!avail && !vmin)
			return hooks.read_timeout && hooks.read_timeout(vtime) ? 0 : -EAGAIN;
		if (avail && avail < want && avail < vmin &&
		    (!vtime || !hooks.read_timeout || !hooks.read_timeout(vtime)))
			return -EAGAIN;
	}
	if (!avail)
		return -EAGAIN;
	n = tty_ldisc_read(l, bounce, want < sizeof(bounce) ? want : sizeof(bounce), &eof);
	iov_scatter(iov, iovcnt, bounce, n);
	waitq_wake(&p->wq, POLLOUT);
	return (ssize_t)n;
}

static ssize_t slave_write(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct pty *p = f->priv;
	size_t want = iov_total(iov, iovcnt), n, done = 0;
	int err;

	(void)pos;
	if (p->hung)
		return -EIO;
	if ((p->ld.t.c_lflag & TOSTOP) && hooks.job_check &&
	    (err = hooks.job_check(&p->ctl, SIGTTOU)))
		return err;
	if (want == 0)
		return 0;
	n = iov_gather(iov, iovcnt, bounce, sizeof(bounce));
	done = tty_ldisc_write(&p->ld, bounce, n);
	if (done)
		waitq_wake(&p->wq, POLLIN);
	return done ? (ssize_t)done : -EAGAIN;
}

static uint32_t slave_poll(struct vfs_file *f, struct waitq **wq)
{
	struct pty *p = f->priv;
	struct tty_ldisc *l = &p->ld;
	uint32_t m = 0;
	size_t need = 1;

	*wq = &p->wq;
	if (p->hung)
		return POLLIN | POLLOUT | POLLERR | POLLHUP | POLLRDNORM | POLLWRNORM;
	/* Linux's input_available_p for poll: non-canonical without VTIME waits for VMIN. */
	if (!(l->t.c_lflag & ICANON) && !l->t.c_cc[VTIME] && l->t.c_cc[VMIN])
		need = l->t.c_cc[VMIN];
	if (tty_ldisc_readable(l) >= need)
		m |= POLLIN | POLLRDNORM;
	if (!l->stopped && l->out.len + 2 <= l->out.cap)
		m |= POLLOUT | POLLWRNORM;
	return m;
}

static void slave_release(struct vfs_file *f)
{
	struct pty *p = f->priv;

	if (!p)
		return;
	if (--p->slaves == 0) {
		p->slave_closed = true;
		waitq_wake(&p->wq, 0);
	}
	pty_put_if_unused(p);
}

/* --- ioctls both sides share ------------------------------------------------------------------ */

static long pty_ioctl(struct vfs_file *f, unsigned int cmd, void *arg)
{
	struct pty *p = f->priv;
	bool master = f->ops == &master_ops;
	struct tty_ldisc *l = &p->ld;

	if (p->hung && !master)
		return cmd == TIOCSPGRP ? -ENOTTY : -EIO; /* Linux's hung_up_tty_ioctl */
	/* Linux's tty_check_change: a background group changing its terminal gets SIGTTOU. */
	if (!master && hooks.job_check &&
	    (cmd == TCSETS || cmd == TCSETSW || cmd == TCSETSF || cmd == TCFLSH || cmd == TCXONC)) {
		int err = hooks.job_check(&p->ctl, SIGTTOU);
		if (err)
			return err;
	}
	switch (cmd) {
	case TCGETS:
		memcpy(arg, &l->t, sizeof(l->t));
		return 0;
	case TCSETSF:
		tty_ldisc_flush(l, true, false);
		/* fall through */
	case TCSETS:
	case TCSETSW: { /* output is never pending inside the pair: nothing to drain */
		struct tty_termios t;
		memcpy(&t, arg, sizeof(t));
		tty_ldisc_set_termios(l, &t);
		waitq_wake(&p->wq, 0);
		return 0;
	}
	case TIOCGWINSZ:
		memcpy(arg, &l->ws, sizeof(l->ws));
		return 0;
	case TIOCSWINSZ: {
		struct winsize ws;
		memcpy(&ws, arg, sizeof(ws));
		if (memcmp(&ws, &l->ws, sizeof(ws)) == 0)
			return 0;
		l->ws = ws;
		pty_signal(p, SIGWINCH);
		return 0;
	}
	case FIONREAD: /* TIOCINQ */
		*(int *)arg = master ? (int)l->out.len : (int)tty_ldisc_inq(l);
		return 0;
	case TIOCOUTQ: /* what this side wrote that the other has not read */
		*(int *)arg = master ? 0 : (int)l->out.len;
		return 0;
	case TCFLSH: {
		long q = *(long *)arg;
		if (q != TCIFLUSH && q != TCOFLUSH && q != TCIOFLUSH)
			return -EINVAL;
		/* The master's input is the slave's output. */
		bool in = q != TCOFLUSH, out = q != TCIFLUSH;
		tty_ldisc_flush(l, master ? out : in, master ? in : out);
		waitq_wake(&p->wq, 0);
		return 0;
	}
	case TCXONC: {
		long a = *(long *)arg;
		if (a == TCOOFF || a == TCOON)
			l->stopped = a == TCOOFF;
		else if (a != TCIOFF && a != TCION)
			return -EINVAL;
		waitq_wake(&p->wq, 0);
		return 0;
	}
	case TCSBRK:
		return 0;
	case TIOCGPTN:
		if (!master)
			return -ENOTTY;
		*(unsigned int *)arg = (unsigned int)p->index;
		return 0;
	case TIOCSPTLCK:
		if (!master)
			return -ENOTTY;
		p->locked = *(int *)arg != 0;
		return 0;
	case TIOCGPTLCK:
		if (!master)
			return -ENOTTY;
		*(int *)arg = p->locked;
		return 0;
	}
	return -ENOTTY;
}

static int pty_getattr(struct vfs_file *f, struct stat *st)
{
	return vfs_stat(f->dentry, st);
}

static const struct vfs_file_ops master_ops = {
    .read = master_read,
    .write = master_write,
    .ioctl = pty_ioctl,
    .getattr = pty_getattr,
    .poll = master_poll,
    .release = master_release,
};

static const struct vfs_file_ops slave_ops = {
    .read = slave_read,
    .write = slave_write,
    .ioctl = pty_ioctl,
    .getattr = pty_getattr,
    .poll = slave_poll,
    .release = slave_release,
};

/* --- opening -----------------------------------------------------------------------------------
 */

int vfs_ptmx_open(struct vfs_inode *ino, struct vfs_file *f, int flags)
{
	int index = pty_free_index();
	struct pty *p;

	(void)ino, (void)flags;
	if (index < 0)
		return index;
	if (!(p = pty_new(index)))
		return -ENOMEM;
	if (hooks.current_cred)
		hooks.current_cred(&p->uid, &p->gid);
	p->gid = 5; /* devpts's gid=5 (tty), as distributions mount it */
	p->masters = 1;
	f->ops = &master_ops;
	f->priv = p;
	f->seekable = false;
	return 0;
}

static int slave_attach(struct pty *p, struct vfs_file *f, int flags)
{
	if (!p || p->hung)
		return -EIO;
	if (p->locked)
		return -EIO;
	f->ops = &slave_ops;
	f->priv = p;
	f->seekable = false;
	p->slaves++;
	p->slave_closed = false;
	if (!(flags & O_NOCTTY) && hooks.open_ctty)
		hooks.open_ctty(&p->ctl);
	waitq_wake(&p->wq, 0);
	return 0;
}

static int pts_open(struct vfs_inode *ino, struct vfs_file *f, int flags)
{
	return slave_attach(pty_find((int)(uintptr_t)vfs_synth_priv(ino)), f, flags);
}

/* devpts's dynamic part: the node of every pair whose master is open (a pair being restored,
 * or with its slave still open, is found too, so that an open slave's name keeps resolving). */
static void pts_node(struct pty *p, struct vfs_synth_node *node, char *namebuf, ino_t *ino)
{
	snprintf(namebuf, NAME_MAX + 1, "%d", p->index);
	*node = (struct vfs_synth_node){
	    .name = namebuf,
	    .mode = S_IFCHR | 0620,
	    .dev_major = PTY_SLAVE_MAJOR + (unsigned)p->index / 256, /* Linux's 136-143 */
	    .dev_minor = (unsigned)p->index % 256,
	    .open = pts_open,
	    .priv = (void *)(uintptr_t)p->index,
	    .uid = p->uid,
	    .gid = p->gid,
	};
	*ino = PTY_INO_BASE + (ino_t)p->index;
}

static int pts_lookup(const char *name, struct vfs_synth_node *node, char *namebuf, ino_t *ino)
{
	char *end;
	long index = strtol(name, &end, 10);
	struct pty *p;

	if (*end || end == name || (name[0] == '0' && name[1]) || index < PTY_FIRST ||
	    !(p = pty_find((int)index)))
		return -ENOENT;
	pts_node(p, node, namebuf, ino);
	return 0;
}

static bool pts_next(uint64_t *key, struct vfs_synth_node *node, char *namebuf, ino_t *ino)
{
	for (struct pty *p = ptys; p; p = p->next)
		if ((uint64_t)p->index >= *key && !p->hung) {
			*key = (uint64_t)p->index;
			pts_node(p, node, namebuf, ino);
			return true;
		}
	return false;
}

const struct vfs_synth_dynamic vfs_devpts_dynamic = {
    .lookup = pts_lookup,
    .next = pts_next,
};

/* The slave of pair P as a new file on its node under the devpts directory of DEV (a dentry
 * of the devfs tree: /dev/ptmx's or /dev/pts/ptmx's). */
static int open_slave_file(struct pty *p, struct vfs_dentry *from, int flags, struct vfs_file **out)
{
	struct vfs_dentry *dir = from->parent, *pts = NULL, *node = NULL;
	char name[16];
	struct vfs_file *f;
	int err;

	snprintf(name, sizeof(name), "%d", p->index);
	if (strcmp(dir->name, "pts") == 0 && vfs_dentry_child(dir, name, &node) == 0)
		goto found;
	if ((err = vfs_dentry_child(dir, "pts", &pts)))
		return err;
	err = vfs_dentry_child(pts, name, &node);
	vfs_dentry_put(pts);
	if (err)
		return err;
found:
	if (!(f = calloc(1, sizeof(*f)))) {
		vfs_dentry_put(node);
		return -ENOMEM;
	}
	f->refs = 1;
	f->dentry = node; /* the lookup's reference */
	f->flags =
	    (flags & (O_ACCMODE | O_NONBLOCK | O_APPEND | O_NOCTTY | O_CLOEXEC)) | O_LARGEFILE;
	f->flags &= ~(O_NOCTTY | O_CLOEXEC);
	if ((err = slave_attach(p, f, flags))) {
		f->ops = NULL;
		vfs_file_put(f);
		return err;
	}
	*out = f;
	return 0;
}

int vfs_pty_open_peer(struct vfs_file *f, int flags, struct vfs_file **out)
{
	struct pty *p = f->priv;

	if (f->ops != &master_ops)
		return -EIO; /* Linux's ptm_open_peer: a slave has no peer to open */
	if (flags & ~(O_ACCMODE | O_NOCTTY | O_NONBLOCK | O_CLOEXEC))
		return -EINVAL;
	if (p->locked)
		return -EIO;
	if (!f->dentry)
		return -EIO;
	return open_slave_file(p, f->dentry, flags, out);
}

int vfs_pty_open_ctty(struct vfs_file *f, int flags)
{
	pid_t sid = hooks.current_sid ? hooks.current_sid() : 0;

	for (struct pty *p = ptys; sid && p; p = p->next)
		if (p->ctl.sid == sid && !p->hung) {
			/* /dev/tty stands for the slave: it keeps its own name, as Linux's does. */
			return slave_attach(p, f, flags | O_NOCTTY);
		}
	return -ENOENT;
}

bool vfs_is_pty(struct vfs_file *f, bool *master)
{
	bool m = f->ops == &master_ops;

	if (master)
		*master = m;
	return m || f->ops == &slave_ops;
}

struct vfs_tty_ctl *vfs_pty_ctl(struct vfs_file *f)
{
	return vfs_is_pty(f, NULL) ? &((struct pty *)f->priv)->ctl : NULL;
}

struct vfs_tty_ctl *vfs_pty_of_session(pid_t sid, int *index)
{
	for (struct pty *p = ptys; sid && p; p = p->next)
		if (p->ctl.sid == sid) {
			if (index)
				*index = p->index;
			return &p->ctl;
		}
	return NULL;
}

/* --- checkpoint --------------------------------------------------------------------------------
 */

/* Every pair, in the devfs mount record (docs/image-format.md, "pty"): files only name their
 * pair by number and count themselves in again when loaded. */
int vfs_pty_save_all(struct enc *e)
{
	uint32_t n = 0;
	uint8_t *buf;

	for (struct pty *p = ptys; p; p = p->next)
		n++;
	enc_u32(e, n);
	for (struct pty *p = ptys; p; p = p->next) {
		struct tty_ldisc *l = &p->ld;
		enc_u32(e, (uint32_t)p->index);
		enc_bool(e, p->locked);
		enc_bool(e, p->slave_closed);
		enc_bool(e, p->hung);
		enc_raw(e, &l->t, sizeof(l->t));
		enc_u32(e, l->ws.ws_row);
		enc_u32(e, l->ws.ws_col);
		enc_u32(e, l->ws.ws_xpixel);
		enc_u32(e, l->ws.ws_ypixel);
		enc_bool(e, l->lnext);
		enc_bool(e, l->stopped);
		enc_u32(e, (uint32_t)p->ctl.sid);
		enc_u32(e, (uint32_t)p->ctl.pgrp);
		enc_u32(e, p->uid);
		enc_u32(e, p->gid);
		if (!(buf = malloc(TTY_OUT_SIZE)))
			return enc_fail(e, "out of memory");
		tty_queue_copy(&l->in, buf);
		enc_bytes(e, buf, l->in.len);
		for (size_t i = 0; i < l->in.len; i++)
			buf[i] = l->in_mark[(l->in.head + i) % l->in.cap];
		enc_bytes(e, buf, l->in.len);
		enc_u64(e, l->canon_len);
		tty_queue_copy(&l->out, buf);
		enc_bytes(e, buf, l->out.len);
		free(buf);
	}
	return enc_ok(e) ? 0 : -ENOMEM;
}

static int load_one(struct dec *d, int *last)
{
	uint32_t index = dec_u32(d);
	struct pty *p;
	size_t n, nm, no;

	if (!dec_ok(d) || (int)index <= *last || index >= PTY_MAX || index < PTY_FIRST)
		return dec_fail(d, "bad pty record");
	if (!(p = pty_new((int)index)))
		return dec_fail(d, "out of memory");
	*last = (int)index;
	struct tty_ldisc *l = &p->ld;
	p->locked = dec_bool(d);
	p->slave_closed = dec_bool(d);
	p->hung = dec_bool(d);
	dec_raw(d, &l->t, sizeof(l->t));
	l->ws.ws_row = (unsigned short)dec_u32(d);
	l->ws.ws_col = (unsigned short)dec_u32(d);
	l->ws.ws_xpixel = (unsigned short)dec_u32(d);
	l->ws.ws_ypixel = (unsigned short)dec_u32(d);
	l->lnext = dec_bool(d);
	l->stopped = dec_bool(d);
	p->ctl.sid = (pid_t)dec_u32(d);
	p->ctl.pgrp = (pid_t)dec_u32(d);
	p->uid = dec_u32(d);
	p->gid = dec_u32(d);
	const uint8_t *in = dec_bytes(d, &n);
	const uint8_t *mark = dec_bytes(d, &nm);
	uint64_t canon = dec_u64(d);
	const uint8_t *out = dec_bytes(d, &no);
	if (!dec_ok(d) || n > l->in.cap || nm != n || canon > n || no > l->out.cap)
		return dec_fail(d, "bad pty record");
	for (size_t i = 0; i < n; i++)
		if (mark[i] > TTY_MARK_EOF)
			return dec_fail(d, "bad pty record");
	memcpy(l->in.buf, in, n);
	memcpy(l->in_mark, mark, n);
	l->in.len = n;
	l->canon_len = canon;
	memcpy(l->out.buf, out, no);
	l->out.len = no;
	return 0;
}

/* Pairs loaded but whose files did not come (a bad image, a failed restore) are freed by
 * vfs_pty_drop_unused at the end of the load; the others by their last file's release. */
int vfs_pty_load_all(struct dec *d)
{
	uint32_t n = dec_u32(d);
	int last = 0;

	if (!dec_ok(d) || n > PTY_MAX)
		return dec_fail(d, "bad pty table");
	if (ptys)
		return dec_fail(d, "ptys loaded into a Sentry that has some");
	for (uint32_t i = 0; i < n; i++)
		if (load_one(d, &last))
			return -EINVAL;
	return 0;
}

bool vfs_pty_any(void)
{
	return ptys != NULL;
}

void vfs_pty_drop_unused(void)
{
	struct pty *next;

	for (struct pty *p = ptys; p; p = next) {
		next = p->next;
		pty_put_if_unused(p);
	}
}

static int pty_file_save(struct enc *e, struct vfs_file *f)
{
	enc_u32(e, (uint32_t)((struct pty *)f->priv)->index);
	return 0;
}

static int pty_file_load(struct dec *d, struct vfs_file *f)
{
	struct pty *p = pty_find((int)dec_u32(d));

	if (!dec_ok(d) || !p)
		return dec_fail(d, "a pty file of a pair that is not in the image");
	f->priv = p;
	if (f->ops == &master_ops)
		p->masters++;
	else
		p->slaves++;
	return 0;
}

const struct vfs_file_kind vfs_pty_master_kind = {
    .name = "pty-master",
    .ops = &master_ops,
    .save = pty_file_save,
    .load = pty_file_load,
};

const struct vfs_file_kind vfs_pty_slave_kind = {
    .name = "pty-slave",
    .ops = &slave_ops,
    .save = pty_file_save,
    .load = pty_file_load,
};
