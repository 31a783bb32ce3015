/*
 * t_inotify: inotify instances and watches (man 7 inotify). The events each file and
 * directory operation gives a watch on the object and on its directory, in Linux's order
 * (the directory's event, with the name, before the object's own); rename halves paired by
 * one cookie; IN_DELETE_SELF and IN_IGNORED when a watched inode goes (at the last close of
 * an unlinked file); IN_ONESHOT, IN_MASK_ADD, IN_MASK_CREATE, IN_EXCL_UNLINK, IN_DONT_FOLLOW,
 * IN_ONLYDIR; inotify_rm_watch; read(2) of whole records (EINVAL when the first does not fit),
 * FIONREAD, poll, coalescing of identical events, IN_Q_OVERFLOW; a blocked reader woken by an
 * event; the errors of the three calls. Checkpoints are taken with watches and unread events.
 */
#include "check.h"
#include "scratch.h"
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1) /* musl's headers lack it */
#endif

struct want {
	int wd;
	uint32_t mask;
	const char *name; /* NULL: no name */
};

struct got {
	int wd;
	uint32_t mask, cookie, len;
	char name[NAME_MAX + 1];
};

#define MAX_GOT 64

/* Reads what is queued on non-blocking FD. */
static int drain(int fd, struct got *out, int max)
{
	char buf[4096] __attribute__((aligned(8)));
	int n = 0;

	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));
		if (r < 0) {
			CHECK_EQ(errno, EAGAIN);
			return n;
		}
		for (char *p = buf; p < buf + r;) {
			struct inotify_event *e = (struct inotify_event *)p;
			if (n < max) {
				out[n].wd = e->wd;
				out[n].mask = e->mask;
				out[n].cookie = e->cookie;
				out[n].len = e->len;
				snprintf(out[n].name, sizeof(out[n].name), "%s",
					 e->len ? e->name : "");
			}
			n++;
			p += sizeof(*e) + e->len;
		}
	}
}

/* The events queued on FD must be exactly W (ended by {0}); returns them in G for cookies. */
#define EXPECT(fd, g, ...) expect_(__LINE__, fd, g, (const struct want[]){__VA_ARGS__, {0, 0, 0}})

static void expect_(int line, int fd, struct got *g, const struct want *w)
{
	struct got local[MAX_GOT];
	int n, nw = 0;
	bool ok = true;

	if (!g)
		g = local;
	n = drain(fd, g, MAX_GOT);
	while (w[nw].wd || w[nw].mask)
		nw++;
	if (n != nw)
		ok = false;
	for (int i = 0; ok && i < n; i++) {
		const char *name = w[i].name ? w[i].name : "";
		if (g[i].wd != w[i].wd || g[i].mask != w[i].mask || strcmp(g[i].name, name) ||
		    (w[i].name ? g[i].len % 16 || g[i].len <= strlen(name) : g[i].len != 0))
			ok = false;
	}
	if (ok)
		return;
	check_failures++;
	dprintf(1, "t_inotify.c:%d: events differ; wanted:\n", line);
	for (int i = 0; i < nw; i++)
		dprintf(1, "  wd %d mask %#x name '%s'\n", w[i].wd, w[i].mask,
			w[i].name ? w[i].name : "");
	dprintf(1, " got:\n");
	for (int i = 0; i < n && i < MAX_GOT; i++)
		dprintf(1, "  wd %d mask %#x cookie %u len %u name '%s'\n", g[i].wd, g[i].mask,
			g[i].cookie, g[i].len, g[i].name);
}

#define NONE(fd) EXPECT(fd, NULL, {0, 0, 0})

static void touch(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY, 0644);

	CHECK(fd >= 0);
	close(fd);
}

