/* Unix domain sockets: SOCK_STREAM, SOCK_DGRAM and SOCK_SEQPACKET objects as files, the
 * Sentry-wide name table (abstract names, and filesystem names until the VFS has S_IFSOCK
 * inodes), and messages carrying SCM_RIGHTS file references and credentials. Like pipes, the
 * objects never block: they return -EAGAIN and wake their wait queue when that changes. The
 * model is Linux's af_unix.c: a message is charged to its sender until it is read. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#include "common/units.h"
#include "vfs/internal.h"
#include "vfs/save.h"
#include "vfs/sock.h"
#include "vfs/vfs.h"
#include "vfs/waitq.h"

#define RCV_SHUTDOWN 1
#define SEND_SHUTDOWN 2
#define SHUTDOWN_MASK 3

/* What a queued datagram costs its sender beyond its bytes (Linux charges skb truesize). */
#define UNIX_DGRAM_OVERHEAD 512

enum unix_state { UNIX_CLOSE, UNIX_LISTEN, UNIX_CONNECTED };

struct unix_name {
	struct unix_name *next;
	bool abstract;
	int type; /* abstract names are per type, as in Linux */
	size_t keylen;
	struct vfs_unix_sock *sock; /* no reference: the socket's release removes the name */
	char key[];
};

/* The core's references: its file's (or an accept queue's), its peer's, its messages'. Every
 * message on its queue is paid by its sender (sock.h). */
struct vfs_unix_sock {
	struct sock_core c;
	enum unix_state state;
	int shutdown; /* RCV_SHUTDOWN | SEND_SHUTDOWN, own and mirrored from the peer */
	int err;      /* SO_ERROR: ECONNRESET when a peer went away with data unread */
	bool dead;    /* its file is gone (or, for an embryo, its listener) */
	struct vfs_file *file;
	struct vfs_unix_sock *peer; /* reference */
	/* A listener's queue of embryos: server-side sockets connected to their clients and
	 * waiting for accept (the queue holds their reference). */
	struct vfs_unix_sock *acc_head, *acc_tail, *acc_next;
	int acc_len, backlog;
	struct vfs_unix_sock *listener; /* an embryo's: whose queue holds it (no reference) */
	struct unix_name *name;
	char addr[VFS_UNIX_ADDR_MAX]; /* a sockaddr_un, ADDRLEN bytes; 0: unnamed */
	unsigned int addrlen;
	struct vfs_unix_cred peercred;
	bool has_peercred;
	bool passcred;
	struct vfs_unix_sock *live_next, **live_pprev;
};

static const struct vfs_file_ops unix_ops;
static struct unix_name *names;
/* Every socket with a file or in an accept queue, for /proc/net/unix (no reference). */
static struct vfs_unix_sock *live_head;

static struct vfs_unix_sock *unix_of(struct sock_core *c)
{
	return (struct vfs_unix_sock *)c;
}

static struct vfs_unix_sock *sock_get(struct vfs_unix_sock *s)
{
	sock_core_get(&s->c);
	return s;
}

static void sock_put(struct vfs_unix_sock *s)
{
	if (s)
		sock_core_put(&s->c);
}

static void live_remove(struct vfs_unix_sock *s)
{
	if (!s->live_pprev)
		return;
	*s->live_pprev = s->live_next;
	if (s->live_next)
		s->live_next->live_pprev = s->live_pprev;
	s->live_pprev = NULL;
}

static void sock_free(struct sock_core *c)
{
	live_remove(unix_of(c));
	free(unix_of(c));
}

static struct vfs_unix_sock *sock_new(int type, const struct vfs_unix_cred *owner)
{
	struct vfs_unix_sock *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	sock_core_init(&s->c, type, owner, SOCK_BUF_DEFAULT, SOCK_BUF_DEFAULT, sock_free);
	s->live_next = live_head;
	if (live_head)
		live_head->live_pprev = &s->live_next;
	live_head = s;
	s->live_pprev = &live_head;
	return s;
}

/* The sender of queued message M (every AF_UNIX message has one). */
static struct vfs_unix_sock *msg_sender(const struct sock_msg *m)
{
	return unix_of(m->sender);
}

static void name_remove(struct vfs_unix_sock *s)
{
	for (struct unix_name **pp = &names; *pp; pp = &(*pp)->next)
		if (*pp == s->name) {
			*pp = s->name->next;
			free(s->name);
			break;
		}
	s->name = NULL;
}

/* The end of a socket: its file was closed, or it was an embryo whose listener was. The peer
 * of a connection sees both directions shut (EOF, EPIPE), and ECONNRESET if this side had
 * data it never read. Queued messages are freed last, since dropping the files they carry
 * may release other sockets that look at this one. */
static void sock_release(struct vfs_unix_sock *s, bool embryo)
{
	struct vfs_unix_sock *peer = s->peer;

	s->dead = true;
	s->file = NULL;
	live_remove(s);
	if (s->name)
		name_remove(s);
	s->state = UNIX_CLOSE;
	s->shutdown = SHUTDOWN_MASK;
	if (peer) {
		if (s->c.type != SOCK_DGRAM) {
			peer->shutdown = SHUTDOWN_MASK;
			if (s->c.rq || embryo)
				peer->err = ECONNRESET;
		}
		waitq_wake(&peer->c.wq, 0);
		s->peer = NULL;
		sock_put(peer);
	}
	while (s->acc_head) {
		struct vfs_unix_sock *e = s->acc_head;
		s->acc_head = e->acc_next;
		e->listener = NULL;
		sock_release(e, true);
	}
	s->acc_tail = NULL;
	s->acc_len = 0;
	sock_rq_purge(&s->c);
	waitq_detach_all(&s->c.wq);
	sock_put(s);
}

