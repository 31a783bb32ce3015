/* Socket syscalls: fetch sockaddrs, msghdrs, iovecs and control messages from guest memory,
 * resolve AF_UNIX names to socket objects, call the family (vfs/unix.c for AF_UNIX, the
 * file's socket operations for the others: the loopback network of vfs/inet.c), and block and
 * retry on -EAGAIN, for as long as SO_RCVTIMEO/SO_SNDTIMEO allow. The guest ABI (struct
 * msghdr and mmsghdr, cmsg layout, SCM_RIGHTS fd installation) lives here, the socket
 * semantics in vfs/. */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "common/units.h"
#include "sentry/fdtable.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/sched.h"
#include "sentry/signal.h"
#include "sentry/syscall.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "vfs/vfs.h"

#define SOCK_TYPE_MASK 0xf
#define SOCK_MAX_TYPE 11     /* SOCK_PACKET + 1: Linux's SOCK_MAX */
#define SOMAXCONN_LINUX 4096 /* net.core.somaxconn */
#define SCM_MAX_FD 253
#define OPTMEM_MAX 131072 /* net.core.optmem_max: the largest control buffer sendmsg takes */
/* The most guest memory one call translates: above any send buffer, so a datagram this long
 * is refused with EMSGSIZE whatever its true length. */
#define SOCK_IO_MAX (1024 * 1024)
#define SUN_PATH_OFF offsetof(struct sockaddr_un, sun_path)

/* Who owns a socket and what SO_PEERCRED shows: the process and its effective ids. */
static struct vfs_unix_cred owner_cred(struct task *t)
{
	return (struct vfs_unix_cred){t->tgid, t->euid, t->egid};
}

/* What a message carries by default (Linux's scm_send: the real ids). */
static struct vfs_unix_cred msg_cred(struct task *t)
{
	return (struct vfs_unix_cred){t->tgid, t->uid, t->gid};
}

static long sock_fd(struct task *t, int fd, struct vfs_file **out)
{
	struct vfs_file *f = arg_file_nopath(t, fd);

	if (!f)
		return -EBADF;
	if (!vfs_is_unix_socket(f) && !vfs_sock_ops(f))
		return -ENOTSOCK;
	*out = f;
	return 0;
}

static bool nonblocking(struct vfs_file *f, int flags)
{
	return (f->flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
}

static long getopt_any(struct vfs_file *f, int level, int name, void *val, unsigned int *len)
{
	if (vfs_is_unix_socket(f))
		return vfs_unix_getsockopt(f, level, name, val, len);
	return vfs_sock_ops(f)->getsockopt(f, level, name, val, len);
}

static int sock_type(struct vfs_file *f)
{
	char val[VFS_SOCKOPT_MAX];
	unsigned int len = sizeof(int);
	int type = 0;

	if (vfs_is_unix_socket(f))
		return vfs_unix_type(f);
	if (getopt_any(f, SOL_SOCKET, SO_TYPE, val, &len) == 0)
		memcpy(&type, val, sizeof(type));
	return type;
}

/* F's SO_RCVTIMEO (or SO_SNDTIMEO for SEND): false when it has none. */
static bool sock_timeout(struct vfs_file *f, bool send, struct timespec *ts)
{
	char val[VFS_SOCKOPT_MAX];
	unsigned int len = 16;
	int64_t tv[2];

	if (getopt_any(f, SOL_SOCKET, send ? SO_SNDTIMEO_OLD : SO_RCVTIMEO_OLD, val, &len) ||
	    len < sizeof(tv))
		return false;
	memcpy(tv, val, sizeof(tv));
	if (tv[0] <= 0 && tv[1] <= 0)
		return false;
	*ts = (struct timespec){tv[0], tv[1] * 1000};
	return true;
}

/* Parks T until F is ready for EVENTS (or hangs up, or fails). With SO_RCVTIMEO or
 * SO_SNDTIMEO (SEND) set, the wait ends at that deadline, counted from the call's first run:
 * -ETIMEDOUT then tells the caller to give up with what Linux returns (EAGAIN, or what was
 * moved already). */
static long sock_wait(struct task *t, struct vfs_file *f, uint32_t events, bool send)
{
	struct waitq *wq = NULL;
	struct timespec to;
	long err;

	if (sock_timeout(f, send, &to)) {
		if (!t->blk.retry)
			t->blk.deadline = ts_add(mono_now(), to);
		else if (ts_cmp(mono_now(), t->blk.deadline) >= 0)
			return -ETIMEDOUT;
		task_wait_until(t, &t->blk.deadline);
		/* A wait with a timeout is not restarted by a signal (Linux's sock_intr_errno). */
		if (t->blk.intr_ret == -ERESTARTSYS)
			t->blk.intr_ret = -EINTR;
	}
	if (f->ops->host_fd && f->ops->host_fd(f) >= 0)
		err = task_wait_host_fd(t, f->ops->host_fd(f), events);
	else if (f->ops->poll && (f->ops->poll(f, &wq), wq))
		err = task_wait_queue(t, wq, events | POLLHUP | POLLERR);
	else
		err = 0;
	return err ? err : task_block(t);
}

long sock_wait_io(struct task *t, struct vfs_file *f, uint32_t events)
{
	return sock_wait(t, f, events, events & POLLOUT);
}

static long sock_block(struct task *t, struct waitq *wq, uint32_t events)
{
	long err = task_wait_queue(t, wq, events | POLLHUP | POLLERR);

	return err ? err : task_block(t);
}

/* --- addresses ----------------------------------------------------------------------------- */

/* Linux's move_addr_to_kernel: BUF has VFS_UNIX_ADDR_MAX + 1 bytes and is NUL-terminated
 * after the LEN copied (a 108-byte path then still ends). */
static long addr_in(struct task *t, uintptr_t uaddr, long len, char *buf)
{
	memset(buf, 0, VFS_UNIX_ADDR_MAX + 1);
	if (len < 0 || len > (long)sizeof(struct sockaddr_storage))
		return -EINVAL;
	if (len && copy_in(t->mm, buf, uaddr, len))
		return -EFAULT;
	return 0;
}

/* Linux's move_addr_to_user: copies what fits in the guest's *ULEN and stores the full
 * length there. */
static long addr_out(struct task *t, uintptr_t uaddr, uintptr_t ulen, const void *addr,
		     unsigned int len)
{
	int glen;

	if (copy_in(t->mm, &glen, ulen, sizeof(glen)))
		return -EFAULT;
	if (glen < 0)
		return -EINVAL;
	if ((unsigned int)glen > len)
		glen = (int)len;
	if (glen && copy_out(t->mm, uaddr, addr, glen))
		return -EFAULT;
	return copy_out(t->mm, ulen, &len, sizeof(len)) ? -EFAULT : 0;
}

/* Linux's unix_validate_addr. */
static long addr_valid(const char *buf, long len)
{
	sa_family_t fam;

	memcpy(&fam, buf, sizeof(fam));
	if (len <= (long)SUN_PATH_OFF || len > (long)sizeof(struct sockaddr_un) || fam != AF_UNIX)
		return -EINVAL;
	return 0;
}

/* The canonical absolute guest path of socket file PATH: its directory resolved (symlinks
 * and all) and its last component appended. This is the name registry's key until sockets
 * are inodes. */
static long canonical_path(struct task *t, const char *path, char *abs, size_t size)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	struct vfs_dentry *d;
	long err;

	if (!slash)
		strcpy(dir, ".");
	else if (slash == path)
		strcpy(dir, "/");
	else {
		memcpy(dir, path, slash - path);
		dir[slash - path] = 0;
	}
	err = vfs_lookup(t->fs, NULL, dir, VFS_LOOKUP_FOLLOW | VFS_LOOKUP_DIRECTORY, &d);
	if (err)
		return err;
	int n = vfs_path(t->fs->root, d, abs, size);
	vfs_dentry_put(d);
	if (n < 0)
		return n;
	size_t used = strlen(abs);
	if (*base == 0)
		return 0; /* "dir/": the directory itself */
	if (used + 1 + strlen(base) + 1 > size)
		return -ENAMETOOLONG;
	if (used > 1)
		abs[used++] = '/';
	strcpy(abs + used, base);
	return 0;
}

