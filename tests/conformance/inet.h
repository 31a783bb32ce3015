/*
 * inet.h: helpers the t_inet_* tests share. Every test binds to port 0 and asks which port it
 * got, so the native runs of the suite never collide with each other or with the host.
 */
#ifndef CONFORMANCE_INET_H
#define CONFORMANCE_INET_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* 127.0.0.1:PORT (host order). */
static inline struct sockaddr_in lo4(uint16_t port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(port);
	return a;
}

/* [::1]:PORT. */
static inline struct sockaddr_in6 lo6(uint16_t port)
{
	struct sockaddr_in6 a;

	memset(&a, 0, sizeof(a));
	a.sin6_family = AF_INET6;
	a.sin6_addr = in6addr_loopback;
	a.sin6_port = htons(port);
	return a;
}

/* The port FD is bound to (host order), or 0. */
static inline uint16_t port_of(int fd)
{
	struct sockaddr_in6 a;
	socklen_t len = sizeof(a);

	if (getsockname(fd, (struct sockaddr *)&a, &len))
		return 0;
	return ntohs(a.sin6_port); /* sin_port and sin6_port are at the same place */
}

/* A TCP listener on 127.0.0.1 (an ephemeral port) with BACKLOG; -1 on failure. */
static inline int tcp_listener(int backlog)
{
	struct sockaddr_in a = lo4(0);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, backlog)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A client connected (blocking) to 127.0.0.1:PORT; -1 on failure. */
static inline int tcp_client(uint16_t port)
{
	struct sockaddr_in a = lo4(port);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A connected pair over loopback: *CLI the client, *SRV the accepted end. */
static inline int tcp_pair(int *cli, int *srv)
{
	int l = tcp_listener(4);

	*cli = *srv = -1;
	if (l < 0)
		return -1;
	*cli = tcp_client(port_of(l));
	if (*cli >= 0)
		*srv = accept(l, NULL, NULL);
	close(l);
	return *cli >= 0 && *srv >= 0 ? 0 : -1;
}

/* A port nothing listens on: bound, then closed (nobody takes it back in between). */
static inline uint16_t free_port(int type)
{
	struct sockaddr_in a = lo4(0);
	int fd = socket(AF_INET, type, 0);
	uint16_t p = 0;

	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
		p = port_of(fd);
	if (fd >= 0)
		close(fd);
	return p;
}

static inline short poll_events(int fd, short events, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = events};

	return poll(&p, 1, timeout_ms) == 1 ? p.revents : 0;
}

static inline long ms_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000 + (b->tv_nsec - a->tv_nsec) / 1000000;
}

static inline int int_opt(int fd, int level, int name)
{
	int v = -12345;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, level, name, &v, &len))
		return -errno - 100000;
	return v;
}

#endif
