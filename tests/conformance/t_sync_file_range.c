/*
 * t_sync_file_range: sync_file_range(2) on the kinds of descriptor, with Linux's checks in its
 * order: the descriptor (O_PATH ones are EBADF), then the flags, the range, the file type
 * (pipes, sockets, FIFOs, character devices and anonymous files are ESPIPE; regular files and
 * directories succeed). Every descriptor is opened before a save point and checked after it:
 * what the call sees of each is its kind as the restore gave it back.
 */
#include "check.h"
#include <fcntl.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#define ALL_FLAGS (SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER)

static long sfr(int fd, int64_t off, int64_t n, unsigned int flags)
{
	return syscall(SYS_sync_file_range, fd, off, n, flags);
}

int main(void)
{
	char path[] = "/tmp/t_sync_file_range.XXXXXX";
	char fifo[] = "/tmp/t_sync_file_range.fifo";
	int fd = mkstemp(path), p[2], sv[2];

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "data", 4), 4);
	int opath = open(path, O_PATH);
	CHECK(opath >= 0);
	int ro = open(path, O_RDONLY);
	CHECK(ro >= 0);
	int dir = open("/tmp", O_RDONLY | O_DIRECTORY);
	CHECK(dir >= 0);
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	int efd = eventfd(0, 0);
	CHECK(efd >= 0);
	/* A character device (natively the chroot may have no /dev). */
	int null = open("/dev/null", O_WRONLY);
	if (in_sandbox())
		CHECK(null >= 0);
	unlink(fifo);
	CHECK_EQ(mkfifo(fifo, 0600), 0);
	int ff = open(fifo, O_RDWR);
	CHECK(ff >= 0);
	maybe_save(); /* one descriptor of each kind */

	CHECK_EQ(sfr(fd, 0, 0, 0), 0);
	CHECK_EQ(sfr(fd, 0, 4, SYNC_FILE_RANGE_WRITE), 0);
	CHECK_EQ(sfr(fd, 1 << 20, 4096, ALL_FLAGS), 0); /* past the end: nothing to do */
	CHECK_EQ(sfr(fd, INT64_MAX - 1, 1, ALL_FLAGS), 0);
	CHECK_ERR(sfr(fd, 0, 0, 8), EINVAL);
	CHECK_ERR(sfr(fd, 0, 0, ~0u), EINVAL);
	CHECK_ERR(sfr(fd, -1, 0, 0), EINVAL);
	CHECK_ERR(sfr(fd, 0, -1, 0), EINVAL);
	CHECK_ERR(sfr(fd, INT64_MAX, 1, 0), EINVAL);
	CHECK_EQ(sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE), 0);

	/* Descriptors that are not open files. */
	CHECK_ERR(sfr(-1, 0, 0, 0), EBADF);
	CHECK_ERR(sfr(9999, 0, 0, 0), EBADF);
	CHECK_ERR(sfr(-1, 0, 0, 8), EBADF); /* the descriptor is checked first */
	CHECK_ERR(sfr(opath, 0, 0, 0), EBADF);
	close(opath);
	CHECK_EQ(sfr(ro, 0, 0, ALL_FLAGS), 0); /* read-only is enough */
	close(ro);
	CHECK_EQ(sfr(dir, 0, 0, ALL_FLAGS), 0);
	close(dir);

	/* Kinds of file with no pages to write. */
	CHECK_ERR(sfr(p[0], 0, 0, 0), ESPIPE);
	CHECK_ERR(sfr(p[1], 0, 0, 0), ESPIPE);
	CHECK_ERR(sfr(p[1], 0, 0, 8), EINVAL); /* flags before the file type */
	CHECK_ERR(sfr(p[1], -1, 0, 0), EINVAL);
	close(p[0]);
	close(p[1]);
	CHECK_ERR(sfr(sv[0], 0, 0, 0), ESPIPE);
	close(sv[0]);
	close(sv[1]);
	CHECK_ERR(sfr(efd, 0, 0, 0), ESPIPE);
	close(efd);
	if (null >= 0) {
		CHECK_ERR(sfr(null, 0, 0, 0), ESPIPE);
		close(null);
	}
	CHECK_ERR(sfr(ff, 0, 0, 0), ESPIPE);
	close(ff);
	unlink(fifo);

	close(fd);
	unlink(path);
	return check_done();
}