/* A bound socket is found through its node, not its name: the registry key is the node's
 * device and inode number, so renaming the node or linking it elsewhere carries the socket
 * along (as Linux keeps the socket in the inode), and the key survives a checkpoint, which
 * keeps both numbers. */
static int node_key(struct vfs_dentry *d, char *key, size_t size)
{
	struct stat st;
	int err = vfs_stat(d, &st);

	if (err)
		return err;
	snprintf(key, size, "node:%llx:%llx", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	return 0;
}

/* The socket an AF_UNIX address (already validated) names, for a socket of TYPE. As Linux's
 * unix_find_bsd: the path is followed, the node must be a socket (else ECONNREFUSED) that
 * the caller may write (EACCES). */
static long resolve(struct task *t, int type, const char *buf, long len, struct vfs_unix_sock **out)
{
	const char *sun_path = buf + SUN_PATH_OFF;
	struct vfs_cred cred = task_fs_cred(t);
	struct vfs_dentry *d;
	char key[64];
	long err;

	if (sun_path[0] == 0)
		return vfs_unix_lookup_abstract(type, sun_path + 1, len - SUN_PATH_OFF - 1, out);
	if ((err = vfs_lookup_cred(t->fs, &cred, NULL, sun_path, VFS_LOOKUP_FOLLOW, &d)))
		return err;
	if (!S_ISSOCK(d->inode->mode))
		err = -ECONNREFUSED;
	else if (!(err = vfs_permission(d, &cred, W_OK)) && !(err = node_key(d, key, sizeof(key))))
		err = vfs_unix_lookup_path(key, out);
	vfs_dentry_put(d);
	return err == -ENOENT ? -ECONNREFUSED : err; /* a node with no socket behind it */
}

/* --- socket, socketpair, bind, listen, accept, connect, names ------------------------------- */

/* The type and flags of socket()'s TYPE argument, checked in Linux's order. */
static long socket_args(long domain, unsigned long type_arg, int *type, int *flags)
{
	*type = (int)(type_arg & SOCK_TYPE_MASK);
	*flags = (int)(type_arg & ~(unsigned long)SOCK_TYPE_MASK);
	if (*flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK))
		return -EINVAL;
	if (domain < 0 || domain >= AF_MAX)
		return -EAFNOSUPPORT;
	if (*type >= SOCK_MAX_TYPE)
		return -EINVAL;
	return 0;
}

/* A new socket of DOMAIN, or -EAFNOSUPPORT as from a kernel built without the family. */
static long socket_new(struct task *t, int domain, int type, int protocol, int flags,
		       struct vfs_file **f)
{
	struct vfs_unix_cred cred = owner_cred(t);

	switch (domain) {
	case AF_UNIX:
		if (protocol && protocol != PF_UNIX)
			return -EPROTONOSUPPORT;
		return vfs_unix_socket_new(type, flags & O_NONBLOCK, &cred, f);
	case AF_INET:
	case AF_INET6:
		if (type == SOCK_PACKET)
			return -EPERM; /* AF_PACKET's, which needs CAP_NET_RAW */
		if (kernel.cfg.network == NETWORK_HOST)
			return vfs_hostnet_socket_new(domain, type, protocol, flags & O_NONBLOCK,
						      f);
		return vfs_inet_socket_new(domain, type, protocol, flags & O_NONBLOCK, &cred, f);
	case AF_NETLINK:
		if (kernel.cfg.network == NETWORK_HOST)
			return vfs_hostnet_socket_new(domain, type, protocol, flags & O_NONBLOCK,
						      f);
		return vfs_netlink_socket_new(type, protocol, flags & O_NONBLOCK, &cred, f);
	case AF_PACKET:
		return -EPERM; /* no CAP_NET_RAW */
	default:
		return syscall_unsupported(t, -EAFNOSUPPORT, "address family %d", domain);
	}
}

long sys_socket(struct task *t, const unsigned long *a)
{
	struct vfs_file *f;
	int type, flags;
	long err;

	if ((err = socket_args(arg_int(a, 0), arg_uint(a, 1), &type, &flags)))
		return err;
	if ((err = socket_new(t, arg_int(a, 0), type, arg_int(a, 2), flags, &f)))
		return err;
	return task_install_file(t, f, flags & SOCK_CLOEXEC);
}

long sys_socketpair(struct task *t, const unsigned long *a)
{
	struct vfs_unix_cred cred = owner_cred(t);
	struct vfs_file *fa, *fb;
	int type, flags, fds[2];
	long err;

	if ((err = socket_args(arg_int(a, 0), arg_uint(a, 1), &type, &flags)))
		return err;
	if (arg_int(a, 0) != AF_UNIX) {
		/* The families that exist have no pairs (netlink's neither); the others do not
		 * exist. */
		if ((err = socket_new(t, arg_int(a, 0), type, arg_int(a, 2), flags, &fa)))
			return err;
		vfs_file_put(fa);
		return -EOPNOTSUPP;
	}
	if (arg_int(a, 2) && arg_int(a, 2) != PF_UNIX)
		return -EPROTONOSUPPORT;
	if ((err = vfs_unix_socketpair(type, flags & O_NONBLOCK, &cred, &fa, &fb)))
		return err;
	fds[0] = fdtable_install(t->files, fa, flags & SOCK_CLOEXEC, 0, task_nofile_limit(t));
	if (fds[0] < 0) {
		vfs_file_put(fa);
		vfs_file_put(fb);
		return fds[0];
	}
	fds[1] = fdtable_install(t->files, fb, flags & SOCK_CLOEXEC, 0, task_nofile_limit(t));
	if (fds[1] < 0) {
		fdtable_close(t->files, fds[0]);
		vfs_file_put(fb);
		return fds[1];
	}
	if (copy_out(t->mm, a[3], fds, sizeof(fds))) {
		fdtable_close(t->files, fds[0]);
		fdtable_close(t->files, fds[1]);
		return -EFAULT;
	}
	return 0;
}

