/* net: the loopback network's costs, one number per run as the first word of the only line,
 * so bench/run.sh can compare natively and under minisentry:
 *   net tcp N      TCP throughput in MB/s: a child writes N MiB in 64 KiB writes, the
 *                  parent reads them
 *   net connect N  µs per connect + accept + close of both ends (one process)
 *   net udp N      µs per 64-byte UDP round trip between two processes (ping-pong)
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct sockaddr_in lo(unsigned short port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(port);
	return a;
}

static int listener(struct sockaddr_in *a)
{
	socklen_t len = sizeof(*a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	*a = lo(0);
	if (l < 0 || bind(l, (struct sockaddr *)a, sizeof(*a)) || listen(l, 128) ||
	    getsockname(l, (struct sockaddr *)a, &len)) {
		perror("listener");
		exit(1);
	}
	return l;
}

static int tcp(long mib)
{
	static char buf[65536];
	struct sockaddr_in a;
	int l = listener(&a);
	long total = mib << 20, got = 0;

	pid_t pid = fork();
	if (pid == 0) {
		int c = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(c, (struct sockaddr *)&a, sizeof(a)))
			_exit(1);
		for (long sent = 0; sent < total;) {
			ssize_t n = write(c, buf, sizeof(buf));
			if (n <= 0)
				_exit(1);
			sent += n;
		}
		close(c);
		_exit(0);
	}
	int s = accept(l, NULL, NULL);
	double t0 = now_s();
	ssize_t n;
	while ((n = read(s, buf, sizeof(buf))) > 0)
		got += n;
	double dt = now_s() - t0;
	int st;
	waitpid(pid, &st, 0);
	if (got != total || st != 0) {
		fprintf(stderr, "tcp: got %ld of %ld bytes\n", got, total);
		return 1;
	}
	printf("%.1f MB/s (%ld MiB in 64 KiB writes)\n", total / dt / 1e6, mib);
	return 0;
}

static int connect_close(long n)
{
	struct sockaddr_in a;
	int l = listener(&a);
	double t0 = now_s();

	for (long i = 0; i < n; i++) {
		int c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a))) {
			perror("connect");
			return 1;
		}
		int s = accept(l, NULL, NULL);
		if (s < 0) {
			perror("accept");
			return 1;
		}
		close(s);
		close(c);
	}
	printf("%.1f us per connect+accept+close (n=%ld)\n", (now_s() - t0) / n * 1e6, n);
	return 0;
}

static int udp(long n)
{
	struct sockaddr_in a = lo(0), b = lo(0);
	socklen_t len = sizeof(a);
	int sa = socket(AF_INET, SOCK_DGRAM, 0), sb = socket(AF_INET, SOCK_DGRAM, 0);
	char msg[64] = {0};

	if (bind(sa, (struct sockaddr *)&a, sizeof(a)) ||
	    bind(sb, (struct sockaddr *)&b, sizeof(b)) ||
	    getsockname(sa, (struct sockaddr *)&a, &len) || (len = sizeof(b), 0) ||
	    getsockname(sb, (struct sockaddr *)&b, &len) ||
	    connect(sa, (struct sockaddr *)&b, sizeof(b)) ||
	    connect(sb, (struct sockaddr *)&a, sizeof(a))) {
		perror("udp");
		return 1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		for (long i = 0; i < n; i++)
			if (recv(sb, msg, sizeof(msg), 0) != sizeof(msg) ||
			    send(sb, msg, sizeof(msg), 0) != sizeof(msg))
				_exit(1);
		_exit(0);
	}
	double t0 = now_s();
	for (long i = 0; i < n; i++)
		if (send(sa, msg, sizeof(msg), 0) != sizeof(msg) ||
		    recv(sa, msg, sizeof(msg), 0) != sizeof(msg)) {
			perror("ping");
			return 1;
		}
	double dt = now_s() - t0;
	int st;
	waitpid(pid, &st, 0);
	printf("%.1f us per 64-byte round trip (n=%ld)\n", dt / n * 1e6, n);
	return st != 0;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 0;

	if (argc < 3 || n <= 0) {
		fprintf(stderr, "usage: net tcp|connect|udp N\n");
		return 2;
	}
	if (!strcmp(argv[1], "tcp"))
		return tcp(n);
	if (!strcmp(argv[1], "connect"))
		return connect_close(n);
	if (!strcmp(argv[1], "udp"))
		return udp(n);
	fprintf(stderr, "net: unknown mode %s\n", argv[1]);
	return 2;
}
