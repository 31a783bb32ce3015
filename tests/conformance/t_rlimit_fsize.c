/*
 * t_rlimit_fsize: RLIMIT_FSIZE bounds writes to regular files as Linux does: a write that
 * crosses the limit is cut short at it, one that starts at or past it fails with EFBIG and
 * raises SIGXFSZ (which kills by default), O_APPEND counts from the end, truncate and
 * fallocate may not grow a file past it, sendfile and copy_file_range are bounded too, and pipes
 * are not bounded.
 */
#include "check.h"
#include "scratch.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <sys/wait.h>

static volatile sig_atomic_t xfsz;

static void on_xfsz(int sig)
{
	(void)sig;
	xfsz++;
}

int main(void)
{
	char buf[100];
	struct rlimit lim = {50, RLIM_INFINITY};

	memset(buf, 'x', sizeof(buf));
	scratch_enter("t_rlimit_fsize");
	signal(SIGXFSZ, on_xfsz);
	CHECK_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
	maybe_save();

	int fd = open("f", O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, buf, 30), 30);
	CHECK_EQ(xfsz, 0);
	/* Crossing the limit: cut short, no signal. */
	CHECK_EQ(write(fd, buf, 30), 20);
	CHECK_EQ(xfsz, 0);
	/* At the limit: EFBIG and SIGXFSZ. */
	CHECK_ERR(write(fd, buf, 1), EFBIG);
	CHECK_EQ(xfsz, 1);
	CHECK_ERR(pwrite(fd, buf, 10, 60), EFBIG);
	CHECK_EQ(xfsz, 2);
	/* Positioned below the limit: cut short again; writev counts across pieces. */
	CHECK_EQ(pwrite(fd, buf, 10, 45), 5);
	struct iovec iov[2] = {{buf, 4}, {buf, 10}};
	CHECK_EQ(pwritev(fd, iov, 2, 40), 10);
	struct stat st;
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 50);
	/* Reading is never bounded. */
	CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 50);
	close(fd);

	/* O_APPEND starts at the end of the file, whatever the offset. */
	fd = open("f", O_WRONLY | O_APPEND);
	CHECK(fd >= 0);
	CHECK_ERR(write(fd, buf, 1), EFBIG);
	CHECK_EQ(xfsz, 3);
	close(fd);

	/* ftruncate, truncate and fallocate may not grow a file past it either; shrinking and
	 * growing up to it are fine. */
	fd = open("g", O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(ftruncate(fd, 50), 0);
	CHECK_ERR(ftruncate(fd, 51), EFBIG);
	CHECK_EQ(xfsz, 4);
	CHECK_ERR(truncate("g", 100), EFBIG);
	CHECK_EQ(xfsz, 5);
	CHECK_ERR(fallocate(fd, 0, 40, 20), EFBIG);
	CHECK_EQ(xfsz, 6);
	CHECK_EQ(fallocate(fd, FALLOC_FL_KEEP_SIZE, 40, 20), 0);
	CHECK_EQ(ftruncate(fd, 10), 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 10);
	close(fd);

	/* sendfile and copy_file_range write through the same check. */
	int src = open("g", O_RDWR);
	CHECK(src >= 0);
	CHECK_EQ(write(src, buf, 10), 10);
	fd = open("h", O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(pwrite(fd, buf, 45, 0), 45);
	CHECK_EQ(lseek(fd, 45, SEEK_SET), 45);
	off_t in_off = 0;
	/* Cut short at the limit, and (unlike write) SIGXFSZ all the same. */
	CHECK_EQ(sendfile(fd, src, &in_off, 10), 5);
	CHECK_EQ(xfsz, 7);
	CHECK_ERR(sendfile(fd, src, &in_off, 10), EFBIG);
	CHECK_EQ(xfsz, 8);
	off_t out_off = 48;
	in_off = 0;
	CHECK_EQ(copy_file_range(src, &in_off, fd, &out_off, 10, 0), 2);
	CHECK_EQ(xfsz, 8);
	close(src);
	close(fd);

	/* A pipe is not a regular file. */
	int p[2];
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(write(p[1], buf, 100), 100);
	CHECK_EQ(xfsz, 8);
	close(p[0]);
	close(p[1]);

	/* With the default action SIGXFSZ kills (and dumps core: status has the signal). */
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		signal(SIGXFSZ, SIG_DFL);
		int cfd = open("f", O_WRONLY | O_APPEND);
		write(cfd, buf, 1);
		_exit(0);
	}
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status));
	CHECK_EQ(WTERMSIG(status), SIGXFSZ);

	/* Ignored: only EFBIG. */
	signal(SIGXFSZ, SIG_IGN);
	fd = open("f", O_WRONLY | O_APPEND);
	CHECK_ERR(write(fd, buf, 1), EFBIG);
	close(fd);
	scratch_leave();
	return check_done();
}