long sys_bind(struct task *t, const unsigned long *a)
{
	char buf[VFS_UNIX_ADDR_MAX + 1], abs[PATH_MAX];
	long len = arg_int(a, 2), err;
	struct vfs_file *f;
	sa_family_t fam;

	if ((err = sock_fd(t, arg_int(a, 0), &f)) || (err = addr_in(t, a[1], len, buf)))
		return err;
	if (!vfs_is_unix_socket(f))
		return vfs_sock_ops(f)->bind(f, buf, (unsigned int)len);
	memcpy(&fam, buf, sizeof(fam));
	if (len == (long)SUN_PATH_OFF && fam == AF_UNIX)
		return vfs_unix_autobind(f);
	if ((err = addr_valid(buf, len)))
		return err;
	const char *sun_path = buf + SUN_PATH_OFF;
	if (sun_path[0] == 0)
		return vfs_unix_bind_abstract(f, sun_path + 1, len - SUN_PATH_OFF - 1);
	if ((err = canonical_path(t, sun_path, abs, sizeof(abs))))
		return err;
	/* The name is a socket node in the filesystem, as on Linux: ls and stat see it, and it
	 * stays after the socket closes (connecting to it is then ECONNREFUSED). */
	struct vfs_cred cred = task_fs_cred(t);
	struct vfs_dentry *d;
	char key[64];
	err = vfs_mknod(t->fs, &cred, NULL, abs, S_IFSOCK | (0777 & ~t->fs->umask), 0);
	if (err)
		return err == -EEXIST ? -EADDRINUSE : err;
	if (!(err = vfs_lookup(t->fs, NULL, abs, 0, &d))) {
		if (!(err = node_key(d, key, sizeof(key))))
			err = vfs_unix_bind_path(f, key, sun_path);
		vfs_dentry_put(d);
	}
	if (err)
		vfs_unlink(t->fs, &cred, NULL, abs);
	return err;
}

long sys_listen(struct task *t, const unsigned long *a)
{
	struct vfs_unix_cred cred = owner_cred(t);
	int backlog = arg_int(a, 1);
	struct vfs_file *f;
	long err;

	if ((err = sock_fd(t, arg_int(a, 0), &f)))
		return err;
	if ((unsigned int)backlog > SOMAXCONN_LINUX)
		backlog = SOMAXCONN_LINUX;
	if (!vfs_is_unix_socket(f))
		return vfs_sock_ops(f)->listen(f, backlog);
	return vfs_unix_listen(f, backlog, &cred);
}

static long do_accept(struct task *t, int fd, uintptr_t uaddr, uintptr_t ulen, int flags)
{
	char addr[VFS_SOCK_ADDR_MAX];
	unsigned int alen;
	struct vfs_file *f, *nf;
	long err;

	if (flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK))
		return -EINVAL;
	if ((err = sock_fd(t, fd, &f)))
		return err;
	bool unix_sock = vfs_is_unix_socket(f);
	if (unix_sock)
		err = vfs_unix_accept(f, flags & O_NONBLOCK, &nf);
	else
		err = vfs_sock_ops(f)->accept(f, flags & O_NONBLOCK, &nf);
	if (err == -EAGAIN && !(f->flags & O_NONBLOCK)) {
		t->blk.intr_ret = -ERESTARTSYS;
		err = sock_wait(t, f, POLLIN, false);
		return err == -ETIMEDOUT ? -EAGAIN : err;
	}
	if (err)
		return err;
	if (uaddr) {
		if (unix_sock ? vfs_unix_getname(nf, true, addr, &alen)
			      : vfs_sock_ops(nf)->getname(nf, 2, addr, &alen))
			err = -ECONNABORTED;
		else
			err = addr_out(t, uaddr, ulen, addr, alen);
		if (err) {
			vfs_file_put(nf);
			return err;
		}
	}
	int nfd = fdtable_install(t->files, nf, flags & SOCK_CLOEXEC, 0, task_nofile_limit(t));
	if (nfd < 0)
		vfs_file_put(nf);
	return nfd;
}

long sys_accept(struct task *t, const unsigned long *a)
{
	return do_accept(t, arg_int(a, 0), a[1], a[2], 0);
}

long sys_accept4(struct task *t, const unsigned long *a)
{
	return do_accept(t, arg_int(a, 0), a[1], a[2], arg_int(a, 3));
}

/* connect(2) on the other families: a connection not made at once is waited for (POLLOUT)
 * by a blocking socket, and the retried call learns its outcome; SO_SNDTIMEO ends the wait
 * with EINPROGRESS, as on Linux. */
static long connect_other(struct task *t, struct vfs_file *f, const char *buf, long len)
{
	long err = vfs_sock_ops(f)->connect(f, buf, (unsigned int)len);

	if ((err == -EINPROGRESS || err == -EALREADY) && !(f->flags & O_NONBLOCK)) {
		t->blk.intr_ret = -ERESTARTSYS;
		err = sock_wait(t, f, POLLOUT, true);
		return err == -ETIMEDOUT ? -EINPROGRESS : err;
	}
	return err;
}

long sys_connect(struct task *t, const unsigned long *a)
{
	struct vfs_unix_cred cred = owner_cred(t);
	char buf[VFS_UNIX_ADDR_MAX + 1];
	long len = arg_int(a, 2), err;
	struct vfs_unix_sock *target = NULL;
	struct waitq *wq = NULL;
	struct vfs_file *f;
	sa_family_t fam;

	if ((err = sock_fd(t, arg_int(a, 0), &f)) || (err = addr_in(t, a[1], len, buf)))
		return err;
	if (!vfs_is_unix_socket(f))
		return connect_other(t, f, buf, len);
	memcpy(&fam, buf, sizeof(fam));
	if (vfs_unix_type(f) == SOCK_DGRAM) {
		if (len < (long)sizeof(sa_family_t))
			return -EINVAL;
		if (fam != AF_UNSPEC && ((err = addr_valid(buf, len)) ||
					 (err = resolve(t, SOCK_DGRAM, buf, len, &target))))
			return err;
		return vfs_unix_connect(f, target, &cred, NULL);
	}
	if ((err = addr_valid(buf, len)) || (err = resolve(t, vfs_unix_type(f), buf, len, &target)))
		return err;
	err = vfs_unix_connect(f, target, &cred, &wq);
	if (err == -EAGAIN && !(f->flags & O_NONBLOCK) && wq) {
		t->blk.intr_ret = -ERESTARTSYS;
		return sock_block(t, wq, POLLOUT);
	}
	return err;
}

