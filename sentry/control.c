/* The control socket: a named sandbox (`run --id NAME`) listens on a Unix socket in the runtime
 * directory, and `minisentry checkpoint` asks it, over one connection, to quiesce and write its
 * image. The request is served inside the event loop like any event, so nothing else runs
 * while the image is written. Also the save-restore test, which checkpoints from a guest
 * syscall and restarts the Sentry from the image. */
#include "sentry/control.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/units.h"
#include "sentry/checkpoint.h"
#include "sentry/confine.h"
#include "sentry/kernel.h"
#include "sentry/task.h"
#include "state/compress.h"

#define NAME_MAX_LEN 64

static struct {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char name[NAME_MAX_LEN + 1];
} ctl = {.fd = -1};

static bool valid_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > NAME_MAX_LEN || name[0] == '.' || name[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9') || strchr("._-", name[i])))
			return false;
	return true;
}

/* $XDG_RUNTIME_DIR/minisentry, or /run/minisentry for root, or /tmp/minisentry-UID. */
static void runtime_dir(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (xdg && xdg[0] == '/')
		snprintf(buf, size, "%s/minisentry", xdg);
	else if (geteuid() == 0)
		snprintf(buf, size, "/run/minisentry");
	else
		snprintf(buf, size, "/tmp/minisentry-%u", (unsigned)geteuid());
}

bool control_socket_path(const char *name, char *buf, size_t size)
{
	char dir[PATH_MAX];

	if (!valid_name(name))
		return false;
	runtime_dir(dir, sizeof(dir));
	return (size_t)snprintf(buf, size, "%s/%s.sock", dir, name) < size;
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

/* Writes all of BUF to socket FD: 0 or the errno that stopped it (EPIPE, never SIGPIPE). */
static int send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		buf += n;
		len -= n;
	}
	return 0;
}

/* Waits up to TIMEOUT_MS for FD to be readable; an interrupted wait starts again. */
static int wait_readable(int fd, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int r;

	while ((r = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
		;
	return r;
}

/* True if a Sentry answers on PATH. */
static bool ping(const char *path)
{
	int fd = connect_to(path);
	char buf[8];
	bool ok = false;

	if (fd < 0)
		return false;
	if (send_all(fd, "ping\n", 5) == 0 && wait_readable(fd, 2000) == 1)
		ok = read(fd, buf, sizeof(buf)) >= 2 && !memcmp(buf, "ok", 2);
	close(fd);
	return ok;
}

int control_listen(const char *name, int epfd)
{
	char dir[PATH_MAX];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	if (!control_socket_path(name, ctl.path, sizeof(ctl.path))) {
		fprintf(stderr,
			"minisentry: --id '%s': a name is 1-64 letters, digits, '.', '_' or '-'\n",
			name);
		return -EINVAL;
	}
	runtime_dir(dir, sizeof(dir));
	if (mkdir(dir, 0700) && errno != EEXIST) {
		fprintf(stderr, "minisentry: cannot create %s: %s\n", dir, strerror(errno));
		return -errno;
	}
	if (ping(ctl.path)) {
		fprintf(stderr, "minisentry: a sandbox named '%s' is already running\n", name);
		return -EADDRINUSE;
	}
	unlink(ctl.path); /* a socket left by a Sentry that died */
	ctl.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", ctl.path);
	if (ctl.fd < 0 || bind(ctl.fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(ctl.fd, 8)) {
		fprintf(stderr, "minisentry: cannot listen on %s: %s\n", ctl.path, strerror(errno));
		control_close();
		return -EIO;
	}
	struct stat st;
	if (stat(ctl.path, &st) == 0)
		confine_note_socket(st.st_ino); /* the launcher removes it when we are gone */
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &ctl};
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, ctl.fd, &ev)) {
		control_close();
		return -errno;
	}
	snprintf(ctl.name, sizeof(ctl.name), "%s", name);
	return 0;
}

bool control_active(void)
{
	return ctl.fd >= 0;
}

void control_close(void)
{
	if (ctl.fd < 0)
		return;
	close(ctl.fd);
	ctl.fd = -1;
	if (!confine_active())
		unlink(ctl.path); /* a confined Sentry reaches no path: its launcher does it */
}

