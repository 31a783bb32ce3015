/*
 * t_inet_oob_inline: TCP urgent data to a receiver that set SO_OOBINLINE arrives in line, in
 * order, after what was sent before it (ftplib's ABOR is sent so). The sender's send with
 * MSG_OOB returns the whole length.
 * conformance: no-save the connection is short-lived; t_inet_tcp saves TCP connections
 */
#include "check.h"
#include "inet.h"

/* Reads exactly N bytes (Linux stops a read at the urgent mark). */
static int read_n(int fd, char *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

int main(void)
{
	int cli, srv, one = 1;
	char buf[64];

	CHECK_EQ(tcp_pair(&cli, &srv), 0);
	CHECK_EQ(setsockopt(srv, SOL_SOCKET, SO_OOBINLINE, &one, sizeof(one)), 0);
	CHECK_EQ(send(cli, "RETR x\r\n", 8, 0), 8);
	CHECK_EQ(send(cli, "ABOR\r\n", 6, MSG_OOB), 6);
	CHECK_EQ(send(cli, "QUIT\r\n", 6, 0), 6);
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(read_n(srv, buf, 20), 0);
	CHECK_STREQ(buf, "RETR x\r\nABOR\r\nQUIT\r\n");

	/* And the other way round: the client sets it too. */
	CHECK_EQ(setsockopt(cli, SOL_SOCKET, SO_OOBINLINE, &one, sizeof(one)), 0);
	CHECK_EQ(send(srv, "!", 1, MSG_OOB), 1);
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(read_n(cli, buf, 1), 0);
	CHECK_STREQ(buf, "!");
	close(cli);
	close(srv);
	return check_done();
}