static long getname(struct task *t, const unsigned long *a, bool peer)
{
	char addr[VFS_SOCK_ADDR_MAX];
	unsigned int alen;
	struct vfs_file *f;
	long err;

	if ((err = sock_fd(t, arg_int(a, 0), &f)))
		return err;
	if (vfs_is_unix_socket(f))
		err = vfs_unix_getname(f, peer, addr, &alen);
	else
		err = vfs_sock_ops(f)->getname(f, peer, addr, &alen);
	if (err)
		return err;
	return addr_out(t, a[1], a[2], addr, alen);
}

long sys_getsockname(struct task *t, const unsigned long *a)
{
	return getname(t, a, false);
}

long sys_getpeername(struct task *t, const unsigned long *a)
{
	return getname(t, a, true);
}

long sys_shutdown(struct task *t, const unsigned long *a)
{
	struct vfs_file *f;
	long err;

	if ((err = sock_fd(t, arg_int(a, 0), &f)))
		return err;
	if (!vfs_is_unix_socket(f))
		return vfs_sock_ops(f)->shutdown(f, arg_int(a, 1));
	return vfs_unix_shutdown(f, arg_int(a, 1));
}

long sys_setsockopt(struct task *t, const unsigned long *a)
{
	char val[VFS_SOCKOPT_MAX] = {0};
	long len = arg_int(a, 4), err;
	struct vfs_file *f;

	if ((err = sock_fd(t, arg_int(a, 0), &f)))
		return err;
	if (len < 0)
		return -EINVAL;
	if (len && copy_in(t->mm, val, a[3], len < (long)sizeof(val) ? len : (long)sizeof(val)))
		return -EFAULT;
	if (!vfs_is_unix_socket(f))
		return vfs_sock_ops(f)->setsockopt(f, arg_int(a, 1), arg_int(a, 2), val,
						   (unsigned int)len);
	return vfs_unix_setsockopt(f, arg_int(a, 1), arg_int(a, 2), val, (unsigned int)len);
}

long sys_getsockopt(struct task *t, const unsigned long *a)
{
	char val[VFS_SOCKOPT_MAX];
	unsigned int vlen;
	int len;
	struct vfs_file *f;
	long err;

	if ((err = sock_fd(t, arg_int(a, 0), &f)))
		return err;
	if (copy_in(t->mm, &len, a[4], sizeof(len)))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;
	vlen = len < (int)sizeof(val) ? (unsigned int)len : sizeof(val);
	if ((err = getopt_any(f, arg_int(a, 1), arg_int(a, 2), val, &vlen)))
		return err;
	if ((unsigned int)len > vlen)
		len = (int)vlen;
	if (len && copy_out(t->mm, a[3], val, len))
		return -EFAULT;
	return copy_out(t->mm, a[4], &len, sizeof(len)) ? -EFAULT : 0;
}

/* --- data: iovecs, control messages, sendmsg and recvmsg ----------------------------------- */

/* The guest iovecs GIOV (CNT of them) as Sentry iovecs into guest memory, at most
 * SOCK_IO_MAX bytes, all of them mapped; WRITE when the socket writes into them. *IOV is
 * malloc'd. */
static long iov_in(struct task *t, const struct iovec *giov, size_t cnt, bool write,
		   struct iovec **iov, int *n, size_t *total)
{
	size_t max = cnt * 2 + SOCK_IO_MAX / PAGE_SIZE + 2;

	*n = 0;
	*total = 0;
	if (!(*iov = malloc(max * sizeof(**iov))))
		return -ENOMEM;
	/* sendto's and recvfrom's one buffer (msghdr iovecs were checked by arg_iovec). */
	for (size_t i = 0; i < cnt; i++)
		if ((ssize_t)giov[i].iov_len < 0)
			return -EINVAL;
	int got = arg_iovec_map(t->mm, giov, cnt, SOCK_IO_MAX,
				ARG_IOV_WHOLE | (write ? ARG_IOV_WRITE : 0), *iov, (int)max, total);
	if (got < 0)
		return got;
	*n = got;
	return 0;
}

struct scm_in {
	struct vfs_file *files[SCM_MAX_FD]; /* references, put by scm_in_free */
	int nfiles;
	struct vfs_unix_cred cred;
};

static void scm_in_free(struct scm_in *s)
{
	for (int i = 0; i < s->nfiles; i++)
		vfs_file_put(s->files[i]);
	s->nfiles = 0;
}

/* Linux's scm_check_creds: a process may claim only its own pid and ids; root anything. */
static long check_creds(struct task *t, const struct ucred *c)
{
	bool root = t->euid == 0;

	if (c->pid != t->tgid && !root)
		return -EPERM;
	if (c->uid != t->uid && c->uid != t->euid && c->uid != t->suid && !root)
		return -EPERM;
	if (c->gid != t->gid && c->gid != t->egid && c->gid != t->sgid && !root)
		return -EPERM;
	return 0;
}

/* Parses sendmsg's control buffer (Linux's __scm_send): SCM_RIGHTS and SCM_CREDENTIALS at
 * SOL_SOCKET; other levels are ignored. */
static long scm_parse(struct task *t, uintptr_t control, size_t controllen, struct scm_in *s)
{
	struct cmsghdr h;
	long err = 0;

	s->nfiles = 0;
	s->cred = msg_cred(t);
	if (controllen == 0)
		return 0;
	if (controllen > OPTMEM_MAX)
		return -ENOBUFS;
	char *buf = malloc(controllen);
	if (!buf)
		return -ENOMEM;
	if (copy_in(t->mm, buf, control, controllen)) {
		err = -EFAULT;
		goto out;
	}
	for (size_t off = 0; off + sizeof(h) <= controllen; off += CMSG_ALIGN(h.cmsg_len)) {
		memcpy(&h, buf + off, sizeof(h));
		if (h.cmsg_len < sizeof(h) || h.cmsg_len > controllen - off) {
			err = -EINVAL;
			goto out;
		}
		if (h.cmsg_level != SOL_SOCKET)
			continue;
		const char *data = buf + off + CMSG_LEN(0);
		size_t dlen = h.cmsg_len - CMSG_LEN(0);
		if (h.cmsg_type == SCM_RIGHTS) {
			int num = (int)(dlen / sizeof(int));
			if (num <= 0)
				continue;
			if (s->nfiles + num > SCM_MAX_FD) {
				err = -EINVAL;
				goto out;
			}
			for (int i = 0; i < num; i++) {
				int fd;
				memcpy(&fd, data + i * sizeof(int), sizeof(fd));
				struct vfs_file *f = arg_file(t, fd);
				if (!f) {
					err = -EBADF;
					goto out;
				}
				s->files[s->nfiles++] = vfs_file_get(f);
			}
		} else if (h.cmsg_type == SCM_CREDENTIALS) {
			struct ucred c;
			if (h.cmsg_len != CMSG_LEN(sizeof(c))) {
				err = -EINVAL;
				goto out;
			}
			memcpy(&c, data, sizeof(c));
			if ((err = check_creds(t, &c)))
				goto out;
			s->cred = (struct vfs_unix_cred){c.pid, c.uid, c.gid};
		} else {
			err = -EINVAL;
			goto out;
		}
		if (CMSG_ALIGN(h.cmsg_len) == 0)
			break;
	}
out:
	free(buf);
	if (err)
		scm_in_free(s);
	return err;
}

