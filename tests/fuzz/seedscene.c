/* A sandbox holding one of every kind of object a checkpoint saves, for the restore fuzzer's
 * seeds (tests/fuzz/mkseeds.sh checkpoints it once it prints "ready"): threads, a child and
 * a zombie, a blocked reader, pipes and a FIFO, eventfd, epoll with interest, signalfd, timerfd,
 * unix sockets with a descriptor in flight and a bound name, TCP and UDP sockets on the
 * loopback network (where the kernel has one), tmpfs and memfd files (one unlinked but open),
 * shared and private file mappings, record and flock locks, POSIX and interval timers,
 * handlers, a blocked and a pending signal, a mount, limits, a cwd and umask.
 * Every call is checked loosely: a kind the kernel refuses is simply absent from the seed. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void on_signal(int sig)
{
	(void)sig;
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void send_fd(int sock, int fd)
{
	char c = 'x';
	struct iovec iov = {&c, 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c0 = CMSG_FIRSTHDR(&msg);

	c0->cmsg_level = SOL_SOCKET;
	c0->cmsg_type = SCM_RIGHTS;
	c0->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c0), &fd, sizeof(int));
	sendmsg(sock, &msg, 0);
}

int main(int argc, char **argv)
{
	int p[2], sv[2], dg[2], fd;
	pthread_t th;

	umask(027);
	mkdir("/tmp/scene", 0755);
	chdir("/tmp/scene");
	struct rlimit rl = {512, 1024};
	setrlimit(RLIMIT_NOFILE, &rl);

	/* Signals: handlers, a blocked one pending, an alternate stack. */
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &set, NULL);
	kill(getpid(), SIGUSR2);
	static char altstack[16384];
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};
	sigaltstack(&ss, NULL);

	/* Files: tmpfs, an unlinked one held open, a memfd, a FIFO, a hard link, a symlink. */
	fd = open("/tmp/scene/data", O_RDWR | O_CREAT, 0644);
	write(fd, "some file data\n", 15);
	ftruncate(fd, 8192);
	link("/tmp/scene/data", "/tmp/scene/data.link");
	symlink("data", "/tmp/scene/data.sym");
	int gone = open("/tmp/scene/gone", O_RDWR | O_CREAT, 0600);
	write(gone, "unlinked", 8);
	unlink("/tmp/scene/gone");
	int mfd = (int)syscall(SYS_memfd_create, "scene", 0);
	if (mfd >= 0)
		ftruncate(mfd, 4096);
	mkfifo("/tmp/scene/fifo", 0600);
	int fifo = open("/tmp/scene/fifo", O_RDWR | O_NONBLOCK);
	write(fifo, "in the fifo", 11);
	mkdir("/tmp/scene/dir", 0700);
	int dirfd = open("/tmp/scene/dir", O_RDONLY | O_DIRECTORY);
	int opath = open("/etc/passwd", O_PATH);
	int upper = open("/etc/scene-upper", O_RDWR | O_CREAT, 0644);
	write(upper, "in the upper layer", 18);
	mkdir("/mnt/t", 0755);
	mount("tmpfs", "/mnt/t", "tmpfs", 0, NULL);
	close(open("/mnt/t/file", O_RDWR | O_CREAT, 0600));

	/* Locks of each kind. */
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 100};
	fcntl(fd, F_SETLK, &fl);
	struct flock ofd = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 200, .l_len = 10};
	fcntl(fd, F_OFD_SETLK, &ofd);
	flock(gone, LOCK_EX);

	/* Pipes, eventfd, epoll watching them, signalfd, timerfd. */
	pipe(p);
	write(p[1], "pipe bytes", 10);
	int efd = eventfd(3, EFD_NONBLOCK);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 7};
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	ev.data.u64 = 8;
	epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
	int sfd = signalfd(-1, &set, SFD_NONBLOCK);
	int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec its = {{1, 0}, {100, 0}};
	timerfd_settime(tfd, 0, &its, NULL);

	/* Sockets: a stream pair with a descriptor in flight, a datagram pair, a bound name. */
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	send_fd(sv[0], efd);
	write(sv[0], "stream", 6);
	socketpair(AF_UNIX, SOCK_DGRAM, 0, dg);
	send(dg[0], "dgram", 5, 0);
	int ls = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	strcpy(addr.sun_path, "/tmp/scene/sock");
	bind(ls, (struct sockaddr *)&addr, sizeof(addr));
	listen(ls, 4);
	int cs = socket(AF_UNIX, SOCK_STREAM, 0);
	connect(cs, (struct sockaddr *)&addr, sizeof(addr));

	/* The loopback network, where the kernel has one: a TCP listener with a connection
	 * accepted and one waiting, bytes in flight both ways, a UDP socket with a datagram
	 * queued. */
	int tl = socket(AF_INET, SOCK_STREAM, 0), tc = socket(AF_INET, SOCK_STREAM, 0);
	int tw = socket(AF_INET, SOCK_STREAM, 0), ta = -1;
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t inlen = sizeof(in);
	if (tl >= 0 && bind(tl, (struct sockaddr *)&in, sizeof(in)) == 0 && listen(tl, 4) == 0 &&
	    getsockname(tl, (struct sockaddr *)&in, &inlen) == 0 &&
	    connect(tc, (struct sockaddr *)&in, sizeof(in)) == 0) {
		ta = accept(tl, NULL, NULL);
		write(tc, "to the server", 13);
		if (ta >= 0)
			write(ta, "to the client", 13);
		connect(tw, (struct sockaddr *)&in, sizeof(in)); /* left in the backlog */
	}
	int us = socket(AF_INET, SOCK_DGRAM, 0), uc = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in uin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t ulen = sizeof(uin);
	if (us >= 0 && bind(us, (struct sockaddr *)&uin, sizeof(uin)) == 0 &&
	    getsockname(us, (struct sockaddr *)&uin, &ulen) == 0)
		sendto(uc, "datagram", 8, 0, (struct sockaddr *)&uin, sizeof(uin));

	/* Timers: a POSIX timer and an interval timer, far off. */
	timer_t tid;
	struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1};
	if (timer_create(CLOCK_MONOTONIC, &sev, &tid) == 0) {
		struct itimerspec t = {{0, 0}, {500, 0}};
		timer_settime(tid, 0, &t, NULL);
	}
	struct itimerval itv = {{0, 0}, {400, 0}};
	setitimer(ITIMER_REAL, &itv, NULL);

	/* Memory: shared and private file mappings, anonymous shared, a guard page. */
	char *shared = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (shared != MAP_FAILED)
		shared[100] = 'S';
	char *priv = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (priv != MAP_FAILED)
		priv[1] = 'P';
	char *anon =
	    mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (anon != MAP_FAILED) {
		anon[0] = 'A';
		mprotect(anon + 4096, 4096, PROT_NONE);
	}
	char *heap = malloc(100000);
	memset(heap, 'h', 100000);

	/* Processes: a thread, a child blocked in read on a pipe, a zombie. */
	pthread_create(&th, NULL, sleeper, NULL);
	int block[2];
	pipe(block);
	pid_t child = fork();
	if (child == 0) {
		char c;
		close(block[1]);
		read(block[0], &c, 1);
		_exit(0);
	}
	pid_t z = fork();
	if (z == 0)
		_exit(3);
	usleep(100000);
	(void)dirfd, (void)opath, (void)sfd, (void)ta;

	printf("ready\n");
	fflush(stdout);
	unsigned secs = argc > 1 ? (unsigned)atoi(argv[1]) : 30;
	while (secs)
		secs = sleep(secs);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	waitpid(z, NULL, 0);
	return 0;
}
