/*
 * t_aio: Linux native AIO. io_setup gives a context whose id is its ring's address (the ring
 * header libaio reads: magic, at least twice the events asked for); io_submit carries out
 * pwrite, pread, preadv and fsync requests whose completions (data, iocb, result) io_getevents
 * returns in order, and the ring's tail shows them to user space first; IOCB_FLAG_RESFD counts
 * each on an eventfd; a bad descriptor is EBADF, an unknown opcode or reserved bits EINVAL, a
 * bad context EINVAL; an empty ring waits until the timeout, or until another thread submits;
 * io_cancel finds nothing; io_destroy ends the context; a fork's child has none. Completions
 * waiting in the ring are live across a save point.
 */
#include "check.h"
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

/* linux/aio_abi.h's, which musl's headers do not have. */
typedef unsigned long aio_context_t;
enum { IOCB_CMD_PREAD = 0, IOCB_CMD_PWRITE = 1, IOCB_CMD_FSYNC = 2, IOCB_CMD_PREADV = 7 };
#define IOCB_FLAG_RESFD 1
struct io_event {
	uint64_t data, obj;
	int64_t res, res2;
};
struct iocb {
	uint64_t aio_data;
	uint32_t aio_key, aio_rw_flags;
	uint16_t aio_lio_opcode;
	int16_t aio_reqprio;
	uint32_t aio_fildes;
	uint64_t aio_buf, aio_nbytes;
	int64_t aio_offset;
	uint64_t aio_reserved2;
	uint32_t aio_flags, aio_resfd;
};

struct ring_header {
	unsigned id, nr, head, tail, magic, compat, incompat, header_length;
};

