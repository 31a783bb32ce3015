/*
 * t_fs_rw: reading and writing a file under /tmp: write/pwrite/writev/pwritev/preadv/
 * preadv2, files extended by writes past the end with the hole reading as zeros, lseek with
 * SEEK_END and the SEEK_DATA/SEEK_HOLE cases every Linux filesystem agrees on, ftruncate
 * down and up, fallocate (mode 0, KEEP_SIZE, PUNCH_HOLE) and their errno cases.
 */
#include "check.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>

#define BIG (256 * 1024)

static char path[64];

static off_t fsize(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? st.st_size : -1;
}

/* 1 when len bytes at off read back as zeros (and are all there). */
static int reads_zero(int fd, off_t off, size_t len)
{
	static char buf[BIG];

	if (len > sizeof(buf) || pread(fd, buf, len, off) != (ssize_t)len)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (buf[i] != 0)
			return 0;
	return 1;
}

static void test_write_and_pwrite(int fd)
{
	char buf[64];

	CHECK_EQ(write(fd, "hello", 5), 5);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 5);
	CHECK_EQ(write(fd, "", 0), 0);
	/* pwrite past the end extends the file and leaves the position alone. */
	CHECK_EQ(pwrite(fd, "XY", 2, 10), 2);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 5);
	CHECK_EQ(fsize(fd), 12);
	CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 12);
	CHECK_EQ(memcmp(buf, "hello\0\0\0\0\0XY", 12), 0);
	CHECK_EQ(read(fd, buf, sizeof(buf)), 7);
	CHECK_EQ(read(fd, buf, sizeof(buf)), 0);
	/* Overwriting in the middle keeps the size. */
	CHECK_EQ(pwrite(fd, "LL", 2, 2), 2);
	CHECK_EQ(fsize(fd), 12);
	CHECK_EQ(pread(fd, buf, 5, 0), 5);
	CHECK_EQ(memcmp(buf, "heLLo", 5), 0);
	CHECK_EQ(pread(fd, buf, sizeof(buf), 12), 0);
	CHECK_EQ(pread(fd, buf, sizeof(buf), 1000), 0);

	CHECK_ERR(pwrite(fd, "x", 1, -1), EINVAL);
	CHECK_ERR(pread(fd, buf, 1, -1), EINVAL);
	CHECK_ERR(syscall(SYS_write, fd, BAD_PTR, 4), EFAULT);
	CHECK_ERR(syscall(SYS_pread64, fd, BAD_PTR, 4, 0), EFAULT);
	CHECK_EQ(fsize(fd), 12);
}

static void test_vectored(int fd)
{
	char a[4], b[6], c[3];
	struct iovec w[3] = {{"abc", 3}, {"", 0}, {"defghij", 7}};
	struct iovec r[3] = {{a, sizeof(a)}, {b, sizeof(b)}, {c, sizeof(c)}};

	CHECK_EQ(ftruncate(fd, 0), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(writev(fd, w, 3), 10);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 10);
	CHECK_EQ(pwritev(fd, w, 1, 20), 3);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 10);
	CHECK_EQ(fsize(fd), 23);
	/* preadv scatters in order and stops at EOF. */
	CHECK_EQ(preadv(fd, r, 3, 0), 13);
	CHECK_EQ(memcmp(a, "abcd", 4), 0);
	CHECK_EQ(memcmp(b, "efghij", 6), 0);
	CHECK_EQ(memcmp(c, "\0\0\0", 3), 0);
	CHECK_EQ(preadv(fd, r, 3, 19), 4);
	CHECK_EQ(memcmp(a, "\0abc", 4), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 10);

	/* preadv2/pwritev2 with offset -1 use and move the file position. */
	CHECK_EQ(lseek(fd, 3, SEEK_SET), 3);
	CHECK_EQ(syscall(SYS_preadv2, fd, r, 1, -1L, 0L, 0), 4);
	CHECK_EQ(memcmp(a, "defg", 4), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 7);
	CHECK_EQ(syscall(SYS_preadv2, fd, r, 1, 0L, 0L, 0), 4);
	CHECK_EQ(memcmp(a, "abcd", 4), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 7);
	struct iovec z = {"Z", 1};
	CHECK_EQ(syscall(SYS_pwritev2, fd, &z, 1, -1L, 0L, 0), 1);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 8);
	CHECK_EQ(syscall(SYS_pwritev2, fd, &z, 1, 0L, 0L, 0), 1);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 8);
	CHECK_EQ(pread(fd, a, 4, 6), 4);
	CHECK_EQ(memcmp(a, "gZij", 4), 0);
	CHECK_EQ(pread(fd, a, 1, 0), 1);
	CHECK_EQ(a[0], 'Z');
	CHECK_ERR(syscall(SYS_preadv2, fd, r, 1, 0L, 0L, 0x1000), EOPNOTSUPP);

	CHECK_ERR(syscall(SYS_writev, fd, w, -1), EINVAL);
	CHECK_ERR(preadv(fd, r, 3, -5), EINVAL);
	struct iovec bad = {BAD_PTR, 4};
	CHECK_ERR(syscall(SYS_writev, fd, &bad, 1), EFAULT);
}

