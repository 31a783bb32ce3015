/* ioctl(2): a table says how each request moves its argument (in, out, by value), so files
 * implement ioctls on Sentry buffers. Generic requests (FIOCLEX, FIONBIO...) are handled here;
 * terminals' job control (foreground process group, session) is sentry/tty.c's: process
 * groups are the Sentry's, so the host terminal never sees them. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>

#include "sentry/fasync.h"
#include "sentry/fdtable.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "sentry/tty.h"
#include "vfs/vfs.h"

enum { NONE, IN, OUT, VAL };

static const struct {
	unsigned int cmd;
	int dir;
	int size;
} requests[] = {
    {TCGETS, OUT, 36}, /* the kernel's struct termios */
    {TCSETS, IN, 36},
    {TCSETSW, IN, 36},
    {TCSETSF, IN, 36},
    {TIOCGWINSZ, OUT, sizeof(struct winsize)},
    {TIOCSWINSZ, IN, sizeof(struct winsize)},
    {FIONREAD, OUT, sizeof(int)},
    {TIOCOUTQ, OUT, sizeof(int)},
    {TCFLSH, VAL, 0},
    {TCXONC, VAL, 0},
    {TCSBRK, VAL, 0},
    {TIOCGPGRP, OUT, sizeof(pid_t)},
    {TIOCSPGRP, IN, sizeof(pid_t)},
    {TIOCGSID, OUT, sizeof(pid_t)},
    {TIOCSCTTY, VAL, 0},
    {TIOCNOTTY, NONE, 0},
    {FIONBIO, IN, sizeof(int)},
    {FIOASYNC, IN, sizeof(int)},
    {FIOCLEX, NONE, 0},
    {FIONCLEX, NONE, 0},
    /* pseudo-terminal masters (vfs/pty.c) */
    {TIOCGPTN, OUT, sizeof(unsigned int)},
    {TIOCSPTLCK, IN, sizeof(int)},
    {TIOCGPTLCK, OUT, sizeof(int)},
    {TIOCGPTPEER, VAL, 0},
};

long sys_ioctl(struct task *t, const unsigned long *a)
{
	struct fd_entry *e = fdtable_entry(t->files, arg_int(a, 0));
	unsigned int cmd = arg_uint(a, 1);
	union {
		char buf[64];
		long val;
		int i;
	} arg;
	int dir = -1, size = 0;

	if (!e || (e->file->flags & O_PATH))
		return -EBADF;
	struct vfs_file *f = e->file;
	/* The socket layer's requests (0x89xx) are the sockets' to answer. */
	if ((cmd & 0xff00) == 0x8900 && (vfs_is_unix_socket(f) || vfs_sock_ops(f)))
		return sock_ioctl(t, f, cmd, a[2]);
	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++)
		if (requests[i].cmd == cmd) {
			dir = requests[i].dir;
			size = requests[i].size;
		}
	if (dir < 0)
		return -ENOTTY;
	memset(&arg, 0, sizeof(arg));
	if (dir == IN && copy_in(t->mm, arg.buf, a[2], size))
		return -EFAULT;
	if (dir == VAL)
		arg.val = arg_long(a, 2);

	long r = 0;
	switch (cmd) {
	case FIOCLEX:
	case FIONCLEX:
		e->cloexec = cmd == FIOCLEX;
		return 0;
	case FIONBIO:
		f->flags = arg.i ? f->flags | O_NONBLOCK : f->flags & ~O_NONBLOCK;
		return 0;
	case FIOASYNC:
		f->flags = arg.i ? f->flags | O_ASYNC : f->flags & ~O_ASYNC;
		return fasync_flags_changed(f, arg_int(a, 0));
	case TIOCGPGRP:
	case TIOCSPGRP:
	case TIOCGSID:
	case TIOCSCTTY:
	case TIOCNOTTY:
		r = tty_ioctl_jobctl(t, f, cmd, arg.buf, arg.val);
		break;
	case TIOCGPTPEER:
		return tty_ioctl_peer(t, f, arg.val);
	case FIONREAD: {
		/* Regular files of the sandbox: what is left before the end (a host descriptor
		 * keeps its own offset: the host answers for it). */
		struct stat st;
		if (f->seekable && f->ops->getattr &&
		    !(f->ops->host_fd && f->ops->host_fd(f) >= 0) && f->ops->getattr(f, &st) == 0 &&
		    S_ISREG(st.st_mode)) {
			arg.i = st.st_size > f->pos ? (int)(st.st_size - f->pos) : 0;
			break;
		}
	}
		/* fall through */
	default:
		r = f->ops->ioctl ? f->ops->ioctl(f, cmd, arg.buf) : -ENOTTY;
	}
	if (r < 0)
		return r;
	if (dir == OUT && copy_out(t->mm, a[2], arg.buf, size))
		return -EFAULT;
	return r;
}