void control_forget(const char *name, unsigned long long ino)
{
	char path[sizeof(ctl.path)];
	struct stat st;

	/* Only the socket that Sentry made: a new Sentry of the same name may have its own. */
	if (control_socket_path(name, path, sizeof(path)) && lstat(path, &st) == 0 &&
	    S_ISSOCK(st.st_mode) && st.st_ino == ino)
		unlink(path);
}

static void reply(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply(int fd, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	if (write(fd, buf, n) < 0) {
		/* The client went away: nothing to tell. */
	}
}

static long long us_between(struct timespec a, struct timespec b)
{
	return (b.tv_sec - a.tv_sec) * USEC_PER_SEC + (b.tv_nsec - a.tv_nsec) / NSEC_PER_USEC;
}

/* Reads into BUF (SIZE bytes) what there is, and the descriptors that came with it into
 * FD[0] and FD[1] (the first two; any other is closed). */
static ssize_t recv_with_fd(int sock, char *buf, size_t size, int *fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 4)];
	} ctl;
	struct iovec iov = {buf, size};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf)};
	ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);

	if (n < 0)
		return n;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (int i = 0; i < k; i++) {
			int got;
			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fd[0] < 0)
				fd[0] = got;
			else if (fd[1] < 0)
				fd[1] = got;
			else
				close(got);
		}
	}
	return n;
}

/* One request line: "checkpoint LEAVE FORCE DIR" then options, each a tab and KEY=VALUE
 * ("codec=zstd", "parent=/abs/image"), with a descriptor of DIR's parent directory
 * (SCM_RIGHTS): the image is written beneath that descriptor, under DIR's last component,
 * since a confined Sentry reaches no path; DIR itself only names the image in messages. Or
 * "ping". The answer: "ok BYTES PAGES WALL_US CPU_US REF_PAGES EVICTED[ NOTE]" (the
 * checkpoint's wall and CPU time in the Sentry, the pages left in the --parent's images, the
 * /proc and /sys nodes evicted before it, why --parent was not used) or "error MESSAGE". */