static struct vfs_file *sock_file(struct vfs_unix_sock *s, int flags)
{
	struct vfs_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->ops = &unix_ops;
	f->refs = 1;
	f->flags = O_RDWR | (flags & O_NONBLOCK);
	f->priv = s;
	s->file = f;
	return f;
}

static bool connection_based(const struct vfs_unix_sock *s)
{
	return s->c.type == SOCK_STREAM || s->c.type == SOCK_SEQPACKET;
}

/* --- names --------------------------------------------------------------------------------- */

static struct unix_name *name_find(bool abstract, int type, const void *key, size_t len)
{
	for (struct unix_name *n = names; n; n = n->next)
		if (n->abstract == abstract && (!abstract || n->type == type) && n->keylen == len &&
		    memcmp(n->key, key, len) == 0)
			return n;
	return NULL;
}

/* Registers name KEY for S (the caller has checked it is free). */
static int name_insert(struct vfs_unix_sock *s, bool abstract, const void *key, size_t len)
{
	struct unix_name *n = malloc(sizeof(*n) + len + 1);

	if (!n)
		return -ENOMEM;
	n->abstract = abstract;
	n->type = s->c.type;
	n->keylen = len;
	memcpy(n->key, key, len);
	n->key[len] = 0;
	n->sock = s;
	n->next = names;
	names = n;
	s->name = n;
	return 0;
}

static int name_add(struct vfs_unix_sock *s, bool abstract, const void *key, size_t len)
{
	/* Linux finds a taken path before an already bound socket, and the reverse for
	 * abstract names. */
	if (!abstract && name_find(false, 0, key, len))
		return -EADDRINUSE;
	if (s->addrlen)
		return -EINVAL;
	if (name_find(abstract, s->c.type, key, len))
		return -EADDRINUSE;
	return name_insert(s, abstract, key, len);
}

static int bind_abstract(struct vfs_unix_sock *s, const void *name, size_t len)
{
	size_t max = sizeof(((struct sockaddr_un *)0)->sun_path) - 1;

	if (len > max)
		return -EINVAL;
	int err = name_add(s, true, name, len);
	if (err)
		return err;
	struct sockaddr_un *sun = (struct sockaddr_un *)s->addr;
	sun->sun_family = AF_UNIX;
	sun->sun_path[0] = 0;
	memcpy(sun->sun_path + 1, name, len);
	s->addrlen = offsetof(struct sockaddr_un, sun_path) + 1 + len;
	return 0;
}

int vfs_unix_bind_abstract(struct vfs_file *f, const void *name, size_t len)
{
	return bind_abstract(f->priv, name, len);
}

int vfs_unix_bind_path(struct vfs_file *f, const char *abs_path, const char *sun_path)
{
	struct vfs_unix_sock *s = f->priv;
	size_t len = strlen(sun_path);

	if (len == 0 || len > sizeof(((struct sockaddr_un *)0)->sun_path))
		return -EINVAL;
	int err = name_add(s, false, abs_path, strlen(abs_path));
	if (err)
		return err;
	s->addr[0] = AF_UNIX & 0xff;
	s->addr[1] = 0;
	memcpy(s->addr + offsetof(struct sockaddr_un, sun_path), sun_path, len + 1);
	s->addrlen = offsetof(struct sockaddr_un, sun_path) + len + 1;
	return 0;
}

static int sock_autobind(struct vfs_unix_sock *s)
{
	static unsigned int order;
	char name[6];

	if (s->addrlen)
		return 0;
	for (unsigned int tries = 0; tries < 0x100000; tries++) {
		snprintf(name, sizeof(name), "%05x", order++ & 0xfffff);
		if (!name_find(true, s->c.type, name, 5))
			return bind_abstract(s, name, 5);
	}
	return -ENOSPC;
}

int vfs_unix_autobind(struct vfs_file *f)
{
	struct vfs_unix_sock *s = f->priv;

	return s->addrlen ? -EINVAL : sock_autobind(s);
}

int vfs_unix_lookup_abstract(int type, const void *name, size_t len, struct vfs_unix_sock **out)
{
	struct unix_name *n = name_find(true, type, name, len);

	if (!n)
		return -ECONNREFUSED;
	*out = n->sock;
	return 0;
}

int vfs_unix_lookup_path(const char *abs_path, struct vfs_unix_sock **out)
{
	struct unix_name *n = name_find(false, 0, abs_path, strlen(abs_path));

	if (!n)
		return -ENOENT;
	*out = n->sock;
	return 0;
}

int vfs_unix_unbind_path(const char *abs_path)
{
	struct unix_name *n = name_find(false, 0, abs_path, strlen(abs_path));

	if (!n)
		return -ENOENT;
	name_remove(n->sock); /* the socket keeps its address for getsockname */
	return 0;
}

/* --- creation ------------------------------------------------------------------------------ */

static int check_type(int *type)
{
	switch (*type) {
	case SOCK_RAW:
		*type = SOCK_DGRAM; /* as Linux does for AF_UNIX */
		return 0;
	case SOCK_STREAM:
	case SOCK_DGRAM:
	case SOCK_SEQPACKET:
		return 0;
	default:
		return -ESOCKTNOSUPPORT;
	}
}

int vfs_unix_socket_new(int type, int flags, const struct vfs_unix_cred *owner,
			struct vfs_file **out)
{
	struct vfs_unix_sock *s;
	int err = check_type(&type);

	if (err)
		return err;
	if (!(s = sock_new(type, owner)))
		return -ENOMEM;
	if (!(*out = sock_file(s, flags))) {
		free(s);
		return -ENOMEM;
	}
	return 0;
}

int vfs_unix_socketpair(int type, int flags, const struct vfs_unix_cred *cred, struct vfs_file **a,
			struct vfs_file **b)
{
	int err;

