/* The part of every socket the families share (vfs/sock.h): references, the receive queue of
 * messages with the charge each one puts on its sender or its receiver, the SOL_SOCKET
 * options Linux keeps in struct sock (and sock_setsockopt checks the same way for every
 * family), and the inode fstat shows. */
#include "vfs/sock.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "state/codec.h"

#define SOCKFS_DEV 0x8
#define SOCKFS_MAGIC 0x534F434B
/* Socket timeouts are kept in jiffies by Linux, so what getsockopt reads back is the value
 * rounded up to a tick: the sandbox's kernel ticks at 250 Hz. */
#define SOCK_HZ 250
#define SOCK_TIMEO_MAX_SECS (INT32_MAX / SOCK_HZ) /* beyond it: no timeout, as for Linux */

static ino_t next_ino = 100000; /* st_ino of sockets */

/* The boolean SOL_SOCKET options, one bit each in sock_opts.flags. */
static const int flag_names[] = {SO_REUSEADDR,	 SO_KEEPALIVE, SO_BROADCAST,	   SO_DONTROUTE,
				 SO_OOBINLINE,	 SO_REUSEPORT, SO_TIMESTAMP,	   SO_PASSSEC,
				 SO_TIMESTAMPNS, SO_RXQ_OVFL,  SO_SELECT_ERR_QUEUE};

static int flag_bit(int name)
{
	for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++)
		if (flag_names[i] == name)
			return (int)i;
	return -1;
}

void sock_core_init(struct sock_core *c, int type, const struct vfs_unix_cred *owner, size_t sndbuf,
		    size_t rcvbuf, void (*free_fn)(struct sock_core *c))
{
	c->refs = 1;
	c->free = free_fn;
	c->type = type;
	c->rq = NULL;
	c->rq_tail = &c->rq;
	c->rq_bytes = c->rmem = c->wmem = 0;
	c->sndbuf = sndbuf;
	c->rcvbuf = rcvbuf;
	memset(&c->opts, 0, sizeof(c->opts));
	c->opts.rcvlowat = 1;
	c->wq.head = NULL;
	c->ino = next_ino++;
	c->owner = *owner;
	clock_gettime(CLOCK_REALTIME, &c->created);
	vfs_pseudo_init(&c->pi, SOCKFS_MAGIC, SOCKFS_DEV, 0777, owner->uid, owner->gid, c->created);
}

struct vfs_pseudo_inode *sock_pseudo_inode(struct vfs_file *f)
{
	return &((struct sock_core *)f->priv)->pi;
}

void sock_ino_seen(ino_t ino)
{
	if (ino >= next_ino)
		next_ino = ino + 1;
}

struct sock_core *sock_core_get(struct sock_core *c)
{
	c->refs++;
	return c;
}

void sock_core_put(struct sock_core *c)
{
	if (!c || --c->refs > 0)
		return;
	sock_rq_purge(c);
	waitq_detach_all(&c->wq);
	c->free(c);
}

void sock_core_getattr(const struct sock_core *c, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = SOCKFS_DEV;
	st->st_ino = c->ino;
	st->st_mode = S_IFSOCK;
	st->st_nlink = 1;
	st->st_blksize = 4096;
	st->st_atim = st->st_mtim = c->created;
	vfs_pseudo_stat(&c->pi, st);
}

/* --- iovecs -------------------------------------------------------------------------------- */

