/* Checkpoint scenes for the e2e suite: each sets up some state, prints "ready", sleeps SECS
 * (default 1) seconds during which the test checkpoints it, then checks the state and prints
 * what it found. Run natively or uninterrupted it prints the same as after a restore.
 *   scene threads|zombie|mmap|socket|timer|net [SECS]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double secs = 1;

static void ready(void)
{
	printf("ready\n");
	fflush(stdout);
}

static void nap(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Four threads sum a long series each; the checkpoint lands in the middle of the work. */
#define NTHREADS 4
static volatile int started;

static void *work(void *arg)
{
	unsigned long id = (unsigned long)arg, sum = 0, x = id + 1;

	__atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
	for (unsigned long i = 0; i < 800000000UL; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sum += x >> 33;
	}
	return (void *)sum;
}

static int threads(void)
{
	pthread_t th[NTHREADS];
	unsigned long total = 0;

	for (unsigned long i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, work, (void *)i);
	while (started < NTHREADS)
		nap(0.01);
	ready();
	for (int i = 0; i < NTHREADS; i++) {
		void *r;
		pthread_join(th[i], &r);
		total += (unsigned long)r;
	}
	printf("sum %lu\n", total);
	return 0;
}

/* A child that has exited and is not reaped: still a zombie after the restore. */
static int zombie(void)
{
	pid_t pid = fork();
	char path[64], stat[256];

	if (pid == 0)
		_exit(7);
	nap(0.2);
	ready();
	nap(secs);
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f || !fgets(stat, sizeof(stat), f)) {
		printf("no /proc entry for the child\n");
		return 1;
	}
	fclose(f);
	char *state = strrchr(stat, ')');
	printf("child state %c\n", state ? state[2] : '?');
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	printf("child exit %d\n", WEXITSTATUS(status));
	return 0;
}

/* A shared mapping of a tmpfs file and a descriptor at a non-zero offset. */
static int mapping(void)
{
	int fd = open("/tmp/scene-map", O_RDWR | O_CREAT | O_TRUNC, 0644);
	char buf[8] = {0};

	if (fd < 0 || ftruncate(fd, 8192))
		return 1;
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p, "abcdefgh", 8);
	if (read(fd, buf, 3) != 3)
		return 1;
	ready();
	nap(secs);
	memcpy(p + 3, "XY", 2);
	if (read(fd, buf, 5) != 5)
		return 1;
	printf("offset %ld read %.5s map %.8s\n", (long)lseek(fd, 0, SEEK_CUR), buf, p);
	return 0;
}

/* A socket pair with two messages queued. */
static int socket_pair(void)
{
	int sv[2];
	char buf[64];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv))
		return 1;
	if (write(sv[0], "first", 5) != 5 || write(sv[0], "second", 6) != 6)
		return 1;
	ready();
	nap(secs);
	for (int i = 0; i < 2; i++) {
		ssize_t n = read(sv[1], buf, sizeof(buf));
		printf("got %.*s\n", (int)(n > 0 ? n : 0), buf);
	}
	return 0;
}

/* A TCP client and server in two processes keep exchanging numbered requests over loopback
 * while the checkpoint lands; a second connection has bytes queued both ways and a bound UDP
 * socket a datagram waiting, all read at the end. The server answers each number doubled and
 * the client checks every answer. */
#define NET_ROUNDS 60

static int net(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), u = socket(AF_INET, SOCK_DGRAM, 0);
	char buf[64];

	if (l < 0 || u < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 2) ||
	    getsockname(l, (struct sockaddr *)&a, &len) ||
	    bind(u, (struct sockaddr *)&a, sizeof(a)))
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		int c1 = socket(AF_INET, SOCK_STREAM, 0), c2 = socket(AF_INET, SOCK_STREAM, 0);
		long ok = 0;
		if (connect(c1, (struct sockaddr *)&a, sizeof(a)) ||
		    connect(c2, (struct sockaddr *)&a, sizeof(a)))
			_exit(1);
		if (sendto(u, "datagram", 8, 0, (struct sockaddr *)&a, sizeof(a)) != 8 ||
		    write(c2, "pending", 7) != 7)
			_exit(1);
		for (long i = 1; i <= NET_ROUNDS; i++) {
			long v = 0;
			if (i == 10)
				ready();
			if (write(c1, &i, sizeof(i)) != sizeof(i) ||
			    read(c1, &v, sizeof(v)) != sizeof(v))
				_exit(1);
			ok += v == 2 * i;
			nap(secs / NET_ROUNDS * 2);
		}
		ssize_t n = read(c2, buf, sizeof(buf));
		printf("client %ld answers right, then %.*s\n", ok, (int)(n > 0 ? n : 0), buf);
		fflush(stdout);
		_exit(0);
	}
	int s1 = accept(l, NULL, NULL), s2 = accept(l, NULL, NULL);
	if (s1 < 0 || s2 < 0 || write(s2, "the end", 7) != 7)
		return 1;
	for (long i = 1; i <= NET_ROUNDS; i++) {
		long v;
		if (read(s1, &v, sizeof(v)) != sizeof(v))
			return 1;
		v *= 2;
		if (write(s1, &v, sizeof(v)) != sizeof(v))
			return 1;
	}
	int st;
	waitpid(pid, &st, 0);
	ssize_t n = read(s2, buf, 7);
	ssize_t m = recv(u, buf + 8, sizeof(buf) - 8, MSG_DONTWAIT);
	printf("server got %.*s and %.*s\n", (int)(n > 0 ? n : 0), buf, (int)(m > 0 ? m : 0),
	       buf + 8);
	return st != 0;
}

/* A POSIX timer armed before the checkpoint fires after it. */
static volatile sig_atomic_t fired;

static void on_timer(int sig)
{
	(void)sig;
	fired = 1;
}

static int timer(void)
{
	timer_t id;
	struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1};
	struct itimerspec its = {.it_value = {(time_t)secs + 1, 0}};
	struct timespec t0, t1;

	signal(SIGUSR1, on_timer);
	if (timer_create(CLOCK_MONOTONIC, &ev, &id) || timer_settime(id, 0, &its, NULL))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ready();
	while (!fired)
		pause();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double dt = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("fired after %s (%.3f s)\n",
	       dt >= (time_t)secs + 0.99 && dt < secs + 5 ? "its time" : "the wrong time", dt);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: scene threads|zombie|mmap|socket|timer|net [SECS]\n");
		return 2;
	}
	if (argc > 2)
		secs = atof(argv[2]);
	if (!strcmp(argv[1], "threads"))
		return threads();
	if (!strcmp(argv[1], "zombie"))
		return zombie();
	if (!strcmp(argv[1], "mmap"))
		return mapping();
	if (!strcmp(argv[1], "socket"))
		return socket_pair();
	if (!strcmp(argv[1], "timer"))
		return timer();
	if (!strcmp(argv[1], "net"))
		return net();
	fprintf(stderr, "scene: unknown scene %s\n", argv[1]);
	return 2;
}