	if ((err = vfs_unix_socket_new(type, flags, cred, a)))
		return err;
	if ((err = vfs_unix_socket_new(type, flags, cred, b))) {
		vfs_file_put(*a);
		return err;
	}
	struct vfs_unix_sock *sa = (*a)->priv, *sb = (*b)->priv;
	sa->peer = sock_get(sb);
	sb->peer = sock_get(sa);
	sa->state = sb->state = UNIX_CONNECTED;
	sa->peercred = sb->peercred = *cred;
	sa->has_peercred = sb->has_peercred = true;
	return 0;
}

bool vfs_is_unix_socket(struct vfs_file *f)
{
	return f->ops == &unix_ops;
}

int vfs_unix_type(struct vfs_file *f)
{
	return ((struct vfs_unix_sock *)f->priv)->c.type;
}

bool vfs_unix_sends_sigpipe(struct vfs_file *f)
{
	return vfs_is_unix_socket(f) && vfs_unix_type(f) == SOCK_STREAM;
}

int vfs_unix_woken_send_error(struct vfs_file *f)
{
	struct vfs_unix_sock *s = f->priv;

	if (!vfs_is_unix_socket(f) || s->c.type != SOCK_STREAM)
		return 0;
	if (s->err) {
		int err = s->err;
		s->err = 0;
		return -err;
	}
	return (s->shutdown & SEND_SHUTDOWN) ? -EPIPE : 0;
}

int vfs_unix_foreach(int (*fn)(const struct vfs_unix_info *i, void *arg), void *arg)
{
	for (struct vfs_unix_sock *s = live_head; s; s = s->live_next) {
		struct vfs_unix_info i = {
		    .type = s->c.type,
		    .listening = s->state == UNIX_LISTEN,
		    .state = s->state == UNIX_CONNECTED ? 3 : 1,
		    .ino = s->c.ino,
		    .refs = s->c.refs,
		    .addr = s->addr,
		    .addrlen = s->addrlen,
		};
		int r = fn(&i, arg);
		if (r)
			return r;
	}
	return 0;
}

/* --- connections --------------------------------------------------------------------------- */

int vfs_unix_listen(struct vfs_file *f, int backlog, const struct vfs_unix_cred *cred)
{
	struct vfs_unix_sock *s = f->priv;

	if (!connection_based(s))
		return -EOPNOTSUPP;
	if (!s->addrlen)
		return -EINVAL;
	if (s->state != UNIX_CLOSE && s->state != UNIX_LISTEN)
		return -EINVAL;
	if (backlog > s->backlog)
		waitq_wake(&s->c.wq, POLLOUT); /* connects waiting for room */
	s->backlog = backlog;
	s->state = UNIX_LISTEN;
	s->peercred = *cred;
	s->has_peercred = true;
	return 0;
}

/* Whether S may send to O: O is not associated with another socket. */
static bool may_send(struct vfs_unix_sock *s, struct vfs_unix_sock *o)
{
	return !o->peer || o->peer == s;
}

static int dgram_connect(struct vfs_unix_sock *s, struct vfs_unix_sock *target)
{
	if (target) {
		if (target->c.type != s->c.type)
			return -EPROTOTYPE;
		if (target->dead)
			return -ECONNREFUSED;
		if (!may_send(s, target))
			return -EPERM;
		if (s->passcred) {
			int err = sock_autobind(s);
			if (err)
				return err;
		}
		sock_get(target);
	}
	if (s->peer) {
		waitq_wake(&s->peer->c.wq, POLLOUT);
		sock_put(s->peer);
	}
	s->peer = target;
	s->state = target ? UNIX_CONNECTED : UNIX_CLOSE;
	return 0;
}

int vfs_unix_connect(struct vfs_file *f, struct vfs_unix_sock *target,
		     const struct vfs_unix_cred *cred, struct waitq **wq)
{
	struct vfs_unix_sock *s = f->priv, *e;
	int err;

	if (!connection_based(s))
		return dgram_connect(s, target);
	if (s->state == UNIX_CONNECTED)
		return -EISCONN;
	if (s->state != UNIX_CLOSE || !target)
		return -EINVAL;
	if (target->c.type != s->c.type)
		return -EPROTOTYPE;
	if (target->dead || target->state != UNIX_LISTEN || (target->shutdown & RCV_SHUTDOWN))
		return -ECONNREFUSED;
	if (target->acc_len > target->backlog) {
		if (wq)
			*wq = &target->c.wq;
		return -EAGAIN;
	}
	if (s->passcred && (err = sock_autobind(s)))
		return err;
	if (!(e = sock_new(s->c.type, &target->c.owner)))
		return -ENOMEM;
	e->state = UNIX_CONNECTED;
	memcpy(e->addr, target->addr, target->addrlen);
	e->addrlen = target->addrlen;
	e->passcred = target->passcred;
	e->peercred = *cred;
	e->has_peercred = true;
	e->peer = sock_get(s);
	s->peer = sock_get(e);
	s->state = UNIX_CONNECTED;
	s->peercred = target->peercred;
	s->has_peercred = target->has_peercred;
	if (target->acc_tail)
		target->acc_tail->acc_next = e;
	else
		target->acc_head = e;
	target->acc_tail = e;
	target->acc_len++;
	e->listener = target;
	waitq_wake(&target->c.wq, POLLIN);
	waitq_wake(&s->c.wq, POLLOUT);
	return 0;
}