size_t sock_iov_total(const struct iovec *iov, int n)
{
	size_t t = 0;

	for (int i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

void sock_iov_copy_to(const struct iovec *iov, int n, size_t skip, const char *src, size_t len)
{
	for (int i = 0; i < n && len; i++) {
		if (skip >= iov[i].iov_len) {
			skip -= iov[i].iov_len;
			continue;
		}
		size_t c = iov[i].iov_len - skip;
		if (c > len)
			c = len;
		memcpy((char *)iov[i].iov_base + skip, src, c);
		src += c;
		len -= c;
		skip = 0;
	}
}

void sock_iov_copy_from(char *dst, const struct iovec *iov, int n, size_t len)
{
	for (int i = 0; i < n && len; i++) {
		size_t c = iov[i].iov_len < len ? iov[i].iov_len : len;
		memcpy(dst, iov[i].iov_base, c);
		dst += c;
		len -= c;
	}
}

/* --- messages and the receive queue --------------------------------------------------------- */

struct sock_msg *sock_msg_new(struct sock_core *sender, const struct iovec *iov, int n, size_t len,
			      size_t cap, size_t cost)
{
	struct sock_msg *m = malloc(sizeof(*m) + (cap > len ? cap : len));

	if (!m)
		return NULL;
	memset(m, 0, sizeof(*m));
	if (iov)
		sock_iov_copy_from(m->data, iov, n, len);
	m->len = len;
	m->cap = cap > len ? cap : len;
	m->cost = cost;
	if (sender) {
		m->sender = sock_core_get(sender);
		sender->wmem += cost;
	}
	return m;
}

void sock_msg_free(struct sock_msg *m)
{
	for (int i = 0; i < m->nfiles; i++)
		vfs_file_put(m->files[i]);
	free(m->files);
	if (m->sender) {
		m->sender->wmem -= m->cost;
		waitq_wake(&m->sender->wq, POLLOUT);
		sock_core_put(m->sender);
	}
	free(m);
}

void sock_rq_push(struct sock_core *c, struct sock_msg *m)
{
	m->next = NULL;
	*c->rq_tail = m;
	c->rq_tail = &m->next;
	c->rq_bytes += m->len - m->off;
	if (!m->sender)
		c->rmem += m->cost;
	waitq_wake(&c->wq, POLLIN);
}

struct sock_msg *sock_rq_pop(struct sock_core *c)
{
	struct sock_msg *m = c->rq;

	if (!m)
		return NULL;
	c->rq = m->next;
	if (!c->rq)
		c->rq_tail = &c->rq;
	m->next = NULL;
	c->rq_bytes -= m->len - m->off;
	if (!m->sender)
		c->rmem -= m->cost;
	return m;
}

void sock_rq_consume(struct sock_core *c, struct sock_msg *m, size_t n)
{
	m->off += n;
	c->rq_bytes -= n;
}

bool sock_rq_append(struct sock_core *c, const struct iovec *iov, int n, size_t len)
{
	struct sock_msg *m =
	    c->rq ? (struct sock_msg *)((char *)c->rq_tail - offsetof(struct sock_msg, next))
		  : NULL;

	if (!m || m->nfiles || m->cap - m->len < len)
		return false;
	sock_iov_copy_from(m->data + m->len, iov, n, len);
	m->len += len;
	c->rq_bytes += len;
	if (m->sender)
		m->sender->wmem += len;
	else
		c->rmem += len;
	m->cost += len;
	waitq_wake(&c->wq, POLLIN);
	return true;
}

void sock_rq_purge(struct sock_core *c)
{
	struct sock_msg *m;

	/* Freeing a message may release other sockets that look at this one (the files it
	 * carries): take the whole queue off first. */
	m = c->rq;
	c->rq = NULL;
	c->rq_tail = &c->rq;
	c->rq_bytes = 0;
	c->rmem = 0;
	while (m) {
		struct sock_msg *next = m->next;
		sock_msg_free(m);
		m = next;
	}
}

/* --- options ------------------------------------------------------------------------------- */

size_t sock_buf_size(int v, size_t min)
{
	unsigned int u = (unsigned int)v;

	if (u > SOCK_BUF_MAX)
		u = SOCK_BUF_MAX;
	return (size_t)u * 2 < min ? min : (size_t)u * 2;
}

bool sock_opt(const struct sock_core *c, int name)
{
	int bit = flag_bit(name);

	return bit >= 0 && (c->opts.flags & (1u << bit));
}

/* Linux's sock_set_timeout: a timeval (either layout is 16 bytes on x86_64), microseconds in
 * range, a negative time meaning none, kept in ticks. */
static int set_timeout(struct timespec *ts, const void *val, unsigned int len)
{
	struct {
		int64_t sec, usec;
	} tv;

	if (len < sizeof(tv))
		return -EINVAL;
	memcpy(&tv, val, sizeof(tv));
	if (tv.usec < 0 || tv.usec >= 1000000)
		return -EDOM;
	if (tv.sec < 0 || tv.sec >= SOCK_TIMEO_MAX_SECS || (tv.sec == 0 && tv.usec == 0)) {
		*ts = (struct timespec){0, 0};
		return 0;
	}
	long tick_us = 1000000 / SOCK_HZ;
	int64_t ticks = tv.sec * SOCK_HZ + (tv.usec + tick_us - 1) / tick_us;
	ts->tv_sec = ticks / SOCK_HZ;
	ts->tv_nsec = (ticks % SOCK_HZ) * tick_us * 1000;
	return 0;
}

int sock_core_getsockopt(struct sock_core *c, int name, void *val, unsigned int *len)
{
	int v, bit;

	switch (name) {
	case SO_SNDBUF:
		v = (int)c->sndbuf;
		break;
	case SO_RCVBUF:
		v = (int)c->rcvbuf;
		break;
	case SO_RCVLOWAT:
		v = c->opts.rcvlowat;
		break;
	case SO_SNDLOWAT:
		v = 1;
		break;
	case SO_PRIORITY:
		v = c->opts.priority;
		break;
	case SO_RCVTIMEO_OLD:
	case SO_SNDTIMEO_OLD:
	case SO_RCVTIMEO_NEW:
	case SO_SNDTIMEO_NEW: {
		bool rcv = name == SO_RCVTIMEO_OLD || name == SO_RCVTIMEO_NEW;
		const struct timespec *ts = rcv ? &c->opts.rcvtimeo : &c->opts.sndtimeo;
		int64_t tv[2] = {ts->tv_sec, ts->tv_nsec / 1000};
		memcpy(val, tv, sizeof(tv));
		*len = sizeof(tv);
		return 0;
	}
	case SO_LINGER: {
		int l[2] = {c->opts.linger_onoff, c->opts.linger_secs};
		memcpy(val, l, sizeof(l));
		*len = sizeof(l);
		return 0;
	}
	default:
		if ((bit = flag_bit(name)) < 0)
			return -ENOPROTOOPT;
		v = !!(c->opts.flags & (1u << bit));
	}
	memcpy(val, &v, sizeof(v));
	*len = sizeof(v);
	return 0;
}

int sock_core_setsockopt(struct sock_core *c, int name, const void *val, unsigned int len)
{
	int v = 0, bit;

	switch (name) {
	case SO_RCVTIMEO_OLD:
	case SO_RCVTIMEO_NEW:
		return set_timeout(&c->opts.rcvtimeo, val, len);
	case SO_SNDTIMEO_OLD:
	case SO_SNDTIMEO_NEW:
		return set_timeout(&c->opts.sndtimeo, val, len);
	case SO_LINGER: {
		int l[2];
		if (len < sizeof(l))
			return -EINVAL;
		memcpy(l, val, sizeof(l));
		c->opts.linger_onoff = l[0] != 0;
		c->opts.linger_secs = l[0] ? (l[1] < 0 ? 0 : l[1]) : c->opts.linger_secs;
		return 0;
	}
	}
	if (flag_bit(name) < 0 && name != SO_SNDBUF && name != SO_RCVBUF && name != SO_RCVLOWAT &&
	    name != SO_PRIORITY)
		return -ENOPROTOOPT;
	if (len < sizeof(int))
		return -EINVAL;
	memcpy(&v, val, sizeof(v));
	switch (name) {
	case SO_SNDBUF:
		c->sndbuf = sock_buf_size(v, SOCK_MIN_SNDBUF);
		waitq_wake(&c->wq, POLLOUT);
		return 0;
	case SO_RCVBUF:
		c->rcvbuf = sock_buf_size(v, SOCK_MIN_RCVBUF);
		return 0;
	case SO_RCVLOWAT:
		c->opts.rcvlowat = v < 0 ? 0x7fffffff : (v ? v : 1);
		return 0;
	case SO_PRIORITY:
		if ((v < 0 || v > 6) && c->owner.uid != 0)
			return -EPERM; /* CAP_NET_ADMIN */
		c->opts.priority = v;
		return 0;
	}
	bit = flag_bit(name);
	if (v)
		c->opts.flags |= 1u << bit;
	else
		c->opts.flags &= ~(1u << bit);
	return 0;
}

/* --- checkpoint ---------------------------------------------------------------------------- */

/* A saved time the socket keeps (a timeout, its creation time): never negative. */
static bool dec_sock_time(struct dec *d, struct timespec *ts)
{
	*ts = dec_timespec(d);
	return ts->tv_sec >= 0;
}

static void sock_opts_save(struct enc *e, const struct sock_opts *o)
{
	enc_u32(e, o->flags);
	enc_u32(e, (uint32_t)o->rcvlowat);
	enc_u32(e, (uint32_t)o->priority);
	enc_timespec(e, o->rcvtimeo);
	enc_timespec(e, o->sndtimeo);
	enc_u32(e, (uint32_t)o->linger_onoff);
	enc_u32(e, (uint32_t)o->linger_secs);
}

static int sock_opts_load(struct dec *d, struct sock_opts *o)
{
	o->flags = dec_u32(d);
	o->rcvlowat = (int)dec_u32(d);
	o->priority = (int)dec_u32(d);
	bool ok = dec_sock_time(d, &o->rcvtimeo) && dec_sock_time(d, &o->sndtimeo);
	o->linger_onoff = (int)dec_u32(d);
	o->linger_secs = (int)dec_u32(d);
	if (!dec_ok(d))
		return -EINVAL;
	if (!ok || o->rcvlowat < 0 || o->linger_onoff > 1 || o->linger_secs < 0 ||
	    o->flags >= (1u << (sizeof(flag_names) / sizeof(flag_names[0]))))
		return dec_fail(d, "bad socket options");
	return 0;
}

void sock_cred_save(struct enc *e, const struct vfs_unix_cred *c)
{
	enc_u32(e, (uint32_t)c->pid);
	enc_u32(e, c->uid);
	enc_u32(e, c->gid);
}

struct vfs_unix_cred sock_cred_load(struct dec *d)
{
	struct vfs_unix_cred c;

	c.pid = (int32_t)dec_u32(d);
	c.uid = dec_u32(d);
	c.gid = dec_u32(d);
	return c;
}

void sock_core_save(struct enc *e, const struct sock_core *c)
{
	sock_cred_save(e, &c->owner);
	enc_u64(e, c->sndbuf);
	enc_u64(e, c->rcvbuf);
	sock_opts_save(e, &c->opts);
	enc_u64(e, c->ino);
	enc_timespec(e, c->created);
}

int sock_core_load(struct dec *d, struct sock_core *c)
{
	c->owner = sock_cred_load(d);
	c->sndbuf = dec_u64(d);
	c->rcvbuf = dec_u64(d);
	if (sock_opts_load(d, &c->opts))
		return -EINVAL;
	c->ino = dec_u64(d);
	bool ok = dec_sock_time(d, &c->created);
	if (!dec_ok(d))
		return -EINVAL;
	vfs_pseudo_init(&c->pi, SOCKFS_MAGIC, SOCKFS_DEV, 0777, c->owner.uid, c->owner.gid,
			c->created);
	if (!ok || c->sndbuf < SOCK_MIN_SNDBUF || c->sndbuf > SOCK_BUF_GROWN_MAX ||
	    c->rcvbuf < SOCK_MIN_RCVBUF || c->rcvbuf > SOCK_BUF_GROWN_MAX)
		return dec_fail(d, "bad socket state");
	sock_ino_seen(c->ino);
	return 0;
}

const struct vfs_sock_ops *vfs_sock_ops(struct vfs_file *f)
{
	return f->ops->sock;
}
