/* The other end of a control socket, for e2e scenarios of `minisentry checkpoint`:
 *   ctlpeer drop PATH close|read   listens on PATH as a Sentry that drops every request: it
 *                                  closes the connection at once, or once it has read the
 *                                  request line, without an answer
 *   ctlpeer slow PATH LINE         sends LINE to the Sentry on PATH as a slow client (in two
 *                                  parts, 100 ms apart, the first with a descriptor of the
 *                                  directory that holds LINE's last word, as `checkpoint`
 *                                  sends its image's parent) and prints the answer */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, ms % 1000 * 1000000};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int drop(const char *path, int read_first)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	char buf[4096];

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 8))
		return perror("ctlpeer: listen"), 1;
	for (;;) {
		int c = accept(l, NULL, NULL);
		ssize_t n;
		if (c < 0)
			return perror("ctlpeer: accept"), 1;
		while (read_first && (n = read(c, buf, sizeof(buf))) > 0 && !memchr(buf, '\n', n))
			;
		close(c);
	}
}

static int slow(const char *path, const char *line)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	size_t half = strlen(line) / 2;
	char buf[1024];
	ssize_t n;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return perror("ctlpeer: connect"), 1;
	/* The image's parent directory goes with the first part. */
	char *copy = strdup(strrchr(line, ' ') ? strrchr(line, ' ') + 1 : line);
	int dir = copy ? open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	free(copy);
	if (dir < 0)
		return perror("ctlpeer: open the image's directory"), 1;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = {(void *)line, half};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf)};
	memset(&ctl, 0, sizeof(ctl));
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &dir, sizeof(int));
	pause_ms(100);
	if (sendmsg(fd, &msg, MSG_NOSIGNAL) < 0)
		return perror("ctlpeer: send"), 1;
	close(dir);
	pause_ms(100);
	if (send(fd, line + half, strlen(line) - half, MSG_NOSIGNAL) < 0 ||
	    send(fd, "\n", 1, MSG_NOSIGNAL) < 0)
		return perror("ctlpeer: send"), 1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, n, stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "drop"))
		return drop(argv[2], !strcmp(argv[3], "read"));
	if (argc == 4 && !strcmp(argv[1], "slow"))
		return slow(argv[2], argv[3]);
	fprintf(stderr, "usage: ctlpeer drop PATH close|read | ctlpeer slow PATH LINE\n");
	return 2;
}