int vfs_unix_accept(struct vfs_file *f, int flags, struct vfs_file **out)
{
	struct vfs_unix_sock *s = f->priv, *e;

	if (!connection_based(s))
		return -EOPNOTSUPP;
	if (s->state != UNIX_LISTEN)
		return -EINVAL;
	if (!(e = s->acc_head))
		return -EAGAIN;
	if (!(*out = sock_file(e, flags)))
		return -ENOMEM;
	s->acc_head = e->acc_next;
	if (!s->acc_head)
		s->acc_tail = NULL;
	e->acc_next = NULL;
	e->listener = NULL;
	s->acc_len--;
	waitq_wake(&s->c.wq, POLLOUT); /* room for a waiting connect */
	return 0;
}

static void fill_name(const struct vfs_unix_sock *s, void *addr, unsigned int *len)
{
	if (s->addrlen) {
		memcpy(addr, s->addr, s->addrlen);
		*len = s->addrlen;
	} else {
		sa_family_t fam = AF_UNIX;
		memcpy(addr, &fam, sizeof(fam));
		*len = sizeof(fam);
	}
}

int vfs_unix_getname(struct vfs_file *f, bool peer, void *addr, unsigned int *len)
{
	struct vfs_unix_sock *s = f->priv;

	if (peer && !s->peer)
		return -ENOTCONN;
	fill_name(peer ? s->peer : s, addr, len);
	return 0;
}

int vfs_unix_shutdown(struct vfs_file *f, int how)
{
	struct vfs_unix_sock *s = f->priv, *o = s->peer;

	if (how < SHUT_RD || how > SHUT_RDWR)
		return -EINVAL;
	int mode = how + 1; /* SHUT_RD -> RCV_SHUTDOWN, SHUT_WR -> SEND_SHUTDOWN */
	s->shutdown |= mode;
	waitq_wake(&s->c.wq, 0);
	if (o && connection_based(s)) {
		int peer_mode = (mode & RCV_SHUTDOWN ? SEND_SHUTDOWN : 0) |
				(mode & SEND_SHUTDOWN ? RCV_SHUTDOWN : 0);
		o->shutdown |= peer_mode;
		waitq_wake(&o->c.wq, 0);
	}
	return 0;
}

/* --- data ---------------------------------------------------------------------------------- */

static struct sock_msg *msg_new(struct vfs_unix_sock *s, const struct vfs_unix_msg *m, size_t len)
{
	size_t cost = len + (s->c.type == SOCK_STREAM ? 0 : UNIX_DGRAM_OVERHEAD);
	struct sock_msg *msg = sock_msg_new(&s->c, m->iov, m->iovcnt, len, len, cost);

	if (!msg)
		return NULL;
	if (m->nfiles) {
		msg->files = malloc(m->nfiles * sizeof(*msg->files));
		if (!msg->files) {
			sock_msg_free(msg);
			return NULL;
		}
		for (int i = 0; i < m->nfiles; i++)
			msg->files[i] = vfs_file_get(m->files[i]);
		msg->nfiles = m->nfiles;
	}
	msg->cred = m->cred;
	return msg;
}

static ssize_t stream_send(struct vfs_unix_sock *s, struct vfs_unix_msg *m)
{
	struct vfs_unix_sock *o = s->peer;
	size_t total = sock_iov_total(m->iov, m->iovcnt);

	if (m->named)
		return s->state == UNIX_CONNECTED ? -EISCONN : -EOPNOTSUPP;
	if (!o)
		return -ENOTCONN;
	if ((s->shutdown & SEND_SHUTDOWN) || o->dead || (o->shutdown & RCV_SHUTDOWN))
		return -EPIPE;
	if (total == 0)
		return 0;
	if (s->c.wmem >= s->c.sndbuf)
		return -EAGAIN;
	size_t chunk = s->c.sndbuf - s->c.wmem;
	if (chunk > total)
		chunk = total;
	struct sock_msg *msg = msg_new(s, m, chunk);
	if (!msg)
		return -ENOMEM;
	sock_rq_push(&o->c, msg);
	return chunk;
}

static ssize_t dgram_send(struct vfs_unix_sock *s, struct vfs_unix_msg *m)
{
	struct vfs_unix_sock *o;
	size_t len = sock_iov_total(m->iov, m->iovcnt);
	int err;

	if (s->c.type == SOCK_SEQPACKET) {
		if (s->err) {
			err = s->err;
			s->err = 0;
			return -err;
		}
		if (s->state != UNIX_CONNECTED)
			return -ENOTCONN;
		o = s->peer;
	} else {
		o = m->named ? m->dest : s->peer;
		if (!o)
			return -ENOTCONN;
	}
	if (s->shutdown & SEND_SHUTDOWN)
		return -EPIPE;
	if (len > s->c.sndbuf - 32)
		return -EMSGSIZE;
	if (m->named && s->c.type == SOCK_DGRAM && o->c.type != s->c.type)
		return -EPROTOTYPE;
	if (s->passcred && !s->addrlen && (err = sock_autobind(s)))
		return err;
	if (o->dead) {
		if (s->c.type == SOCK_SEQPACKET)
			return -EPIPE;
		if (s->peer == o)
			dgram_connect(s, NULL);
		return -ECONNREFUSED;
	}
	if (!may_send(s, o))
		return -EPERM;
	if (o->shutdown & RCV_SHUTDOWN)
		return -EPIPE;
	if (s->c.wmem >= s->c.sndbuf)
		return -EAGAIN;
	struct sock_msg *msg = msg_new(s, m, len);
	if (!msg)
		return -ENOMEM;
	sock_rq_push(&o->c, msg);
	return len;
}

ssize_t vfs_unix_sendmsg(struct vfs_file *f, struct vfs_unix_msg *m)
{
	struct vfs_unix_sock *s = f->priv;

	if (m->flags & MSG_OOB)
		return -EOPNOTSUPP;
	return s->c.type == SOCK_STREAM ? stream_send(s, m) : dgram_send(s, m);
}

