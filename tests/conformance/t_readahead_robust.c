/*
 * t_readahead_robust: two small calls libraries make. readahead succeeds on a regular file
 * open for reading, is EBADF for a bad or write-only descriptor and EINVAL for a pipe or a
 * directory. get_robust_list gives back what set_robust_list registered (glibc registers a
 * list for every thread) and its size, for the caller (pid 0 or its own tid) and for a child
 * of the same user; ESRCH for no such thread, EFAULT for bad pointers, EPERM for a process
 * of another user once the caller has no CAP_SYS_PTRACE.
 * conformance: native-proc
 */
#include "check.h"
#include <fcntl.h>
#include <sys/wait.h>

struct robust_head {
	void *list, *futex_offset, *pending;
};

int main(void)
{
	static struct robust_head mine = {&mine, 0, 0};
	int fd = open("/opt/conformance/t_readahead_robust.static", O_RDONLY), p[2];

	CHECK(fd >= 0);
	CHECK_EQ(syscall(SYS_readahead, fd, 0L, 4096L), 0);
	CHECK_EQ(syscall(SYS_readahead, fd, 1L << 40, 4096L), 0); /* past the end */
	CHECK_ERR(syscall(SYS_readahead, -1, 0L, 4096L), EBADF);
	CHECK_ERR(syscall(SYS_readahead, 999, 0L, 4096L), EBADF);
	CHECK_EQ(pipe(p), 0);
	CHECK_ERR(syscall(SYS_readahead, p[0], 0L, 4096L), EINVAL);
	CHECK_ERR(syscall(SYS_readahead, p[1], 0L, 4096L), EBADF); /* write-only */
	int dir = open("/", O_RDONLY | O_DIRECTORY);
	CHECK_ERR(syscall(SYS_readahead, dir, 0L, 4096L), EINVAL);
	int wr = open("/tmp/t_readahead_robust.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(wr >= 0);
	CHECK_ERR(syscall(SYS_readahead, wr, 0L, 4096L), EBADF);
	unlink("/tmp/t_readahead_robust.tmp");

	/* Our own list, then one we set. */
	void *head = NULL;
	size_t len = 0;
	CHECK_EQ(syscall(SYS_get_robust_list, 0, &head, &len), 0);
	CHECK_EQ(len, sizeof(struct robust_head));
	void *libc_head = head;
	CHECK_EQ(syscall(SYS_set_robust_list, &mine, sizeof(mine)), 0);
	maybe_save(); /* the registered head */
	CHECK_EQ(syscall(SYS_get_robust_list, 0, &head, &len), 0);
	CHECK(head == &mine);
	CHECK_EQ(syscall(SYS_get_robust_list, getpid(), &head, &len), 0);
	CHECK(head == &mine);
	CHECK_ERR(syscall(SYS_get_robust_list, 0, BAD_PTR, &len), EFAULT);
	CHECK_ERR(syscall(SYS_get_robust_list, 0, &head, BAD_PTR), EFAULT);
	CHECK_ERR(syscall(SYS_get_robust_list, 99999, &head, &len), ESRCH);
	CHECK_ERR(syscall(SYS_set_robust_list, &mine, sizeof(mine) + 1), EINVAL);
	CHECK_EQ(syscall(SYS_set_robust_list, libc_head, sizeof(mine)), 0);

	/* A child: its own list is readable by us; as another user without capabilities it may
	 * not read ours. */
	int go[2];
	CHECK_EQ(pipe(go), 0);
	pid_t kid = fork();
	if (kid == 0) {
		char c;
		syscall(SYS_set_robust_list, &mine, sizeof(mine));
		write(p[1], "r", 1);
		read(go[0], &c, 1);
		void *h;
		size_t l;
		if (setresuid(65534, 65534, 65534))
			_exit(1);
		errno = 0;
		if (syscall(SYS_get_robust_list, getppid(), &h, &l) != -1 || errno != EPERM)
			_exit(2);
		if (syscall(SYS_get_robust_list, 0, &h, &l) != 0 || h != &mine)
			_exit(3);
		_exit(0);
	}
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(syscall(SYS_get_robust_list, kid, &head, &len), 0);
	CHECK(head == &mine);
	CHECK_EQ(write(go[1], "g", 1), 1);
	int status;
	CHECK_EQ(waitpid(kid, &status, 0), kid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);

	return check_done();
}
