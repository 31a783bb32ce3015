/*
 * t_memfd_seals: file seals. A memfd made with MFD_ALLOW_SEALING starts with none, one made
 * without it with F_SEAL_SEAL (F_ADD_SEALS then EPERM); F_SEAL_SHRINK and F_SEAL_GROW refuse
 * truncates and writes past the end (EPERM), F_SEAL_WRITE every write, a writable shared
 * mapping and an mprotect to one (while a writable shared mapping exists, adding it is
 * EBUSY); F_SEAL_SEAL freezes the set; unknown bits are EINVAL and a read-only descriptor
 * EPERM; a file of another filesystem has no seals (EINVAL). Seals survive a save point.
 */
#include "check.h"
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#define F_SEAL_SEAL 0x0001
#define F_SEAL_SHRINK 0x0002
#define F_SEAL_GROW 0x0004
#define F_SEAL_WRITE 0x0008
#endif
#define MFD_NOEXEC_SEAL_FLAG 0x0008U
#define MFD_EXEC_FLAG 0x0010U
#define F_SEAL_EXEC_FLAG 0x0020
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 2U
#endif

static int memfd(const char *name, unsigned int flags)
{
	return (int)syscall(SYS_memfd_create, name, flags);
}

int main(void)
{
	char buf[16];
	int plain = memfd("plain", 0);

	CHECK(plain >= 0);
	CHECK_EQ(fcntl(plain, F_GET_SEALS), F_SEAL_SEAL);
	CHECK_ERR(fcntl(plain, F_ADD_SEALS, F_SEAL_WRITE), EPERM);
	close(plain);

	int fd = memfd("sealed", MFD_ALLOW_SEALING);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GET_SEALS), 0);
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	CHECK_ERR(fcntl(fd, F_ADD_SEALS, 0x10000), EINVAL);

	/* Neither smaller nor larger. */
	CHECK_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	CHECK_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_SHRINK | F_SEAL_GROW);
	maybe_save(); /* a sealed memfd */
	CHECK_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_SHRINK | F_SEAL_GROW);
	CHECK_ERR(ftruncate(fd, 5), EPERM);
	CHECK_ERR(ftruncate(fd, 20), EPERM);
	CHECK_EQ(ftruncate(fd, 10), 0);
	CHECK_ERR(pwrite(fd, "abc", 3, 9), EPERM);
	CHECK_EQ(pwrite(fd, "abc", 3, 7), 3); /* within the size: a write is fine */

	/* F_SEAL_WRITE: EBUSY while a shared mapping that is or may become writable exists (one
	 * of a read-write descriptor, even read-only for now). */
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	CHECK_ERR(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), EBUSY);
	CHECK_EQ(munmap(m, 4096), 0);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	CHECK_ERR(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), EBUSY);
	CHECK_EQ(munmap(m, 4096), 0);
	CHECK_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), 0);
	char *ro = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(ro != MAP_FAILED);
	CHECK_ERR(write(fd, "x", 1), EPERM);
	CHECK_ERR(pwrite(fd, "x", 1, 0), EPERM);
	CHECK(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED &&
	      errno == EPERM);
	/* A shared mapping made read-only cannot become writable; a private one can. */
	char *ro2 = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(ro2 != MAP_FAILED);
	CHECK_ERR(mprotect(ro2, 4096, PROT_READ | PROT_WRITE), EACCES);
	char *priv = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(priv != MAP_FAILED);
	priv[0] = 'P';
	CHECK_EQ(pread(fd, buf, 10, 0), 10);
	CHECK(!memcmp(buf, "0123456abc", 10));
	CHECK_EQ(ro[7], 'a');

	/* F_SEAL_SEAL: the set is final. */
	CHECK_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL), 0);
	CHECK_ERR(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), EPERM);

	/* A read-only descriptor of a sealable file cannot seal. */
	int fd2 = memfd("ro", MFD_ALLOW_SEALING);
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd2);
	int rofd = open(path, O_RDONLY);
	if (rofd >= 0) { /* natively /proc may not be mounted in the chroot */
		CHECK_ERR(fcntl(rofd, F_ADD_SEALS, F_SEAL_GROW), EPERM);
		CHECK_EQ(fcntl(rofd, F_GET_SEALS), 0);
		close(rofd);
	}

	/* MFD_NOEXEC_SEAL: no execute bits, and F_SEAL_EXEC keeps them off. */
	int nx = memfd("noexec", MFD_NOEXEC_SEAL_FLAG);
	struct stat st;
	CHECK(nx >= 0);
	CHECK_EQ(fcntl(nx, F_GET_SEALS), F_SEAL_EXEC_FLAG);
	CHECK_EQ(fstat(nx, &st), 0);
	CHECK_EQ(st.st_mode & 0111, 0);
	CHECK_ERR(fchmod(nx, 0755), EPERM);
	CHECK_EQ(fchmod(nx, 0600), 0);
	close(nx);
	CHECK_ERR(memfd("both", MFD_NOEXEC_SEAL_FLAG | MFD_EXEC_FLAG), EINVAL);
	int x = memfd("exec", MFD_EXEC_FLAG);
	CHECK(x >= 0);
	CHECK_EQ(fstat(x, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0777);
	close(x);

	/* A pipe has no seals. */
	int p[2];
	CHECK_EQ(pipe(p), 0);
	CHECK_ERR(fcntl(p[0], F_GET_SEALS), EINVAL);
	CHECK_ERR(fcntl(p[1], F_ADD_SEALS, F_SEAL_SEAL), EINVAL);

	close(p[0]);
	close(p[1]);
	close(fd2);
	munmap(ro, 4096);
	munmap(ro2, 4096);
	munmap(priv, 4096);
	close(fd);
	return check_done();
}
