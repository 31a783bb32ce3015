/*
 * t_iovec: the iovec arrays of readv, writev, preadv and sendmsg are checked as Linux's
 * import_iovec checks them. More than 1024 entries, or a length past SSIZE_MAX, is EINVAL,
 * before any address is looked at. A segment reaching past the top of user space is EFAULT,
 * even an empty one at a kernel address, so lengths whose sum would overflow ssize_t are
 * EFAULT too. Only the low 32 bits of the count count. The descriptor's access mode is checked
 * before the array, and good iovecs move their bytes in order.
 */
#include "check.h"
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

static char buf[64];

int main(void)
{
	int p[2], file = open("/etc/passwd", O_RDONLY);
	CHECK(file >= 0);
	CHECK_EQ(pipe(p), 0);

	/* Two lengths that are each fine for ssize_t and overflow it together. */
	struct iovec halves[2] = {{buf, (size_t)SSIZE_MAX / 2 + 1},
				  {buf, (size_t)SSIZE_MAX / 2 + 1}};
	CHECK_ERR(syscall(SYS_writev, p[1], halves, 2), EFAULT);
	CHECK_ERR(syscall(SYS_readv, p[0], halves, 2), EFAULT);
	CHECK_ERR(syscall(SYS_preadv, file, halves, 2, 0L, 0L), EFAULT);

	struct iovec negative[2] = {{buf, 4}, {buf, (size_t)-1}};
	CHECK_ERR(syscall(SYS_writev, p[1], negative, 2), EINVAL);
	CHECK_ERR(syscall(SYS_readv, p[0], negative, 2), EINVAL);
	struct iovec bad_then_negative[2] = {{BAD_PTR, 4}, {buf, (size_t)-1}};
	CHECK_ERR(syscall(SYS_writev, p[1], bad_then_negative, 2), EINVAL);
	/* The read end is not open for writing: the mode is checked before the iovecs. */
	CHECK_ERR(syscall(SYS_writev, p[0], negative, 2), EBADF);

	struct iovec past_top[2] = {{buf, 4}, {buf, (size_t)1 << 48}};
	CHECK_ERR(syscall(SYS_writev, p[1], past_top, 2), EFAULT);
	struct iovec kernel_empty[1] = {{(void *)-4096L, 0}};
	CHECK_ERR(syscall(SYS_writev, p[1], kernel_empty, 1), EFAULT);

	CHECK_ERR(syscall(SYS_writev, p[1], negative, 1025), EINVAL);
	CHECK_ERR(syscall(SYS_writev, p[1], negative, -1L), EINVAL);
	memcpy(buf, "vectored", 8);
	CHECK_EQ(syscall(SYS_writev, p[1], negative, (1L << 32) + 1), 4); /* "vect" */

	struct iovec parts[3] = {{buf + 4, 2}, {NULL, 0}, {buf + 6, 2}};
	CHECK_EQ(syscall(SYS_writev, p[1], parts, 3), 4);
	maybe_save();
	char got[16] = {0};
	struct iovec in[2] = {{got, 2}, {got + 2, 14}};
	CHECK_EQ(syscall(SYS_readv, p[0], in, 2), 8);
	CHECK_STREQ(got, "vectored");

	int sv[2];
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	struct msghdr mh = {.msg_iov = halves, .msg_iovlen = 2};
	CHECK_ERR(syscall(SYS_sendmsg, sv[0], &mh, MSG_DONTWAIT), EFAULT);
	mh.msg_iov = negative;
	CHECK_ERR(syscall(SYS_sendmsg, sv[0], &mh, MSG_DONTWAIT), EINVAL);
	CHECK_ERR(syscall(SYS_sendmsg, p[0], &mh, MSG_DONTWAIT), ENOTSOCK);
	mh.msg_iov = past_top;
	CHECK_ERR(syscall(SYS_sendmsg, sv[0], &mh, MSG_DONTWAIT), EFAULT);
	mh.msg_iovlen = 1025;
	CHECK_ERR(syscall(SYS_sendmsg, sv[0], &mh, MSG_DONTWAIT), EMSGSIZE);
	return check_done();
}