/* Hands MSG's files to the receiver: moved out, or new references for a peek. */
static int take_files(struct sock_msg *msg, struct vfs_unix_msg *m, bool peek)
{
	if (!msg->nfiles)
		return 0;
	if (peek) {
		m->files = malloc(msg->nfiles * sizeof(*m->files));
		if (!m->files)
			return -ENOMEM;
		for (int i = 0; i < msg->nfiles; i++)
			m->files[i] = vfs_file_get(msg->files[i]);
	} else {
		m->files = msg->files;
		msg->files = NULL;
	}
	m->nfiles = msg->nfiles;
	if (!peek)
		msg->nfiles = 0;
	return 1;
}

static void sender_name(struct sock_msg *msg, struct vfs_unix_msg *m)
{
	if (!m->addr)
		return;
	m->addrlen = msg_sender(msg)->addrlen;
	memcpy(m->addr, msg_sender(msg)->addr, m->addrlen);
}

static bool cred_eq(const struct vfs_unix_cred *a, const struct vfs_unix_cred *b)
{
	return a->pid == b->pid && a->uid == b->uid && a->gid == b->gid;
}

/* Nothing to read: a pending error, end of file, or wait. */
static ssize_t empty_queue(struct vfs_unix_sock *s)
{
	if (s->err) {
		int err = s->err;
		s->err = 0;
		return -err;
	}
	return (s->shutdown & RCV_SHUTDOWN) ? 0 : -EAGAIN;
}

/* Stream reads run across messages, but never glue data of different senders' credentials
 * when they are asked for, and stop after a message that carried files (Linux's rules). */
static ssize_t stream_recv(struct vfs_unix_sock *s, struct vfs_unix_msg *m)
{
	size_t room = sock_iov_total(m->iov, m->iovcnt), copied = 0;
	bool peek = m->flags & MSG_PEEK;
	struct sock_msg *msg = s->c.rq;

	if (s->state != UNIX_CONNECTED)
		return -EINVAL;
	if (!msg)
		return empty_queue(s);
	m->addrlen = 0;
	sender_name(msg, m);
	if (s->passcred) {
		m->has_cred = true;
		m->cred = msg->cred;
	}
	while (msg && (room > copied || copied == 0)) {
		if (copied && s->passcred && !cred_eq(&msg->cred, &m->cred))
			break;
		size_t chunk = msg->len - msg->off;
		if (chunk > room - copied)
			chunk = room - copied;
		sock_iov_copy_to(m->iov, m->iovcnt, copied, msg->data + msg->off, chunk);
		copied += chunk;
		int got = take_files(msg, m, peek);
		if (got < 0)
			return copied ? (ssize_t)copied : got;
		if (peek) {
			if (got)
				break;
			msg = msg->next;
			continue;
		}
		sock_rq_consume(&s->c, msg, chunk);
		if (msg->off < msg->len)
			break;
		sock_msg_free(sock_rq_pop(&s->c));
		msg = s->c.rq;
		if (got || room == 0)
			break;
	}
	return copied;
}

static ssize_t dgram_recv(struct vfs_unix_sock *s, struct vfs_unix_msg *m)
{
	size_t room = sock_iov_total(m->iov, m->iovcnt);
	struct sock_msg *msg = s->c.rq;
	bool peek = m->flags & MSG_PEEK;

	if (s->c.type == SOCK_SEQPACKET && s->state != UNIX_CONNECTED)
		return -ENOTCONN;
	if (!msg)
		return empty_queue(s);
	size_t n = msg->len < room ? msg->len : room;
	sock_iov_copy_to(m->iov, m->iovcnt, 0, msg->data, n);
	if (msg->len > room)
		m->msg_flags |= MSG_TRUNC;
	m->addrlen = 0;
	sender_name(msg, m);
	if (s->passcred) {
		m->has_cred = true;
		m->cred = msg->cred;
	}
	int got = take_files(msg, m, peek);
	if (got < 0)
		return got;
	size_t len = msg->len;
	if (!peek)
		sock_msg_free(sock_rq_pop(&s->c));
	return (m->flags & MSG_TRUNC) ? (ssize_t)len : (ssize_t)n;
}

ssize_t vfs_unix_recvmsg(struct vfs_file *f, struct vfs_unix_msg *m)
{
	struct vfs_unix_sock *s = f->priv;

	m->files = NULL;
	m->nfiles = 0;
	m->has_cred = false;
	m->addrlen = 0;
	if (m->flags & MSG_OOB)
		return -EOPNOTSUPP;
	return s->c.type == SOCK_STREAM ? stream_recv(s, m) : dgram_recv(s, m);
}

/* --- options ------------------------------------------------------------------------------- */

int vfs_unix_getsockopt(struct vfs_file *f, int level, int name, void *val, unsigned int *len)
{
	struct vfs_unix_sock *s = f->priv;
	int v;

	if (level != SOL_SOCKET)
		return -EOPNOTSUPP;
	switch (name) {
	case SO_TYPE:
		v = s->c.type;
		break;
	case SO_DOMAIN:
		v = AF_UNIX;
		break;
	case SO_PROTOCOL:
		v = 0;
		break;
	case SO_ACCEPTCONN:
		v = s->state == UNIX_LISTEN;
		break;
	case SO_ERROR:
		v = s->err;
		s->err = 0;
		break;
	case SO_PASSCRED:
		v = s->passcred;
		break;
	case SO_PEERCRED: {
		struct vfs_unix_cred c = {0, (uint32_t)-1, (uint32_t)-1};
		if (s->has_peercred)
			c = s->peercred;
		memcpy(val, &c, sizeof(c));
		*len = sizeof(c);
		return 0;
	}
	default:
		return sock_core_getsockopt(&s->c, name, val, len);
	}
	memcpy(val, &v, sizeof(v));
	*len = sizeof(v);
	return 0;
}