/* Control messages of sendmsg on the other families: each one well-formed (EINVAL), and none
 * that only AF_UNIX carries; IP-level ones (IP_PKTINFO, IP_TTL...) are accepted and have no
 * effect on loopback. */
static long cmsg_check(struct task *t, uintptr_t control, size_t controllen)
{
	struct cmsghdr h;
	long err = 0;

	if (controllen == 0)
		return 0;
	if (controllen > OPTMEM_MAX)
		return -ENOBUFS;
	char *buf = malloc(controllen);
	if (!buf)
		return -ENOMEM;
	if (copy_in(t->mm, buf, control, controllen))
		err = -EFAULT;
	for (size_t off = 0; !err && off + sizeof(h) <= controllen; off += CMSG_ALIGN(h.cmsg_len)) {
		memcpy(&h, buf + off, sizeof(h));
		if (h.cmsg_len < sizeof(h) || h.cmsg_len > controllen - off)
			err = -EINVAL;
		else if (h.cmsg_level == SOL_SOCKET &&
			 (h.cmsg_type == SCM_RIGHTS || h.cmsg_type == SCM_CREDENTIALS))
			err = -EINVAL;
	}
	free(buf);
	return err;
}

/* One send: GIOV/CNT from the guest, an address (ADDR, ADDRLEN) or none, a control buffer.
 * A blocking stream send that only partly fits keeps its progress in t->blk.io_done, and the
 * files it passes go with its first part only. Without MAY_BLOCK, a send that would wait
 * gives -EAGAIN instead (sendmmsg after its first message). */
static long sock_send(struct task *t, struct vfs_file *f, const struct iovec *giov, size_t cnt,
		      uintptr_t uaddr, long addrlen, uintptr_t control, size_t controllen,
		      int flags, bool may_block)
{
	char addr[VFS_UNIX_ADDR_MAX + 1];
	struct vfs_unix_msg m = {.flags = flags};
	struct scm_in scm = {.nfiles = 0};
	bool unix_sock = vfs_is_unix_socket(f);
	struct iovec *iov = NULL;
	size_t total;
	long err;
	int n;

	if (uaddr && addrlen) {
		if ((err = addr_in(t, uaddr, addrlen, addr)))
			return err;
		m.named = true;
	}
	if ((err = unix_sock ? scm_parse(t, control, controllen, &scm)
			     : cmsg_check(t, control, controllen)))
		return err;
	bool stream = sock_type(f) == SOCK_STREAM;
	bool block = may_block && !nonblocking(f, flags);
	size_t done = t->blk.retry && stream && block ? t->blk.io_done : 0;
	if (unix_sock && t->blk.retry && (err = vfs_unix_woken_send_error(f))) {
		err = done ? (long)done : err;
		goto out;
	}
	if (unix_sock && m.named && vfs_unix_type(f) == SOCK_DGRAM &&
	    ((err = addr_valid(addr, addrlen)) ||
	     (err = resolve(t, SOCK_DGRAM, addr, addrlen, &m.dest))))
		goto out;
	if ((err = iov_in(t, giov, cnt, false, &iov, &n, &total)))
		goto out;
	n = arg_iovec_advance(iov, n, done);
	if (unix_sock) {
		m.iov = iov;
		m.iovcnt = n;
		m.cred = scm.cred;
		if (done == 0) {
			m.files = scm.files;
			m.nfiles = scm.nfiles;
		}
		err = vfs_unix_sendmsg(f, &m);
	} else {
		struct vfs_sock_msg gm = {.iov = iov,
					  .iovcnt = n,
					  .flags = flags,
					  .name = m.named ? addr : NULL,
					  .namelen = m.named ? (unsigned int)addrlen : 0};
		err = vfs_sock_ops(f)->sendmsg(f, &gm);
	}
	if (err > 0 && stream && block && done + err < total) {
		done += err;
		err = -EAGAIN; /* the rest must wait for room */
	} else if (err >= 0) {
		err += done;
		goto out;
	}
	bool sigpipe = unix_sock ? vfs_unix_sends_sigpipe(f) : stream;
	if (err == -EPIPE && done == 0 && sigpipe && !(flags & MSG_NOSIGNAL)) {
		siginfo_t si = {.si_signo = SIGPIPE, .si_code = SI_USER};
		si.si_pid = t->tgid;
		si.si_uid = t->uid;
		signal_send_thread(t, SIGPIPE, &si);
	}
	if (err == -EAGAIN && block) {
		t->blk.io_done = done;
		t->blk.intr_ret = done ? (int)done : -ERESTARTSYS;
		err = sock_wait(t, f, POLLOUT, true);
		if (err == -ETIMEDOUT)
			err = done ? (long)done : -EAGAIN;
	} else if (done) {
		err = done;
	}
out:
	free(iov);
	scm_in_free(&scm);
	return err;
}

/* Appends one control message to BUF (SIZE bytes, *USED taken), as Linux's put_cmsg does:
 * what does not fit is cut and flagged MSG_CTRUNC. */
static void put_cmsg(char *buf, size_t size, size_t *used, int *msg_flags, int type,
		     const void *data, size_t len)
{
	size_t avail = size - *used, cmlen = CMSG_LEN(len);
	struct cmsghdr h = {.cmsg_level = SOL_SOCKET, .cmsg_type = type};

	if (avail < sizeof(h)) {
		*msg_flags |= MSG_CTRUNC;
		return;
	}
	if (avail < cmlen) {
		*msg_flags |= MSG_CTRUNC;
		cmlen = avail;
	}
	h.cmsg_len = cmlen;
	memcpy(buf + *used, &h, sizeof(h));
	memcpy(buf + *used + CMSG_LEN(0), data, cmlen - CMSG_LEN(0));
	*used += CMSG_SPACE(len) < avail ? CMSG_SPACE(len) : avail;
}

/* Installs received FILES (references, all consumed) as SCM_RIGHTS into BUF, as many as fit
 * (Linux's scm_detach_fds). */
static void put_rights(struct task *t, char *buf, size_t size, size_t *used, int *msg_flags,
		       struct vfs_file **files, int nfiles, bool cloexec)
{
	size_t avail = size - *used;
	int max = avail > CMSG_LEN(0) ? (int)((avail - CMSG_LEN(0)) / sizeof(int)) : 0;
	int i = 0;

