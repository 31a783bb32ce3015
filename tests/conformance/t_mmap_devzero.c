/*
 * t_mmap_devzero: a private mapping of /dev/zero is zero-filled private memory (a child's
 * writes stay its own); a shared one is shared anonymous memory (a child's writes are seen by
 * its parent), also across a checkpoint taken while both map it. The descriptor's access rules
 * are mmap's: a shared writable mapping needs O_RDWR, a write-only descriptor maps nothing.
 * /dev/null still cannot be mapped (ENODEV).
 */
#include "check.h"
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#define PAGE 4096UL

static int all(const unsigned char *p, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

/* Natively the chroot may have no /dev: a node of the same device stands in for it. */
static const char *node(const char *dev, unsigned minor, const char *spare)
{
	if (in_sandbox() || access(dev, F_OK) == 0)
		return dev;
	unlink(spare);
	return mknod(spare, S_IFCHR | 0666, makedev(1, minor)) == 0 ? spare : dev;
}

int main(void)
{
	const char *zero = node("/dev/zero", 5, "/tmp/t_mmap_devzero.zero");
	const char *nul = node("/dev/null", 3, "/tmp/t_mmap_devzero.null");
	int rw = open(zero, O_RDWR), ro = open(zero, O_RDONLY);
	int wo = open(zero, O_WRONLY);
	CHECK(rw >= 0 && ro >= 0 && wo >= 0);

	/* Private: zeros, writable even through a read-only descriptor, copied on fork. */
	unsigned char *priv = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, ro, 0);
	CHECK(priv != MAP_FAILED);
	CHECK(all(priv, 3 * PAGE, 0));
	memset(priv, 0x11, 3 * PAGE);

	/* Shared: one memory for parent and child. */
	unsigned char *shared = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0);
	CHECK(shared != MAP_FAILED);
	CHECK(all(shared, 2 * PAGE, 0));
	shared[0] = 1;

	int go[2], done[2];
	CHECK_EQ(pipe(go), 0);
	CHECK_EQ(pipe(done), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		memset(priv, 0x22, PAGE);
		shared[1] = 2;
		if (read(go[0], &c, 1) != 1) /* after the parent's checkpoint */
			_exit(1);
		shared[PAGE + 5] = 3;
		if (shared[2] != 4 || priv[0] != 0x22)
			_exit(2);
		if (write(done[1], "x", 1) != 1)
			_exit(3);
		_exit(0);
	}
	while (*(volatile unsigned char *)&shared[1] != 2)
		usleep(1000);
	CHECK(all(priv, 3 * PAGE, 0x11)); /* the child's copy was its own */
	shared[2] = 4;

	maybe_save();
	CHECK(all(priv, 3 * PAGE, 0x11));
	CHECK_EQ(shared[0], 1);
	CHECK_EQ(shared[1], 2);
	CHECK_EQ(write(go[1], "g", 1), 1);
	char c;
	CHECK_EQ(read(done[0], &c, 1), 1);
	CHECK_EQ(shared[PAGE + 5], 3); /* written by the child after the restore */
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* Access rules. */
	CHECK_ERR(mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0), EACCES);
	void *r = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, ro, 0);
	CHECK(r != MAP_FAILED);
	CHECK_ERR(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, wo, 0), EACCES);
	CHECK_ERR(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, rw, 100), EINVAL);
	int null = open(nul, O_RDWR);
	CHECK(null >= 0);
	CHECK_ERR(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, null, 0), ENODEV);

	CHECK_EQ(munmap(r, PAGE), 0);
	CHECK_EQ(munmap(priv, 3 * PAGE), 0);
	CHECK_EQ(munmap(shared, 2 * PAGE), 0);
	if (strcmp(zero, "/dev/zero"))
		unlink(zero);
	if (strcmp(nul, "/dev/null"))
		unlink(nul);
	return check_done();
}
