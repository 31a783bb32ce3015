/*
 * t_mmap_file: a private file mapping shows the file's bytes (what read() returns), reads as
 * zero past EOF within the last page, and writes to it stay private to the mapping: neither
 * another mapping of the file in the process, nor one a child makes after the write, nor the
 * file sees them (a large program file too, several pages in). A directory or a write-only
 * request on a read-only fd cannot be mapped.
 */
#include "check.h"
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define PAGE 4096UL

/* Pages of a program file, mapped privately in two processes and written in each. */
static void test_program_file_pages_stay_private(void)
{
	int fd = open("/bin/busybox", O_RDONLY);
	struct stat st;
	char orig;

	CHECK(fd >= 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK(st.st_size > (off_t)(8 * PAGE));
	CHECK_EQ(pread(fd, &orig, 1, 5 * PAGE + 7), 1);
	char *m = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(m != MAP_FAILED);
	m[5 * PAGE + 7] = (char)(orig + 1);
	pid_t child = fork();
	if (child == 0) {
		char *c = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		int bad = c == MAP_FAILED || c[5 * PAGE + 7] != orig ||
			  m[5 * PAGE + 7] != (char)(orig + 1);
		if (!bad)
			c[5 * PAGE + 7] = (char)(orig + 2);
		_exit(bad ? 1 : 0);
	}
	int status;
	CHECK_EQ(waitpid(child, &status, 0), child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(m[5 * PAGE + 7], (char)(orig + 1));
	char again;
	CHECK_EQ(pread(fd, &again, 1, 5 * PAGE + 7), 1);
	CHECK_EQ(again, orig);
	munmap(m, 8 * PAGE);
	close(fd);
}

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
	test_program_file_pages_stay_private();
	return check_done();
}