int vfs_unix_setsockopt(struct vfs_file *f, int level, int name, const void *val, unsigned int len)
{
	struct vfs_unix_sock *s = f->priv;
	int v;

	if (level != SOL_SOCKET)
		return -EOPNOTSUPP;
	if (name != SO_PASSCRED)
		return sock_core_setsockopt(&s->c, name, val, len);
	if (len < sizeof(int))
		return -EINVAL;
	memcpy(&v, val, sizeof(v));
	s->passcred = v != 0;
	return 0;
}

/* --- file operations ------------------------------------------------------------------------ */

static ssize_t unix_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct vfs_unix_msg m = {.iov = iov, .iovcnt = iovcnt};
	ssize_t r;

	(void)pos;
	r = vfs_unix_recvmsg(f, &m);
	for (int i = 0; i < m.nfiles; i++)
		vfs_file_put(m.files[i]); /* read(2) has nowhere to put them */
	free(m.files);
	return r;
}

static ssize_t unix_write(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct vfs_unix_sock *s = f->priv;
	struct vfs_unix_msg m = {.iov = iov, .iovcnt = iovcnt, .cred = s->c.owner};

	(void)pos;
	return vfs_unix_sendmsg(f, &m);
}

/* Linux's unix_writable: room while at most a quarter of the send buffer is in flight. */
static bool writable(const struct vfs_unix_sock *s)
{
	return s->state != UNIX_LISTEN && s->c.wmem * 4 <= s->c.sndbuf;
}

static uint32_t unix_poll(struct vfs_file *f, struct waitq **wq)
{
	struct vfs_unix_sock *s = f->priv;
	uint32_t m = 0;

	*wq = &s->c.wq;
	if (s->err)
		m |= POLLERR;
	if (s->shutdown == SHUTDOWN_MASK)
		m |= POLLHUP;
	if (s->shutdown & RCV_SHUTDOWN)
		m |= POLLRDHUP | POLLIN | POLLRDNORM;
	if (s->c.rq || s->acc_head)
		m |= POLLIN | POLLRDNORM;
	if (connection_based(s) && s->state == UNIX_CLOSE)
		m |= POLLHUP;
	if (writable(s))
		m |= POLLOUT | POLLWRNORM | POLLWRBAND;
	return m;
}

static long unix_ioctl(struct vfs_file *f, unsigned int cmd, void *arg)
{
	struct vfs_unix_sock *s = f->priv;
	size_t n = 0;

	switch (cmd) {
	case FIONREAD:
		if (s->state == UNIX_LISTEN)
			return -EINVAL;
		if (s->c.type == SOCK_DGRAM)
			n = s->c.rq ? s->c.rq->len : 0;
		else
			n = s->c.rq_bytes;
		*(int *)arg = (int)n;
		return 0;
	case TIOCOUTQ:
		if (s->state == UNIX_LISTEN)
			return -EINVAL;
		*(int *)arg = (int)s->c.wmem;
		return 0;
	default:
		return -ENOTTY;
	}
}

static int unix_getattr(struct vfs_file *f, struct stat *st)
{
	struct vfs_unix_sock *s = f->priv;

	sock_core_getattr(&s->c, st);
	return 0;
}

static void unix_release(struct vfs_file *f)
{
	sock_release(f->priv, false);
}

static const struct vfs_file_ops unix_ops = {
    .read = unix_read,
    .write = unix_write,
    .ioctl = unix_ioctl,
    .getattr = unix_getattr,
    .poll = unix_poll,
    .release = unix_release,
    .pseudo_inode = sock_pseudo_inode,
};

/* --- checkpoint ---------------------------------------------------------------------------- */

/* A socket file's CK_FILE record holds its socket's own state and, for a listener, that of
 * the embryos in its accept queue (sockets without a file of their own). Everything that
 * points at other sockets or files (the peer, queued messages with their sender and their
 * SCM_RIGHTS files, each embryo's peer and messages) is the file's CK_FILE_LINKS record,
 * loaded once every file exists, so cycles (two peers, a socket carrying its own file) need
 * no care. A socket is named there by its file, by (listener's file, place in the accept
 * queue) for an embryo, or by value for one whose file is gone (a "ghost": only its type and
 * address can still be seen, through getpeername and recvfrom). What is derived is not saved:
 * send-buffer charges (wmem) are counted again as messages are queued, and readiness follows
 * from the state. */

#define SCM_MAX_FD 253			/* Linux's limit of files in one message */
#define UNIX_MSG_MAX (2 * SOCK_BUF_MAX) /* no message outgrows a send buffer */

enum { NAME_NONE, NAME_ABSTRACT, NAME_PATH };
enum { SOCKREF_NONE, SOCKREF_FILE, SOCKREF_EMBRYO, SOCKREF_GHOST };

static void sock_state_save(struct enc *e, const struct vfs_unix_sock *s)
{
	enc_u32(e, (uint32_t)s->c.type);
	enc_u8(e, (uint8_t)s->state);
	enc_u8(e, (uint8_t)s->shutdown);
	enc_u32(e, (uint32_t)s->err);
	enc_bytes(e, s->addr, s->addrlen);
	enc_u8(e, !s->name ? NAME_NONE : s->name->abstract ? NAME_ABSTRACT : NAME_PATH);
	if (s->name)
		enc_bytes(e, s->name->key, s->name->keylen);
	sock_core_save(e, &s->c);
	sock_cred_save(e, &s->peercred);
	enc_bool(e, s->has_peercred);
	enc_bool(e, s->passcred);
	enc_u32(e, (uint32_t)s->backlog);
}

