/* The calls whose arguments --strace decodes as structures or by command, made the same way
 * natively and in the sandbox so that e2e can compare `strace -f`'s lines with --strace's:
 * select/pselect6, sigaltstack, setitimer/getitimer, socket options, ioctls on a pipe and a
 * socket, sendmsg/recvmsg, wait4 with an rusage, umount2 of what is not mounted. Each call's
 * result is deterministic (no timeouts that expire, no addresses that matter). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/times.h>
#include <grp.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

int main(void)
{
	int p[2], sv[2], one = 1, v;
	socklen_t len = sizeof(v);
	fd_set rd, wr;
	struct timeval tv = {5, 0};
	struct timespec ts = {5, 0};
	struct itimerval it = {{0, 0}, {100, 0}}, old;
	stack_t ss = {.ss_sp = malloc(65536), .ss_size = 65536, .ss_flags = 0}, oss;
	char buf[16] = "hello";
	struct iovec iov = {buf, 5};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct rusage ru;
	pid_t pid;

	if (pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	if (write(p[1], "x", 1) != 1)
		return 1;
	FD_ZERO(&rd);
	FD_ZERO(&wr);
	FD_SET(p[0], &rd);
	FD_SET(p[1], &wr);
	syscall(SYS_select, p[1] + 1, &rd, &wr, NULL, &tv);
	FD_SET(p[0], &rd);
	syscall(SYS_pselect6, p[0] + 1, &rd, NULL, NULL, &ts, NULL);
	FD_SET(p[0], &rd);
	syscall(SYS_select, p[0] + 1, &rd, NULL, NULL, NULL);

	sigaltstack(&ss, NULL);
	sigaltstack(NULL, &oss);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);

	setitimer(ITIMER_REAL, &it, NULL);
	it.it_value.tv_sec = 0;
	setitimer(ITIMER_REAL, &it, &old);
	getitimer(ITIMER_VIRTUAL, &old);

	setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &v, &len);
	len = sizeof(v);
	getsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &v, &len);
	len = sizeof(v);
	getsockopt(sv[0], SOL_SOCKET, SO_ERROR, &v, &len);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	len = sizeof(v);
	getsockopt(s, IPPROTO_TCP, TCP_NODELAY, &v, &len);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(s, IPPROTO_IP, IP_TOS, &one, sizeof(one));
	close(s);

	ioctl(p[0], FIONREAD, &v);
	ioctl(p[0], FIONBIO, &one);
	ioctl(p[0], TCGETS, &(struct termios){0});
	ioctl(p[0], TIOCGWINSZ, &(struct winsize){0});
	ioctl(p[0], TIOCGPGRP, &v);
	struct termios tio = {.c_iflag = ICRNL,
			      .c_oflag = OPOST | ONLCR,
			      .c_cflag = B38400 | CS8,
			      .c_lflag = ICANON | ECHO};
	ioctl(p[0], TCSETS, &tio);
	ioctl(p[0], TCSETSW, &tio);
	ioctl(p[0], TCSETSF, &tio);
	ioctl(p[0], TIOCSWINSZ, &(struct winsize){24, 80, 0, 0});
	v = 1;
	ioctl(p[0], TIOCSPGRP, &v);
	ioctl(p[0], TCFLSH, TCIFLUSH);
	ioctl(p[0], FIOCLEX);
	ioctl(p[0], FIONCLEX);

	sendmsg(sv[0], &mh, MSG_NOSIGNAL);
	memset(buf, 0, sizeof(buf));
	iov.iov_len = sizeof(buf);
	recvmsg(sv[1], &mh, 0);

	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} c;
	struct msghdr mc = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.b, .msg_controllen = sizeof(c.b)};
	c.h.cmsg_len = CMSG_LEN(sizeof(int));
	c.h.cmsg_level = SOL_SOCKET;
	c.h.cmsg_type = SCM_RIGHTS;
	memcpy(CMSG_DATA(&c.h), &p[0], sizeof(int));
	iov.iov_len = 2;
	sendmsg(sv[0], &mc, 0);
	iov.iov_len = sizeof(buf);
	recvmsg(sv[1], &mc, MSG_CMSG_CLOEXEC);

	int u = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)},
			   from;
	socklen_t sl = sizeof(sin);
	bind(u, (struct sockaddr *)&sin, sizeof(sin));
	getsockname(u, (struct sockaddr *)&sin, &sl);
	struct sockaddr_storage st;
	sl = sizeof(st);
	getsockname(u, (struct sockaddr *)&st, &sl);
	len = 8;
	getsockopt(u, SOL_SOCKET, SO_TYPE, &st, &len);
	sl = sizeof(st);
	getpeername(u, (struct sockaddr *)&st, &sl);
	struct msghdr mu = {
	    .msg_name = &sin, .msg_namelen = sizeof(sin), .msg_iov = &iov, .msg_iovlen = 1};
	iov.iov_len = 3;
	sendmsg(u, &mu, 0);
	mu.msg_name = &from;
	mu.msg_namelen = sizeof(from);
	iov.iov_len = 2;
	recvmsg(u, &mu, 0);
	struct linger lg = {1, 0};
	setsockopt(u, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	len = sizeof(lg);
	getsockopt(u, SOL_SOCKET, SO_LINGER, &lg, &len);
	struct ucred cr;
	len = sizeof(cr);
	getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &cr, &len);
	getrusage(RUSAGE_SELF, &ru);

	gid_t groups[2] = {0, 5};
	uid_t ru_, eu_, su_;
	struct tms tm;
	getpriority(PRIO_PROCESS, 0);
	setpriority(PRIO_PROCESS, 0, 1);
	setgroups(2, groups);
	getgroups(2, groups);
	getgroups(0, NULL);
	getresuid(&ru_, &eu_, &su_);
	times(&tm);

	umount2("/nonexistent-strace-calls", MNT_DETACH);
	mount("none", "/nonexistent-strace-calls", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m");
	mount("/tmp", "/nonexistent-strace-calls", NULL, MS_BIND | MS_REC, NULL);
	mount(NULL, "/nonexistent-strace-calls", NULL, MS_MGC_VAL | MS_REMOUNT | MS_RDONLY, NULL);

	pid = fork();
	if (pid == 0)
		_exit(3);
	wait4(pid, &v, 0, &ru);
	pid = fork();
	if (pid == 0)
		_exit(0);
	wait4(pid, NULL, 0, NULL);
	return 0;
}
