/* Socket syscalls: fetch sockaddrs, msghdrs, iovecs and control messages from guest memory,
 * resolve names to socket objects, call vfs/unix.c, and block and retry on -EAGAIN. Only
 * AF_UNIX exists; every other family is refused with EAFNOSUPPORT (there is no network). The
 * guest ABI (struct msghdr, cmsg layout, SCM_RIGHTS fd installation) lives here, the socket
 * semantics in vfs/unix.c. */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "sentry/fdtable.h"
#include "sentry/mm.h"
#include "sentry/sched.h"
#include "sentry/signal.h"
#include "sentry/syscalls.h"
#include "sentry/task.h"
#include "vfs/vfs.h"

#define SOCK_TYPE_MASK 0xf
#define SOCK_MAX_TYPE 11     /* SOCK_PACKET + 1: Linux's SOCK_MAX */
#define SOMAXCONN_LINUX 4096 /* net.core.somaxconn */
#ifndef UIO_MAXIOV
#define UIO_MAXIOV 1024
#endif
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
	struct vfs_file *f = fdtable_get(t->files, fd);

	if (!f)
		return -EBADF;
	if (!vfs_is_unix_socket(f))
		return -ENOTSOCK;
	*out = f;
	return 0;
}

static bool nonblocking(struct vfs_file *f, int flags)
{
	return (f->flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
}

/* Parks T on wait queue WQ until EVENTS (or a hang-up or error). */
static long sock_block(struct task *t, struct waitq *wq, uint32_t events)
{
	long err = task_wait_queue(t, wq, events | POLLHUP | POLLERR);

	return err ? err : task_block(t);
}

static long sock_wait(struct task *t, struct vfs_file *f, uint32_t events)
{
	struct waitq *wq;

	f->ops->poll(f, &wq);
	return sock_block(t, wq, events);
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
static long socket_args(long domain, unsigned long type_arg, long protocol, int *type, int *flags)
{
	*type = (int)(type_arg & SOCK_TYPE_MASK);
	*flags = (int)(type_arg & ~(unsigned long)SOCK_TYPE_MASK);
	if (*flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK))
		return -EINVAL;
	if (domain < 0 || domain >= AF_MAX)
		return -EAFNOSUPPORT;
	if (*type >= SOCK_MAX_TYPE)
		return -EINVAL;
	if (domain != AF_UNIX)
		return -EAFNOSUPPORT;
	if (protocol && protocol != PF_UNIX)
		return -EPROTONOSUPPORT;
	return 0;
}

SYSCALL_DECL(socket)
{
	struct vfs_unix_cred cred = owner_cred(t);
	struct vfs_file *f;
	int type, flags;
	long err;

	if ((err =
		 socket_args((long)(int)a[0], (unsigned int)a[1], (long)(int)a[2], &type, &flags)))
		return err;
	if ((err = vfs_unix_socket_new(type, flags & O_NONBLOCK, &cred, &f)))
		return err;
	return task_install_file(t, f, flags & SOCK_CLOEXEC);
}

SYSCALL_DECL(socketpair)
{
	struct vfs_unix_cred cred = owner_cred(t);
	struct vfs_file *fa, *fb;
	int type, flags, fds[2];
	long err;

	if ((err =
		 socket_args((long)(int)a[0], (unsigned int)a[1], (long)(int)a[2], &type, &flags)))
		return err;
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

SYSCALL_DECL(bind)
{
	char buf[VFS_UNIX_ADDR_MAX + 1], abs[PATH_MAX];
	long len = (long)(int)a[2], err;
	struct vfs_file *f;
	sa_family_t fam;

	if ((err = sock_fd(t, (int)a[0], &f)) || (err = addr_in(t, a[1], len, buf)))
		return err;
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

SYSCALL_DECL(listen)
{
	struct vfs_unix_cred cred = owner_cred(t);
	int backlog = (int)a[1];
	struct vfs_file *f;
	long err;

	if ((err = sock_fd(t, (int)a[0], &f)))
		return err;
	if ((unsigned int)backlog > SOMAXCONN_LINUX)
		backlog = SOMAXCONN_LINUX;
	return vfs_unix_listen(f, backlog, &cred);
}

static long do_accept(struct task *t, int fd, uintptr_t uaddr, uintptr_t ulen, int flags)
{
	char addr[VFS_UNIX_ADDR_MAX];
	unsigned int alen;
	struct vfs_file *f, *nf;
	long err;

	if (flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK))
		return -EINVAL;
	if ((err = sock_fd(t, fd, &f)))
		return err;
	err = vfs_unix_accept(f, flags & O_NONBLOCK, &nf);
	if (err == -EAGAIN && !(f->flags & O_NONBLOCK)) {
		t->blk.intr_ret = -ERESTARTSYS;
		return sock_wait(t, f, POLLIN);
	}
	if (err)
		return err;
	if (uaddr) {
		if (vfs_unix_getname(nf, true, addr, &alen))
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

SYSCALL_DECL(accept)
{
	return do_accept(t, (int)a[0], a[1], a[2], 0);
}

SYSCALL_DECL(accept4)
{
	return do_accept(t, (int)a[0], a[1], a[2], (int)a[3]);
}

SYSCALL_DECL(connect)
{
	struct vfs_unix_cred cred = owner_cred(t);
	char buf[VFS_UNIX_ADDR_MAX + 1];
	long len = (long)(int)a[2], err;
	struct vfs_unix_sock *target = NULL;
	struct waitq *wq = NULL;
	struct vfs_file *f;
	sa_family_t fam;

	if ((err = sock_fd(t, (int)a[0], &f)) || (err = addr_in(t, a[1], len, buf)))
		return err;
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
	char addr[VFS_UNIX_ADDR_MAX];
	unsigned int alen;
	struct vfs_file *f;
	long err;

	if ((err = sock_fd(t, (int)a[0], &f)) || (err = vfs_unix_getname(f, peer, addr, &alen)))
		return err;
	return addr_out(t, a[1], a[2], addr, alen);
}

SYSCALL_DECL(getsockname)
{
	return getname(t, a, false);
}

SYSCALL_DECL(getpeername)
{
	return getname(t, a, true);
}

SYSCALL_DECL(shutdown)
{
	struct vfs_file *f;
	long err;

	if ((err = sock_fd(t, (int)a[0], &f)))
		return err;
	return vfs_unix_shutdown(f, (int)a[1]);
}

SYSCALL_DECL(setsockopt)
{
	char val[64] = {0};
	long len = (long)(int)a[4], err;
	struct vfs_file *f;

	if ((err = sock_fd(t, (int)a[0], &f)))
		return err;
	if (len < 0)
		return -EINVAL;
	if (len && copy_in(t->mm, val, a[3], len < (long)sizeof(val) ? len : (long)sizeof(val)))
		return -EFAULT;
	return vfs_unix_setsockopt(f, (int)a[1], (int)a[2], val, (unsigned int)len);
}

SYSCALL_DECL(getsockopt)
{
	char val[64];
	unsigned int vlen;
	int len;
	struct vfs_file *f;
	long err;

	if ((err = sock_fd(t, (int)a[0], &f)))
		return err;
	if (copy_in(t->mm, &len, a[4], sizeof(len)))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;
	if ((err = vfs_unix_getsockopt(f, (int)a[1], (int)a[2], val, &vlen)))
		return err;
	if ((unsigned int)len > vlen)
		len = (int)vlen;
	if (len && copy_out(t->mm, a[3], val, len))
		return -EFAULT;
	return copy_out(t->mm, a[4], &len, sizeof(len)) ? -EFAULT : 0;
}

/* --- data: iovecs, control messages, sendmsg and recvmsg ----------------------------------- */

/* The guest iovecs GIOV (CNT of them) as Sentry iovecs into guest memory, at most
 * SOCK_IO_MAX bytes; WRITE when the socket writes into them. *IOV is malloc'd. */
static long iov_in(struct task *t, const struct iovec *giov, size_t cnt, bool write,
		   struct iovec **iov, int *n, size_t *total)
{
	size_t max = cnt * 2 + SOCK_IO_MAX / PAGE_SIZE + 2;

	*n = 0;
	*total = 0;
	if (!(*iov = malloc(max * sizeof(**iov))))
		return -ENOMEM;
	for (size_t i = 0; i < cnt && *total < SOCK_IO_MAX; i++) {
		size_t len = giov[i].iov_len;
		if ((ssize_t)len < 0)
			return -EINVAL;
		if (len == 0)
			continue;
		if (len > SOCK_IO_MAX - *total)
			len = SOCK_IO_MAX - *total;
		int got = mm_iovecs(t->mm, (uintptr_t)giov[i].iov_base, len, write, *iov + *n,
				    (int)(max - *n));
		if (got < 0)
			return got;
		for (int k = 0; k < got; k++)
			*total += (*iov)[*n + k].iov_len;
		*n += got;
	}
	return 0;
}

/* Drops the first SKIP bytes of IOV (N entries); returns the new count. */
static int iov_skip(struct iovec *iov, int n, size_t skip)
{
	int i = 0;

	while (i < n && skip >= iov[i].iov_len)
		skip -= iov[i++].iov_len;
	if (i < n) {
		iov[i].iov_base = (char *)iov[i].iov_base + skip;
		iov[i].iov_len -= skip;
	}
	memmove(iov, iov + i, (n - i) * sizeof(*iov));
	return n - i;
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
				struct vfs_file *f = fdtable_get(t->files, fd);
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

/* One send: GIOV/CNT from the guest, an address (ADDR, ADDRLEN) or none, a control buffer.
 * A blocking stream send that only partly fits keeps its progress in t->blk.io_done, and the
 * files it passes go with its first part only. */
static long sock_send(struct task *t, int fd, const struct iovec *giov, size_t cnt, uintptr_t uaddr,
		      long addrlen, uintptr_t control, size_t controllen, int flags)
{
	char addr[VFS_UNIX_ADDR_MAX + 1];
	struct vfs_unix_msg m = {.flags = flags};
	struct scm_in scm;
	struct vfs_file *f;
	struct iovec *iov = NULL;
	size_t total;
	long err;
	int n;

	if ((err = sock_fd(t, fd, &f)))
		return err;
	if (uaddr && addrlen) {
		if ((err = addr_in(t, uaddr, addrlen, addr)))
			return err;
		m.named = true;
	}
	if ((err = scm_parse(t, control, controllen, &scm)))
		return err;
	bool stream = vfs_unix_type(f) == SOCK_STREAM;
	size_t done = t->blk.retry && stream ? t->blk.io_done : 0;
	if (m.named && vfs_unix_type(f) == SOCK_DGRAM &&
	    ((err = addr_valid(addr, addrlen)) ||
	     (err = resolve(t, SOCK_DGRAM, addr, addrlen, &m.dest))))
		goto out;
	if ((err = iov_in(t, giov, cnt, false, &iov, &n, &total)))
		goto out;
	n = iov_skip(iov, n, done);
	m.iov = iov;
	m.iovcnt = n;
	m.cred = scm.cred;
	if (done == 0) {
		m.files = scm.files;
		m.nfiles = scm.nfiles;
	}
	err = vfs_unix_sendmsg(f, &m);
	if (err > 0 && stream && !nonblocking(f, flags) && done + err < total) {
		done += err;
		err = -EAGAIN; /* the rest must wait for room */
	} else if (err >= 0) {
		err += done;
		goto out;
	}
	if (err == -EPIPE && done == 0 && vfs_unix_sends_sigpipe(f) && !(flags & MSG_NOSIGNAL)) {
		siginfo_t si = {.si_signo = SIGPIPE, .si_code = SI_USER};
		si.si_pid = t->tgid;
		si.si_uid = t->uid;
		signal_send_thread(t, SIGPIPE, &si);
	}
	if (err == -EAGAIN && !nonblocking(f, flags)) {
		t->blk.io_done = done;
		t->blk.intr_ret = done ? (int)done : -ERESTARTSYS;
		err = sock_wait(t, f, POLLOUT);
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
	char addr[VFS_UNIX_ADDR_MAX];
	unsigned int addrlen;
	int msg_flags;
	size_t controllen; /* bytes of control data written */
};

/* One receive into GIOV/CNT. Stream reads with MSG_WAITALL keep their progress in
 * t->blk.io_done across retries. */
static long sock_recv(struct task *t, int fd, const struct iovec *giov, size_t cnt, int flags,
		      uintptr_t control, size_t controllen, struct recv_out *out)
{
	struct vfs_unix_msg m = {.flags = flags, .addr = out->addr};
	struct vfs_file *f;
	struct iovec *iov = NULL;
	size_t total;
	long err;
	int n;

	memset(out, 0, sizeof(*out));
	out->msg_flags = flags & MSG_CMSG_CLOEXEC;
	if ((err = sock_fd(t, fd, &f)))
		return err;
	bool waitall = (flags & MSG_WAITALL) && !(flags & MSG_PEEK) && !nonblocking(f, flags) &&
		       vfs_unix_type(f) == SOCK_STREAM;
	size_t done = t->blk.retry && waitall ? t->blk.io_done : 0;
	if ((err = iov_in(t, giov, cnt, true, &iov, &n, &total)))
		goto out;
	m.iov = iov;
	m.iovcnt = iov_skip(iov, n, done);
	err = vfs_unix_recvmsg(f, &m);
	if (err > 0 && waitall && done + err < total && !m.nfiles) {
		done += err;
		err = -EAGAIN;
	}
	if (err == -EAGAIN && !nonblocking(f, flags)) {
		t->blk.io_done = done;
		t->blk.intr_ret = done ? (int)done : -ERESTARTSYS;
		err = sock_wait(t, f, POLLIN);
		goto out;
	}
	if (err < 0 && !done)
		goto out;
	err = err < 0 ? (long)done : err + (long)done;
	out->addrlen = m.addrlen;
	out->msg_flags |= m.msg_flags;
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

SYSCALL_DECL(sendto)
{
	struct iovec one = {(void *)a[1], a[2]};

	return sock_send(t, (int)a[0], &one, 1, a[4], (long)(int)a[5], 0, 0, (int)a[3]);
}

SYSCALL_DECL(recvfrom)
{
	struct iovec one = {(void *)a[1], a[2]};
	struct recv_out out;
	long r = sock_recv(t, (int)a[0], &one, 1, (int)a[3], 0, 0, &out);

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
	if (mh->msg_iovlen > UIO_MAXIOV)
		return -EMSGSIZE;
	if ((int)mh->msg_namelen < 0)
		return -EINVAL;
	if (mh->msg_namelen > sizeof(struct sockaddr_storage))
		mh->msg_namelen = sizeof(struct sockaddr_storage);
	if (!mh->msg_name)
		mh->msg_namelen = 0;
	if (mh->msg_iovlen == 0)
		return 0;
	if (!(*giov = malloc(mh->msg_iovlen * sizeof(**giov))))
		return -ENOMEM;
	if (copy_in(t->mm, *giov, (uintptr_t)mh->msg_iov, mh->msg_iovlen * sizeof(**giov)))
		return -EFAULT;
	return 0;
}

static long do_sendmsg(struct task *t, int fd, uintptr_t umsg, int flags)
{
	struct msghdr mh;
	struct iovec *giov;
	long err;

	if (!(err = msghdr_in(t, umsg, &mh, &giov)))
		err = sock_send(t, fd, giov, mh.msg_iovlen, (uintptr_t)mh.msg_name, mh.msg_namelen,
				(uintptr_t)mh.msg_control, mh.msg_controllen, flags);
	free(giov);
	return err;
}

static long do_recvmsg(struct task *t, int fd, uintptr_t umsg, int flags)
{
	struct msghdr mh;
	struct iovec *giov;
	struct recv_out out;
	long err, r;

	if ((err = msghdr_in(t, umsg, &mh, &giov)))
		goto out;
	r = sock_recv(t, fd, giov, mh.msg_iovlen, flags, (uintptr_t)mh.msg_control,
		      mh.msg_controllen, &out);
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

SYSCALL_DECL(sendmsg)
{
	return do_sendmsg(t, (int)a[0], a[1], (int)a[2]);
}

SYSCALL_DECL(recvmsg)
{
	return do_recvmsg(t, (int)a[0], a[1], (int)a[2]);
}