/* Puts restored S under its saved name; -EADDRINUSE if something has it already. */
static int name_restore(struct vfs_unix_sock *s, bool abstract, const void *key, size_t len)
{
	if (name_find(abstract, s->c.type, key, len))
		return -EADDRINUSE;
	return name_insert(s, abstract, key, len);
}

/* A socket from its saved state (one reference, the caller's), or NULL with D's error set.
 * EMBRYO: it must be a connected socket without a name, as connect makes them. */
static struct vfs_unix_sock *sock_state_load(struct dec *d, bool embryo)
{
	static const struct vfs_unix_cred nobody;
	struct vfs_unix_sock *s;
	int type = (int)dec_u32(d);
	uint8_t state = dec_u8(d), shutdown = dec_u8(d);
	uint32_t err = dec_u32(d);
	size_t addrlen, keylen = 0;
	const void *addr = dec_bytes(d, &addrlen);
	uint8_t name = dec_u8(d);
	const void *key = name != NAME_NONE ? dec_bytes(d, &keylen) : NULL;

	if (!dec_ok(d))
		return NULL;
	if ((type != SOCK_STREAM && type != SOCK_DGRAM && type != SOCK_SEQPACKET) ||
	    state > UNIX_CONNECTED || shutdown > SHUTDOWN_MASK || err >= 4096 ||
	    addrlen > VFS_UNIX_ADDR_MAX || name > NAME_PATH ||
	    (state == UNIX_LISTEN && type == SOCK_DGRAM) || (name != NAME_NONE && !addrlen) ||
	    (name == NAME_ABSTRACT && keylen > sizeof(((struct sockaddr_un *)0)->sun_path) - 1) ||
	    (name == NAME_PATH && (keylen == 0 || keylen >= 4096 || memchr(key, 0, keylen))) ||
	    (embryo && (state != UNIX_CONNECTED || name != NAME_NONE))) {
		dec_fail(d, "bad socket state");
		return NULL;
	}
	if (!(s = sock_new(type, &nobody))) {
		dec_fail(d, "out of memory");
		return NULL;
	}
	s->state = state;
	s->shutdown = shutdown;
	s->err = (int)err;
	memcpy(s->addr, addr, addrlen);
	s->addrlen = addrlen;
	int core = sock_core_load(d, &s->c);
	s->peercred = sock_cred_load(d);
	s->has_peercred = dec_bool(d);
	s->passcred = dec_bool(d);
	s->backlog = (int)dec_u32(d);
	if (core || !dec_ok(d) || s->backlog < 0) {
		dec_fail(d, "bad socket state");
		sock_put(s);
		return NULL;
	}
	if (name != NAME_NONE) {
		int e = name_restore(s, name == NAME_ABSTRACT, key, keylen);
		if (e) {
			dec_fail(d, e == -ENOMEM ? "out of memory" : "a socket name taken twice");
			sock_put(s);
			return NULL;
		}
	}
	return s;
}

static int unix_save(struct enc *e, struct vfs_file *f)
{
	struct vfs_unix_sock *s = f->priv;

	sock_state_save(e, s);
	enc_u64(e, (uint64_t)s->acc_len);
	for (struct vfs_unix_sock *em = s->acc_head; em; em = em->acc_next)
		sock_state_save(e, em);
	return 0;
}

static int unix_load(struct dec *d, struct vfs_file *f)
{
	struct vfs_unix_sock *s = sock_state_load(d, false);

	if (!s)
		return -EINVAL;
	uint64_t n = dec_max(d, INT_MAX, "accept queue length");
	if (n && s->state != UNIX_LISTEN)
		dec_fail(d, "embryos queued on a socket that does not listen");
	for (uint64_t i = 0; i < n && dec_ok(d); i++) {
		struct vfs_unix_sock *em = sock_state_load(d, true);
		if (!em)
			break;
		if (em->c.type != s->c.type) {
			dec_fail(d, "an embryo of another type");
			sock_put(em);
			break;
		}
		if (s->acc_tail)
			s->acc_tail->acc_next = em;
		else
			s->acc_head = em;
		s->acc_tail = em;
		s->acc_len++;
		em->listener = s;
	}
	if (!dec_ok(d)) {
		sock_release(s, false); /* and the embryos, and the name */
		return -EINVAL;
	}
	f->priv = s;
	s->file = f;
	return 0;
}

static void sockref_save(struct enc *e, struct vfs_unix_sock *o)
{
	if (!o) {
		enc_u8(e, SOCKREF_NONE);
	} else if (o->file) {
		enc_u8(e, SOCKREF_FILE);
		enc_ref(e, CK_FILE, o->file);
	} else if (!o->dead && o->listener && o->listener->file) {
		uint64_t i = 0;
		for (struct vfs_unix_sock *em = o->listener->acc_head; em && em != o;
		     em = em->acc_next)
			i++;
		enc_u8(e, SOCKREF_EMBRYO);
		enc_ref(e, CK_FILE, o->listener->file);
		enc_u64(e, i);
	} else {
		enc_u8(e, SOCKREF_GHOST);
		enc_u32(e, (uint32_t)o->c.type);
		enc_bytes(e, o->addr, o->addrlen);
	}
}

/* The socket a reference names, with a reference of the caller's; NULL for none (*NONE set)
 * or on failure. Sockets must be of TYPE. */
static struct vfs_unix_sock *sockref_load(struct dec *d, int type, bool *none)
{
	static const struct vfs_unix_cred nobody;
	struct vfs_unix_sock *o = NULL;
	uint8_t tag = dec_u8(d);

