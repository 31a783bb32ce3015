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
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "sentry/checkpoint.h"
#include "state/compress.h"
#include "sentry/kernel.h"
#include "sentry/task.h"

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

/* True if a Sentry answers on PATH. */
static bool ping(const char *path)
{
	int fd = connect_to(path);
	char buf[8];
	bool ok = false;

	if (fd < 0)
		return false;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (write(fd, "ping\n", 5) == 5 && poll(&p, 1, 2000) == 1)
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
	unlink(ctl.path);
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
	return (b.tv_sec - a.tv_sec) * 1000000LL + (b.tv_nsec - a.tv_nsec) / 1000;
}

/* One request line: "checkpoint LEAVE FORCE DIR" then options, each a tab and KEY=VALUE
 * ("codec=zstd", "parent=/abs/image"), or "ping". The answer: "ok BYTES PAGES WALL_US CPU_US"
 * (the checkpoint's wall and CPU time in the Sentry) or "error MESSAGE". */
static void serve_request(int fd)
{
	char req[2 * PATH_MAX + 64];
	size_t got = 0;
	struct pollfd p = {.fd = fd, .events = POLLIN};

	while (got < sizeof(req) - 1 && !memchr(req, '\n', got)) {
		if (poll(&p, 1, 2000) <= 0)
			return;
		ssize_t n = read(fd, req + got, sizeof(req) - 1 - got);
		if (n <= 0)
			return;
		got += n;
	}
	req[got] = 0;
	char *nl = strchr(req, '\n');
	if (!nl)
		return;
	*nl = 0;
	if (!strcmp(req, "ping")) {
		reply(fd, "ok\n");
		return;
	}
	int leave, force, off = 0;
	if (sscanf(req, "checkpoint %d %d %n", &leave, &force, &off) != 2 || !off ||
	    req[off] != '/') {
		reply(fd, "error bad request\n");
		return;
	}
	char *dir = req + off, *opt = strchr(dir, '\t');
	struct checkpoint_opts co = {.force = force, .goes_on = leave};
	while (opt) {
		*opt++ = 0;
		char *next = strchr(opt, '\t');
		if (next)
			*next = 0;
		if (!strncmp(opt, "codec=", 6) && codec_by_name(opt + 6)) {
			co.codec = codec_by_name(opt + 6);
			if (!codec_available(co.codec)) {
				reply(fd, "error this minisentry was built without %s\n", opt + 6);
				return;
			}
		} else if (!strncmp(opt, "parent=", 7) && opt[7] == '/') {
			co.parent = opt + 7;
		} else {
			reply(fd, "error bad request option\n");
			return;
		}
		if (next)
			*next = '\t';
		opt = next;
	}
	struct checkpoint_stats stats;
	struct timespec w0, w1, c0, c1;
	char *err = NULL;
	clock_gettime(CLOCK_MONOTONIC, &w0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	int r = kernel_quiesce();
	if (!r) {
		task_save_set_caller(NULL, 0);
		r = checkpoint_save(dir, &co, &stats, &err);
	}
	if (r) {
		reply(fd, "error %s\n", err ? err : strerror(-r));
		free(err);
		kernel_unquiesce();
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &w1);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	reply(fd, "ok %llu %llu %lld %lld %llu%s%s\n", (unsigned long long)stats.bytes,
	      (unsigned long long)stats.pages, us_between(w0, w1), us_between(c0, c1),
	      (unsigned long long)stats.ref_pages, stats.note ? " " : "",
	      stats.note ? stats.note : "");
	if (leave) {
		kernel_unquiesce();
	} else {
		fprintf(stderr, "minisentry: sandbox '%s' checkpointed to %s\n", ctl.name, dir);
		kernel.done = true;
		kernel.exit_status = 0;
	}
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

long control_save_restore_test(struct task *t)
{
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX];
	unsigned int rnd = 0;
	char *err = NULL;

	if (getrandom(&rnd, sizeof(rnd), 0) < 0)
		rnd = (unsigned int)getpid();
	snprintf(dir, sizeof(dir), "%s/minisentry-srt.%d.%08x", tmp && tmp[0] == '/' ? tmp : "/tmp",
		 (int)getpid(), rnd);
	int r = kernel_quiesce();
	if (!r) {
		task_save_set_caller(t, 0);
		/* A lazy restore of a small image would load nothing lazily: data files always. */
		struct checkpoint_opts co = {.no_inline = kernel.cfg.save_restore_lazy};
		r = checkpoint_save(dir, &co, NULL, &err);
		task_save_set_caller(NULL, 0);
	}
	if (r) {
		fprintf(stderr, "minisentry: save-restore test: %s\n", err ? err : strerror(-r));
		free(err);
		kernel.done = true;
		kernel.exit_status = 125;
		return -ENOSYS;
	}
	/* The old sandbox goes entirely (its stubs die), and a new Sentry in this same process
	 * (so the exit status reaches whoever started us) restores it. */
	kernel_teardown();
	char *argv[12];
	int n = 0;
	argv[n++] = "minisentry";
	argv[n++] = "restore";
	argv[n++] =
	    kernel.cfg.save_restore_lazy ? "--save-restore-test=lazy" : "--save-restore-test";
	if (kernel.cfg.save_restore_lazy)
		argv[n++] = "--lazy";
	argv[n++] = "--delete-image";
	if (kernel.cfg.strace)
		argv[n++] = "--strace";
	argv[n++] = kernel.cfg.placement == PLACEMENT_OTHER  ? "--placement=other"
		    : kernel.cfg.placement == PLACEMENT_SAME ? "--placement=same"
							     : "--placement=auto";
	argv[n++] = "--image";
	argv[n++] = dir;
	argv[n] = NULL;
	fflush(NULL);
	closefrom(3);
	kernel_stop_placement_tick(); /* an interval timer outlives exec */
	execv("/proc/self/exe", argv);
	fprintf(stderr, "minisentry: save-restore test: cannot restart: %s\n", strerror(errno));
	control_remove_image(dir);
	_exit(125);
}

/* --- the client ---------------------------------------------------------------------------- */

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
	char path[PATH_MAX], lock[PATH_MAX], abs[PATH_MAX], parent[PATH_MAX];
	bool force = o->force;

	if (!control_socket_path(name, path, sizeof(path))) {
		fprintf(stderr, "minisentry: checkpoint: '%s' is not a sandbox name\n", name);
		return 2;
	}
	if (!absolute(dir, abs, sizeof(abs)) ||
	    (o->parent && !absolute(o->parent, parent, sizeof(parent)))) {
		fprintf(stderr, "minisentry: checkpoint: image path too long\n");
		return 2;
	}
	/* The request is one line of tab-separated fields. */
	if (strpbrk(abs, "\t\n") || (o->parent && strpbrk(parent, "\t\n"))) {
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
		return 1;
	}
	int fd = connect_to(path);
	if (fd < 0) {
		fprintf(stderr, "minisentry: checkpoint: no running sandbox named '%s'\n", name);
		if (lfd >= 0)
			close(lfd);
		return 1;
	}
	char req[2 * PATH_MAX + 64];
	int n = snprintf(req, sizeof(req), "checkpoint %d %d %s%s%s%s%s\n", o->leave_running, force,
			 abs, o->codec ? "\tcodec=" : "", o->codec ? o->codec : "",
			 o->parent ? "\tparent=" : "", o->parent ? parent : "");
	char resp[1024];
	size_t got = 0;
	if (write(fd, req, n) == n) {
		ssize_t r;
		while (got < sizeof(resp) - 1 &&
		       (r = read(fd, resp + got, sizeof(resp) - 1 - got)) > 0)
			got += r;
	}
	close(fd);
	if (lfd >= 0)
		close(lfd);
	resp[got] = 0;
	char *nl = strchr(resp, '\n');
	if (nl)
		*nl = 0;
	unsigned long long bytes, pages, wall, cpu, refs = 0;
	int note = 0;
	if (sscanf(resp, "ok %llu %llu %llu %llu %llu %n", &bytes, &pages, &wall, &cpu, &refs,
		   &note) >= 4) {
		printf("checkpointed '%s' to %s: %llu bytes, %llu memory pages, %.2f ms (cpu %.2f "
		       "ms)",
		       name, dir, bytes, pages, wall / 1000.0, cpu / 1000.0);
		if (o->parent)
			printf(", %llu pages in the parent", refs);
		printf("\n");
		if (o->parent && note && resp[note])
			fprintf(stderr, "minisentry: checkpoint: --parent %s\n", resp + note);
		return 0;
	}
	if (!strncmp(resp, "error ", 6))
		fprintf(stderr, "minisentry: checkpoint: %s\n", resp + 6);
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
