/*
 * t_fs_mmap: file mappings of a /tmp file. A MAP_SHARED store is seen by read(2), by a second
 * mapping, and across fork in both directions; write(2) is seen by the mapping; truncation
 * zeroes and cuts the mapping (SIGBUS past EOF), a mapping made longer than the file faults
 * past its end, and a child's mapping is cut when its parent truncates and made whole when it
 * grows the file by writing; growing a mapped file far keeps its mappings on the file's pages.
 * MAP_PRIVATE is copy-on-write: the file and
 * other mappings never see its stores. msync succeeds; protections must match the open mode.
 */
#include "check.h"
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define PAGE 4096L
#define SIZE (4 * PAGE)

static char path[64];
static sigjmp_buf jump;
static volatile sig_atomic_t bus_errors;

static void on_sigbus(int sig)
{
	(void)sig;
	bus_errors++;
	siglongjmp(jump, 1);
}

/* Reads one byte at p, returning -1 if that raised SIGBUS. */
static int touch(volatile char *p)
{
	if (sigsetjmp(jump, 1))
		return -1;
	return (unsigned char)*p;
}

static char pread_byte(int fd, off_t off)
{
	char c = '?';

	CHECK_EQ(pread(fd, &c, 1, off), 1);
	return c;
}

static void test_shared_mapping(int fd)
{
	char buf[16];
	char *m = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED)
		return;
	/* The file's bytes are there, and stores go to the file. */
	CHECK_EQ(memcmp(m, "initial", 7), 0);
	CHECK_EQ(m[PAGE], 0);
	memcpy(m, "mapped", 6);
	memcpy(m + 3 * PAGE + 100, "last page", 9);
	CHECK_EQ(pread(fd, buf, 6, 0), 6);
	CHECK_EQ(memcmp(buf, "mapped", 6), 0);
	CHECK_EQ(pread(fd, buf, 9, 3 * PAGE + 100), 9);
	CHECK_EQ(memcmp(buf, "last page", 9), 0);
	struct stat st;
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, SIZE); /* stores do not change the size */

	/* write(2) is seen through the mapping. */
	CHECK_EQ(pwrite(fd, "W", 1, PAGE + 1), 1);
	CHECK_EQ(m[PAGE + 1], 'W');

	/* A second mapping, from another descriptor and at an offset, shares the pages. */
	int fd2 = open(path, O_RDWR);
	char *m2 = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd2, 2 * PAGE);
	CHECK(m2 != MAP_FAILED);
	close(fd2); /* the mapping keeps the file */
	CHECK_EQ(memcmp(m2 + PAGE + 100, "last page", 9), 0);
	m2[0] = 'S';
	CHECK_EQ(m[2 * PAGE], 'S');
	m[2 * PAGE + 1] = 'T';
	CHECK_EQ(m2[1], 'T');

	CHECK_EQ(msync(m, SIZE, MS_SYNC), 0);
	CHECK_EQ(msync(m + PAGE, PAGE, MS_ASYNC), 0);
	CHECK_EQ(msync(m, SIZE, MS_INVALIDATE), 0);
	CHECK_ERR(msync(m + 1, PAGE, MS_SYNC), EINVAL);
	CHECK_ERR(msync(m, PAGE, MS_SYNC | MS_ASYNC), EINVAL);
	CHECK_ERR(msync(m, PAGE, 0x100), EINVAL);

	maybe_save();
	/* Still one set of pages after a save: mapping, mapping and file agree. */
	m[PAGE + 2] = 'X';
	CHECK_EQ(pread_byte(fd, PAGE + 2), 'X');
	m2[2] = 'Y';
	CHECK_EQ(m[2 * PAGE + 2], 'Y');
	CHECK_EQ(pread_byte(fd, 2 * PAGE + 2), 'Y');
	CHECK_EQ(pwrite(fd, "Z", 1, 2 * PAGE + 3), 1);
	CHECK_EQ(m2[3], 'Z');

	/* Across fork: the child's stores reach the parent, through old and new mappings. */
	pid_t pid = fork();
	if (pid == 0) {
		int cfd = open(path, O_RDWR);
		char *cm = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, cfd, 0);
		if (cm == MAP_FAILED || m[0] != 'm')
			_exit(1);
		m[10] = 'c';
		cm[11] = 'C';
		_exit(0);
	}
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	CHECK_EQ(m[10], 'c');
	CHECK_EQ(m[11], 'C');
	CHECK_EQ(pread_byte(fd, 11), 'C');

	CHECK_EQ(munmap(m2, 2 * PAGE), 0);
	CHECK_EQ(munmap(m, SIZE), 0);
	/* Unmapped, the data stays in the file. */
	CHECK_EQ(pread(fd, buf, 6, 0), 6);
	CHECK_EQ(memcmp(buf, "mapped", 6), 0);
}