static long io_setup_(unsigned n, aio_context_t *c)
{
	return syscall(SYS_io_setup, n, c);
}
static long io_submit_(aio_context_t c, long n, struct iocb **v)
{
	return syscall(SYS_io_submit, c, n, v);
}
static long io_getevents_(aio_context_t c, long min, long n, struct io_event *e, struct timespec *t)
{
	return syscall(SYS_io_getevents, c, min, n, e, t);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static aio_context_t ctx;
static int fd;
static char late_buf[8];
static struct iocb late;

static void *submit_later(void *arg)
{
	(void)arg;
	struct timespec d = {0, 200 * 1000 * 1000};
	nanosleep(&d, NULL);
	struct iocb *v[1] = {&late};
	memset(&late, 0, sizeof(late));
	late.aio_lio_opcode = IOCB_CMD_PREAD;
	late.aio_fildes = (uint32_t)fd;
	late.aio_buf = (uintptr_t)late_buf;
	late.aio_nbytes = 5;
	late.aio_offset = 3;
	late.aio_data = 99;
	return io_submit_(ctx, 1, v) == 1 ? NULL : (void *)1;
}

int main(void)
{
	char path[64], buf[32];
	struct io_event ev[4];

	snprintf(path, sizeof(path), "/tmp/t_aio.%d", getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);

	CHECK_ERR(io_setup_(0, &ctx), EINVAL);
	ctx = 1;
	CHECK_ERR(io_setup_(8, &ctx), EINVAL);
	ctx = 0;
	CHECK_EQ(io_setup_(8, &ctx), 0);
	const struct ring_header *ring = (const void *)(uintptr_t)ctx;
	CHECK_EQ(ring->magic, 0xa10a10a1);
	CHECK(ring->nr >= 16);
	CHECK_EQ(ring->header_length, sizeof(struct ring_header));

	/* A write, then a read of it, one submission. */
	struct iocb w, r, s;
	struct iocb *v[3] = {&w, &r, &s};
	memset(&w, 0, sizeof(w));
	w.aio_lio_opcode = IOCB_CMD_PWRITE;
	w.aio_fildes = (uint32_t)fd;
	w.aio_buf = (uintptr_t) "hello aio";
	w.aio_nbytes = 9;
	w.aio_offset = 3;
	w.aio_data = 11;
	memset(&r, 0, sizeof(r));
	r.aio_lio_opcode = IOCB_CMD_PREAD;
	r.aio_fildes = (uint32_t)fd;
	r.aio_buf = (uintptr_t)buf;
	r.aio_nbytes = sizeof(buf);
	r.aio_offset = 3;
	r.aio_data = 22;
	memset(&s, 0, sizeof(s));
	s.aio_lio_opcode = IOCB_CMD_FSYNC;
	s.aio_fildes = (uint32_t)fd;
	s.aio_data = 33;
	CHECK_EQ(io_submit_(ctx, 3, v), 3);
	/* Seen in the ring by user space (Linux may finish the fsync a moment later). */
	CHECK((ring->tail - ring->head + ring->nr) % ring->nr >= 2);
	maybe_save(); /* completions waiting in the ring */
	CHECK_EQ(io_getevents_(ctx, 3, 4, ev, NULL), 3);
	CHECK_EQ(ev[0].data, 11);
	CHECK_EQ(ev[0].obj, (uintptr_t)&w);
	CHECK_EQ(ev[0].res, 9);
	CHECK_EQ(ev[1].data, 22);
	CHECK_EQ(ev[1].res, 9);
	CHECK(!memcmp(buf, "hello aio", 9));
	CHECK_EQ(ev[2].data, 33);
	CHECK_EQ(ev[2].res, 0);
	CHECK_EQ(ring->head, ring->tail);

	/* preadv, counted on an eventfd. */
	int efd = eventfd(0, EFD_NONBLOCK);
	char a[5] = {0}, b[4] = {0};
	struct iovec iov[2] = {{a, 5}, {b, 4}};
	memset(&r, 0, sizeof(r));
	r.aio_lio_opcode = IOCB_CMD_PREADV;
	r.aio_fildes = (uint32_t)fd;
	r.aio_buf = (uintptr_t)iov;
	r.aio_nbytes = 2;
	r.aio_offset = 3;
	r.aio_flags = IOCB_FLAG_RESFD;
	r.aio_resfd = (uint32_t)efd;
	CHECK_EQ(io_submit_(ctx, 1, v + 1), 1);
	uint64_t count = 0;
	CHECK_EQ(read(efd, &count, sizeof(count)), 8);
	CHECK_EQ(count, 1);
	CHECK_EQ(io_getevents_(ctx, 1, 1, ev, NULL), 1);
	CHECK_EQ(ev[0].res, 9);
	CHECK(!memcmp(a, "hello", 5) && !memcmp(b, " aio", 4));

	/* Refused at submission. */
	memset(&r, 0, sizeof(r));
	r.aio_lio_opcode = IOCB_CMD_PREAD;
	r.aio_fildes = 999;
	r.aio_buf = (uintptr_t)buf;
	r.aio_nbytes = 1;
	CHECK_ERR(io_submit_(ctx, 1, v + 1), EBADF);
	r.aio_fildes = (uint32_t)fd;
	r.aio_lio_opcode = 77;
	CHECK_ERR(io_submit_(ctx, 1, v + 1), EINVAL);
	r.aio_lio_opcode = IOCB_CMD_PREAD;
	r.aio_reserved2 = 1;
	CHECK_ERR(io_submit_(ctx, 1, v + 1), EINVAL);
	r.aio_reserved2 = 0;
	CHECK_ERR(io_submit_(ctx, -1, v + 1), EINVAL);
	CHECK_ERR(io_submit_(ctx + 4096, 1, v + 1), EINVAL);
	CHECK_ERR(io_getevents_(ctx, 2, 1, ev, NULL), EINVAL);

	/* Nothing there: the timeout, then a submission by another thread. */
	struct timespec t50 = {0, 50 * 1000 * 1000};
	long long t0 = now_ms();
	CHECK_EQ(io_getevents_(ctx, 1, 1, ev, &t50), 0);
	CHECK(now_ms() - t0 >= 45);
	pthread_t th;
	CHECK_EQ(pthread_create(&th, NULL, submit_later, NULL), 0);
	CHECK_EQ(io_getevents_(ctx, 1, 1, ev, NULL), 1);
	void *ret;
	CHECK_EQ(pthread_join(th, &ret), 0);
	CHECK(ret == NULL);
	CHECK_EQ(ev[0].data, 99);
	CHECK(!memcmp(late_buf, "hello", 5));

	/* Nothing to cancel; no context in a child; destroyed. */
	CHECK_ERR(syscall(SYS_io_cancel, ctx, &late, ev), EINVAL);
	pid_t pid = fork();
	if (pid == 0) {
		struct iocb *one[1] = {&late};
		_exit(io_submit_(ctx, 1, one) == -1 && errno == EINVAL ? 0 : 1);
	}
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(syscall(SYS_io_destroy, ctx), 0);
	CHECK_ERR(syscall(SYS_io_destroy, ctx), EINVAL);
	CHECK_ERR(io_submit_(ctx, 1, v), EINVAL);

	close(efd);
	close(fd);
	unlink(path);
	return check_done();
}