static void test_init(void)
{
	char buf[64], link[32];
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), fd2;
	ssize_t n;

	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK), O_RDONLY | O_NONBLOCK);
	CHECK_ERR(inotify_init1(IN_NONBLOCK | 1), EINVAL);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EAGAIN);
	CHECK_ERR(write(fd, buf, 1), EBADF);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_ERR(pread(fd, buf, sizeof(buf), 0), ESPIPE);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n >= 0 || in_sandbox()) {
		CHECK(n > 0);
		buf[n > 0 ? n : 0] = 0;
		CHECK_STREQ(buf, "anon_inode:inotify");
	}
	fd2 = syscall(SYS_inotify_init);
	CHECK(fd2 >= 0);
	CHECK_EQ(fcntl(fd2, F_GETFD), 0);
	CHECK_EQ(fcntl(fd2, F_GETFL) & O_NONBLOCK, 0);
	close(fd2);
	close(fd);
}

static void test_add_watch_errors(void)
{
	int fd = inotify_init1(IN_NONBLOCK), pfd[2], w, w2;

	CHECK(fd >= 0);
	CHECK_EQ(mkdir("d", 0755), 0);
	touch("d/f");
	CHECK_EQ(symlink("f", "d/l"), 0);
	CHECK_EQ(pipe(pfd), 0);

	CHECK_ERR(inotify_add_watch(fd, "d", 0), EINVAL);
	CHECK_ERR(inotify_add_watch(fd, "d", IN_MODIFY | IN_MASK_ADD | IN_MASK_CREATE), EINVAL);
	CHECK_ERR(inotify_add_watch(-1, "d", IN_MODIFY), EBADF);
	CHECK_ERR(inotify_add_watch(pfd[0], "d", IN_MODIFY), EINVAL);
	CHECK_ERR(inotify_add_watch(fd, "", IN_MODIFY), ENOENT);
	CHECK_ERR(inotify_add_watch(fd, "d/missing", IN_MODIFY), ENOENT);
	CHECK_ERR(inotify_add_watch(fd, "d/f", IN_MODIFY | IN_ONLYDIR), ENOTDIR);
	CHECK_ERR(inotify_add_watch(fd, BAD_PTR, IN_MODIFY), EFAULT);
	CHECK_ERR(inotify_rm_watch(fd, 1), EINVAL);
	CHECK_ERR(inotify_rm_watch(pfd[0], 1), EINVAL);
	CHECK_ERR(inotify_rm_watch(-1, 1), EBADF);

	/* One inode, one watch descriptor: through a symlink too, unless IN_DONT_FOLLOW. */
	w = inotify_add_watch(fd, "d/f", IN_MODIFY);
	CHECK(w >= 1);
	CHECK_EQ(inotify_add_watch(fd, "d/l", IN_ATTRIB), w);
	CHECK_ERR(inotify_add_watch(fd, "d/f", IN_ATTRIB | IN_MASK_CREATE), EEXIST);
	w2 = inotify_add_watch(fd, "d/l", IN_ATTRIB | IN_DONT_FOLLOW);
	CHECK(w2 > w);
	CHECK_EQ(inotify_add_watch(fd, "d", IN_ONLYDIR | IN_CREATE), w2 + 1);
	/* A mask with only a flag bit is still a mask (Linux takes it). */
	CHECK_EQ(inotify_add_watch(fd, "d", IN_DONT_FOLLOW), w2 + 1);

	/* Read permission on the object is needed. */
	CHECK_EQ(chmod("d/f", 0600), 0);
	pid_t pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(2);
		int r = inotify_add_watch(fd, "d/f", IN_MODIFY);
		_exit(r == -1 && errno == EACCES ? 0 : 1);
	}
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	close(pfd[0]);
	close(pfd[1]);
	close(fd);
	CHECK_EQ(unlink("d/l"), 0);
	CHECK_EQ(unlink("d/f"), 0);
	CHECK_EQ(rmdir("d"), 0);
}

