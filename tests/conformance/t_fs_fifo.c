/* t_fs_fifo: named pipes. mkfifo makes an S_IFIFO node; a non-blocking read open succeeds
 * alone, a non-blocking write open fails with ENXIO without a reader; a blocking open waits
 * for its partner; data flows and the reader sees EOF when the writer closes. Under /tmp. */
#include "check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int main(void)
{
	char path[64], buf[16];
	struct stat st;

	snprintf(path, sizeof(path), "/tmp/t_fs_fifo.%d", getpid());
	CHECK_EQ(mkfifo(path, 0600), 0);
	CHECK_ERR(mkfifo(path, 0600), EEXIST);
	CHECK_EQ(stat(path, &st), 0);
	CHECK(S_ISFIFO(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0600 & ~umask(0));

	CHECK_ERR(open(path, O_WRONLY | O_NONBLOCK), ENXIO);
	int rd = open(path, O_RDONLY | O_NONBLOCK);
	CHECK(rd >= 0);
	int wr = open(path, O_WRONLY | O_NONBLOCK); /* a reader exists now */
	CHECK(wr >= 0);
	CHECK_EQ(write(wr, "abc", 3), 3);
	CHECK_EQ(read(rd, buf, sizeof(buf)), 3);
	CHECK_ERR(read(rd, buf, sizeof(buf)), EAGAIN);
	CHECK_EQ(close(wr), 0);
	CHECK_EQ(read(rd, buf, sizeof(buf)), 0); /* EOF: no writer left */
	CHECK_EQ(close(rd), 0);

	/* A blocking read open waits until a writer comes (timed from before the fork: a parent
	 * that runs late after it would see less than the child's 100 ms). */
	long long t0 = now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec d = {0, 100 * 1000 * 1000};
		nanosleep(&d, NULL);
		int w = open(path, O_WRONLY);
		_exit(w >= 0 && write(w, "hello", 5) == 5 ? 0 : 1);
	}
	rd = open(path, O_RDONLY);
	CHECK(rd >= 0);
	CHECK(now_ms() - t0 >= 80);
	maybe_save(); /* a FIFO with a writer that may not have written yet */
	CHECK_EQ(read(rd, buf, 5), 5);
	CHECK(memcmp(buf, "hello", 5) == 0);
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	CHECK_EQ(read(rd, buf, sizeof(buf)), 0);
	CHECK_EQ(close(rd), 0);

	/* O_RDWR never waits. */
	int both = open(path, O_RDWR);
	CHECK(both >= 0);
	CHECK_EQ(write(both, "x", 1), 1);
	CHECK_EQ(read(both, buf, 1), 1);
	close(both);
	CHECK_EQ(unlink(path), 0);
	return check_done();
}
