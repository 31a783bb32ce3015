/*
 * t_unshare: unshare(CLONE_FILES) gives a process cloned with CLONE_FILES a table of its own
 * (a descriptor closed afterwards stays open for the other), CLONE_FS its own working
 * directory and umask; unshare(0), CLONE_SYSVSEM, and CLONE_THREAD/CLONE_SIGHAND/CLONE_VM in
 * a process of one thread succeed; those three are EINVAL once a second thread runs, and an
 * unknown flag is EINVAL.
 * conformance: native-proc
 */
#include "check.h"
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

static int go[2], ready[2];

static void *idle_thread(void *arg)
{
	char c;

	(void)arg;
	read(go[0], &c, 1);
	return NULL;
}

static int wait_child(pid_t kid)
{
	int status = -1;

	if (waitpid(kid, &status, 0) != kid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

int main(void)
{
	char c;

	CHECK_EQ(unshare(0), 0);
	CHECK_EQ(unshare(CLONE_SYSVSEM), 0);
	CHECK_EQ(unshare(CLONE_THREAD | CLONE_SIGHAND | CLONE_VM), 0);
	CHECK_ERR(unshare(0x1), EINVAL); /* CSIGNAL bits */
	CHECK_ERR(unshare(CLONE_VFORK), EINVAL);
	CHECK_EQ(pipe(go), 0);
	CHECK_EQ(pipe(ready), 0);

	/* CLONE_FILES: shared until the child unshares. */
	int fd = open("/", O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	pid_t kid = (pid_t)syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
	if (kid == 0) {
		int mine = open("/", O_RDONLY | O_DIRECTORY); /* shared: the parent sees it */
		if (mine < 0)
			_exit(1);
		write(ready[1], &mine, sizeof(mine));
		read(go[0], &c, 1);
		if (unshare(CLONE_FILES))
			_exit(2);
		close(fd); /* only in the child's copy now */
		if (fcntl(fd, F_GETFD) != -1)
			_exit(3);
		write(ready[1], &mine, sizeof(mine));
		_exit(0);
	}
	int theirs = -1;
	CHECK_EQ(read(ready[0], &theirs, sizeof(theirs)), sizeof(theirs));
	CHECK(fcntl(theirs, F_GETFD) >= 0); /* the child's open, in our table */
	CHECK_EQ(write(go[1], "x", 1), 1);
	CHECK_EQ(read(ready[0], &theirs, sizeof(theirs)), sizeof(theirs));
	CHECK_EQ(wait_child(kid), 0);
	CHECK(fcntl(fd, F_GETFD) >= 0); /* still ours */
	close(theirs);

	/* CLONE_FS: a shared umask, then the child's own working directory and umask. */
	umask(022);
	kid = (pid_t)syscall(SYS_clone, CLONE_FS | SIGCHLD, 0, 0, 0, 0);
	if (kid == 0) {
		umask(027); /* shared: the parent sees it */
		write(ready[1], "a", 1);
		read(go[0], &c, 1);
		if (unshare(CLONE_FS))
			_exit(2);
		umask(0);
		if (chdir("/tmp"))
			_exit(3);
		write(ready[1], "b", 1);
		read(go[0], &c, 1);
		char cwd[64];
		if (!getcwd(cwd, sizeof(cwd)) || strcmp(cwd, "/tmp") || umask(0) != 0)
			_exit(4);
		_exit(0);
	}
	CHECK_EQ(chdir("/"), 0);
	CHECK_EQ(read(ready[0], &c, 1), 1);
	CHECK_EQ(umask(027), 027);
	CHECK_EQ(write(go[1], "x", 1), 1);
	CHECK_EQ(read(ready[0], &c, 1), 1);
	maybe_save(); /* two processes, no longer sharing a filesystem context */
	char cwd[64];
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK_STREQ(cwd, "/");
	CHECK_EQ(umask(022), 027);
	CHECK_EQ(write(go[1], "y", 1), 1);
	CHECK_EQ(wait_child(kid), 0);

	/* A second thread: no unsharing of what threads share. */
	pthread_t th;
	CHECK_EQ(pthread_create(&th, NULL, idle_thread, NULL), 0);
	CHECK_ERR(unshare(CLONE_THREAD), EINVAL);
	CHECK_ERR(unshare(CLONE_SIGHAND), EINVAL);
	CHECK_ERR(unshare(CLONE_VM), EINVAL);
	CHECK_EQ(unshare(CLONE_FILES), 0); /* the thread keeps the old table */
	CHECK_EQ(unshare(CLONE_FS), 0);
	CHECK_EQ(write(go[1], "z", 1), 1);
	CHECK_EQ(pthread_join(th, NULL), 0);

	return check_done();
}