/* A file and its directory watched: what each operation says to both. */
static void test_file_events(void)
{
	int fd = inotify_init1(IN_NONBLOCK), f, wd, wf;
	char c;

	CHECK_EQ(mkdir("d", 0755), 0);
	wd = inotify_add_watch(fd, "d", IN_ALL_EVENTS);
	CHECK(wd >= 1);
	f = open("d/f", O_CREAT | O_RDWR, 0644);
	CHECK(f >= 0);
	EXPECT(fd, NULL, {wd, IN_CREATE, "f"}, {wd, IN_OPEN, "f"});
	wf = inotify_add_watch(fd, "d/f", IN_ALL_EVENTS);
	CHECK(wf > wd);

	CHECK_EQ(write(f, "ab", 2), 2);
	CHECK_EQ(pread(f, &c, 1, 0), 1);
	CHECK_EQ(close(f), 0);
	maybe_save(); /* watches and six unread events */
	/* The restored watch is still the inode's. */
	CHECK_EQ(inotify_add_watch(fd, "d/f", IN_ALL_EVENTS), wf);
	EXPECT(fd, NULL, {wd, IN_MODIFY, "f"}, {wf, IN_MODIFY, NULL}, {wd, IN_ACCESS, "f"},
	       {wf, IN_ACCESS, NULL}, {wd, IN_CLOSE_WRITE, "f"}, {wf, IN_CLOSE_WRITE, NULL});

	CHECK_EQ(chmod("d/f", 0600), 0);
	CHECK_EQ(truncate("d/f", 1), 0);
	CHECK_EQ(utimensat(AT_FDCWD, "d/f", NULL, 0), 0);
	EXPECT(fd, NULL, {wd, IN_ATTRIB, "f"}, {wf, IN_ATTRIB, NULL}, {wd, IN_MODIFY, "f"},
	       {wf, IN_MODIFY, NULL}, {wd, IN_ATTRIB, "f"}, {wf, IN_ATTRIB, NULL});

	/* O_TRUNC: the open, then the truncation. */
	f = open("d/f", O_WRONLY | O_TRUNC);
	CHECK(f >= 0);
	close(f);
	f = open("d/f", O_RDONLY);
	CHECK(f >= 0);
	close(f);
	EXPECT(fd, NULL, {wd, IN_OPEN, "f"}, {wf, IN_OPEN, NULL}, {wd, IN_MODIFY, "f"},
	       {wf, IN_MODIFY, NULL}, {wd, IN_CLOSE_WRITE, "f"}, {wf, IN_CLOSE_WRITE, NULL},
	       {wd, IN_OPEN, "f"}, {wf, IN_OPEN, NULL}, {wd, IN_CLOSE_NOWRITE, "f"},
	       {wf, IN_CLOSE_NOWRITE, NULL});

	/* Link counts: IN_ATTRIB to the file alone; its last name takes the watch with it. */
	CHECK_EQ(link("d/f", "d/g"), 0);
	CHECK_EQ(unlink("d/g"), 0);
	EXPECT(fd, NULL, {wf, IN_ATTRIB, NULL}, {wd, IN_CREATE, "g"}, {wf, IN_ATTRIB, NULL},
	       {wd, IN_DELETE, "g"});
	/* The last of two names, the watched one gone first. */
	CHECK_EQ(link("d/f", "d/g"), 0);
	CHECK_EQ(unlink("d/f"), 0);
	EXPECT(fd, NULL, {wf, IN_ATTRIB, NULL}, {wd, IN_CREATE, "g"}, {wf, IN_ATTRIB, NULL},
	       {wd, IN_DELETE, "f"});
	maybe_save(); /* a watch on a removed name whose inode has another */
	CHECK_EQ(unlink("d/g"), 0);
	EXPECT(fd, NULL, {wf, IN_ATTRIB, NULL}, {wf, IN_DELETE_SELF, NULL}, {wf, IN_IGNORED, NULL},
	       {wd, IN_DELETE, "g"});
	CHECK_ERR(inotify_rm_watch(fd, wf), EINVAL);

	/* An unlinked file still open: its inode goes at the last close. */
	touch("d/h");
	int wh = inotify_add_watch(fd, "d/h", IN_ALL_EVENTS);
	f = open("d/h", O_RDONLY);
	CHECK_EQ(unlink("d/h"), 0);
	EXPECT(fd, NULL, {wd, IN_CREATE, "h"}, {wd, IN_OPEN, "h"}, {wd, IN_CLOSE_WRITE, "h"},
	       {wd, IN_OPEN, "h"}, {wh, IN_OPEN, NULL}, {wh, IN_ATTRIB, NULL},
	       {wd, IN_DELETE, "h"});
	maybe_save(); /* a watch whose file has no name left */
	CHECK_EQ(close(f), 0);
	EXPECT(fd, NULL, {wd, IN_CLOSE_NOWRITE, "h"}, {wh, IN_CLOSE_NOWRITE, NULL},
	       {wh, IN_DELETE_SELF, NULL}, {wh, IN_IGNORED, NULL});

	CHECK_EQ(rmdir("d"), 0);
	EXPECT(fd, NULL, {wd, IN_DELETE_SELF, NULL}, {wd, IN_IGNORED, NULL});
	close(fd);
}

