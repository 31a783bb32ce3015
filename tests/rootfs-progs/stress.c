/* Workloads for the random-instant checkpoint test (tests/e2e/stress.sh): several processes,
 * pipes, files and timers, each printing numbered lines whose text does not depend on timing,
 * so that a run restored from any instant must print exactly the lines an uninterrupted run
 * prints after that instant. Each line goes out in one write.
 *   stress pipes    a chain of three processes over two pipes, items paced by nanosleep
 *   stress files    three writers appending records to files in /tmp while the parent counts
 *                   ITIMER_REAL ticks; then the files' checksums
 *   stress timers   a POSIX timer (SIGEV_SIGNAL, overruns counted), a timerfd read by a child
 *                   and reported through a pipe, and a sleeping child's alarm()
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int line_no;

/* One numbered line, in one write(2). */
static void out(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n = snprintf(buf, sizeof(buf), "%d ", ++line_no);

	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	buf[n++] = '\n';
	while (write(1, buf, (size_t)n) < 0 && errno == EINTR)
		;
}

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -1 : (ssize_t)got;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static void write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, (const char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(3);
		done += (size_t)n;
	}
}

static int reap_all(void)
{
	int status, bad = 0;
	pid_t p;

	while ((p = wait(&status)) > 0 || (p < 0 && errno == EINTR))
		if (p > 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
			bad++;
	return bad;
}

/* gen -> square mod 1009 -> running sum (prints) */
#define PIPE_ITEMS 300

static int pipes(void)
{
	int a[2], b[2];

	if (pipe(a) || pipe(b))
		return 1;
	if (fork() == 0) {
		close(a[0]), close(b[0]), close(b[1]);
		for (uint32_t i = 0; i < PIPE_ITEMS; i++) {
			write_full(a[1], &i, sizeof(i));
			if (i % 2 == 0)
				nap_ms(7);
		}
		_exit(0);
	}
	if (fork() == 0) {
		uint32_t v;
		close(a[1]), close(b[0]);
		while (read_full(a[0], &v, sizeof(v)) == sizeof(v)) {
			v = (v * v + 17) % 1009;
			write_full(b[1], &v, sizeof(v));
		}
		_exit(0);
	}
	close(a[0]), close(a[1]), close(b[1]);
	uint64_t sum = 0;
	uint32_t v;
	while (read_full(b[0], &v, sizeof(v)) == sizeof(v)) {
		sum += v;
		out("sum %llu", (unsigned long long)sum);
	}
	out("children failed %d", reap_all());
	return 0;
}

/* Writers append to /tmp/stress.N; the parent counts SIGALRM ticks meanwhile. */
#define WRITERS 3
#define RECORDS 40
#define TICKS 60

static volatile sig_atomic_t ticks;

static void on_alarm(int sig)
{
	(void)sig;
	ticks++;
}

static int files(void)
{
	for (int w = 0; w < WRITERS; w++) {
		if (fork())
			continue;
		char path[64], rec[64];
		snprintf(path, sizeof(path), "/tmp/stress.%d", w);
		int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
		if (fd < 0)
			_exit(2);
		for (int r = 0; r < RECORDS; r++) {
			int n = snprintf(rec, sizeof(rec), "writer %d record %d\n", w, r);
			write_full(fd, rec, (size_t)n);
			nap_ms(5 + w * 3);
		}
		_exit(close(fd) ? 4 : 0);
	}
	struct sigaction sa = {.sa_handler = on_alarm};
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 20000}, {0, 20000}};
	setitimer(ITIMER_REAL, &it, NULL);
	int seen = 0;
	while (seen < TICKS) {
		pause();
		while (seen < ticks && seen < TICKS)
			out("tick %d", ++seen);
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	out("writers failed %d", reap_all());
	for (int w = 0; w < WRITERS; w++) {
		char path[64], buf[4096];
		uint32_t h = 2166136261u;
		ssize_t n;
		size_t len = 0;
		snprintf(path, sizeof(path), "/tmp/stress.%d", w);
		int fd = open(path, O_RDONLY);
		while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0) {
			for (ssize_t i = 0; i < n; i++)
				h = (h ^ (uint8_t)buf[i]) * 16777619u;
			len += (size_t)n;
		}
		close(fd);
		out("file %d: %zu bytes, fnv %08x", w, len, h);
	}
	return 0;
}

/* Three kinds of timer at once. */
#define POSIX_EXPIRIES 80
#define TIMERFD_EXPIRIES 50

static int timers(void)
{
	int p[2];

	if (pipe(p))
		return 1;
	/* A child reads a periodic timerfd and reports every tenth expiry through the pipe. */
	if (fork() == 0) {
		close(p[0]);
		int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
		struct itimerspec its = {{0, 15000000}, {0, 15000000}};
		uint64_t total = 0, exp, next = 10;
		timerfd_settime(tfd, 0, &its, NULL);
		while (total < TIMERFD_EXPIRIES) {
			if (read_full(tfd, &exp, sizeof(exp)) != sizeof(exp))
				_exit(5);
			total += exp;
			while (total >= next && next <= TIMERFD_EXPIRIES) {
				uint32_t v = (uint32_t)next;
				write_full(p[1], &v, sizeof(v));
				next += 10;
			}
		}
		_exit(0);
	}
	/* A child sleeping in pause() until its alarm() fires; it exits with 0 from SIGALRM's
	 * default action being caught below. */
	pid_t sleeper = fork();
	if (sleeper == 0) {
		sigset_t s;
		int sig;
		sigemptyset(&s);
		sigaddset(&s, SIGALRM);
		sigprocmask(SIG_BLOCK, &s, NULL);
		alarm(1);
		sigwait(&s, &sig);
		_exit(sig == SIGALRM ? 0 : 6);
	}
	close(p[1]);
	/* The parent: a POSIX timer signalling SIGRTMIN, taken with sigwaitinfo; overruns count. */
	sigset_t rt;
	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &rt, NULL);
	struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN};
	timer_t t;
	if (timer_create(CLOCK_MONOTONIC, &sev, &t))
		return 1;
	struct itimerspec its = {{0, 10000000}, {0, 10000000}};
	timer_settime(t, 0, &its, NULL);
	int total = 0, next = 10;
	while (total < POSIX_EXPIRIES) {
		siginfo_t si;
		if (sigwaitinfo(&rt, &si) != SIGRTMIN)
			continue;
		total += 1 + si.si_overrun;
		while (total >= next && next <= POSIX_EXPIRIES) {
			out("posix timer %d", next);
			next += 10;
		}
	}
	timer_delete(t);
	uint32_t v;
	while (read_full(p[0], &v, sizeof(v)) == sizeof(v))
		out("timerfd %u", v);
	int status;
	waitpid(sleeper, &status, 0);
	out("sleeper %s", WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "woke" : "failed");
	out("children failed %d", reap_all());
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "pipes"))
		return pipes();
	if (argc == 2 && !strcmp(argv[1], "files"))
		return files();
	if (argc == 2 && !strcmp(argv[1], "timers"))
		return timers();
	fprintf(stderr, "usage: stress pipes|files|timers\n");
	return 2;
}
