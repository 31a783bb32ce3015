/*
 * t_getdents_old: the old getdents (struct linux_dirent, d_type in the record's last byte)
 * lists a directory exactly as getdents64 does: the same names, inode numbers, types, offsets
 * and record lengths, in the same order, through a big buffer or one entry at a time, and it
 * goes on where it was across a checkpoint. A buffer too small for an entry is EINVAL, a file
 * ENOTDIR, a bad descriptor EBADF, a bad buffer EFAULT.
 */
#include "check.h"
#include "scratch.h"
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

struct old_dirent {
	unsigned long d_ino;
	unsigned long d_off;
	unsigned short d_reclen;
	char d_name[];
};

struct new_dirent {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

#define MAXN 64

struct entry {
	char name[64];
	uint64_t ino;
	int64_t off;
	unsigned reclen;
	unsigned char type;
};

static char buf[8192] __attribute__((aligned(8)));

/* One call's records into E (from *N on). */
static long read_once(int fd, bool old, size_t size, struct entry *e, int *n)
{
	long got = syscall(old ? SYS_getdents : SYS_getdents64, fd, buf, size);

	for (long at = 0; at < got && *n < MAXN;) {
		struct entry *x = &e[(*n)++];
		if (old) {
			struct old_dirent *d = (struct old_dirent *)(buf + at);
			snprintf(x->name, sizeof(x->name), "%s", d->d_name);
			x->ino = d->d_ino;
			x->off = (int64_t)d->d_off;
			x->reclen = d->d_reclen;
			x->type = (unsigned char)buf[at + d->d_reclen - 1];
			CHECK(strlen(d->d_name) + 1 <= d->d_reclen - 18u - 1);
		} else {
			struct new_dirent *d = (struct new_dirent *)(buf + at);
			snprintf(x->name, sizeof(x->name), "%s", d->d_name);
			x->ino = d->d_ino;
			x->off = d->d_off;
			x->reclen = d->d_reclen;
			x->type = d->d_type;
		}
		CHECK(x->reclen % 8 == 0 && x->reclen > 0);
		at += x->reclen;
	}
	return got;
}

static int list(int fd, bool old, size_t size, struct entry *e)
{
	int n = 0;

	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	while (read_once(fd, old, size, e, &n) > 0)
		;
	return n;
}

static void same(const struct entry *a, int na, const struct entry *b, int nb)
{
	CHECK_EQ(na, nb);
	for (int i = 0; i < na && i < nb; i++) {
		CHECK_STREQ(a[i].name, b[i].name);
		CHECK_EQ(a[i].ino, b[i].ino);
		CHECK_EQ(a[i].off, b[i].off);
		CHECK_EQ(a[i].reclen, b[i].reclen);
		CHECK_EQ(a[i].type, b[i].type);
	}
}

static struct entry e64[MAXN], eold[MAXN], esmall[MAXN], eresumed[MAXN];

int main(void)
{
	scratch_enter("t_getdents_old");
	/* Names of every length from 1 to 12 cover every padding; and each type. */
	char name[32];
	for (int len = 1; len <= 12; len++) {
		memset(name, 'a' + len, len);
		name[len] = 0;
		int fd = open(name, O_CREAT | O_WRONLY, 0644);
		CHECK(fd >= 0);
		close(fd);
	}
	CHECK_EQ(mkdir("subdir", 0755), 0);
	CHECK_EQ(symlink("target", "link"), 0);
	CHECK_EQ(mkfifo("fifo", 0644), 0);

	int dir = open(".", O_RDONLY | O_DIRECTORY);
	CHECK(dir >= 0);
	int n64 = list(dir, false, sizeof(buf), e64);
	int nold = list(dir, true, sizeof(buf), eold);
	CHECK_EQ(n64, 12 + 3 + 2);
	same(e64, n64, eold, nold);
	for (int i = 0; i < nold; i++) {
		if (!strcmp(eold[i].name, "subdir") || !strcmp(eold[i].name, "."))
			CHECK_EQ(eold[i].type, DT_DIR);
		if (!strcmp(eold[i].name, "link"))
			CHECK_EQ(eold[i].type, DT_LNK);
		if (!strcmp(eold[i].name, "fifo"))
			CHECK_EQ(eold[i].type, DT_FIFO);
		if (!strcmp(eold[i].name, "b") || !strcmp(eold[i].name, "mmmmmmmmmmmm"))
			CHECK_EQ(eold[i].type, DT_REG);
	}

	/* The host's files under the overlay, and a synthetic directory, alike. */
	const char *others[] = {"/etc", "/proc/self", "/dev"};
	/* (Natively the chroot has no /proc, and /dev may be empty.) */
	for (size_t k = 0; k < (in_sandbox() ? sizeof(others) / sizeof(others[0]) : 1); k++) {
		int o = open(others[k], O_RDONLY | O_DIRECTORY);
		CHECK(o >= 0);
		int a = list(o, false, sizeof(buf), e64), b = list(o, true, sizeof(buf), eold);
		CHECK(a > 2);
		same(e64, a, eold, b);
		close(o);
	}
	n64 = list(dir, false, sizeof(buf), e64);

	/* One entry at a time: 40 bytes hold one record (at most 32 bytes here), never two. */
	CHECK_EQ(lseek(dir, 0, SEEK_SET), 0);
	int nsmall = 0;
	long got;
	while ((got = read_once(dir, true, 40, esmall, &nsmall)) > 0)
		CHECK(got <= 40);
	CHECK_EQ(got, 0);
	same(e64, n64, esmall, nsmall);

	/* Halfway through, a checkpoint: the listing goes on where it was. */
	CHECK_EQ(lseek(dir, 0, SEEK_SET), 0);
	int nres = 0;
	for (int i = 0; i < 5; i++)
		CHECK(read_once(dir, true, 40, eresumed, &nres) > 0);
	maybe_save();
	while (read_once(dir, true, sizeof(buf), eresumed, &nres) > 0)
		;
	same(e64, n64, eresumed, nres);

	/* Errors. */
	CHECK_EQ(lseek(dir, 0, SEEK_SET), 0);
	CHECK_ERR(syscall(SYS_getdents, dir, buf, 10), EINVAL);
	CHECK_ERR(syscall(SYS_getdents, dir, BAD_PTR, sizeof(buf)), EFAULT);
	CHECK_ERR(syscall(SYS_getdents, 999, buf, sizeof(buf)), EBADF);
	int file = open("b", O_RDONLY);
	CHECK(file >= 0);
	CHECK_ERR(syscall(SYS_getdents, file, buf, sizeof(buf)), ENOTDIR);
	close(file);
	close(dir);
	scratch_leave();
	return check_done();
}