/* Directory entries of every kind, a directory's own events, and a watched directory's end. */
static void test_dir_events(void)
{
	int fd = inotify_init1(IN_NONBLOCK), wd, ws, s, dfd;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char buf[1024];

	CHECK_EQ(mkdir("d", 0755), 0);
	wd = inotify_add_watch(fd, "d", IN_ALL_EVENTS);
	CHECK_EQ(mkdir("d/s", 0755), 0);
	CHECK_EQ(symlink("s", "d/l"), 0);
	CHECK_EQ(mkfifo("d/p", 0644), 0);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "d/sock");
	CHECK_EQ(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(s);
	EXPECT(fd, NULL, {wd, IN_CREATE | IN_ISDIR, "s"}, {wd, IN_CREATE, "l"},
	       {wd, IN_CREATE, "p"}, {wd, IN_CREATE, "sock"});

	/* Listing the directory: its own open, access and close, with IN_ISDIR. */
	dfd = open("d", O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	CHECK(syscall(SYS_getdents64, dfd, buf, sizeof(buf)) > 0);
	close(dfd);
	EXPECT(fd, NULL, {wd, IN_OPEN | IN_ISDIR, NULL}, {wd, IN_ACCESS | IN_ISDIR, NULL},
	       {wd, IN_CLOSE_NOWRITE | IN_ISDIR, NULL});

	/* A subdirectory's own events reach its parent with its name. */
	ws = inotify_add_watch(fd, "d/s", IN_ALL_EVENTS);
	CHECK_EQ(chmod("d/s", 0700), 0);
	EXPECT(fd, NULL, {wd, IN_ATTRIB | IN_ISDIR, "s"}, {ws, IN_ATTRIB | IN_ISDIR, NULL});
	CHECK_EQ(rmdir("d/s"), 0);
	EXPECT(fd, NULL, {ws, IN_DELETE_SELF, NULL}, {ws, IN_IGNORED, NULL},
	       {wd, IN_DELETE | IN_ISDIR, "s"});
	CHECK_EQ(unlink("d/l"), 0);
	CHECK_EQ(unlink("d/p"), 0);
	CHECK_EQ(unlink("d/sock"), 0);
	EXPECT(fd, NULL, {wd, IN_DELETE, "l"}, {wd, IN_DELETE, "p"}, {wd, IN_DELETE, "sock"});
	CHECK_EQ(rmdir("d"), 0);
	EXPECT(fd, NULL, {wd, IN_DELETE_SELF, NULL}, {wd, IN_IGNORED, NULL});
	close(fd);
}

static void test_rename(void)
{
	int fd = inotify_init1(IN_NONBLOCK), wa, wb, wx, wy;
	struct got g[MAX_GOT];

	CHECK_EQ(mkdir("a", 0755), 0);
	CHECK_EQ(mkdir("b", 0755), 0);
	touch("a/x");
	touch("b/y");
	wa = inotify_add_watch(fd, "a", IN_ALL_EVENTS & ~(IN_OPEN | IN_CLOSE | IN_ACCESS));
	wb = inotify_add_watch(fd, "b", IN_ALL_EVENTS & ~(IN_OPEN | IN_CLOSE | IN_ACCESS));
	wx = inotify_add_watch(fd, "a/x", IN_ALL_EVENTS);
	wy = inotify_add_watch(fd, "b/y", IN_ALL_EVENTS);

	CHECK_EQ(rename("a/x", "b/x"), 0);
	maybe_save(); /* a rename's two halves unread */
	EXPECT(fd, g, {wa, IN_MOVED_FROM, "x"}, {wb, IN_MOVED_TO, "x"}, {wx, IN_MOVE_SELF, NULL});
	uint32_t c1 = g[0].cookie;
	CHECK(c1 != 0);
	CHECK_EQ(g[1].cookie, c1);
	CHECK_EQ(g[2].cookie, 0);

	/* Over another file: that one's link count, then its end. */
	CHECK_EQ(rename("b/x", "b/y"), 0);
	EXPECT(fd, g, {wb, IN_MOVED_FROM, "x"}, {wb, IN_MOVED_TO, "y"}, {wy, IN_ATTRIB, NULL},
	       {wx, IN_MOVE_SELF, NULL}, {wy, IN_DELETE_SELF, NULL}, {wy, IN_IGNORED, NULL});
	CHECK(g[0].cookie != 0 && g[0].cookie != c1);
	CHECK_EQ(g[1].cookie, g[0].cookie);

	/* A directory moves with IN_ISDIR (but not on its own IN_MOVE_SELF). */
	CHECK_EQ(mkdir("a/sub", 0755), 0);
	int wsub = inotify_add_watch(fd, "a/sub", IN_MOVE_SELF);
	CHECK_EQ(rename("a/sub", "b/sub"), 0);
	EXPECT(fd, g, {wa, IN_CREATE | IN_ISDIR, "sub"}, {wa, IN_MOVED_FROM | IN_ISDIR, "sub"},
	       {wb, IN_MOVED_TO | IN_ISDIR, "sub"}, {wsub, IN_MOVE_SELF, NULL});
	CHECK_EQ(g[1].cookie, g[2].cookie);

	/* The file keeps its watch under its new name. */
	CHECK_EQ(chmod("b/y", 0600), 0);
	EXPECT(fd, NULL, {wb, IN_ATTRIB, "y"}, {wx, IN_ATTRIB, NULL});

	/* RENAME_EXCHANGE: two moves, each with its cookie. */
	CHECK_EQ(syscall(SYS_renameat2, AT_FDCWD, "b/y", AT_FDCWD, "b/sub", RENAME_EXCHANGE), 0);
	EXPECT(fd, g, {wb, IN_MOVED_FROM, "y"}, {wb, IN_MOVED_TO, "sub"}, {wx, IN_MOVE_SELF, NULL},
	       {wb, IN_MOVED_FROM | IN_ISDIR, "sub"}, {wb, IN_MOVED_TO | IN_ISDIR, "y"},
	       {wsub, IN_MOVE_SELF, NULL});
	CHECK(g[0].cookie != g[3].cookie);
	CHECK_EQ(g[0].cookie, g[1].cookie);
	CHECK_EQ(g[3].cookie, g[4].cookie);
	CHECK_EQ(rmdir("b/y"), 0);
	CHECK_EQ(unlink("b/sub"), 0);
	close(fd);
	CHECK_EQ(rmdir("a"), 0);
	CHECK_EQ(rmdir("b"), 0);
}

static void test_watch_flags(void)
{
	int fd = inotify_init1(IN_NONBLOCK), fd2 = inotify_init1(IN_NONBLOCK), w, f;

	touch("f");
	f = open("f", O_RDWR);
	CHECK(f >= 0);

	/* IN_ONESHOT: one event, then the watch is gone. */
	w = inotify_add_watch(fd, "f", IN_MODIFY | IN_ONESHOT);
	CHECK_EQ(write(f, "x", 1), 1);
	CHECK_EQ(write(f, "x", 1), 1);
	EXPECT(fd, NULL, {w, IN_MODIFY, NULL}, {w, IN_IGNORED, NULL});
	CHECK_ERR(inotify_rm_watch(fd, w), EINVAL);

	/* A new watch gets a new descriptor; its mask is replaced, or added to. */
	int w2 = inotify_add_watch(fd, "f", IN_MODIFY);
	CHECK(w2 > w);
	CHECK_EQ(inotify_add_watch(fd, "f", IN_ATTRIB), w2);
	CHECK_EQ(write(f, "x", 1), 1);
	CHECK_EQ(fchmod(f, 0600), 0);
	EXPECT(fd, NULL, {w2, IN_ATTRIB, NULL});
	CHECK_EQ(inotify_add_watch(fd, "f", IN_MODIFY | IN_MASK_ADD), w2);
	CHECK_EQ(write(f, "x", 1), 1);
	CHECK_EQ(fchmod(f, 0644), 0);
	EXPECT(fd, NULL, {w2, IN_MODIFY, NULL}, {w2, IN_ATTRIB, NULL});

	/* inotify_rm_watch: IN_IGNORED, and nothing more. */
	CHECK_EQ(inotify_rm_watch(fd, w2), 0);
	CHECK_EQ(write(f, "x", 1), 1);
	EXPECT(fd, NULL, {w2, IN_IGNORED, NULL});
	CHECK_ERR(inotify_rm_watch(fd, w2), EINVAL);

	/* IN_EXCL_UNLINK: nothing from a file once its name is gone. */
	int wd = inotify_add_watch(fd, ".", IN_MODIFY | IN_EXCL_UNLINK);
	int wd2 = inotify_add_watch(fd2, ".", IN_MODIFY);
	CHECK_EQ(write(f, "x", 1), 1);
	EXPECT(fd, NULL, {wd, IN_MODIFY, "f"});
	EXPECT(fd2, NULL, {wd2, IN_MODIFY, "f"});
	CHECK_EQ(unlink("f"), 0);
	CHECK_EQ(write(f, "x", 1), 1);
	NONE(fd);
	EXPECT(fd2, NULL, {wd2, IN_MODIFY, "f"});
	close(f);
	close(fd2);
	close(fd);
}

/* A file of the root filesystem's read-only lower layer (read only: nothing outside /tmp is
 * written), and one of its directories listed. */
static void test_lower_layer(void)
{
	int fd = inotify_init1(IN_NONBLOCK), wf, wh, f;
	char buf[1024];

	wf = inotify_add_watch(fd, "/etc/os-release", IN_ALL_EVENTS);
	CHECK(wf >= 1);
	wh = inotify_add_watch(fd, "/home", IN_OPEN | IN_ACCESS | IN_ONLYDIR);
	CHECK(wh > wf);
	f = open("/etc/os-release", O_RDONLY);
	CHECK(f >= 0);
	CHECK_EQ(read(f, buf, 1), 1);
	close(f);
	maybe_save();
	EXPECT(fd, NULL, {wf, IN_OPEN, NULL}, {wf, IN_ACCESS, NULL}, {wf, IN_CLOSE_NOWRITE, NULL});
	CHECK_EQ(inotify_add_watch(fd, "/etc/os-release", IN_ALL_EVENTS), wf);
	f = open("/home", O_RDONLY | O_DIRECTORY);
	CHECK(f >= 0);
	CHECK(syscall(SYS_getdents64, f, buf, sizeof(buf)) > 0);
	close(f);
	EXPECT(fd, NULL, {wh, IN_OPEN | IN_ISDIR, NULL}, {wh, IN_ACCESS | IN_ISDIR, NULL});
	close(fd);
}

static short revents(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	CHECK(poll(&p, 1, 0) >= 0);
	return p.revents;
}

static void test_read(void)
{
	int fd = inotify_init1(IN_NONBLOCK), wd, n, f;
	char buf[256] __attribute__((aligned(8)));
	struct inotify_event *e = (struct inotify_event *)buf;

	wd = inotify_add_watch(fd, ".", IN_CREATE | IN_MODIFY);
	CHECK_EQ(revents(fd), 0);
	CHECK_ERR(read(fd, buf, 1), EAGAIN); /* empty: no size check yet */
	touch("abc");
	touch("defghijklmnopqrs"); /* 16 bytes: 32 with its NUL, padded */
	CHECK_EQ(revents(fd), POLLIN);
	CHECK_EQ(ioctl(fd, FIONREAD, &n), 0);
	CHECK_EQ(n, 16 + 16 + 16 + 32);
	maybe_save(); /* unread names */
	CHECK_ERR(read(fd, buf, sizeof(*e) + 15), EINVAL);
	CHECK_EQ(read(fd, buf, sizeof(*e) + 16 + sizeof(*e) + 31), 32); /* only the first fits */
	CHECK_EQ(e->wd, wd);
	CHECK_EQ(e->mask, IN_CREATE);
	CHECK_EQ(e->cookie, 0);
	CHECK_EQ(e->len, 16);
	CHECK_STREQ(e->name, "abc");
	CHECK_EQ(read(fd, buf, sizeof(buf)), 48);
	CHECK_EQ(e->len, 32);
	CHECK_STREQ(e->name, "defghijklmnopqrs");
	CHECK_EQ(ioctl(fd, FIONREAD, &n), 0);
	CHECK_EQ(n, 0);
	CHECK_EQ(revents(fd), 0);

	/* Identical events in a row are one. */
	f = open("abc", O_WRONLY);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(write(f, "x", 1), 1);
	close(f);
	touch("ghi");
	/* readv reads piece by piece, and stops at one it did not fill. */
	struct iovec iov[2] = {{buf, 5}, {buf + 100, 100}};
	CHECK_ERR(readv(fd, iov, 2), EINVAL);
	iov[0].iov_len = 40;
	CHECK_EQ(readv(fd, iov, 2), 32);
	CHECK_EQ(e->mask, IN_MODIFY);
	CHECK_STREQ(e->name, "abc");
	iov[0].iov_len = 32;
	CHECK_EQ(readv(fd, iov, 2), 32);
	CHECK_EQ(e->mask, IN_CREATE);
	CHECK_STREQ(e->name, "ghi");
	CHECK_ERR(read(fd, buf, sizeof(buf)), EAGAIN);
	CHECK_EQ(unlink("ghi"), 0);
	CHECK_EQ(unlink("abc"), 0);
	CHECK_EQ(unlink("defghijklmnopqrs"), 0);
	close(fd);
}

/* A blocking read sleeps until an event comes, across a checkpoint. */
static void test_blocking_read(void)
{
	int fd = inotify_init(), wd = inotify_add_watch(fd, ".", IN_CREATE);
	pid_t pid = fork();

	if (pid == 0) {
		char buf[256] __attribute__((aligned(8)));
		struct inotify_event *e = (struct inotify_event *)buf;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 10000) != 1 || p.revents != POLLIN)
			_exit(2);
		ssize_t r = read(fd, buf, sizeof(buf));
		_exit(r == 32 && e->wd == wd && e->mask == IN_CREATE && !strcmp(e->name, "late")
			  ? 0
			  : 1);
	}
	struct timespec ts = {0, 100 * 1000 * 1000};
	nanosleep(&ts, NULL);
	maybe_save(); /* the child blocked in read */
	nanosleep(&ts, NULL);
	touch("late");
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(unlink("late"), 0);
	close(fd);
}

