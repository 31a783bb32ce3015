/*
 * t_getdents: getdents64 on /etc lists ".", "..", passwd, group and hostname with the right
 * d_type and inode numbers; reading through a buffer that holds one entry at a time gives the
 * same listing; rewinding restarts it; a too-small buffer is EINVAL, a file ENOTDIR.
 */
#include "check.h"
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

#define MAXNAMES 256
#define BIGBUF 65536

struct listing {
	int n;
	char names[MAXNAMES][256];
	unsigned char types[MAXNAMES];
	uint64_t inos[MAXNAMES];
};

/* Reads the whole directory with buffers of bufsize bytes; returns the number of calls. */
static int list(int fd, size_t bufsize, struct listing *out)
{
	static char buf[BIGBUF] __attribute__((aligned(8)));
	int calls = 0;
	long n;

	out->n = 0;
	while ((n = syscall(SYS_getdents64, fd, buf, bufsize)) > 0) {
		calls++;
		CHECK(n <= (long)bufsize);
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
			CHECK(d->d_reclen > 0 && d->d_reclen % 8 == 0);
			CHECK(off + d->d_reclen <= n);
			CHECK(memchr(d->d_name, '\0', d->d_reclen - 19) != NULL);
			if (d->d_reclen == 0 || out->n == MAXNAMES)
				return -1;
			snprintf(out->names[out->n], 256, "%s", d->d_name);
			out->types[out->n] = d->d_type;
			out->inos[out->n] = d->d_ino;
			out->n++;
			off += d->d_reclen;
		}
	}
	CHECK_EQ(n, 0);
	return calls;
}

static int find(const struct listing *l, const char *name)
{
	int found = -1;

	for (int i = 0; i < l->n; i++)
		if (strcmp(l->names[i], name) == 0) {
			CHECK(found < 0); /* no duplicates */
			found = i;
		}
	return found;
}

static struct listing big, small, again;

int main(void)
{
	int fd = open("/etc", O_RDONLY | O_DIRECTORY);

	CHECK(fd >= 0);
	CHECK_EQ(list(fd, BIGBUF, &big) > 0, 1);
	const char *expect[] = {".", "..", "passwd", "group", "hostname"};
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		int k = find(&big, expect[i]);
		CHECK(k >= 0);
		if (k < 0)
			continue;
		CHECK_EQ(big.types[k], i < 2 ? DT_DIR : DT_REG);
		CHECK(big.inos[k] != 0);
	}
	struct stat st;
	int k = find(&big, "passwd");
	CHECK_EQ(stat("/etc/passwd", &st), 0);
	if (k >= 0)
		CHECK_EQ(big.inos[k], st.st_ino);
	k = find(&big, ".");
	CHECK_EQ(stat("/etc", &st), 0);
	if (k >= 0)
		CHECK_EQ(big.inos[k], st.st_ino);

	/* At end of directory, further calls keep returning 0. */
	char tiny[64] __attribute__((aligned(8)));
	CHECK_EQ(syscall(SYS_getdents64, fd, tiny, sizeof(tiny)), 0);

	/* Rewind, then one entry per call (each fits in 64 bytes): the same set of names. */
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	int calls = list(fd, 64, &small);
	CHECK_EQ(small.n, big.n);
	CHECK(calls >= big.n / 2);
	for (int i = 0; i < big.n; i++)
		CHECK(find(&small, big.names[i]) >= 0);

	/* Stop halfway, checkpoint, and continue where the listing left off. */
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	long n = syscall(SYS_getdents64, fd, tiny, sizeof(tiny));
	CHECK(n > 0);
	maybe_save();
	list(fd, 64, &again);
	int first = 0;
	for (long off = 0; off < n && off + 19 < (long)sizeof(tiny); first++) {
		struct linux_dirent64 *d = (struct linux_dirent64 *)(tiny + off);
		CHECK(find(&again, d->d_name) < 0);
		off += d->d_reclen ? d->d_reclen : n;
	}
	CHECK_EQ(again.n + first, big.n);

	/* A buffer too small for any entry. */
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_ERR(syscall(SYS_getdents64, fd, tiny, 1), EINVAL);
	CHECK_ERR(syscall(SYS_getdents64, fd, BAD_PTR, 4096), EFAULT);
	close(fd);
	CHECK_ERR(syscall(SYS_getdents64, fd, tiny, sizeof(tiny)), EBADF);

	int file = open("/etc/passwd", O_RDONLY);
	CHECK(file >= 0);
	CHECK_ERR(syscall(SYS_getdents64, file, tiny, sizeof(tiny)), ENOTDIR);
	close(file);

	/* The libc directory stream sees the same names. */
	DIR *d = opendir("/etc");
	CHECK(d != NULL);
	int seen = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		if (find(&big, e->d_name) >= 0)
			seen++;
	CHECK_EQ(seen, big.n);
	if (d)
		closedir(d);
	return check_done();
}