static void serve_request(int fd)
{
	char req[2 * PATH_MAX + 64];
	size_t got = 0;
	int fds[2] = {-1, -1}, parent = -1;

	while (got < sizeof(req) - 1 && !memchr(req, '\n', got)) {
		if (wait_readable(fd, 2000) <= 0)
			goto out;
		ssize_t n = recv_with_fd(fd, req + got, sizeof(req) - 1 - got, fds);
		parent = fds[0];
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto out;
		got += n;
	}
	req[got] = 0;
	char *nl = strchr(req, '\n');
	if (!nl)
		goto out;
	*nl = 0;
	if (!strcmp(req, "ping")) {
		reply(fd, "ok\n");
		goto out;
	}
	int leave, force, off = 0;
	if (sscanf(req, "checkpoint %d %d %n", &leave, &force, &off) != 2 || !off ||
	    req[off] != '/') {
		reply(fd, "error bad request\n");
		goto out;
	}
	char *dir = req + off, *opt = strchr(dir, '\t');
	struct checkpoint_opts co = {.force = force, .goes_on = leave, .base_fd = -1};
	while (opt) {
		*opt++ = 0;
		char *next = strchr(opt, '\t');
		if (next)
			*next = 0;
		if (!strncmp(opt, "codec=", 6) && codec_by_name(opt + 6)) {
			co.codec = codec_by_name(opt + 6);
			if (!codec_available(co.codec)) {
				reply(fd, "error this minisentry was built without %s\n", opt + 6);
				goto out;
			}
		} else if (!strncmp(opt, "parent=", 7) && opt[7] == '/') {
			co.parent = opt + 7;
		} else if (!strncmp(opt, "base=", 5) && opt[5] == '/') {
			/* The base's directory is the request's second descriptor. */
			co.parent = opt + 5;
			co.base = true;
			co.base_fd = fds[1];
		} else if (!strcmp(opt, "golden=1")) {
			co.golden = true;
		} else {
			reply(fd, "error bad request option\n");
			goto out;
		}
		if (next)
			*next = '\t';
		opt = next;
	}
	const char *name = strrchr(dir, '/') + 1;
	struct stat st;
	if (parent < 0 || fstat(parent, &st) || !S_ISDIR(st.st_mode)) {
		reply(fd, "error the request came without its image's directory\n");
		goto out;
	}
	if (co.base && (co.base_fd < 0 || fstat(co.base_fd, &st) || !S_ISDIR(st.st_mode))) {
		reply(fd, "error the request came without its base image's directory\n");
		goto out;
	}
	if (!*name || !strcmp(name, ".") || !strcmp(name, "..")) {
		reply(fd, "error bad image name\n");
		goto out;
	}
	struct checkpoint_stats stats;
	struct timespec w0, w1, c0, c1;
	char *err = NULL;
	clock_gettime(CLOCK_MONOTONIC, &w0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	int r = kernel_quiesce();
	if (!r) {
		task_save_set_caller(NULL, 0);
		r = checkpoint_save(parent, name, &co, &stats, &err);
	}
	if (r) {
		reply(fd, "error %s\n", err ? err : strerror(-r));
		free(err);
		kernel_unquiesce();
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &w1);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	reply(fd, "ok %llu %llu %lld %lld %llu %llu%s%s\n", (unsigned long long)stats.bytes,
	      (unsigned long long)stats.pages, us_between(w0, w1), us_between(c0, c1),
	      (unsigned long long)stats.ref_pages, (unsigned long long)stats.evicted,
	      stats.note ? " " : "", stats.note ? stats.note : "");
	if (leave) {
		kernel_unquiesce();
	} else {
		fprintf(stderr, "minisentry: sandbox '%s' checkpointed to %s\n", ctl.name, dir);
		kernel.done = true;
		kernel.exit_status = 0;
	}
out:
	if (parent >= 0)
		close(parent);
	if (fds[1] >= 0)
		close(fds[1]);
}

bool control_handle_event(void *ptr)
{
	if (ptr != &ctl)
		return false;
	int fd = accept4(ctl.fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0) {
		serve_request(fd);
		close(fd);
	}
	return true;
}

void control_remove_image(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
	rmdir(dir);
}

int control_restore_argv(const struct kernel_config *cfg, const char *image, char **argv, int max)
{
	int n = 0;

	if (max < 14)
		return -ENOSPC;
	argv[n++] = "minisentry";
	argv[n++] = "restore";
	argv[n++] = cfg->save_restore_lazy ? "--save-restore-test=lazy" : "--save-restore-test";
	if (cfg->save_restore_lazy)
		argv[n++] = "--lazy";
	argv[n++] = "--delete-image";
	if (cfg->strace)
		argv[n++] = "--strace";
	static char pids[32];
	if (cfg->pids > 0) {
		snprintf(pids, sizeof(pids), "--pids=%d", cfg->pids);
		argv[n++] = pids;
	}
	argv[n++] = cfg->placement == PLACEMENT_OTHER  ? "--placement=other"
		    : cfg->placement == PLACEMENT_SAME ? "--placement=same"
						       : "--placement=auto";
	if (cfg->confine.unsafe_off)
		argv[n++] = "--unsafe-no-confine";
	if (cfg->confine.debug == CONFINE_DEBUG_TRAP)
		argv[n++] = "--debug-host-syscalls";
	else if (cfg->confine.debug == CONFINE_DEBUG_LOG)
		argv[n++] = "--debug-host-syscalls=log";
	argv[n++] = "--image";
	argv[n++] = (char *)image;
	argv[n] = NULL;
	return 0;
}

long control_save_restore_test(struct task *t)
{
	char *err = NULL;

	int r = kernel_quiesce();
	if (!r) {
		task_save_set_caller(t, 0);
		/* A lazy restore of a small image would load nothing lazily: data files always. */
		struct checkpoint_opts co = {.no_inline = kernel.cfg.save_restore_lazy};
		r = checkpoint_save(confine_srt_dirfd(), confine_srt_name(), &co, NULL, &err);
		task_save_set_caller(NULL, 0);
	}
	if (r) {
		fprintf(stderr, "minisentry: save-restore test: %s\n", err ? err : strerror(-r));
		free(err);
		kernel.done = true;
		kernel.exit_status = 125;
		return -ENOSYS;
	}
	/* The old sandbox goes entirely (its stubs die), and a new Sentry started by the same
	 * command (so the exit status reaches whoever started us) restores it. */
	kernel_teardown();
	confine_srt_restart();
}

/* --- the client ---------------------------------------------------------------------------- */

/* The directory image DIR goes into, opened for the Sentry, which reaches no path of its own;
 * ABS gets DIR's absolute path with the user's own symbolic links resolved here, so that the
 * Sentry, which never follows one, writes where the user meant. As root the descriptor is of
 * a detached copy of the directory's mount, at whose top ".." goes nowhere. */
static int open_image_parent(const char *dir, char *abs, size_t size)
{
	char path[PATH_MAX], cwd[PATH_MAX], real[PATH_MAX];
	size_t n;
	int fd;

	if (dir[0] == '/')
		n = (size_t)snprintf(path, sizeof(path), "%s", dir);
	else if (getcwd(cwd, sizeof(cwd)))
		n = (size_t)snprintf(path, sizeof(path), "%s/%s", cwd, dir);
	else
		return -errno;
	if (n >= sizeof(path))
		return -ENAMETOOLONG;
	while (n > 1 && path[n - 1] == '/')
		path[--n] = 0;
	if (realpath(path, real)) {
		n = (size_t)snprintf(abs, size, "%s", real);
	} else {
		char *slash = strrchr(path, '/');
		*slash = 0;
		if (!realpath(slash == path ? "/" : path, real))
			return -errno;
		n = (size_t)snprintf(abs, size, "%s/%s", strcmp(real, "/") ? real : "", slash + 1);
	}
	if (n >= size)
		return -ENAMETOOLONG;
	char *name = strrchr(abs, '/') + 1;
	if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	snprintf(path, sizeof(path), "%.*s", name - abs > 1 ? (int)(name - abs - 1) : 1, abs);
	fd = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | AT_RECURSIVE | OPEN_TREE_CLOEXEC);
	if (fd < 0)
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Sends LEN bytes of BUF on SOCK with descriptor FD, and FD2 too unless it is -1. */
static int send_with_fd(int sock, const char *buf, size_t len, int fd, int fd2)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} ctl;
	int fds[2] = {fd, fd2}, nfds = fd2 >= 0 ? 2 : 1;
	struct iovec iov = {(void *)buf, len};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	memset(&ctl, 0, sizeof(ctl));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
	memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	ssize_t n;

	while ((n = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return errno;
	return n == (ssize_t)len ? 0 : EPIPE;
}

/* PATH made absolute against the working directory into BUF; false if too long. */
static bool absolute(const char *path, char *buf, size_t size)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return (size_t)snprintf(buf, size, "%s", path) < size;
	return getcwd(cwd, sizeof(cwd)) && (size_t)snprintf(buf, size, "%s/%s", cwd, path) < size;
}

