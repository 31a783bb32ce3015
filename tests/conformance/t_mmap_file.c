/*
 * t_mmap_file: a private file mapping shows the file's bytes (what read() returns), reads as
 * zero past EOF within the last page, and writes to it stay private to the mapping. A
 * directory or a write-only request on a read-only fd cannot be mapped.
 */
#include "check.h"
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define PAGE 4096UL

int main(void)
{
	char buf[PAGE];
	struct stat st;
	int fd = open("/etc/passwd", O_RDONLY);

	CHECK(fd >= 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK(st.st_size > 0 && st.st_size < (off_t)PAGE);
	ssize_t n = read(fd, buf, sizeof(buf));
	CHECK_EQ(n, st.st_size);

	char *m = (char *)syscall(SYS_mmap, NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(m != MAP_FAILED);
	CHECK(memcmp(m, buf, n) == 0);
	for (size_t i = n; i < PAGE; i++)
		if (m[i] != 0) {
			CHECK_EQ(m[i], 0);
			break;
		}

	/* Private writes neither reach the file nor other mappings of it. */
	m[0] = '#';
	char *m2 = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(m2 != MAP_FAILED);
	CHECK_EQ(m2[0], buf[0]);
	char first;
	CHECK_EQ(pread(fd, &first, 1, 0), 1);
	CHECK_EQ(first, buf[0]);

	maybe_save();
	CHECK_EQ(m[0], '#');
	CHECK(memcmp(m + 1, buf + 1, n - 1) == 0);
	CHECK(memcmp(m2, buf, n) == 0);

	/* The mapping outlives the descriptor. */
	CHECK_EQ(close(fd), 0);
	CHECK(memcmp(m2, buf, n) == 0);
	CHECK_EQ(munmap(m, PAGE), 0);
	CHECK_EQ(munmap(m2, PAGE), 0);

	fd = open("/etc/passwd", O_RDONLY);
	CHECK_ERR(syscall(SYS_mmap, NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), EACCES);
	CHECK_ERR(syscall(SYS_mmap, NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 1), EINVAL);
	CHECK_ERR(syscall(SYS_mmap, NULL, PAGE, PROT_READ, MAP_PRIVATE, 999, 0), EBADF);
	close(fd);
	int dfd = open("/etc", O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	CHECK_ERR(syscall(SYS_mmap, NULL, PAGE, PROT_READ, MAP_PRIVATE, dfd, 0), ENODEV);
	close(dfd);
	return check_done();
}