static void test_private_mapping(int fd)
{
	char *shared = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	char *priv = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);

	CHECK(shared != MAP_FAILED && priv != MAP_FAILED);
	if (shared == MAP_FAILED || priv == MAP_FAILED)
		return;
	CHECK_EQ(memcmp(priv, "mapped", 6), 0);
	/* A private store copies the page: the file and the shared mapping do not change. */
	priv[0] = 'P';
	CHECK_EQ(priv[0], 'P');
	CHECK_EQ(shared[0], 'm');
	CHECK_EQ(pread_byte(fd, 0), 'm');
	/* Once copied, the page no longer follows the file. */
	shared[1] = 'Q';
	CHECK_EQ(priv[1], 'a');
	CHECK_EQ(pwrite(fd, "R", 1, 2), 1);
	CHECK_EQ(priv[2], 'p');
	CHECK_EQ(msync(priv, SIZE, MS_SYNC), 0);
	CHECK_EQ(pread_byte(fd, 0), 'm');

	/* A child's private stores stay in the child. */
	pid_t pid = fork();
	if (pid == 0) {
		priv[PAGE] = 'k';
		_exit(priv[0] == 'P' ? 0 : 1);
	}
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	CHECK(priv[PAGE] != 'k');
	CHECK(shared[PAGE] != 'k');
	CHECK(pread_byte(fd, PAGE) != 'k');
	munmap(priv, SIZE);
	munmap(shared, SIZE);

	/* A read-only descriptor allows private writable mappings only. */
	int ro = open(path, O_RDONLY);
	priv = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, ro, 0);
	CHECK(priv != MAP_FAILED);
	priv[0] = 'p';
	CHECK_EQ(pread_byte(fd, 0), 'm');
	munmap(priv, PAGE);
	CHECK_ERR(mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0), EACCES);
	char *r = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, ro, 0);
	CHECK(r != MAP_FAILED);
	CHECK_ERR(mprotect(r, PAGE, PROT_READ | PROT_WRITE), EACCES);
	if (mprotect(r, PAGE, PROT_READ | PROT_WRITE) == 0) {
		/* Wrongly allowed: at least the file must not change through it. */
		r[0] = '!';
		CHECK_EQ(pread_byte(fd, 0), 'm');
	}
	munmap(r, PAGE);
	close(ro);
	int wo = open(path, O_WRONLY);
	CHECK_ERR(mmap(NULL, PAGE, PROT_READ, MAP_SHARED, wo, 0), EACCES);
	CHECK_ERR(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, wo, 0), EACCES);
	close(wo);
	CHECK_ERR(mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 100), EINVAL);
	CHECK_ERR(mmap(NULL, 0, PROT_READ, MAP_SHARED, fd, 0), EINVAL);
}

static void test_truncate_cuts_mapping(int fd)
{
	char *m = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED)
		return;
	signal(SIGBUS, on_sigbus);
	/* Shrunk to a page and a half: the rest of the last page reads zero, beyond is SIGBUS. */
	CHECK_EQ(ftruncate(fd, PAGE + PAGE / 2), 0);
	CHECK_EQ(touch(m), 'm');
	CHECK_EQ(touch(m + PAGE + PAGE / 2 + 10), 0);
	CHECK_EQ(touch(m + 2 * PAGE), -1);
	CHECK_EQ(touch(m + 3 * PAGE + 100), -1);
	CHECK_EQ(bus_errors, 2);
	/* Grown again, the cut part is zeros. */
	CHECK_EQ(ftruncate(fd, SIZE), 0);
	CHECK_EQ(touch(m + 3 * PAGE + 100), 0);
	CHECK_EQ(touch(m + 2 * PAGE), 0);
	CHECK_EQ(touch(m + PAGE + 1), 'W');
	/* A store in the re-grown part reaches the file. */
	m[3 * PAGE] = 'G';
	CHECK_EQ(pread_byte(fd, 3 * PAGE), 'G');
	CHECK_EQ(bus_errors, 2);
	signal(SIGBUS, SIG_DFL);
	munmap(m, SIZE);
}

