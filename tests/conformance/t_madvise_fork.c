/*
 * t_madvise_fork: what a fork's child gets of a range. MADV_DONTFORK leaves it unmapped in
 * the child (an access is SIGSEGV) and MADV_DOFORK undoes that; MADV_WIPEONFORK gives the
 * child zeros while the parent keeps its data (private anonymous memory only: a shared
 * mapping is EINVAL), MADV_KEEPONFORK undoes it; an unmapped range is ENOMEM. The advice
 * holds across a save point.
 */
#include "check.h"
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

/* Forks a child that runs FN(P) and returns its wait status. */
static int in_child(int (*fn)(volatile char *), volatile char *p)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn(p));
	int status = -1;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	return status;
}

static int touch(volatile char *p)
{
	return p[0] == 'x' ? 7 : 8;
}

static int mapped(volatile char *p)
{
	return madvise((void *)p, 4096, MADV_NORMAL) == 0 ? 0 : errno == ENOMEM ? 1 : 2;
}

static int zeros(volatile char *p)
{
	for (int i = 0; i < 8192; i++)
		if (p[i])
			return 1;
	p[0] = 'c'; /* the child's own */
	return 0;
}

int main(void)
{
	size_t len = 8192;
	volatile char *p =
	    mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED);
	p[0] = 'x';
	p[4096] = 'y';

	/* DONTFORK: the child has no such range. */
	CHECK_EQ(madvise((void *)p, len, MADV_DONTFORK), 0);
	int st = in_child(mapped, p);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	st = in_child(touch, p);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	CHECK_EQ(madvise((void *)p, len, MADV_DOFORK), 0);
	st = in_child(touch, p);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);

	/* WIPEONFORK: zeros in the child, the parent's data untouched. */
	CHECK_EQ(madvise((void *)p, len, MADV_WIPEONFORK), 0);
	maybe_save(); /* a range marked wipe-on-fork */
	st = in_child(zeros, p);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(p[0], 'x');
	CHECK_EQ(p[4096], 'y');
	CHECK_EQ(madvise((void *)p, len, MADV_KEEPONFORK), 0);
	st = in_child(touch, p);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);

	/* Only private anonymous memory is wiped; a hole is ENOMEM. */
	void *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	CHECK_ERR(madvise(sh, 4096, MADV_WIPEONFORK), EINVAL);
	CHECK_EQ(munmap(sh, 4096), 0);
	CHECK_ERR(madvise(sh, 4096, MADV_DONTFORK), ENOMEM);
	munmap((void *)p, len);
	return check_done();
}