	for (; i < nfiles && i < max; i++) {
		int fd = fdtable_install(t->files, files[i], cloexec, 0, task_nofile_limit(t));
		if (fd < 0)
			break;
		memcpy(buf + *used + CMSG_LEN(0) + i * sizeof(int), &fd, sizeof(fd));
	}
	if (i > 0) {
		struct cmsghdr h = {.cmsg_len = CMSG_LEN(i * sizeof(int)),
				    .cmsg_level = SOL_SOCKET,
				    .cmsg_type = SCM_RIGHTS};
		memcpy(buf + *used, &h, sizeof(h));
		*used += CMSG_SPACE(i * sizeof(int)) < avail ? CMSG_SPACE(i * sizeof(int)) : avail;
	}
	if (i < nfiles)
		*msg_flags |= MSG_CTRUNC;
	for (int k = i; k < nfiles; k++)
		vfs_file_put(files[k]);
}

struct recv_out {
	char addr[VFS_SOCK_ADDR_MAX];
	unsigned int addrlen;
	int msg_flags;
	size_t controllen; /* bytes of control data written */
};

/* One receive into GIOV/CNT. Stream reads with MSG_WAITALL keep their progress in
 * t->blk.io_done across retries. Without MAY_BLOCK, a receive that would wait gives -EAGAIN
 * (recvmmsg after its first message). */
static long sock_recv(struct task *t, struct vfs_file *f, const struct iovec *giov, size_t cnt,
		      int flags, uintptr_t control, size_t controllen, struct recv_out *out,
		      bool may_block)
{
	struct vfs_unix_msg m = {.flags = flags, .addr = out->addr};
	bool unix_sock = vfs_is_unix_socket(f);
	struct iovec *iov = NULL;
	size_t total;
	long err;
	int n;

	memset(out, 0, sizeof(*out));
	out->msg_flags = flags & MSG_CMSG_CLOEXEC;
	bool block = may_block && !nonblocking(f, flags);
	bool waitall =
	    (flags & MSG_WAITALL) && !(flags & MSG_PEEK) && block && sock_type(f) == SOCK_STREAM;
	size_t done = t->blk.retry && waitall ? t->blk.io_done : 0;
	if (!unix_sock && (flags & MSG_TRUNC) && sock_type(f) == SOCK_STREAM) {
		/* A stream's MSG_TRUNC drops bytes without copying: the buffer is not touched. */
		if (!(iov = malloc((cnt ? cnt : 1) * sizeof(*iov))))
			return -ENOMEM;
		memcpy(iov, giov, cnt * sizeof(*iov));
		n = (int)cnt;
		total = 0;
		for (size_t i = 0; i < cnt; i++)
			total += giov[i].iov_len;
	} else if ((err = iov_in(t, giov, cnt, true, &iov, &n, &total))) {
		goto out;
	}
	n = arg_iovec_advance(iov, n, done);
	if (unix_sock) {
		m.iov = iov;
		m.iovcnt = n;
		err = vfs_unix_recvmsg(f, &m);
	} else {
		struct vfs_sock_msg gm = {.iov = iov,
					  .iovcnt = n,
					  .flags = flags | (block ? 0 : MSG_DONTWAIT),
					  .addr = out->addr};
		err = vfs_sock_ops(f)->recvmsg(f, &gm);
		m.addrlen = gm.addrlen;
		m.msg_flags = gm.msg_flags;
	}
	if (err > 0 && waitall && done + err < total && !m.nfiles) {
		done += err;
		err = -EAGAIN;
	}
	if (err == -EAGAIN && block) {
		t->blk.io_done = done;
		t->blk.intr_ret = done ? (int)done : -ERESTARTSYS;
		err = sock_wait(t, f, POLLIN, false);
		if (err != -ETIMEDOUT)
			goto out;
		err = -EAGAIN;
	}
	if (err < 0 && !done)
		goto out;
	err = err < 0 ? (long)done : err + (long)done;
	out->addrlen = m.addrlen;
	out->msg_flags |= m.msg_flags;
	if (!unix_sock)
		goto out;
	size_t size = control ? (controllen < OPTMEM_MAX ? controllen : OPTMEM_MAX) : 0;
	char *buf = size ? calloc(1, size) : NULL;
	if (size && !buf)
		size = 0;
	if (!control && (m.has_cred || m.nfiles))
		out->msg_flags |= MSG_CTRUNC;
	if (m.has_cred) {
		struct ucred c = {m.cred.pid, m.cred.uid, m.cred.gid};
		put_cmsg(buf, size, &out->controllen, &out->msg_flags, SCM_CREDENTIALS, &c,
			 sizeof(c));
	}
	if (m.nfiles)
		put_rights(t, buf, size, &out->controllen, &out->msg_flags, m.files, m.nfiles,
			   flags & MSG_CMSG_CLOEXEC);
	free(m.files);
	if (out->controllen && copy_out(t->mm, control, buf, out->controllen))
		err = -EFAULT;
	free(buf);
out:
	free(iov);
	return err;
}

long sys_sendto(struct task *t, const unsigned long *a)
{
	struct iovec one = {(void *)a[1], a[2]};
	struct vfs_file *f;
	long err;

	if ((err = sock_fd(t, arg_int(a, 0), &f)))
		return err;
	return sock_send(t, f, &one, 1, a[4], arg_int(a, 5), 0, 0, arg_int(a, 3), true);
}

long sys_recvfrom(struct task *t, const unsigned long *a)
{
	struct iovec one = {(void *)a[1], a[2]};
	struct recv_out out;
	struct vfs_file *f;
	long r;

	if ((r = sock_fd(t, arg_int(a, 0), &f)))
		return r;
	r = sock_recv(t, f, &one, 1, arg_int(a, 3), 0, 0, &out, true);
	if (r >= 0 && a[4]) {
		long err = addr_out(t, a[4], a[5], out.addr, out.addrlen);
		if (err)
			return err;
	}
	return r;
}

/* The guest's msghdr at ADDR and its iovec array (malloc'd in *GIOV). */
static long msghdr_in(struct task *t, uintptr_t addr, struct msghdr *mh, struct iovec **giov)
{
	*giov = NULL;
	if (copy_in(t->mm, mh, addr, sizeof(*mh)))
		return -EFAULT;
	if (mh->msg_iovlen > ARG_IOV_MAX)
		return -EMSGSIZE;
	if ((int)mh->msg_namelen < 0)
		return -EINVAL;
	if (mh->msg_namelen > sizeof(struct sockaddr_storage))
		mh->msg_namelen = sizeof(struct sockaddr_storage);
	if (!mh->msg_name)
		mh->msg_namelen = 0;
	long r = arg_iovec(t, (uintptr_t)mh->msg_iov, (unsigned int)mh->msg_iovlen, giov);
	return r < 0 ? r : 0;
}

/* One sendmsg of msghdr UMSG on F. */
static long send_one(struct task *t, struct vfs_file *f, uintptr_t umsg, int flags, bool may_block)
{
	struct iovec *giov = NULL;
	struct msghdr mh;
	long err;

	if (!(err = msghdr_in(t, umsg, &mh, &giov)))
		err = sock_send(t, f, giov, mh.msg_iovlen, (uintptr_t)mh.msg_name, mh.msg_namelen,
				(uintptr_t)mh.msg_control, mh.msg_controllen, flags, may_block);
	free(giov);
	return err;
}