int control_checkpoint(const char *name, const char *dir, const struct control_checkpoint_opts *o)
{
	char path[PATH_MAX], lock[PATH_MAX], abs[PATH_MAX], pimage[PATH_MAX];
	bool force = o->force;

	if (!control_socket_path(name, path, sizeof(path))) {
		fprintf(stderr, "minisentry: checkpoint: '%s' is not a sandbox name\n", name);
		return 2;
	}
	if (o->parent && !absolute(o->parent, pimage, sizeof(pimage))) {
		fprintf(stderr, "minisentry: checkpoint: image path too long\n");
		return 2;
	}
	/* The base is named by its real path (a delta's restore opens it by that name) and
	 * handed over opened. */
	int base = -1;
	if (o->base) {
		if (!realpath(o->base, pimage) ||
		    (base = open(pimage, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
			fprintf(stderr, "minisentry: checkpoint: --base image '%s': %s\n", o->base,
				strerror(errno));
			return 1;
		}
	}
	int parent = open_image_parent(dir, abs, sizeof(abs));
	if (parent < 0) {
		fprintf(stderr, "minisentry: checkpoint: image directory '%s': %s\n", dir,
			strerror(-parent));
		if (base >= 0)
			close(base);
		return 1;
	}
	/* The request is one line of tab-separated fields. */
	if (strpbrk(abs, "\t\n") || ((o->parent || o->base) && strpbrk(pimage, "\t\n"))) {
		fprintf(stderr,
			"minisentry: checkpoint: an image path may not hold a tab or newline\n");
		return 2;
	}
	struct stat st;
	if (!force && stat(abs, &st) == 0) {
		DIR *d = S_ISDIR(st.st_mode) ? opendir(abs) : NULL;
		struct dirent *de;
		bool empty = d != NULL;
		while (d && (de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				empty = false;
		if (d)
			closedir(d);
		if (!empty) {
			fprintf(stderr,
				"minisentry: checkpoint: image directory '%s' exists and is not "
				"empty (--force replaces it)\n",
				dir);
			close(parent);
			if (base >= 0)
				close(base);
			return 1;
		}
	}
	/* One checkpoint at a time per sandbox. */
	snprintf(lock, sizeof(lock), "%.*s.lock", (int)(strlen(path) - 5), path);
	int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK) {
		fprintf(stderr,
			"minisentry: checkpoint: sandbox '%s' is already being checkpointed\n",
			name);
		close(lfd);
		close(parent);
		if (base >= 0)
			close(base);
		return 1;
	}
	int fd = connect_to(path);
	if (fd < 0) {
		fprintf(stderr, "minisentry: checkpoint: no running sandbox named '%s'\n", name);
		if (lfd >= 0)
			close(lfd);
		close(parent);
		if (base >= 0)
			close(base);
		return 1;
	}
	char req[2 * PATH_MAX + 64];
	int n = snprintf(req, sizeof(req), "checkpoint %d %d %s%s%s%s%s%s\n", o->leave_running,
			 force, abs, o->codec ? "\tcodec=" : "", o->codec ? o->codec : "",
			 o->parent ? "\tparent="
			 : o->base ? "\tbase="
				   : "",
			 o->parent || o->base ? pimage : "", o->golden ? "\tgolden=1" : "");
	char resp[1024];
	size_t got = 0;
	/* A Sentry that dies or drops the connection mid-request is an EPIPE to report, not a
	 * SIGPIPE to die of in silence. */
	int err = send_with_fd(fd, req, n, parent, base);
	while (!err && got < sizeof(resp) - 1) {
		ssize_t r = read(fd, resp + got, sizeof(resp) - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			err = errno;
		if (r <= 0)
			break;
		got += r;
	}
	close(fd);
	close(parent);
	if (base >= 0)
		close(base);
	if (lfd >= 0)
		close(lfd);
	resp[got] = 0;
	char *nl = strchr(resp, '\n');
	if (nl)
		*nl = 0;
	unsigned long long bytes, pages, wall, cpu, refs = 0, evicted = 0;
	int note = 0;
	if (sscanf(resp, "ok %llu %llu %llu %llu %llu %llu %n", &bytes, &pages, &wall, &cpu, &refs,
		   &evicted, &note) >= 4) {
		printf("checkpointed '%s' to %s: %llu bytes, %llu memory pages, %.2f ms (cpu %.2f "
		       "ms)",
		       name, dir, bytes, pages, wall / (double)USEC_PER_MSEC,
		       cpu / (double)USEC_PER_MSEC);
		if (o->parent)
			printf(", %llu pages in the parent", refs);
		if (o->base)
			printf(", %llu pages in the base", refs);
		printf(", %llu unused /proc and /sys nodes evicted\n", evicted);
		if (o->parent && note && resp[note])
			fprintf(stderr, "minisentry: checkpoint: --parent %s\n", resp + note);
		return 0;
	}
	if (!strncmp(resp, "error ", 6))
		fprintf(stderr, "minisentry: checkpoint: %s\n", resp + 6);
	else if (err)
		fprintf(stderr, "minisentry: checkpoint: sandbox '%s' dropped the request: %s\n",
			name, strerror(err));
	else
		fprintf(stderr, "minisentry: checkpoint: sandbox '%s' did not answer\n", name);
	return 1;
}

int control_list(void)
{
	char dir[PATH_MAX];
	DIR *d;
	struct dirent *de;

	runtime_dir(dir, sizeof(dir));
	if (!(d = opendir(dir)))
		return 0;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		char path[PATH_MAX];
		if (n < 6 || strcmp(de->d_name + n - 5, ".sock"))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
			sizeof(path) ||
		    !ping(path))
			continue; /* a socket left by a Sentry that died */
		printf("%.*s\n", (int)(n - 5), de->d_name);
	}
	closedir(d);
	return 0;
}
