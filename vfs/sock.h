/* vfs/sock.h — what every socket object of the Sentry starts with (vfs/unix.c, vfs/inet.c,
 * vfs/netlink.c), private to vfs/: references, the receive queue of messages and who pays
 * for them, the SOL_SOCKET options Linux keeps in struct sock, the wait queue and what fstat
 * shows. Each family embeds a struct sock_core as its first member and adds its own state
 * (names, peers, listeners); the queue and the options are written once, here.
 *
 * A queued message is paid for either by its sender (AF_UNIX: COST stays in the sender's
 * wmem until the message is read, so a full receiver stops its writer) or by its receiver
 * (UDP, netlink, TCP's bytes in flight: COST counts in the queue owner's rmem). */
#ifndef VFS_SOCK_H
#define VFS_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>

#include "vfs/vfs.h"
#include "vfs/waitq.h"

struct enc;
struct dec;

/* Linux's net.core.{w,r}mem_default and _max, and the least SO_SNDBUF/SO_RCVBUF round up
 * to (all as Linux stores them: doubled). */
#define SOCK_BUF_DEFAULT 212992
#define SOCK_BUF_MAX 212992
#define SOCK_MIN_SNDBUF 4608
#define SOCK_MIN_RCVBUF 2304
/* The most a buffer grows to by itself (TCP's autotuning: net.ipv4.tcp_wmem[2]). */
#define SOCK_BUF_GROWN_MAX 4194304

/* Bytes of the largest socket address a message records (a sockaddr_in6). */
#define SOCK_FROM_MAX 28

struct sock_core;

struct sock_msg {
	struct sock_msg *next;
	struct sock_core *sender; /* a reference, charged COST in its wmem; NULL: the receiver
				   * pays COST in its rmem */
	size_t cost;
	size_t len, off; /* OFF: bytes a stream reader took already */
	size_t cap;	 /* room for DATA (a stream's last message takes appends) */
	/* AF_UNIX: files in flight (references) and who sent the message. */
	struct vfs_file **files;
	int nfiles;
	struct vfs_unix_cred cred;
	/* Datagrams of families that record it per message: the source address. */
	unsigned char from[SOCK_FROM_MAX];
	unsigned int fromlen;
	char data[];
};

/* SOL_SOCKET options every family keeps the same way. */
struct sock_opts {
	unsigned int flags; /* SOCK_OPT_* bits: SO_REUSEADDR & co */
	int rcvlowat;
	int priority;
	struct timespec rcvtimeo, sndtimeo; /* zero: none */
	int linger_onoff, linger_secs;
};

struct sock_core {
	int refs;
	void (*free)(struct sock_core *c); /* frees the object around C at the last put */
	int type;
	struct sock_msg *rq, **rq_tail;
	size_t rq_bytes; /* unread bytes on RQ */
	size_t rmem;	 /* what the receiver-paid messages on RQ cost */
	size_t wmem;	 /* what this socket's sender-paid messages cost, wherever they are */
	size_t sndbuf, rcvbuf;
	struct sock_opts opts;
	struct waitq wq;
	ino_t ino;
	struct timespec created;
	struct vfs_unix_cred owner; /* who made it: its inode's first owner */
	struct vfs_pseudo_inode pi; /* its sockfs inode (vfs/pseudo.c) */
};

/* C starts with one reference (the caller's); FREE is called at the last put, after the
 * queue was purged. */
void sock_core_init(struct sock_core *c, int type, const struct vfs_unix_cred *owner, size_t sndbuf,
		    size_t rcvbuf, void (*free)(struct sock_core *c));
struct sock_core *sock_core_get(struct sock_core *c);
void sock_core_put(struct sock_core *c);
/* What fstat shows of a socket: its own inode on the sockfs device. */
void sock_core_getattr(const struct sock_core *c, struct stat *st);
/* Restored inode numbers: new sockets are numbered after INO. */
void sock_ino_seen(ino_t ino);

/* A new message of LEN bytes copied from IOV (N pieces), with room for CAP >= LEN, paid by
 * SENDER (a reference is taken) or, with SENDER NULL, by whichever queue it goes on. */
struct sock_msg *sock_msg_new(struct sock_core *sender, const struct iovec *iov, int n, size_t len,
			      size_t cap, size_t cost);
/* Frees M: drops the files it still carries and uncharges its sender, who may write again. */
void sock_msg_free(struct sock_msg *m);

void sock_rq_push(struct sock_core *c, struct sock_msg *m);
/* Takes the first message off C's queue (the caller frees it). */
struct sock_msg *sock_rq_pop(struct sock_core *c);
/* A stream reader took N bytes of the first message. */
void sock_rq_consume(struct sock_core *c, struct sock_msg *m, size_t n);
/* Appends LEN bytes of IOV to C's last message if it has room (a stream's small writes
 * share one message); false if it has not. */
bool sock_rq_append(struct sock_core *c, const struct iovec *iov, int n, size_t len);
/* Frees every queued message (the queue's end). */
void sock_rq_purge(struct sock_core *c);

size_t sock_iov_total(const struct iovec *iov, int n);
/* Copies LEN bytes from SRC into IOV starting SKIP bytes in. */
void sock_iov_copy_to(const struct iovec *iov, int n, size_t skip, const char *src, size_t len);
/* Copies the first LEN bytes of IOV into DST. */
void sock_iov_copy_from(char *dst, const struct iovec *iov, int n, size_t len);

/* The SOL_SOCKET options of struct sock_opts and the buffer sizes: -ENOPROTOOPT for any
 * other, which the family answers itself. get fills VAL (at least 16 bytes) and *LEN. */
int sock_core_getsockopt(struct sock_core *c, int name, void *val, unsigned int *len);
int sock_core_setsockopt(struct sock_core *c, int name, const void *val, unsigned int len);
bool sock_opt(const struct sock_core *c, int name);
/* SO_SNDBUF/SO_RCVBUF as Linux sets them: capped at the sysctl maximum, then doubled. */
size_t sock_buf_size(int v, size_t min);

/* Checkpoint: what the core keeps of its own (owner, buffer sizes, options, inode number and
 * time), loaded into a core sock_core_init made; the queue is the family's to save, since
 * only it knows who sent each message. Credentials as the records carry them. */
void sock_core_save(struct enc *e, const struct sock_core *c);
int sock_core_load(struct dec *d, struct sock_core *c);
void sock_cred_save(struct enc *e, const struct vfs_unix_cred *c);
struct vfs_unix_cred sock_cred_load(struct dec *d);

/* The pseudo_inode file operation of every family whose object starts with a sock_core. */
struct vfs_pseudo_inode *sock_pseudo_inode(struct vfs_file *f);

#endif