/* One recvmsg into msghdr UMSG from F: its name, control length and flags are written back. */
static long recv_one(struct task *t, struct vfs_file *f, uintptr_t umsg, int flags, bool may_block)
{
	struct iovec *giov = NULL;
	struct recv_out out;
	struct msghdr mh;
	long err, r;

	if ((err = msghdr_in(t, umsg, &mh, &giov)))
		goto out;
	r = sock_recv(t, f, giov, mh.msg_iovlen, flags, (uintptr_t)mh.msg_control,
		      mh.msg_controllen, &out, may_block);
	if (r < 0) {
		err = r;
		goto out;
	}
	if (mh.msg_name &&
	    (err = addr_out(t, (uintptr_t)mh.msg_name, umsg + offsetof(struct msghdr, msg_namelen),
			    out.addr, out.addrlen)))
		goto out;
	mh.msg_flags = out.msg_flags;
	mh.msg_controllen = out.controllen;
	if (copy_out(t->mm, umsg + offsetof(struct msghdr, msg_controllen), &mh.msg_controllen,
		     sizeof(mh.msg_controllen)) ||
	    copy_out(t->mm, umsg + offsetof(struct msghdr, msg_flags), &mh.msg_flags,
		     sizeof(mh.msg_flags)))
		err = -EFAULT;
	else
		err = r;
out:
	free(giov);
	return err;
}

/* The descriptor is checked before the message, as Linux does. */
long sys_sendmsg(struct task *t, const unsigned long *a)
{
	struct vfs_file *f;
	long err;

	if ((err = sock_fd(t, arg_int(a, 0), &f)))
		return err;
	return send_one(t, f, a[1], arg_int(a, 2), true);
}

long sys_recvmsg(struct task *t, const unsigned long *a)
{
	struct vfs_file *f;
	long err;

	if ((err = sock_fd(t, arg_int(a, 0), &f)))
		return err;
	return recv_one(t, f, a[1], arg_int(a, 2), true);
}

/* sendmmsg(2): the messages one after the other, each one's length written to its msg_len;
 * the first may wait for room, the next ones are sent while there is some (a later one that
 * would wait ends the call, which reports how many went). An error is returned only if no
 * message went. */
long sys_sendmmsg(struct task *t, const unsigned long *a)
{
	unsigned int vlen = arg_uint(a, 2), i;
	int flags = arg_int(a, 3);
	uintptr_t vec = a[1];
	struct vfs_file *f;
	long err;

	if ((err = sock_fd(t, arg_int(a, 0), &f)))
		return err;
	if (vlen > ARG_IOV_MAX)
		vlen = ARG_IOV_MAX;
	for (i = 0; i < vlen; i++) {
		uintptr_t m = vec + i * sizeof(struct mmsghdr);
		err = send_one(t, f, m, flags, i == 0);
		if (err < 0)
			break;
		unsigned int len = (unsigned int)err;
		if (copy_out(t->mm, m + offsetof(struct mmsghdr, msg_len), &len, sizeof(len))) {
			err = -EFAULT;
			break;
		}
	}
	if (i > 0 && err != -ESENTRY_BLOCK)
		return i;
	return err;
}

/* recvmmsg(2): up to VLEN messages, each one's length in its msg_len. A blocking socket waits
 * for each one (t->blk.io_done counts those received across retries) until MSG_WAITFORONE
 * after the first, or the timeout (checked, as Linux does, when a message arrives), ends the
 * call; an error after some messages ends it with their count. */
long sys_recvmmsg(struct task *t, const unsigned long *a)
{
	unsigned int vlen = arg_uint(a, 2);
	int flags = arg_int(a, 3) & ~MSG_WAITALL;
	uintptr_t vec = a[1];
	struct timespec ts;
	struct vfs_file *f;
	long err;

	if ((err = sock_fd(t, arg_int(a, 0), &f)))
		return err;
	if (a[4] && !t->blk.retry) {
		if (copy_in(t->mm, &ts, a[4], sizeof(ts)))
			return -EFAULT;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= NSEC_PER_SEC)
			return -EINVAL;
		t->blk.deadline = ts_add(mono_now(), ts);
	}
	if (vlen > ARG_IOV_MAX)
		vlen = ARG_IOV_MAX;
	size_t i = t->blk.retry ? t->blk.io_done : 0;
	for (; i < vlen; i++) {
		uintptr_t m = vec + i * sizeof(struct mmsghdr);
		bool may_block = i == 0 || !(flags & MSG_WAITFORONE);
		if (a[4] && i > 0 && ts_cmp(mono_now(), t->blk.deadline) >= 0)
			break;
		t->blk.io_done = i;
		err =
		    recv_one(t, f, m, flags | (i > 0 && !may_block ? MSG_DONTWAIT : 0), may_block);
		if (err == -ESENTRY_BLOCK) {
			t->blk.io_done = i;
			if (i > 0) {
				t->blk.intr_ret = (int)i;
				if (a[4])
					task_wait_until(t, &t->blk.deadline);
			}
			return err;
		}
		if (err < 0)
			break;
		unsigned int len = (unsigned int)err;
		if (copy_out(t->mm, m + offsetof(struct mmsghdr, msg_len), &len, sizeof(len))) {
			err = -EFAULT;
			break;
		}
	}
	if (i > 0)
		return (long)i;
	return err;
}

/* --- ioctl: the interfaces ----------------------------------------------------------------- */

/* SIOCGIFCONF: an ifreq with the IPv4 address of each interface that has one, as many as fit
 * in the guest's buffer; without a buffer, the length all of them need. */
static long ifconf(struct task *t, uintptr_t arg)
{
	struct ifconf ic;
	const struct vfs_netdev *d;
	int len = 0;

	if (copy_in(t->mm, &ic, arg, sizeof(ic)))
		return -EFAULT;
	for (int i = 0; (d = vfs_netdev_at(i)); i++) {
		if (!ic.ifc_buf) {
			len += (int)sizeof(struct ifreq);
			continue;
		}
		if (ic.ifc_len - len < (int)sizeof(struct ifreq))
			break;
		struct ifreq r;
		struct sockaddr_in sin = {.sin_family = AF_INET};
		memset(&r, 0, sizeof(r));
		strncpy(r.ifr_name, d->name, IFNAMSIZ - 1);
		memcpy(&sin.sin_addr, d->v4, 4);
		memcpy(&r.ifr_addr, &sin, sizeof(sin));
		if (copy_out(t->mm, (uintptr_t)ic.ifc_buf + len, &r, sizeof(r)))
			return -EFAULT;
		len += (int)sizeof(r);
	}
	ic.ifc_len = len;
	return copy_out(t->mm, arg, &ic, sizeof(ic)) ? -EFAULT : 0;
}