	*none = false;
	switch (tag) {
	case SOCKREF_NONE:
		*none = dec_ok(d);
		return NULL;
	case SOCKREF_FILE: {
		struct vfs_file *f = dec_ref(d, CK_FILE);
		if (f && f->ops == &unix_ops && f->priv)
			o = f->priv;
		break;
	}
	case SOCKREF_EMBRYO: {
		struct vfs_file *f = dec_ref(d, CK_FILE);
		uint64_t i = dec_u64(d);
		if (!f || f->ops != &unix_ops || !f->priv)
			break;
		for (o = ((struct vfs_unix_sock *)f->priv)->acc_head; o && i; o = o->acc_next)
			i--;
		break;
	}
	case SOCKREF_GHOST: {
		size_t len;
		int gtype = (int)dec_u32(d);
		const void *addr = dec_bytes(d, &len);
		if (!dec_ok(d) || gtype != type || len > VFS_UNIX_ADDR_MAX)
			break;
		if (!(o = sock_new(type, &nobody))) {
			dec_fail(d, "out of memory");
			return NULL;
		}
		memcpy(o->addr, addr, len);
		o->addrlen = len;
		o->dead = true;
		o->shutdown = SHUTDOWN_MASK;
		live_remove(o);
		return o; /* its one reference is the caller's */
	}
	}
	if (!o || o->c.type != type || !dec_ok(d)) {
		dec_fail(d, "bad socket reference");
		return NULL;
	}
	return sock_get(o);
}

static void msgs_save(struct enc *e, struct vfs_unix_sock *s)
{
	uint64_t n = 0;

	for (struct sock_msg *m = s->c.rq; m; m = m->next)
		n++;
	enc_u64(e, n);
	for (struct sock_msg *m = s->c.rq; m; m = m->next) {
		sockref_save(e, msg_sender(m));
		enc_bytes(e, m->data, m->len);
		enc_u64(e, m->off);
		sock_cred_save(e, &m->cred);
		enc_u64(e, (uint64_t)m->nfiles);
		for (int i = 0; i < m->nfiles; i++)
			enc_ref(e, CK_FILE, m->files[i]);
	}
}

/* Queues the saved messages on S, charging each to its sender again. */
static int msgs_load(struct dec *d, struct vfs_unix_sock *s)
{
	uint64_t n = dec_u64(d);

	for (uint64_t i = 0; i < n && dec_ok(d); i++) {
		bool none;
		struct vfs_unix_sock *sender = sockref_load(d, s->c.type, &none);
		size_t len;
		const void *data = dec_bytes(d, &len);
		uint64_t off = dec_u64(d);
		struct vfs_unix_cred cred = sock_cred_load(d);
		uint64_t nfiles = dec_u64(d);
		bool bad = !sender || len > UNIX_MSG_MAX || nfiles > SCM_MAX_FD ||
			   (s->c.type == SOCK_STREAM ? off >= len : off != 0);
		size_t cost =
		    bad ? 0 : len + (sender->c.type == SOCK_STREAM ? 0 : UNIX_DGRAM_OVERHEAD);
		struct sock_msg *m =
		    bad || !dec_ok(d) ? NULL : sock_msg_new(&sender->c, NULL, 0, len, len, cost);
		struct vfs_file **files = m && nfiles ? calloc(nfiles, sizeof(*files)) : NULL;

		sock_put(sender); /* the message holds its own reference */
		if (!m || (nfiles && !files)) {
			if (!bad && dec_ok(d))
				dec_fail(d, "out of memory");
			dec_fail(d, "bad queued message");
			if (m)
				sock_msg_free(m);
			free(files);
			return -EINVAL;
		}
		m->files = files;
		for (uint64_t j = 0; j < nfiles; j++) {
			struct vfs_file *fl = dec_ref(d, CK_FILE);
			if (!fl) {
				dec_fail(d, "bad file in flight");
				break;
			}
			files[m->nfiles++] = vfs_file_get(fl);
		}
		memcpy(m->data, data, len);
		m->off = off;
		m->cred = cred;
		if (!dec_ok(d)) {
			sock_msg_free(m);
			return -EINVAL;
		}
		sock_rq_push(&s->c, m);
	}
	return dec_ok(d) ? 0 : -EINVAL;
}

/* S's peer and queue (an embryo's, or the file's own socket). */
static int sock_links_load(struct dec *d, struct vfs_unix_sock *s)
{
	bool none;

	if (s->peer || s->c.rq)
		return dec_fail(d, "a socket linked twice");
	s->peer = sockref_load(d, s->c.type, &none);
	if (!s->peer && !none)
		return -EINVAL;
	if (s->peer == s) {
		sock_put(s->peer);
		s->peer = NULL;
		return dec_fail(d, "a socket that is its own peer");
	}
	return msgs_load(d, s);
}

static int unix_save_links(struct enc *e, struct vfs_file *f)
{
	struct vfs_unix_sock *s = f->priv;

	sockref_save(e, s->peer);
	msgs_save(e, s);
	enc_u64(e, (uint64_t)s->acc_len);
	for (struct vfs_unix_sock *em = s->acc_head; em; em = em->acc_next) {
		sockref_save(e, em->peer);
		msgs_save(e, em);
	}
	return 0;
}

static int unix_load_links(struct dec *d, struct vfs_file *f)
{
	struct vfs_unix_sock *s = f->priv;

	if (sock_links_load(d, s))
		return -EINVAL;
	if (dec_u64(d) != (uint64_t)s->acc_len)
		return dec_fail(d, "accept queue links do not match the queue");
	for (struct vfs_unix_sock *em = s->acc_head; em && dec_ok(d); em = em->acc_next)
		if (sock_links_load(d, em))
			return -EINVAL;
	return dec_ok(d) ? 0 : -EINVAL;
}

const struct vfs_file_kind vfs_unix_kind = {
    .name = "unix",
    .ops = &unix_ops,
    .save = unix_save,
    .load = unix_load,
    .save_links = unix_save_links,
    .load_links = unix_load_links,
};
