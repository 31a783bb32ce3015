/* ptyrun: a small `script` for the e2e tests: runs COMMAND on a new pseudo-terminal (its own
 * session, the slave as its controlling terminal and stdio), types each INPUT argument at it
 * 300 ms apart (C escapes \n, \r, \003 and the like as printf(1) takes them are the caller's:
 * the arguments are typed as given), copies everything the terminal shows to stdout, and exits
 * with the command's status once the command has exited and its output is drained.
 *   ptyrun [INPUT...] -- COMMAND [ARG...] */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	int sep = 1, m, st = 0, next = 0;
	char buf[4096];
	pid_t pid;

	while (sep < argc && strcmp(argv[sep], "--"))
		sep++;
	if (sep >= argc - 1) {
		fprintf(stderr, "usage: ptyrun [INPUT...] -- COMMAND [ARG...]\n");
		return 2;
	}
	if ((m = posix_openpt(O_RDWR | O_NOCTTY)) < 0 || grantpt(m) || unlockpt(m)) {
		perror("ptyrun: posix_openpt");
		return 1;
	}
	struct winsize ws = {.ws_row = 24, .ws_col = 80};
	ioctl(m, TIOCSWINSZ, &ws);
	pid = fork();
	if (pid == 0) {
		char *name = ptsname(m);
		int s;
		setsid();
		if (!name || (s = open(name, O_RDWR)) < 0) /* our controlling terminal */
			_exit(126);
		close(m);
		dup2(s, 0), dup2(s, 1), dup2(s, 2);
		if (s > 2)
			close(s);
		execv(argv[sep + 1], argv + sep + 1);
		_exit(127);
	}
	long due = now_ms() + 300;
	int inputs = sep - 1, exited = 0;
	for (;;) {
		struct pollfd p = {.fd = m, .events = POLLIN};
		long wait = next < inputs ? due - now_ms() : 100;
		int r = poll(&p, 1, wait < 0 ? 0 : (int)wait);
		if (r > 0 && (p.revents & (POLLIN | POLLHUP))) {
			ssize_t n = read(m, buf, sizeof(buf));
			if (n > 0) {
				fwrite(buf, 1, (size_t)n, stdout);
				fflush(stdout);
				continue;
			}
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno != EIO && errno != EAGAIN) {
				perror("ptyrun: read");
				break;
			}
			if (!exited && waitpid(pid, &st, WNOHANG) == pid)
				exited = 1;
			if (exited)
				break; /* EIO: every slave is closed, and the command is gone */
		}
		if (next < inputs && now_ms() >= due) {
			const char *in = argv[1 + next++];
			if (write(m, in, strlen(in)) < 0)
				perror("ptyrun: write");
			due = now_ms() + 300;
		}
		if (!exited && waitpid(pid, &st, WNOHANG) == pid)
			exited = 1;
		if (exited && next >= inputs && r == 0)
			break;
	}
	while (!exited && waitpid(pid, &st, 0) != pid)
		if (errno != EINTR) {
			perror("ptyrun: waitpid");
			return 125;
		}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