static void test_mapping_past_the_end(int fd)
{
	CHECK_EQ(ftruncate(fd, PAGE / 2), 0);
	char *m = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED)
		return;
	signal(SIGBUS, on_sigbus);
	bus_errors = 0;
	CHECK_EQ(touch(m + PAGE - 1), 0);
	CHECK_EQ(touch(m + PAGE), -1);
	CHECK_EQ(bus_errors, 1);

	/* A child maps the file too and waits; the parent grows it by writing, then cuts it. */
	int go[2], done[2];
	CHECK_EQ(pipe(go), 0);
	CHECK_EQ(pipe(done), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		bus_errors = 0;
		if (read(go[0], &c, 1) != 1 || touch(m + 2 * PAGE) != 'g')
			_exit(1);
		if (write(done[1], "x", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(touch(m + 2 * PAGE) == -1 && bus_errors == 1 ? 0 : 3);
	}
	CHECK_EQ(pwrite(fd, "g", 1, 2 * PAGE), 1); /* the file now covers three pages */
	CHECK_EQ(write(go[1], "x", 1), 1);
	char c;
	CHECK_EQ(read(done[0], &c, 1), 1);
	CHECK_EQ(ftruncate(fd, PAGE), 0);
	CHECK_EQ(write(go[1], "x", 1), 1);
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	signal(SIGBUS, SIG_DFL);
	munmap(m, SIZE);
	close(go[0]), close(go[1]), close(done[0]), close(done[1]);
	CHECK_EQ(ftruncate(fd, SIZE), 0);
}

/* A file mapped shared and then grown far (to 8 MiB, by write and by ftruncate) keeps one set
 * of pages: stores through the old mapping are read back by read(2), and writes are seen
 * through it, in this process and in a child that mapped it too. */
static void test_growth_keeps_mappings(void)
{
	char grow_path[80];
	snprintf(grow_path, sizeof(grow_path), "%s.grow", path);
	int fd = open(grow_path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(ftruncate(fd, PAGE), 0);
	char *m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	int go[2], done[2];
	CHECK_EQ(pipe(go), 0);
	CHECK_EQ(pipe(done), 0);
	pid_t child = fork();
	if (child == 0) {
		char *c = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		char b;
		if (c == MAP_FAILED || read(go[0], &b, 1) != 1)
			_exit(1);
		int bad = c[10] != 'g' || c[11] != 'w';
		c[12] = 'c';
		_exit(bad || write(done[1], "d", 1) != 1 ? 2 : 0);
	}
	CHECK_EQ(pwrite(fd, "x", 1, 8 << 20), 1); /* past every reservation so far */
	CHECK_EQ(ftruncate(fd, 16 << 20), 0);
	m[10] = 'g';
	CHECK_EQ(pread_byte(fd, 10), 'g');
	CHECK_EQ(pwrite(fd, "w", 1, 11), 1);
	CHECK_EQ(m[11], 'w');
	CHECK_EQ(write(go[1], "g", 1), 1);
	char b;
	CHECK_EQ(read(done[0], &b, 1), 1);
	int st;
	CHECK_EQ(waitpid(child, &st, 0), child);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(m[12], 'c');
	CHECK_EQ(pread_byte(fd, 12), 'c');
	munmap(m, PAGE);
	close(go[0]), close(go[1]), close(done[0]), close(done[1]);
	close(fd);
	CHECK_EQ(unlink(grow_path), 0);
}

int main(void)
{
	snprintf(path, sizeof(path), "/tmp/t_fs_mmap.%d", getpid());
	unlink(path);
	int fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "initial", 7), 7);
	CHECK_EQ(ftruncate(fd, SIZE), 0);

	test_shared_mapping(fd);
	test_private_mapping(fd);
	test_truncate_cuts_mapping(fd);
	test_mapping_past_the_end(fd);
	test_growth_keeps_mappings();

	close(fd);
	CHECK_EQ(unlink(path), 0);
	return check_done();
}