/* A full queue ends with one IN_Q_OVERFLOW. */
static void test_overflow(void)
{
	int fd = inotify_init1(IN_NONBLOCK), f, max = 16384, n = 0, last = 0, lastwd = 0;
	char buf[4096] __attribute__((aligned(8)));
	FILE *p = fopen("/proc/sys/fs/inotify/max_queued_events", "r");

	if (p) {
		CHECK_EQ(fscanf(p, "%d", &max), 1);
		fclose(p);
	} else {
		CHECK(!in_sandbox());
	}
	touch("f");
	f = open("f", O_RDWR);
	inotify_add_watch(fd, "f", IN_MODIFY | IN_ACCESS);
	/* Alternating, so that none merges. */
	for (int i = 0; i < max / 2 + 2; i++) {
		CHECK_EQ(pwrite(f, "x", 1, 0), 1);
		CHECK_EQ(pread(f, buf, 1, 0), 1);
	}
	maybe_save(); /* a full queue */
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));
		if (r < 0)
			break;
		for (char *q = buf; q < buf + r; q += sizeof(struct inotify_event)) {
			struct inotify_event *e = (struct inotify_event *)q;
			last = e->mask;
			lastwd = e->wd;
			n++;
		}
	}
	CHECK_EQ(n, max + 1);
	CHECK_EQ(last, IN_Q_OVERFLOW);
	CHECK_EQ(lastwd, -1);
	close(f);
	CHECK_EQ(unlink("f"), 0);
	close(fd);
}