static void put_sin(struct ifreq *r, const uint8_t *a)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};

	memcpy(&sin.sin_addr, a, 4);
	memcpy(&r->ifr_addr, &sin, sizeof(sin));
}

/* The interface requests every socket answers (Linux's dev_ioctl, and devinet_ioctl for the
 * addresses on AF_INET sockets): reading lo's attributes; changing anything needs
 * CAP_NET_ADMIN. Others go to the socket's own ioctl. */
/* On a host socket the host answers the interface requests (its interfaces are the
 * sandbox's with --network host); ARG moves through a Sentry copy. */
static long host_ifioctl(struct task *t, struct vfs_file *f, unsigned int cmd, uintptr_t arg)
{
	struct ifreq r;
	long err;

	if (cmd == SIOCGIFCONF) {
		struct ifconf ic;
		if (copy_in(t->mm, &ic, arg, sizeof(ic)))
			return -EFAULT;
		uintptr_t ubuf = (uintptr_t)ic.ifc_buf;
		char *buf = NULL;
		if (ubuf) {
			if (ic.ifc_len < 0 || ic.ifc_len > 65536)
				ic.ifc_len = ic.ifc_len < 0 ? 0 : 65536;
			if (!(buf = calloc(1, (size_t)ic.ifc_len + 1)))
				return -ENOMEM;
			ic.ifc_buf = buf;
		}
		err = vfs_hostnet_ifioctl(f, cmd, &ic);
		if (!err && buf && copy_out(t->mm, ubuf, buf, (size_t)ic.ifc_len))
			err = -EFAULT;
		free(buf);
		ic.ifc_buf = (char *)ubuf;
		if (!err && copy_out(t->mm, arg, &ic, sizeof(ic)))
			err = -EFAULT;
		return err;
	}
	if (copy_in(t->mm, &r, arg, sizeof(r)))
		return -EFAULT;
	if ((err = vfs_hostnet_ifioctl(f, cmd, &r)))
		return err;
	return copy_out(t->mm, arg, &r, sizeof(r)) ? -EFAULT : 0;
}

long sock_ioctl(struct task *t, struct vfs_file *f, unsigned int cmd, uintptr_t arg)
{
	const struct vfs_netdev *d;
	struct ifreq r;
	bool inet4 = vfs_sock_ops(f) && vfs_sock_ops(f)->family == AF_INET && vfs_is_inet_socket(f);
	int domain = 0;

	switch (vfs_is_hostnet_socket(f) ? cmd : 0) {
	case SIOCGIFCONF:
	case SIOCGIFNAME:
	case SIOCGIFFLAGS:
	case SIOCGIFADDR:
	case SIOCGIFDSTADDR:
	case SIOCGIFBRDADDR:
	case SIOCGIFNETMASK:
	case SIOCGIFMETRIC:
	case SIOCGIFMTU:
	case SIOCGIFHWADDR:
	case SIOCGIFINDEX:
	case SIOCGIFTXQLEN:
	case SIOCGIFMAP:
		return host_ifioctl(t, f, cmd, arg);
	}
	switch (cmd) {
	case SIOCGIFCONF:
		return ifconf(t, arg);
	case SIOCGIFNAME:
	case SIOCGIFFLAGS:
	case SIOCGIFADDR:
	case SIOCGIFDSTADDR:
	case SIOCGIFBRDADDR:
	case SIOCGIFNETMASK:
	case SIOCGIFMETRIC:
	case SIOCGIFMTU:
	case SIOCGIFHWADDR:
	case SIOCGIFINDEX:
	case SIOCGIFTXQLEN:
	case SIOCGIFMAP:
		break;
	case SIOCSIFFLAGS:
	case SIOCSIFADDR:
	case SIOCSIFDSTADDR:
	case SIOCSIFBRDADDR:
	case SIOCSIFNETMASK:
	case SIOCSIFMETRIC:
	case SIOCSIFMTU:
	case SIOCSIFHWADDR:
	case SIOCSIFTXQLEN:
	case SIOCSIFNAME:
	case SIOCSIFMAP:
	case SIOCADDRT:
	case SIOCDELRT:
	case SIOCDIFADDR:
		return -EPERM;
	case FIOSETOWN:
	case SIOCSPGRP:
		return 0;
	case FIOGETOWN:
	case SIOCGPGRP:
		return copy_out(t->mm, arg, &domain, sizeof(domain)) ? -EFAULT : 0;
	case SIOCGSTAMP_OLD:
	case SIOCGSTAMPNS_OLD:
		return -ENOENT; /* no packet was timestamped */
	default: {
		int v = 0;
		long err = f->ops->ioctl ? f->ops->ioctl(f, cmd, &v) : -ENOTTY;
		if (err)
			return err;
		return copy_out(t->mm, arg, &v, sizeof(v)) ? -EFAULT : 0;
	}
	}
	if (copy_in(t->mm, &r, arg, sizeof(r)))
		return -EFAULT;
	r.ifr_name[IFNAMSIZ - 1] = 0;
	if (cmd == SIOCGIFNAME) {
		if (!(d = vfs_netdev_by_index(r.ifr_ifindex)))
			return -ENODEV;
		strncpy(r.ifr_name, d->name, IFNAMSIZ - 1);
		return copy_out(t->mm, arg, &r, sizeof(r)) ? -EFAULT : 0;
	}
	if (!(d = vfs_netdev_by_name(r.ifr_name)))
		return -ENODEV;
	memset(&r.ifr_ifru, 0, sizeof(r.ifr_ifru));
	switch (cmd) {
	case SIOCGIFFLAGS:
		r.ifr_flags = (short)d->flags;
		break;
	case SIOCGIFADDR:
	case SIOCGIFDSTADDR:
	case SIOCGIFBRDADDR:
	case SIOCGIFNETMASK: {
		uint8_t a[4] = {0};
		if (!inet4)
			return -ENOTTY;
		if (cmd == SIOCGIFADDR || cmd == SIOCGIFDSTADDR)
			memcpy(a, d->v4, 4);
		else if (cmd == SIOCGIFNETMASK)
			for (int i = 0; i < d->v4_prefix; i++)
				a[i / 8] |= (uint8_t)(0x80 >> (i % 8));
		put_sin(&r, a);
		break;
	}
	case SIOCGIFMETRIC:
		r.ifr_metric = 0;
		break;
	case SIOCGIFMTU:
		r.ifr_mtu = d->mtu;
		break;
	case SIOCGIFHWADDR:
		r.ifr_hwaddr.sa_family = (sa_family_t)d->type;
		break;
	case SIOCGIFINDEX:
		r.ifr_ifindex = d->index;
		break;
	case SIOCGIFTXQLEN:
		r.ifr_qlen = d->txqlen;
		break;
	}
	return copy_out(t->mm, arg, &r, sizeof(r)) ? -EFAULT : 0;
}
