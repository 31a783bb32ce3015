/* t_proc_fd_reopen: opening /proc/self/fd/N opens the object of descriptor N again, as a new
 * open file description: a pipe gives a new end of the same pipe (data written to one end is
 * read through the reopened one), an unlinked file is still reachable with an offset of its
 * own, and a socket cannot be opened that way (ENXIO).
 * conformance: native-proc */
#include "check.h"

#include <fcntl.h>
#include <sys/socket.h>

static int reopen(int fd, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, flags);
}

int main(void)
{
	int p[2];
	char buf[16] = {0};

	CHECK_EQ(pipe(p), 0);
	int r = reopen(p[0], O_RDONLY);
	CHECK(r >= 0);
	CHECK_EQ(write(p[1], "through", 7), 7);
	CHECK_EQ(read(r, buf, sizeof(buf)), 7);
	CHECK(memcmp(buf, "through", 7) == 0);
	int w = reopen(p[0], O_WRONLY); /* the read end's pipe, opened for writing */
	CHECK(w >= 0);
	CHECK_EQ(write(w, "back", 4), 4);
	close(p[1]);
	maybe_save(); /* a pipe whose only writer is the reopened end */
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 4);
	close(w);
	CHECK_EQ(read(r, buf, sizeof(buf)), 0); /* every writer gone: EOF */
	close(r);
	close(p[0]);

	char path[64];
	snprintf(path, sizeof(path), "/tmp/t_proc_fd_reopen.%d", getpid());
	int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "abcdef", 6), 6);
	CHECK_EQ(unlink(path), 0);
	int again = reopen(fd, O_RDONLY);
	CHECK(again >= 0);
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(read(again, buf, 3), 3); /* its own offset, from 0 */
	CHECK(memcmp(buf, "abc", 3) == 0);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 6);
	close(again);
	close(fd);

	int sv[2];
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	CHECK_ERR(reopen(sv[0], O_RDWR), ENXIO);
	close(sv[0]);
	close(sv[1]);
	return check_done();
}