static int write_sysctl(const char *name, const char *value)
{
	char path[96];
	int fd, r;

	snprintf(path, sizeof(path), "/proc/sys/fs/inotify/%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	r = write(fd, value, strlen(value)) == (ssize_t)strlen(value) ? 0 : -1;
	close(fd);
	return r;
}

/* The sandbox's limits follow its sysctls (not changed natively: they are the host's). */
static void test_sysctl_limits(void)
{
	int fd, fd2, f, n = 0;
	char buf[1024] __attribute__((aligned(8)));

	if (!in_sandbox())
		return;
	CHECK_ERR(write_sysctl("max_queued_events", "-1"), EINVAL);
	CHECK_EQ(write_sysctl("max_queued_events", "4"), 0);
	fd = inotify_init1(IN_NONBLOCK);
	CHECK_EQ(write_sysctl("max_queued_events", "16384"), 0);
	touch("f");
	f = open("f", O_RDWR);
	inotify_add_watch(fd, "f", IN_MODIFY | IN_ACCESS);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(pwrite(f, "x", 1, 0), 1);
		CHECK_EQ(pread(f, buf, 1, 0), 1);
	}
	ssize_t r = read(fd, buf, sizeof(buf));
	CHECK_EQ(r, 5 * (ssize_t)sizeof(struct inotify_event));
	for (struct inotify_event *e = (void *)buf; (char *)e < buf + (r > 0 ? r : 0); e++)
		n += e->mask == IN_Q_OVERFLOW && e->wd == -1;
	CHECK_EQ(n, 1);
	CHECK_EQ(((struct inotify_event *)buf)[4].mask, IN_Q_OVERFLOW);

	/* Instances and watches per user. */
	CHECK_EQ(write_sysctl("max_user_instances", "1"), 0);
	CHECK_ERR(inotify_init1(0), EMFILE);
	CHECK_EQ(write_sysctl("max_user_instances", "128"), 0);
	CHECK_EQ(write_sysctl("max_user_watches", "1"), 0);
	CHECK_ERR(inotify_add_watch(fd, ".", IN_CREATE), ENOSPC);
	CHECK_EQ(write_sysctl("max_user_watches", "8192"), 0);
	fd2 = inotify_init1(0);
	CHECK(fd2 >= 0);
	close(fd2);
	close(f);
	CHECK_EQ(unlink("f"), 0);
	close(fd);
}

static void test_sysctls(void)
{
	static const char *const names[] = {"max_queued_events", "max_user_instances",
					    "max_user_watches"};
	char path[96];

	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "/proc/sys/fs/inotify/%s", names[i]);
		FILE *p = fopen(path, "r");
		long v = -1;
		if (!p) {
			CHECK(!in_sandbox());
			continue;
		}
		CHECK_EQ(fscanf(p, "%ld", &v), 1);
		CHECK(v > 0);
		fclose(p);
	}
}

int main(void)
{
	scratch_enter("t_inotify");
	test_init();
	test_add_watch_errors();
	test_file_events();
	test_dir_events();
	test_rename();
	test_watch_flags();
	test_lower_layer();
	test_read();
	test_blocking_read();
	test_overflow();
	test_sysctls();
	test_sysctl_limits();
	scratch_leave();
	return check_done();
}