static void test_holes_and_seek(int fd)
{
	static char buf[BIG];

	CHECK_EQ(ftruncate(fd, 0), 0);
	CHECK_EQ(pwrite(fd, "head", 4, 0), 4);
	/* Seek 1 MiB past the start and write: everything between reads as zero. */
	CHECK_EQ(lseek(fd, 1 << 20, SEEK_SET), 1 << 20);
	CHECK_EQ(write(fd, "tail", 4), 4);
	CHECK_EQ(fsize(fd), (1 << 20) + 4);
	CHECK(reads_zero(fd, 4, BIG - 4));
	CHECK(reads_zero(fd, 512 * 1024, BIG));
	CHECK(reads_zero(fd, (1 << 20) - 100, 100));
	CHECK_EQ(pread(fd, buf, 16, (1 << 20) - 2), 6);
	CHECK_EQ(memcmp(buf, "\0\0tail", 6), 0);

	off_t size = fsize(fd);
	CHECK_EQ(lseek(fd, 0, SEEK_END), size);
	CHECK_EQ(lseek(fd, -4, SEEK_END), size - 4);
	CHECK_EQ(lseek(fd, 10, SEEK_END), size + 10);
	CHECK_EQ(lseek(fd, -5, SEEK_CUR), size + 5);
	CHECK_ERR(lseek(fd, -size - 1, SEEK_END), EINVAL);
	CHECK_ERR(lseek(fd, -1, SEEK_SET), EINVAL);
	CHECK_ERR(lseek(fd, 0, 99), EINVAL);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), size + 5);

	/* SEEK_DATA/SEEK_HOLE: data at 0, a hole no later than EOF, nothing past EOF. */
	CHECK_EQ(lseek(fd, 0, SEEK_DATA), 0);
	off_t hole = lseek(fd, 0, SEEK_HOLE);
	CHECK(hole >= 4 && hole <= size);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), hole);
	hole = lseek(fd, size - 1, SEEK_HOLE);
	CHECK_EQ(hole, size);
	CHECK_EQ(lseek(fd, size - 1, SEEK_DATA), size - 1);
	CHECK_ERR(lseek(fd, size, SEEK_DATA), ENXIO);
	CHECK_ERR(lseek(fd, size, SEEK_HOLE), ENXIO);
	CHECK_ERR(lseek(fd, size + 4096, SEEK_DATA), ENXIO);
	CHECK_ERR(lseek(fd, size + 4096, SEEK_HOLE), ENXIO);
	CHECK_ERR(lseek(fd, -1, SEEK_DATA), ENXIO);

	int p[2];
	CHECK_EQ(pipe(p), 0);
	CHECK_ERR(lseek(p[0], 0, SEEK_SET), ESPIPE);
	CHECK_ERR(pread(p[0], buf, 1, 0), ESPIPE);
	CHECK_ERR(pwrite(p[1], "x", 1, 0), ESPIPE);
	close(p[0]);
	close(p[1]);
}

static void test_big_write_reads_back(int fd)
{
	static char out[BIG], in[BIG];

	for (int i = 0; i < BIG; i++)
		out[i] = (char)(i * 7 + i / 4096);
	CHECK_EQ(ftruncate(fd, 0), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(write(fd, out, BIG), BIG);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	/* Odd-sized reads across page boundaries. */
	size_t got = 0;
	ssize_t n;
	while ((n = read(fd, in + got, got + 4099 <= BIG ? 4099 : BIG - got)) > 0)
		got += n;
	CHECK_EQ(n, 0);
	CHECK_EQ(got, BIG);
	CHECK_EQ(memcmp(in, out, BIG), 0);
}

static void test_ftruncate(int fd)
{
	char buf[16];

	CHECK_EQ(ftruncate(fd, 0), 0);
	CHECK_EQ(pwrite(fd, "0123456789", 10, 0), 10);
	CHECK_EQ(lseek(fd, 8, SEEK_SET), 8);
	CHECK_EQ(ftruncate(fd, 3), 0);
	CHECK_EQ(fsize(fd), 3);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 8); /* the position does not move */
	CHECK_EQ(read(fd, buf, sizeof(buf)), 0);
	/* Growing again brings back zeros, not the old bytes. */
	CHECK_EQ(ftruncate(fd, 10), 0);
	CHECK_EQ(pread(fd, buf, sizeof(buf), 0), 10);
	CHECK_EQ(memcmp(buf, "012\0\0\0\0\0\0\0", 10), 0);
	CHECK_EQ(ftruncate(fd, 3 * 4096 + 5), 0);
	CHECK_EQ(fsize(fd), 3 * 4096 + 5);
	CHECK(reads_zero(fd, 3, 3 * 4096 + 2));
	CHECK_EQ(ftruncate(fd, 3 * 4096 + 5), 0);
	CHECK_EQ(fsize(fd), 3 * 4096 + 5);
	CHECK_ERR(ftruncate(fd, -1), EINVAL);

	int ro = open(path, O_RDONLY);
	CHECK(ro >= 0);
	CHECK_ERR(ftruncate(ro, 0), EINVAL);
	CHECK_ERR(write(ro, "x", 1), EBADF);
	close(ro);
	int wo = open(path, O_WRONLY);
	CHECK_ERR(read(wo, buf, 1), EBADF);
	close(wo);
	int dfd = open("/tmp", O_RDONLY | O_DIRECTORY);
	CHECK_ERR(ftruncate(dfd, 0), EINVAL);
	close(dfd);
	CHECK_ERR(ftruncate(-1, 0), EBADF);
}

