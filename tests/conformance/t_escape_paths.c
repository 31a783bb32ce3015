/*
 * t_escape_paths: the escape corpus's path escapes. ".." at the root, a relative symlink that
 * climbs past it, /proc/self/root and another process's /proc/PID/cwd followed by "..", all
 * end at the root, as in a Linux chroot. In the sandbox, whose root is its own and not a
 * chroot of the host's, the classic chroot escape (fchdir to a directory outside a new
 * chroot, then "..") ends there too; natively it would leave the harness's chroot, so that
 * part runs in the sandbox only.
 * conformance: native-proc
 */
#include "check.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

static struct stat root;

static int is_root(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_dev == root.st_dev && st.st_ino == root.st_ino;
}

static int fd_is_root(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && st.st_dev == root.st_dev && st.st_ino == root.st_ino;
}

int main(void)
{
	char buf[256];

	CHECK_EQ(stat("/", &root), 0);
	CHECK(is_root("/.."));
	CHECK(is_root("/../../.."));
	CHECK_EQ(chdir("/"), 0);
	CHECK_EQ(chdir("../../.."), 0);
	CHECK(getcwd(buf, sizeof(buf)) && !strcmp(buf, "/"));
	CHECK(is_root("."));

	/* A relative symlink that climbs far past the root. */
	mkdir("/tmp/esc", 0755);
	unlink("/tmp/esc/up");
	CHECK_EQ(symlink("../../../../../../../../..", "/tmp/esc/up"), 0);
	CHECK(is_root("/tmp/esc/up"));
	CHECK(is_root("/tmp/esc/up/.."));

	/* The root as /proc shows it. */
	ssize_t n = readlink("/proc/self/root", buf, sizeof(buf) - 1);
	CHECK_EQ(n, 1);
	CHECK(n == 1 && buf[0] == '/');
	int fd = open("/proc/self/root/../../..", O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0 && fd_is_root(fd));
	close(fd);

	/* Another process's cwd, and ".." from it. */
	int p[2];
	CHECK_EQ(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		if (chdir("/tmp/esc"))
			_exit(1);
		close(p[0]);
		if (write(p[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	CHECK_EQ(read(p[0], buf, 1), 1);
	close(p[0]);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/cwd", pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	CHECK(n == 8 && !memcmp(buf, "/tmp/esc", 8));
	snprintf(path, sizeof(path), "/proc/%d/cwd/../../../../..", pid);
	CHECK(is_root(path));
	snprintf(path, sizeof(path), "/proc/%d/root/..", pid);
	CHECK(is_root(path));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	maybe_save();

	/* chroot, then fchdir out of it and climb: the sandbox's root is where it
	 * ends. */
	if (in_sandbox() && geteuid() == 0) {
		int outside = open("/", O_RDONLY | O_DIRECTORY);
		mkdir("/tmp/esc/jail", 0755);
		CHECK_EQ(chroot("/tmp/esc/jail"), 0);
		CHECK_EQ(fchdir(outside), 0);
		for (int i = 0; i < 16; i++)
			CHECK_EQ(chdir(".."), 0);
		CHECK(is_root("."));
		CHECK_EQ(chroot("."), 0);
		CHECK(is_root("/"));
		CHECK(is_root("/.."));
		close(outside);
	}
	unlink("/tmp/esc/up");
	rmdir("/tmp/esc/jail");
	rmdir("/tmp/esc");
	return check_done();
}
