/* t_fs_locks: advisory locks. POSIX record locks conflict between processes (F_SETLK fails
 * with EAGAIN/EACCES, F_GETLK reports the holder and its range), are released when the owner
 * closes any descriptor of the file, and F_SETLKW waits for that; OFD locks report pid -1;
 * flock(2) locks belong to the open file description. Works only under /tmp. */
#include "check.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>

static struct flock range(short type, off_t start, off_t len)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
	return fl;
}

/* The lock type another process sees on PATH's first byte. */
static int seen_by_other(const char *path)
{
	pid_t pid = fork();

	if (pid == 0) {
		int f = open(path, O_RDWR);
		struct flock q = range(F_WRLCK, 0, 1);
		if (f < 0 || fcntl(f, F_GETLK, &q))
			_exit(100);
		_exit(q.l_type);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* dup2 over a descriptor of the file closes it, and the close drops the POSIX locks. */
static void test_dup2_releases(const char *path)
{
	int fd = open(path, O_RDWR), p[2];
	struct flock fl = range(F_WRLCK, 0, 1);

	CHECK(fd >= 0);
	CHECK_EQ(pipe(p), 0);
	int other = p[0];
	CHECK_EQ(fcntl(fd, F_SETLK, &fl), 0);
	CHECK_EQ(seen_by_other(path), F_WRLCK);
	int second = open(path, O_RDONLY);
	CHECK(second >= 0);
	CHECK_EQ(dup2(other, second), second);
	CHECK_EQ(seen_by_other(path), F_UNLCK);
	close(second);
	close(p[0]);
	close(p[1]);
	close(fd);
}

int main(void)
{
	char path[64];
	int go[2], done[2];

	snprintf(path, sizeof(path), "/tmp/t_fs_locks.%d", getpid());
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(pipe(go), 0);
	CHECK_EQ(pipe(done), 0);
	struct flock fl = range(F_WRLCK, 0, 10);
	CHECK_EQ(fcntl(fd, F_SETLK, &fl), 0);
	/* Our own locks never conflict with us. */
	fl = range(F_RDLCK, 5, 20);
	CHECK_EQ(fcntl(fd, F_SETLK, &fl), 0);
	fl = range(F_WRLCK, 0, 10);
	CHECK_EQ(fcntl(fd, F_SETLK, &fl), 0);
	CHECK_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);

	pid_t pid = fork();
	if (pid == 0) {
		int f2 = open(path, O_RDWR);
		char c;
		struct flock g = range(F_WRLCK, 5, 1);
		int bad = 0;
		/* POSIX allows EACCES too; Linux says EAGAIN. */
		bad |= !(fcntl(f2, F_SETLK, &g) == -1 && errno == EAGAIN);
		struct flock q = range(F_RDLCK, 0, 0);
		bad |= fcntl(f2, F_GETLK, &q) != 0 || q.l_type != F_WRLCK || q.l_pid != getppid() ||
		       q.l_start != 0 || q.l_len != 10;
		g = range(F_WRLCK, 100, 5); /* beyond the parent's range */
		bad |= fcntl(f2, F_SETLK, &g) != 0;
		bad |= !(flock(f2, LOCK_SH | LOCK_NB) == -1 && errno == EWOULDBLOCK);
		struct flock o = range(F_RDLCK, 0, 0);
		bad |= fcntl(f2, F_OFD_GETLK, &o) != 0 || o.l_type != F_WRLCK;
		if (write(go[1], "g", 1) != 1)
			bad = 1;
		g = range(F_WRLCK, 5, 1);
		bad |= fcntl(f2, F_SETLKW, &g) != 0; /* waits for the parent's close */
		bad |= read(done[0], &c, 1) != 1;
		_exit(bad);
	}
	char c;
	CHECK_EQ(read(go[0], &c, 1), 1);
	maybe_save(); /* a child blocked in F_SETLKW */
	int dup_fd = dup(fd);
	/* Closing any descriptor of the file drops our POSIX locks (not the flock lock). */
	CHECK_EQ(close(dup_fd), 0);
	CHECK_EQ(write(done[1], "d", 1), 1);
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* OFD locks: the holder is reported as pid -1. */
	int a = open(path, O_RDWR), b = open(path, O_RDWR);
	struct flock o = range(F_WRLCK, 0, 1);
	CHECK_EQ(fcntl(a, F_OFD_SETLK, &o), 0);
	o = range(F_WRLCK, 0, 1);
	CHECK_ERR(fcntl(b, F_OFD_SETLK, &o), EAGAIN);
	o = range(F_RDLCK, 0, 1);
	CHECK_EQ(fcntl(b, F_OFD_GETLK, &o), 0);
	CHECK_EQ(o.l_type, F_WRLCK);
	CHECK_EQ(o.l_pid, -1);
	CHECK_EQ(close(a), 0);
	o = range(F_WRLCK, 0, 1);
	CHECK_EQ(fcntl(b, F_OFD_SETLK, &o), 0);

	/* Errors. */
	struct flock bad = range(F_WRLCK, -5, 1);
	CHECK_ERR(fcntl(b, F_SETLK, &bad), EINVAL);
	bad = range(42, 0, 1);
	CHECK_ERR(fcntl(b, F_SETLK, &bad), EINVAL);
	int ro = open(path, O_RDONLY);
	bad = range(F_WRLCK, 0, 1);
	CHECK_ERR(fcntl(ro, F_SETLK, &bad), EBADF);
	CHECK_ERR(flock(ro, 0), EINVAL);
	close(ro);
	close(b);
	close(fd);
	test_dup2_releases(path);
	unlink(path);
	return check_done();
}
