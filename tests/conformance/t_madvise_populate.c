/*
 * t_madvise_populate: MADV_POPULATE_READ and MADV_POPULATE_WRITE prefault a mapping (its pages
 * are resident after, their contents unchanged, a private page shared with a child since fork
 * becomes the parent's own on a write populate); an unaligned start is EINVAL, a hole ENOMEM,
 * an inaccessible mapping or a write populate of a read-only one EINVAL, and pages of a file
 * mapping past its end EFAULT.
 */
#include "check.h"
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define PAGE 4096UL
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

static int resident(void *p, size_t pages)
{
	unsigned char v[16];
	int n = 0;

	if (mincore(p, pages * PAGE, v))
		return -1;
	for (size_t i = 0; i < pages; i++)
		n += v[i] & 1;
	return n;
}

int main(void)
{
	unsigned char *a =
	    mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(a != MAP_FAILED);
	CHECK_EQ(resident(a, 4), 0);
	CHECK_EQ(madvise(a, 2 * PAGE, MADV_POPULATE_READ), 0);
	CHECK_EQ(resident(a, 2), 2);
	CHECK_EQ(madvise(a, 4 * PAGE, MADV_POPULATE_WRITE), 0);
	CHECK_EQ(resident(a, 4), 4);
	CHECK_EQ(a[0], 0);
	CHECK_EQ(madvise(a, 0, MADV_POPULATE_READ), 0);

	/* Contents are kept; a write populate after fork leaves the child's copy alone. */
	memset(a, 0x5a, 4 * PAGE);
	int go[2];
	CHECK_EQ(pipe(go), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(a[PAGE] == 0x5a && a[3 * PAGE + 7] == 0x5a ? 0 : 2);
	}
	CHECK_EQ(madvise(a, 4 * PAGE, MADV_POPULATE_WRITE), 0);
	a[PAGE] = 1;
	maybe_save();
	CHECK_EQ(a[PAGE], 1);
	CHECK_EQ(a[PAGE + 1], 0x5a);
	CHECK_EQ(resident(a, 4), 4);
	CHECK_EQ(write(go[1], "g", 1), 1);
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* Errors. */
	CHECK_ERR(madvise(a + 1, PAGE, MADV_POPULATE_READ), EINVAL);
	CHECK_EQ(munmap(a + 2 * PAGE, PAGE), 0);
	CHECK_ERR(madvise(a, 4 * PAGE, MADV_POPULATE_READ), ENOMEM);
	CHECK_ERR(madvise(a + 2 * PAGE, PAGE, MADV_POPULATE_WRITE), ENOMEM);
	void *ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK_EQ(madvise(ro, PAGE, MADV_POPULATE_READ), 0);
	CHECK_ERR(madvise(ro, PAGE, MADV_POPULATE_WRITE), EINVAL);
	void *none = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK_ERR(madvise(none, PAGE, MADV_POPULATE_READ), EINVAL);
	CHECK_ERR(madvise(none, PAGE, MADV_POPULATE_WRITE), EINVAL);

	/* A file of one page mapped over three: the pages past its end are SIGBUS, EFAULT. */
	int fd = open("/tmp/t_madvise_populate.f", O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(ftruncate(fd, PAGE), 0);
	unsigned char *f = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(f != MAP_FAILED);
	CHECK_EQ(madvise(f, PAGE, MADV_POPULATE_WRITE), 0);
	CHECK_ERR(madvise(f, 3 * PAGE, MADV_POPULATE_READ), EFAULT);
	CHECK_ERR(madvise(f, 3 * PAGE, MADV_POPULATE_WRITE), EFAULT);
	void *fr = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
	CHECK_ERR(madvise(fr, PAGE, MADV_POPULATE_WRITE), EINVAL);
	CHECK_EQ(madvise(fr, PAGE, MADV_POPULATE_READ), 0);
	close(fd);
	unlink("/tmp/t_madvise_populate.f");
	return check_done();
}