static void test_fallocate(int fd)
{
	char buf[16];

	CHECK_EQ(ftruncate(fd, 0), 0);
	CHECK_EQ(fallocate(fd, 0, 0, 8192), 0);
	CHECK_EQ(fsize(fd), 8192);
	CHECK(reads_zero(fd, 0, 8192));
	/* Mode 0 never shrinks; KEEP_SIZE never grows. */
	CHECK_EQ(fallocate(fd, 0, 0, 100), 0);
	CHECK_EQ(fsize(fd), 8192);
	CHECK_EQ(fallocate(fd, FALLOC_FL_KEEP_SIZE, 8192, 8192), 0);
	CHECK_EQ(fsize(fd), 8192);
	CHECK_EQ(fallocate(fd, 0, 10000, 5), 0);
	CHECK_EQ(fsize(fd), 10005);

	/* Punching a hole zeroes the range and keeps the size. */
	for (int i = 0; i < 10005; i += 1000)
		CHECK_EQ(pwrite(fd, "data", 4, i), 4);
	CHECK_EQ(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1000, 5000), 0);
	CHECK_EQ(fsize(fd), 10005);
	CHECK(reads_zero(fd, 1000, 5000));
	CHECK_EQ(pread(fd, buf, 4, 0), 4);
	CHECK_EQ(memcmp(buf, "data", 4), 0);
	CHECK_EQ(pread(fd, buf, 4, 6000), 4);
	CHECK_EQ(memcmp(buf, "data", 4), 0);
	/* Punching past EOF changes nothing. */
	CHECK_EQ(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 9000, 100000), 0);
	CHECK_EQ(fsize(fd), 10005);
	CHECK_EQ(pread(fd, buf, 4, 8000), 4);
	CHECK_EQ(memcmp(buf, "data", 4), 0);
	CHECK(reads_zero(fd, 9000, 1005));

	CHECK_ERR(fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 10), EOPNOTSUPP);
	CHECK_ERR(fallocate(fd, 0, 0, 0), EINVAL);
	CHECK_ERR(fallocate(fd, 0, -1, 10), EINVAL);
	CHECK_ERR(fallocate(fd, 0, 0, -10), EINVAL);
	int ro = open(path, O_RDONLY);
	CHECK_ERR(fallocate(ro, 0, 0, 10), EBADF);
	close(ro);
	int p[2];
	CHECK_EQ(pipe(p), 0);
	CHECK_ERR(fallocate(p[1], 0, 0, 10), ESPIPE);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	snprintf(path, sizeof(path), "/tmp/t_fs_rw.%d", getpid());
	unlink(path);
	int fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
	CHECK(fd >= 0);

	test_write_and_pwrite(fd);
	test_vectored(fd);
	test_holes_and_seek(fd);
	CHECK_EQ(lseek(fd, 12345, SEEK_SET), 12345);
	maybe_save();
	/* The contents and the file position survive. */
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 12345);
	CHECK_EQ(fsize(fd), (1 << 20) + 4);
	char buf[8];
	CHECK_EQ(pread(fd, buf, 8, (1 << 20) - 4), 8);
	CHECK_EQ(memcmp(buf, "\0\0\0\0tail", 8), 0);
	CHECK(reads_zero(fd, 4, BIG - 4));
	test_big_write_reads_back(fd);
	test_ftruncate(fd);
	test_fallocate(fd);

	close(fd);
	CHECK_EQ(unlink(path), 0);
	return check_done();
}
