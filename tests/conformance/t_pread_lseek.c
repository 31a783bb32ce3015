/*
 * t_pread_lseek: pread64 reads at an offset without moving the file position, readv
 * scatters one read over several buffers, lseek's SEEK_SET/CUR/END agree with the size from
 * fstat, seeking past EOF is allowed and reads 0; negative offsets and bad whence give EINVAL.
 */
#include "check.h"
/* Negative values are passed as long: syscall() is variadic and the kernel reads 64 bits. */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>

int main(void)
{
	char whole[8192], buf[64];
	struct stat st;
	int fd = open("/etc/passwd", O_RDONLY);

	CHECK(fd >= 0);
	CHECK_EQ(fstat(fd, &st), 0);
	ssize_t n = read(fd, whole, sizeof(whole));
	CHECK_EQ(n, st.st_size);
	CHECK(n > 20);

	CHECK_EQ(syscall(SYS_lseek, fd, 0, SEEK_CUR), n);
	CHECK_EQ(syscall(SYS_lseek, fd, 0, SEEK_END), st.st_size);
	CHECK_EQ(syscall(SYS_lseek, fd, (long)-5, SEEK_END), n - 5);
	CHECK_EQ(read(fd, buf, sizeof(buf)), 5);
	CHECK(memcmp(buf, whole + n - 5, 5) == 0);
	CHECK_EQ(syscall(SYS_lseek, fd, 3, SEEK_SET), 3);
	CHECK_EQ(syscall(SYS_lseek, fd, 4, SEEK_CUR), 7);
	CHECK_EQ(syscall(SYS_lseek, fd, (long)-2, SEEK_CUR), 5);

	/* pread leaves the position at 5. */
	CHECK_EQ(syscall(SYS_pread64, fd, buf, 10, 10), 10);
	CHECK(memcmp(buf, whole + 10, 10) == 0);
	CHECK_EQ(pread(fd, buf, 4, 1), 4);
	CHECK(memcmp(buf, whole + 1, 4) == 0);
	CHECK_EQ(syscall(SYS_lseek, fd, 0, SEEK_CUR), 5);
	CHECK_EQ(syscall(SYS_pread64, fd, buf, sizeof(buf), n - 3), 3);
	CHECK_EQ(syscall(SYS_pread64, fd, buf, sizeof(buf), n + 100), 0);
	CHECK_ERR(syscall(SYS_pread64, fd, buf, 1, (long)-1), EINVAL);

	maybe_save();
	/* The file position survives a checkpoint. */
	CHECK_EQ(read(fd, buf, 2), 2);
	CHECK(memcmp(buf, whole + 5, 2) == 0);

	/* readv fills the buffers in order: 3 + 0 + 5 + 100 bytes from offset 7. */
	char v1[3], v3[5], v4[100];
	struct iovec iov[4] = {{v1, sizeof(v1)}, {NULL, 0}, {v3, sizeof(v3)}, {v4, sizeof(v4)}};
	ssize_t want = n - 7 < 108 ? n - 7 : 108;
	CHECK_EQ(syscall(SYS_readv, fd, iov, 4), want);
	CHECK(memcmp(v1, whole + 7, 3) == 0);
	CHECK(memcmp(v3, whole + 10, 5) == 0);
	CHECK(memcmp(v4, whole + 15, want - 8) == 0);
	CHECK_EQ(syscall(SYS_lseek, fd, 0, SEEK_CUR), 7 + want);
	CHECK_ERR(syscall(SYS_readv, fd, iov, (long)-1), EINVAL);
	CHECK_ERR(syscall(SYS_readv, fd, iov, 1025), EINVAL);

	/* Past EOF is a valid position; reading there gives 0. */
	CHECK_EQ(syscall(SYS_lseek, fd, n + 1000, SEEK_SET), n + 1000);
	CHECK_EQ(read(fd, buf, sizeof(buf)), 0);
	CHECK_ERR(syscall(SYS_lseek, fd, (long)-1, SEEK_SET), EINVAL);
	CHECK_ERR(syscall(SYS_lseek, fd, (long)-(n + 1001), SEEK_CUR), EINVAL);
	CHECK_ERR(syscall(SYS_lseek, fd, 0, 42), EINVAL);
	CHECK_EQ(syscall(SYS_lseek, fd, 0, SEEK_CUR), n + 1000);

	close(fd);
	CHECK_ERR(syscall(SYS_lseek, fd, 0, SEEK_SET), EBADF);
	CHECK_ERR(syscall(SYS_pread64, fd, buf, 1, 0), EBADF);
	return check_done();
}
