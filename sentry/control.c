/* The control socket: a named sandbox (`run --id NAME`) listens on a Unix socket in the runtime
 * directory, and `minisentry checkpoint` asks it, over one connection, to quiesce and write its
 * image. The request is served inside the event loop like any event, so nothing else runs
 * while the image is written. Also the save-restore test, which checkpoints from a guest
 * syscall and restarts the Sentry from the image. */
#include "sentry/control.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/limits.h"
#include "common/units.h"
#include "mem/memfile.h"
#include "sentry/checkpoint.h"
#include "sentry/confine.h"
#include "sentry/freeze.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/resources.h"
#include "sentry/task.h"
#include "state/compress.h"
#include "state/image.h"
#include "state/mac.h"

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

/* Reads into BUF (CAP bytes, NUL-terminated) until a newline, CAP-1 bytes, end of file or
 * TIMEOUT_MS without anything to read; what it got. */
static size_t read_line(int fd, char *buf, size_t cap, int timeout_ms)
{
	size_t got = 0;

	while (got < cap - 1 && !memchr(buf, '\n', got)) {
		if (wait_readable(fd, timeout_ms) <= 0)
			break;
		ssize_t n = read(fd, buf + got, cap - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = 0;
	return got;
}

/* What a Sentry says of itself when pinged: the host pid of the process its caller waits on
 * (its launcher, or itself when not confined), when the sandbox started (realtime) and whether
 * it is paused. */
struct ping_info {
	long pid;
	long long started;
	int frozen;
};

/* True if a Sentry answers on PATH (filling *INFO, if not NULL, when it says). */
static bool ping_info(const char *path, struct ping_info *info)
{
	int fd = connect_to(path);
	char buf[96];
	bool ok = false;
	ssize_t n = 0;

	if (fd < 0)
		return false;
	if (send_all(fd, "ping\n", 5) == 0 && wait_readable(fd, 2000) == 1)
		n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ok = n >= 2 && !memcmp(buf, "ok", 2);
	if (ok && info) {
		buf[n] = 0;
		info->frozen = 0;
		if (sscanf(buf, "ok %ld %lld %d", &info->pid, &info->started, &info->frozen) < 2)
			info->pid = info->started = -1;
	}
	return ok;
}

static bool ping(const char *path)
{
	return ping_info(path, NULL);
}

int control_bind(const char *name, unsigned long long *ino)
{
	char dir[PATH_MAX];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd;

	runtime_dir(dir, sizeof(dir));
	if (!control_socket_path(name, ctl.path, sizeof(ctl.path))) {
		if (valid_name(name))
			fprintf(
			    stderr,
			    "minisentry: --id '%s': its control socket %s/%s.sock is longer "
			    "than a Unix socket's path may be (%zu bytes): use a shorter name or "
			    "a shorter XDG_RUNTIME_DIR\n",
			    name, dir, name, sizeof(sa.sun_path) - 1);
		else
			fprintf(
			    stderr,
			    "minisentry: --id '%s': a name is 1-64 letters, digits, '.', '_' or "
			    "'-'\n",
			    name);
		return -EINVAL;
	}
	if (mkdir(dir, 0700) && errno != EEXIST) {
		fprintf(stderr, "minisentry: cannot create %s: %s\n", dir, strerror(errno));
		return -errno;
	}
	if (ping(ctl.path)) {
		fprintf(stderr, "minisentry: a sandbox named '%s' is already running\n", name);
		return -EADDRINUSE;
	}
	unlink(ctl.path); /* a socket left by a Sentry that died */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", ctl.path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 8)) {
		fprintf(stderr, "minisentry: cannot listen on %s: %s\n", ctl.path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	*ino = stat(ctl.path, &st) == 0 ? st.st_ino : 0;
	return fd;
}

int control_adopt(const char *name, int fd, int epfd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &ctl};

	ctl.fd = fd;
	if (!control_socket_path(name, ctl.path, sizeof(ctl.path)) ||
	    epoll_ctl(epfd, EPOLL_CTL_ADD, ctl.fd, &ev)) {
		control_close();
		return -EINVAL;
	}
	snprintf(ctl.name, sizeof(ctl.name), "%s", name);
	return 0;
}

int control_listen(const char *name, int epfd)
{
	unsigned long long ino;
	int fd = control_bind(name, &ino), err;

	if (fd < 0)
		return fd;
	if (ino)
		confine_note_socket(ino); /* the launcher removes it when we are gone */
	if ((err = control_adopt(name, fd, epfd)))
		fprintf(stderr, "minisentry: cannot listen on %s: %s\n", ctl.path, strerror(-err));
	return err;
}

/* The process a caller of this sandbox waits on, when it is not our launcher: a warm slot's
 * restore client (sentry/warm.c). */
static int caller_pid;

void control_set_caller_pid(int pid)
{
	caller_pid = pid;
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
	/* And a checkpoint lock a killed client left, unless a checkpoint holds it now. */
	char lock[sizeof(ctl.path)];
	if (control_socket_path(name, path, sizeof(path)) &&
	    (size_t)snprintf(lock, sizeof(lock), "%.*s.lock", (int)(strlen(path) - 5), path) <
		sizeof(lock)) {
		int lfd = open(lock, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		if (lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) == 0)
			unlink(lock);
		if (lfd >= 0)
			close(lfd);
	}
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

/* Reads into BUF (SIZE bytes) what there is, and the descriptors that came with it into FDS
 * (up to MAX, *NFDS of them so far: the first ones; any other is closed). */
static ssize_t recv_with_fds(int sock, char *buf, size_t size, int *fds, int max, int *nfds)
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
			if (*nfds < max)
				fds[(*nfds)++] = got;
			else
				close(got);
		}
	}
	return n;
}

/* --- exec ---------------------------------------------------------------------------------- */

/* Processes started by an exec request, each with the connection its exit status goes to. */
#define EXEC_MAX 256
#define EXEC_REQ_MAX (1 << 20)
static struct {
	pid_t tgid;
	int fd;
} execs[EXEC_MAX];
static int nexecs;

/* The NUL-terminated strings of P (LEN bytes) into V (room for MAX): how many, or -1 if
 * there are more or the last one is not terminated. */
static int split_strings(char *p, size_t len, char **v, int max)
{
	int n = 0;

	for (size_t i = 0; i < len; n++) {
		char *end = memchr(p + i, 0, len - i);
		if (!end || n >= max)
			return -1;
		v[n] = p + i;
		i = (size_t)(end - p) + 1;
	}
	return n;
}

/* "exec LEN" and LEN bytes of NUL-terminated strings — uid, gid, cwd ("" for /), the
 * supplementary groups (decimal, comma-separated), no_new_privs (0, 1, or -1 for init's),
 * the capability sets ("" for init's, or five hexadecimal sets: bounding, effective,
 * permitted, inheritable, ambient, colon-separated), the seccomp program the process starts
 * filtered by ("" for none, or '0' or '1' for SECCOMP_FILTER_FLAG_LOG and then 16 hexadecimal
 * digits per instruction, each a struct sock_filter's 8 bytes as a little-endian number), argc,
 * the arguments, the environment —
 * with the new process's stdin, stdout and stderr (SCM_RIGHTS). HAVE bytes of the payload came
 * with the request line. The answer is "pid PID" once the process runs, then "exit STATUS"
 * when it ends (the connection is kept until then: true), or "error MESSAGE". */
#define EXEC_FIELDS 8	    /* before the arguments */
#define EXEC_MAX_INSNS 4096 /* BPF_MAXINSNS */
#define EXEC_MAX_GROUPS 64  /* as an OCI process's additionalGids */

/* The comma-separated gids of TEXT into GROUPS (at most MAX): how many, or -1. */
static int parse_groups(const char *text, gid_t *groups, int max)
{
	int n = 0;

	while (*text) {
		char *end;
		unsigned long g = strtoul(text, &end, 10);
		if (end == text || g > 0xfffffffeUL || n == max || (*end && *end != ','))
			return -1;
		groups[n++] = (gid_t)g;
		text = *end ? end + 1 : end;
	}
	return n;
}

static bool parse_caps(const char *text, struct caps_sets *c)
{
	unsigned long long v[5];
	int used = 0;

	if (sscanf(text, "%llx:%llx:%llx:%llx:%llx%n", &v[0], &v[1], &v[2], &v[3], &v[4], &used) !=
		5 ||
	    text[used])
		return false;
	*c = (struct caps_sets){v[0], v[1], v[2], v[3], v[4]};
	return true;
}

/* TEXT, a seccomp program as the request spells it, into *PROG (malloc'd, or NULL when TEXT is
 * empty), *LEN and *LOG: false when it is malformed. Its instructions are checked as any
 * guest's filter is when the process gets it. */
static bool parse_seccomp(const char *text, uint64_t **prog, unsigned int *len, bool *log)
{
	size_t n = strlen(text);

	*prog = NULL;
	*len = 0;
	if (!n)
		return true;
	if ((text[0] != '0' && text[0] != '1') || (n - 1) % 16 || n == 1 ||
	    (n - 1) / 16 > EXEC_MAX_INSNS || !(*prog = malloc((n - 1) / 2)))
		return false;
	*log = text[0] == '1';
	*len = (unsigned int)((n - 1) / 16);
	for (unsigned int i = 0; i < *len; i++) {
		char digits[17], *end;
		memcpy(digits, text + 1 + 16 * (size_t)i, 16);
		digits[16] = 0;
		(*prog)[i] = strtoull(digits, &end, 16);
		if (*end || digits[0] == '-' || digits[0] == '+' || digits[0] == ' ') {
			free(*prog);
			*prog = NULL;
			return false;
		}
	}
	return true;
}

static bool serve_exec(int fd, const char *req, const char *have, size_t nhave, const int *fds,
		       int nfds)
{
	unsigned long len;
	char *buf = NULL, **v = NULL, msg[512];
	uint64_t *prog = NULL; /* the seccomp program it starts with */
	size_t got;
	bool keep = false;

	if (sscanf(req, "exec %lu", &len) != 1 || len > EXEC_REQ_MAX || nhave > len) {
		reply(fd, "error bad request\n");
		return false;
	}
	if (nfds != 3 || nexecs >= EXEC_MAX) {
		reply(fd, nfds != 3 ? "error exec needs stdin, stdout and stderr\n"
				    : "error too many exec'd processes\n");
		return false;
	}
	if (!(buf = malloc(len + 1)) || !(v = calloc(len / 2 + 8, sizeof(*v)))) {
		reply(fd, "error out of memory\n");
		goto out;
	}
	memcpy(buf, have, nhave);
	for (got = nhave; got < len;) {
		if (wait_readable(fd, 2000) <= 0)
			goto out;
		ssize_t n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto out;
		got += (size_t)n;
	}
	int n = split_strings(buf, len, v, (int)(len / 2 + 6)), argc, ngroups;
	unsigned long uid, gid;
	long nnp;
	char *end;
	gid_t groups[EXEC_MAX_GROUPS];
	struct caps_sets caps;
	unsigned int nprog = 0;
	bool log = false;
	if (n < EXEC_FIELDS + 1 || (uid = strtoul(v[0], &end, 10), *end) || uid > 0xfffffffeUL ||
	    (gid = strtoul(v[1], &end, 10), *end) || gid > 0xfffffffeUL ||
	    (v[2][0] && v[2][0] != '/') ||
	    (ngroups = parse_groups(v[3], groups, EXEC_MAX_GROUPS)) < 0 ||
	    (nnp = strtol(v[4], &end, 10), *end) || nnp < -1 || nnp > 1 ||
	    (v[5][0] && !parse_caps(v[5], &caps)) || !parse_seccomp(v[6], &prog, &nprog, &log) ||
	    (argc = atoi(v[7])) < 1 || argc > n - EXEC_FIELDS) {
		reply(fd, "error bad request\n");
		goto out;
	}
	char **argv = v + EXEC_FIELDS, **envp = v + EXEC_FIELDS + argc;
	/* Both vectors end in a NULL: the argument vector where the environment begins. */
	char *first_env = envp[0];
	envp[0] = NULL;
	char **argv_copy = calloc((size_t)argc + 1, sizeof(char *));
	if (!argv_copy) {
		reply(fd, "error out of memory\n");
		goto out;
	}
	memcpy(argv_copy, argv, (size_t)argc * sizeof(char *));
	envp[0] = first_env;
	struct kernel_spawn s = {.argv = argv_copy,
				 .envp = envp,
				 .cwd = v[2][0] ? v[2] : NULL,
				 .uid = (uid_t)uid,
				 .gid = (gid_t)gid,
				 .groups = groups,
				 .ngroups = ngroups,
				 .no_new_privs = (int)nnp,
				 .caps = v[5][0] ? &caps : NULL,
				 .seccomp_prog = prog,
				 .seccomp_len = nprog,
				 .seccomp_log = log,
				 .stdio = {fds[0], fds[1], fds[2]}};
	pid_t pid;
	int r = kernel_spawn(&s, &pid, msg, sizeof(msg));
	free(argv_copy);
	if (r) {
		reply(fd, "error %s\n", msg);
		goto out;
	}
	execs[nexecs].tgid = pid;
	execs[nexecs].fd = fd;
	nexecs++;
	reply(fd, "pid %d\n", (int)pid);
	keep = true;
out:
	free(prog);
	free(v);
	free(buf);
	return keep;
}

void control_exec_exited(pid_t tgid, int status)
{
	for (int i = 0; i < nexecs; i++) {
		if (execs[i].tgid != tgid)
			continue;
		reply(execs[i].fd, "exit %d\n",
		      (status & 0x7f) ? 128 + (status & 0x7f) : (status >> 8) & 0xff);
		close(execs[i].fd);
		execs[i] = execs[--nexecs];
		return;
	}
}

/* The OCI runtime's requests (pause, resume, stats, events, update), at the end of the file. */
static bool serve_runtime_request(int fd, const char *req, bool *keep);
static bool watcher_event(void *ptr);
static int send_with_fds(int sock, const char *buf, size_t len, const int *fds, int n);

/* The request's room: a path, a key in hex and the rest. */
#define REQ_MAX (PATH_MAX + 2 * IMAGE_KEY_MAX + 64)

/* "key HEX " at *P: the key into KEY (*LEN bytes) and *P past it; no key leaves both. */
static int parse_key(const char **p, uint8_t *key, size_t *len)
{
	const char *s = *p;

	*len = 0;
	if (strncmp(s, "key ", 4))
		return 0;
	for (s += 4; *s != ' '; s += 2) {
		unsigned v;
		if (!s[0] || !s[1] || *len == IMAGE_KEY_MAX || sscanf(s, "%2x", &v) != 1)
			return -EINVAL;
		key[(*len)++] = (uint8_t)v;
	}
	*p = s + 1;
	return *len >= IMAGE_KEY_MIN ? 0 : -EINVAL;
}

/* "tag HEX " at *P: 16 hex digits into TAG and *P past it (see struct image's tag). */
static int parse_tag(const char **p, char tag[17])
{
	const char *s = *p;

	tag[0] = 0;
	if (strncmp(s, "tag ", 4))
		return 0;
	s += 4;
	if (strspn(s, "0123456789abcdef") != 16 || s[16] != ' ')
		return -EINVAL;
	memcpy(tag, s, 16);
	tag[16] = 0;
	*p = s + 17;
	return 0;
}

/* One request line: "checkpoint LEAVE FORCE [tag HEX ][key HEX ]DIR" then options, each a tab
 * and KEY=VALUE ("codec=zstd", "parent=/abs/image"), with a descriptor of DIR's parent
 * directory (SCM_RIGHTS): the image is written beneath that descriptor, under DIR's last
 * component, since a confined Sentry reaches no path; DIR itself only names the image in
 * messages. Or "ping", or "exec ..." (serve_exec). The answer: "ok BYTES PAGES WALL_US CPU_US
 * REF_PAGES EVICTED HEAP KINDS[ NOTE]" (the checkpoint's wall and CPU time in the Sentry, the
 * pages left in the --parent's images, what eviction before it freed as evict_report_words
 * puts it, why --parent was not used) or "error MESSAGE". */
static bool serve_request(int fd)
{
	static char req[REQ_MAX];
	static uint8_t key[IMAGE_KEY_MAX];
	size_t key_len = 0;
	char tag[17];
	size_t got = 0;
	int fds[3] = {-1, -1, -1}, nfds = 0, parent = -1;
	bool keep = false;

	while (got < sizeof(req) - 1 && !memchr(req, '\n', got)) {
		if (wait_readable(fd, 2000) <= 0)
			goto out;
		ssize_t n = recv_with_fds(fd, req + got, sizeof(req) - 1 - got, fds, 3, &nfds);
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
		reply(fd, "ok %d %lld %d\n",
		      caller_pid	 ? caller_pid
		      : confine_active() ? confine_launcher_pid()
					 : (int)getpid(),
		      (long long)kernel.boot_real.tv_sec, kernel_frozen());
		goto out;
	}
	if (!strncmp(req, "exec ", 5)) {
		keep = serve_exec(fd, req, nl + 1, got - (size_t)(nl + 1 - req), fds, nfds);
		goto out;
	}
	if (serve_runtime_request(fd, req, &keep))
		goto out;
	parent = nfds ? fds[0] : -1;
	int leave, force, off = 0;
	const char *dir = req;
	if (sscanf(req, "checkpoint %d %d %n", &leave, &force, &off) != 2 || !off ||
	    (dir = req + off, parse_tag(&dir, tag)) || parse_key(&dir, key, &key_len) ||
	    *dir != '/') {
		reply(fd, "error bad request\n");
		goto out;
	}
	char *opt = strchr(dir, '\t');
	struct checkpoint_opts co = {.force = force,
				     .goes_on = leave,
				     .key = key_len ? key : NULL,
				     .key_len = key_len,
				     .tag = tag[0] ? tag : NULL,
				     .base_fd = nfds > 1 ? fds[1] : -1};
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
			/* Its directory, if it came, is the request's second descriptor. */
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
	char evicted[256];
	evict_report_words(&stats.evicted, evicted, sizeof(evicted));
	reply(fd, "ok %llu %llu %lld %lld %llu %s%s%s\n", (unsigned long long)stats.bytes,
	      (unsigned long long)stats.pages, us_between(w0, w1), us_between(c0, c1),
	      (unsigned long long)stats.ref_pages, evicted, stats.note ? " " : "",
	      stats.note ? stats.note : "");
	if (leave) {
		kernel_unquiesce();
	} else {
		if (!kernel.cfg.quiet)
			fprintf(stderr, "minisentry: sandbox '%s' checkpointed to %s\n", ctl.name,
				dir);
		kernel.done = true;
		kernel.exit_status = 0;
	}
out:
	memset(key, 0, sizeof(key));
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	return keep;
}

bool control_handle_event(void *ptr)
{
	if (watcher_event(ptr))
		return true;
	if (ptr != &ctl)
		return false;
	int fd = accept4(ctl.fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0 && !serve_request(fd))
		close(fd);
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

	if (max < CONTROL_RESTORE_ARGV_MAX(cfg->nbinds))
		return -ENOSPC;
	argv[n++] = "minisentry";
	argv[n++] = "restore";
	argv[n++] = cfg->save_restore_lazy    ? "--save-restore-test=lazy"
		    : cfg->save_restore_slots ? "--save-restore-test=slots"
					      : "--save-restore-test";
	if (cfg->save_restore_lazy)
		argv[n++] = "--lazy";
	if (cfg->save_restore_slots && !cfg->srt_slots) {
		/* IMAGE is the golden image: kept, and restored through a new pool beside it. */
		char *pool;
		if (asprintf(&pool, "%s" SRT_POOL_SUFFIX, image) < 0)
			return -ENOMEM;
		argv[n++] = "--slots";
		argv[n++] = pool;
	} else {
		if (cfg->save_restore_slots) {
			/* IMAGE is a delta of the pool's golden image. */
			argv[n++] = "--slots";
			argv[n++] = (char *)cfg->srt_slots;
		}
		argv[n++] = "--delete-image";
	}
	if (cfg->strace)
		argv[n++] = "--strace";
	/* The restored Sentry goes on writing the trace where this one stopped. */
	if (cfg->strace_file) {
		argv[n++] = "--strace-output";
		argv[n++] = (char *)cfg->strace_file;
		argv[n++] = "--strace-append";
	}
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
	if (cfg->quiet)
		argv[n++] = "--quiet";
	/* The bind mounts, named again: a restore opens only those its user names. */
	for (int i = 0; i < cfg->nbinds; i++) {
		char *v;
		if (asprintf(&v, "%s:%s%s", cfg->binds[i].src, cfg->binds[i].dst,
			     cfg->binds[i].ro ? ":ro" : "") < 0)
			return -ENOMEM;
		argv[n++] = "-v";
		argv[n++] = v;
	}
	if (cfg->confine.debug == CONFINE_DEBUG_TRAP)
		argv[n++] = "--debug-host-syscalls";
	else if (cfg->confine.debug == CONFINE_DEBUG_LOG)
		argv[n++] = "--debug-host-syscalls=log";
	argv[n++] = "--image";
	argv[n++] = (char *)image;
	argv[n] = NULL;
	return 0;
}

int control_srt_make_pool(const char *image, const char *dir)
{
	char pool[PATH_MAX + 8], *err = NULL;

	snprintf(pool, sizeof(pool), "%s/pool", dir);
	if (access(pool, F_OK) == 0)
		return 0;
	if (!memfile_slots_create(image, 1, dir, &err))
		return 0;
	fprintf(stderr, "minisentry: save-restore test: slots: %s\n",
		err ? err : "cannot make them");
	free(err);
	return 1;
}

void control_srt_slots_remove(const char *dir)
{
	size_t n = strlen(dir), s = strlen(SRT_POOL_SUFFIX);
	char *golden;

	confine_srt_remove(dir);
	if (n > s && !strcmp(dir + n - s, SRT_POOL_SUFFIX) && (golden = strndup(dir, n - s))) {
		confine_srt_remove(golden);
		free(golden);
	}
}

long control_save_restore_test(struct task *t)
{
	bool slots = kernel.cfg.save_restore_slots;
	char *err = NULL;

	/* check.h's early point: a golden image to start the slots variant's chain from; no
	 * other variant saves there, nor a sandbox that runs from a slot already. */
	if (t->sc.args[0] == SAVE_RESTORE_TEST_EARLY && (!slots || memfile_slot_active()))
		return 0;
	int r = kernel_quiesce();
	if (!r) {
		task_save_set_caller(t, 0);
		/* A lazy restore of a small image would load nothing lazily: data files always.
		 * The slots variant writes its golden image first, then deltas against it. */
		struct checkpoint_opts co = {.no_inline = kernel.cfg.save_restore_lazy,
					     .golden = slots && !memfile_slot_active(),
					     .base = slots && memfile_slot_active(),
					     .parent = memfile_slot_golden_path(),
					     .base_fd = memfile_slot_golden_dirfd()};
		if (!co.base)
			co.parent = NULL;
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
	/* The old sandbox goes entirely (its stubs die; its slot is reset for the restore to
	 * claim), and a new Sentry started by the same command (so the exit status reaches
	 * whoever started us) restores it. */
	kernel_teardown();
	kernel_slot_done();
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

/* Sends LEN bytes of BUF on SOCK with the N descriptors FDS. */
static int send_with_fds(int sock, const char *buf, size_t len, const int *fds, int n)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 3)];
	} ctl;
	struct iovec iov = {(void *)buf, len};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	if (n < 1 || n > 3)
		return EINVAL;
	memset(&ctl, 0, sizeof(ctl));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)n);
	ssize_t r;

	while ((r = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (r < 0)
		return errno;
	return r == (ssize_t)len ? 0 : EPIPE;
}

/* The checkpoint lock goes once its checkpoint is over: removed while still held, so lock
 * files do not pile up in the runtime directory. (A client that opened it just before and
 * locks the removed file afterwards only sends a request the Sentry serves in turn anyway.) */
static void unlock(int lfd, bool locked, const char *lock)
{
	if (locked)
		unlink(lock);
	if (lfd >= 0)
		close(lfd);
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
	 * handed over opened; so is the parent (a confined Sentry reaches no path). */
	int base = -1;
	if (o->parent && (base = open(pimage, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "minisentry: checkpoint: --parent image '%s': %s\n", o->parent,
			strerror(errno));
		return 1;
	}
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
	int lfd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	bool locked = lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) == 0;
	if (lfd >= 0 && !locked && errno == EWOULDBLOCK) {
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
		unlock(lfd, locked, lock);
		close(parent);
		if (base >= 0)
			close(base);
		return 1;
	}
	/* The temporary directories' names: ours to clean up if the Sentry dies mid-way, and
	 * unguessable, so nobody can have put anything there first. */
	uint64_t rnd[1];
	char tag[17];
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd[0] = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
	snprintf(tag, sizeof(tag), "%016llx", (unsigned long long)rnd[0]);
	static char req[REQ_MAX];
	int n = snprintf(req, sizeof(req), "checkpoint %d %d tag %s %s", o->leave_running, force,
			 tag, o->key ? "key " : "");
	for (size_t i = 0; o->key && i < o->key_len && i < IMAGE_KEY_MAX; i++)
		n += snprintf(req + n, sizeof(req) - n, "%02x", o->key[i]);
	n += snprintf(req + n, sizeof(req) - n, "%s%s%s%s%s%s%s\n", o->key ? " " : "", abs,
		      o->codec ? "\tcodec=" : "", o->codec ? o->codec : "",
		      o->parent ? "\tparent="
		      : o->base ? "\tbase="
				: "",
		      o->parent || o->base ? pimage : "", o->golden ? "\tgolden=1" : "");
	char resp[1024];
	size_t got = 0;
	/* A Sentry that dies or drops the connection mid-request is an EPIPE to report, not a
	 * SIGPIPE to die of in silence. */
	const int send_fds[2] = {parent, base};
	int err = send_with_fds(fd, req, n, send_fds, base >= 0 ? 2 : 1);
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
	if (base >= 0)
		close(base);
	resp[got] = 0;
	char *nl = strchr(resp, '\n');
	if (nl)
		*nl = 0;
	unsigned long long bytes, pages, wall, cpu, refs = 0;
	int at = 0;
	struct evict_report evicted = {0};
	bool ok = sscanf(resp, "ok %llu %llu %llu %llu %llu %n", &bytes, &pages, &wall, &cpu, &refs,
			 &at) >= 4;
	/* The note follows the eviction's three words (a Sentry of an older build sends one). */
	bool words = at && evict_report_parse(resp + at, &evicted);
	for (int w = 0; words && resp[at] && w < 3; w++) {
		at += strcspn(resp + at, " ");
		at += strspn(resp + at, " ");
	}
	/* A Sentry that died mid-write cleans up nothing: what it left has our tag. */
	if (!ok)
		image_write_cleanup(parent, strrchr(abs, '/') + 1, tag);
	close(parent);
	unlock(lfd, locked, lock);
	if (ok) {
		if (o->quiet)
			return 0;
		printf("checkpointed '%s' to %s: %llu bytes, %llu memory pages, %.2f ms (cpu %.2f "
		       "ms)",
		       name, dir, bytes, pages, wall / (double)USEC_PER_MSEC,
		       cpu / (double)USEC_PER_MSEC);
		if (o->parent)
			printf(", %llu pages in the parent", refs);
		if (o->base)
			printf(", %llu pages in the base", refs);
		char text[512];
		evict_report_format(&evicted, text, sizeof(text));
		printf(", %s\n", text);
		if (o->parent && at && resp[at])
			fprintf(stderr, "minisentry: checkpoint: --parent %s\n", resp + at);
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

/* "5s", "3m", "2h", "4d": how long ago START (realtime seconds) was. */
static void age(long long start, char *buf, size_t size)
{
	long long d = (long long)time(NULL) - start;

	if (start < 0 || d < 0)
		snprintf(buf, size, "?");
	else if (d < 120)
		snprintf(buf, size, "%llds", d);
	else if (d < 7200)
		snprintf(buf, size, "%lldm", d / 60);
	else if (d < 172800)
		snprintf(buf, size, "%lldh", d / 3600);
	else
		snprintf(buf, size, "%lldd", d / 86400);
}

/* The user name of UID from /etc/passwd, or its number. Read as a file, not through NSS: the
 * binary is linked statically, and a static glibc's getpwuid loads NSS modules at run time. */
static void owner_name(uid_t uid, char *buf, size_t size)
{
	FILE *f = fopen("/etc/passwd", "re");
	struct passwd *pw;

	snprintf(buf, size, "%u", (unsigned)uid);
	while (f && (pw = fgetpwent(f)))
		if (pw->pw_uid == uid) {
			snprintf(buf, size, "%s", pw->pw_name);
			break;
		}
	if (f)
		fclose(f);
}

/* The sandboxes listening in directory DIR, one line each. */
static void list_dir(const char *dir, bool *header)
{
	DIR *d;
	struct dirent *de;

	if (!(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		char path[PATH_MAX], when[32], owner[32];
		struct ping_info info;
		struct stat st;
		if (n > 5 && !strcmp(de->d_name + n - 5, ".lock")) {
			/* Left by a client killed mid-checkpoint (or an older minisentry, which
			 * never removed them): gone unless a checkpoint holds it now. */
			int lfd = openat(dirfd(d), de->d_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
			if (lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) == 0)
				unlinkat(dirfd(d), de->d_name, 0);
			if (lfd >= 0)
				close(lfd);
			continue;
		}
		if (n < 6 || strcmp(de->d_name + n - 5, ".sock"))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
			sizeof(path) ||
		    lstat(path, &st) || !ping_info(path, &info))
			continue; /* a socket left by a Sentry that died */
		owner_name(st.st_uid, owner, sizeof(owner));
		age(info.started, when, sizeof(when));
		if (!*header)
			printf("%-24s %8s %-8s %6s %s\n", "NAME", "PID", "STATUS", "AGE", "OWNER");
		*header = true;
		char pid[24] = "-";
		if (info.pid > 0)
			snprintf(pid, sizeof(pid), "%ld", info.pid);
		printf("%-24.*s %8s %-8s %6s %s\n", (int)(n - 5), de->d_name, pid,
		       info.frozen > 0 ? "paused" : "running", when, owner);
	}
	closedir(d);
}

int control_list(void)
{
	char dir[PATH_MAX];
	bool header = false;

	runtime_dir(dir, sizeof(dir));
	list_dir(dir, &header);
	/* Root sees every user's: theirs are under /tmp/minisentry-UID and
	 * /run/user/UID/minisentry. */
	if (geteuid() == 0) {
		glob_t g;
		if (glob("/tmp/minisentry-[0-9]*", GLOB_NOSORT, NULL, &g) == 0) {
			for (size_t i = 0; i < g.gl_pathc; i++)
				list_dir(g.gl_pathv[i], &header);
			globfree(&g);
		}
		if (glob("/run/user/[0-9]*/minisentry", GLOB_NOSORT, NULL, &g) == 0) {
			for (size_t i = 0; i < g.gl_pathc; i++)
				if (strcmp(g.gl_pathv[i], dir))
					list_dir(g.gl_pathv[i], &header);
			globfree(&g);
		}
	}
	return 0;
}

int control_exec(const char *path, const struct kernel_spawn *s, int pid_fd)
{
	char *buf = NULL, head[64], resp[1024];
	size_t len = 0, got = 0;
	FILE *f = open_memstream(&buf, &len);
	int argc = 0, fd, err;

	if (!f) {
		fprintf(stderr, "minisentry: exec: out of memory\n");
		return 1;
	}
	while (s->argv[argc])
		argc++;
	fprintf(f, "%u%c%u%c%s%c", (unsigned)s->uid, 0, (unsigned)s->gid, 0, s->cwd ? s->cwd : "",
		0);
	for (int i = 0; i < s->ngroups; i++)
		fprintf(f, "%s%u", i ? "," : "", (unsigned)s->groups[i]);
	fprintf(f, "%c%d%c", 0, s->no_new_privs, 0);
	if (s->caps)
		fprintf(f, "%" PRIx64 ":%" PRIx64 ":%" PRIx64 ":%" PRIx64 ":%" PRIx64,
			s->caps->bounding, s->caps->effective, s->caps->permitted,
			s->caps->inheritable, s->caps->ambient);
	fputc(0, f);
	if (s->seccomp_len) {
		const uint64_t *insns = s->seccomp_prog;
		fputc(s->seccomp_log ? '1' : '0', f);
		for (unsigned int i = 0; i < s->seccomp_len; i++)
			fprintf(f, "%016" PRIx64, insns[i]);
	}
	fprintf(f, "%c%d%c", 0, argc, 0);
	for (int i = 0; i < argc; i++)
		fprintf(f, "%s%c", s->argv[i], 0);
	for (int i = 0; s->envp && s->envp[i]; i++)
		fprintf(f, "%s%c", s->envp[i], 0);
	fclose(f);
	if ((fd = connect_to(path)) < 0) {
		free(buf);
		fprintf(stderr, "minisentry: exec: no running sandbox at %s\n", path);
		return 1;
	}
	int n = snprintf(head, sizeof(head), "exec %zu\n", len);
	err = send_with_fds(fd, head, (size_t)n, s->stdio, 3);
	if (!err)
		err = send_all(fd, buf, len);
	free(buf);
	/* The answer: "pid N" at once, "exit S" when the process ends (or "error ..."). */
	bool told_pid = false;
	while (!err) {
		char *nl;
		while (!(nl = memchr(resp, '\n', got))) {
			ssize_t r = got < sizeof(resp) - 1
					? read(fd, resp + got, sizeof(resp) - 1 - got)
					: -1;
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				close(fd);
				fprintf(stderr, "minisentry: exec: the sandbox went away\n");
				return 137;
			}
			got += (size_t)r;
		}
		*nl = 0;
		int v;
		if (sscanf(resp, "pid %d", &v) == 1 && !told_pid) {
			told_pid = true;
			if (pid_fd >= 0) {
				if (write(pid_fd, "p", 1) != 1) {
					/* The caller went away: the process runs on. */
				}
				close(pid_fd);
			}
		} else if (sscanf(resp, "exit %d", &v) == 1) {
			close(fd);
			return v;
		} else {
			close(fd);
			fprintf(stderr, "minisentry: exec: %s\n",
				!strncmp(resp, "error ", 6) ? resp + 6 : "bad answer");
			return 126;
		}
		size_t used = (size_t)(nl + 1 - resp);
		memmove(resp, nl + 1, got - used);
		got -= used;
	}
	close(fd);
	fprintf(stderr, "minisentry: exec: %s\n", strerror(err));
	return 1;
}

/* --- the OCI runtime's pause, resume, events and update ------------------------------------- */

/* Requests, one line each, with their answers (or "error MESSAGE"):
 *   "pause", "resume"     "ok": the guest is frozen, or runs again (sentry/freeze.c)
 *   "stats"               "ok frozen=F tasks=N pids_limit=N memory_used=B memory_limit=B
 *                         oom_kills=N cpu_user_ns=N cpu_kernel_ns=N" (struct kernel_usage)
 *   "events"              "ok", then a line per event ("oom") while the connection lasts
 *   "update pids N"       "ok": the --pids bound is N
 *   "update memory B"     "reconf" with the memory file's reconfiguration context (SCM_RIGHTS),
 *                         the guest stopped meanwhile; the client sets the size B and answers
 *                         "done ERRNO"; then "ok BYTES", the bound now. */

/* Connections that asked for events, each until it hangs up: epoll reports that with the
 * slot as its data, and anything a watcher sends ends it too (it only listens). */
#define WATCHERS_MAX 16
static int watchers[WATCHERS_MAX] = {[0 ... WATCHERS_MAX - 1] = -1};
#define UPDATE_WAIT_MS 10000

static void watcher_drop(int i)
{
	epoll_ctl(kernel.epfd, EPOLL_CTL_DEL, watchers[i], NULL);
	close(watchers[i]);
	watchers[i] = -1;
}

static bool watcher_event(void *ptr)
{
	int *w = ptr;

	if (w < watchers || w >= watchers + WATCHERS_MAX)
		return false;
	if (*w >= 0)
		watcher_drop((int)(w - watchers));
	return true;
}

void control_notify(const char *event)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "%s\n", event);

	/* Never waits (the connection does not block): a watcher that does not read loses its
	 * connection, not the Sentry's time. A gone one is EPIPE, SIGPIPE being ignored. */
	for (int i = 0; i < WATCHERS_MAX; i++)
		if (watchers[i] >= 0 && write(watchers[i], line, (size_t)n) != n)
			watcher_drop(i);
}

/* S is all decimal digits, at most 19 of them, as *V. */
static bool parse_count(const char *s, uint64_t *v)
{
	size_t n = strspn(s, "0123456789");

	if (n == 0 || n > 19 || s[n])
		return false;
	*v = strtoull(s, NULL, 10);
	return true;
}

static bool add_watcher(int fd)
{
	for (int i = 0; i < WATCHERS_MAX; i++) {
		if (watchers[i] >= 0)
			continue;
		struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = &watchers[i]};
		int fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) ||
		    epoll_ctl(kernel.epfd, EPOLL_CTL_ADD, fd, &ev))
			return false;
		watchers[i] = fd;
		return true;
	}
	return false;
}

/* The new memory bound BYTES, set by the client (it alone may resize the memory file's tmpfs)
 * while no guest thread runs, so that what the guest uses cannot grow past the new bound
 * between the check and the resize (a failed resize would spend the context for good). */
static void update_memory(int fd, uint64_t bytes)
{
	int rfd = memfile_reconf_fd(), err;
	char line[64];

	if (rfd < 0) {
		reply(fd, "error the memory bound of this sandbox cannot change while it runs (its "
			  "memory is not a tmpfs of its own)\n");
		return;
	}
	if (bytes < MEMORY_MIN || bytes % PAGE_SIZE) {
		reply(fd, "error bad memory bound\n");
		return;
	}
	if ((err = kernel_quiesce())) {
		reply(fd, "error cannot stop the guest: %s\n", strerror(-err));
		kernel_unquiesce();
		return;
	}
	uint64_t used = memfile_used();
	if (used > bytes) {
		reply(fd,
		      "error the sandbox uses %llu MiB, more than %llu MiB: a bound below its use "
		      "is refused\n",
		      (unsigned long long)(used >> 20), (unsigned long long)(bytes >> 20));
		goto out;
	}
	if (send_with_fds(fd, "reconf\n", 7, &rfd, 1))
		goto out;
	read_line(fd, line, sizeof(line), UPDATE_WAIT_MS);
	int e = -1, off = 0;
	uint64_t now = memfile_limit_reread(); /* whatever the client said or did */
	if (sscanf(line, "done %d%n", &e, &off) != 1 || line[off] != '\n' || e < 0)
		reply(fd, "error bad answer\n");
	else if (e)
		reply(fd, "error cannot resize the sandbox's memory: %s\n", strerror(e));
	else
		reply(fd, "ok %llu\n", (unsigned long long)now);
out:
	kernel_unquiesce();
}

/* REQ, one of the requests above: served (true), *KEEP set when the connection stays (events);
 * false if REQ is none of them. */
static bool serve_runtime_request(int fd, const char *req, bool *keep)
{
	uint64_t n;
	int err;

	if (!strcmp(req, "pause") || !strcmp(req, "resume")) {
		if (req[0] == 'r')
			kernel_thaw();
		else if ((err = kernel_freeze()))
			return reply(fd, "error cannot stop the guest: %s\n", strerror(-err)), true;
		reply(fd, "ok\n");
	} else if (!strcmp(req, "stats")) {
		struct kernel_usage u;
		kernel_usage(&u);
		reply(fd,
		      "ok frozen=%d tasks=%llu pids_limit=%llu memory_used=%llu memory_limit=%llu "
		      "oom_kills=%llu cpu_user_ns=%llu cpu_kernel_ns=%llu\n",
		      u.frozen, (unsigned long long)u.tasks, (unsigned long long)u.pids_limit,
		      (unsigned long long)u.memory_used, (unsigned long long)u.memory_limit,
		      (unsigned long long)u.oom_kills, (unsigned long long)u.cpu_user_ns,
		      (unsigned long long)u.cpu_kernel_ns);
	} else if (!strcmp(req, "events")) {
		if (!add_watcher(fd))
			return reply(fd, "error too many watchers of this sandbox's events\n"),
			       true;
		reply(fd, "ok\n");
		*keep = true;
	} else if (!strncmp(req, "update pids ", 12) && parse_count(req + 12, &n)) {
		if (kernel_set_pids(n))
			reply(fd, "error the pids limit is 1 to %d\n", PIDS_MAX);
		else
			reply(fd, "ok\n");
	} else if (!strncmp(req, "update memory ", 14) && parse_count(req + 14, &n)) {
		update_memory(fd, n);
	} else if (!strncmp(req, "update ", 7)) {
		reply(fd, "error bad request\n");
	} else {
		return false;
	}
	return true;
}

/* The client: REQ sent to the sandbox at PATH, its one-line answer into RESP (the line's end
 * cut); the connection if KEEP (else closed), or -1 with ERR saying why. */
static int ask(const char *path, const char *req, char *resp, size_t size, bool keep, char *err,
	       size_t esize)
{
	int fd = connect_to(path), e;
	size_t got = 0;

	if (fd < 0) {
		snprintf(err, esize, "the sandbox is not running (%s)", strerror(-fd));
		return -1;
	}
	if ((e = send_all(fd, req, strlen(req)))) {
		snprintf(err, esize, "the sandbox dropped the request: %s", strerror(e));
		close(fd);
		return -1;
	}
	/* One byte at a time: what follows the line (events) is the caller's. */
	while (got < size - 1) {
		if (wait_readable(fd, UPDATE_WAIT_MS) <= 0)
			break;
		ssize_t n = read(fd, resp + got, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || resp[got] == '\n')
			break;
		got++;
	}
	resp[got] = 0;
	if (strncmp(resp, "ok", 2) || (resp[2] && resp[2] != ' ')) {
		snprintf(err, esize, "%s",
			 !strncmp(resp, "error ", 6) ? resp + 6
			 : got			     ? "the sandbox gave a bad answer"
						     : "the sandbox did not answer");
		close(fd);
		return -1;
	}
	if (!keep) {
		close(fd);
		return 0;
	}
	return fd;
}

int control_freeze(const char *path, bool freeze, char *err, size_t esize)
{
	char resp[256];

	return ask(path, freeze ? "pause\n" : "resume\n", resp, sizeof(resp), false, err, esize);
}

int control_frozen(const char *path)
{
	struct ping_info info;

	return ping_info(path, &info) ? info.frozen : -1;
}

int control_stats(const char *path, struct kernel_usage *u, char *err, size_t esize)
{
	char resp[512];
	int frozen = 0, off = 0;

	if (ask(path, "stats\n", resp, sizeof(resp), false, err, esize) < 0)
		return -1;
	*u = (struct kernel_usage){0};
	if (sscanf(resp,
		   "ok frozen=%d tasks=%" SCNu64 " pids_limit=%" SCNu64 " memory_used=%" SCNu64
		   " memory_limit=%" SCNu64 " oom_kills=%" SCNu64 " cpu_user_ns=%" SCNu64
		   " cpu_kernel_ns=%" SCNu64 "%n",
		   &frozen, &u->tasks, &u->pids_limit, &u->memory_used, &u->memory_limit,
		   &u->oom_kills, &u->cpu_user_ns, &u->cpu_kernel_ns, &off) != 8 ||
	    resp[off]) {
		snprintf(err, esize, "the sandbox gave bad statistics");
		return -1;
	}
	u->frozen = frozen;
	return 0;
}

int control_events(const char *path, char *err, size_t esize)
{
	char resp[256];

	return ask(path, "events\n", resp, sizeof(resp), true, err, esize);
}

int control_set_pids(const char *path, uint64_t n, char *err, size_t esize)
{
	char req[64], resp[256];

	snprintf(req, sizeof(req), "update pids %" PRIu64 "\n", n);
	return ask(path, req, resp, sizeof(resp), false, err, esize);
}

int control_set_memory(const char *path, uint64_t bytes, uint64_t *now, char *err, size_t esize)
{
	char req[64], resp[256], size[32], done[32];
	int fd, rfd = -1, nfds = 0, off = 0;
	size_t got = 0;

	snprintf(req, sizeof(req), "update memory %" PRIu64 "\n", bytes);
	if ((fd = connect_to(path)) < 0) {
		snprintf(err, esize, "the sandbox is not running (%s)", strerror(-fd));
		return -1;
	}
	int e = send_all(fd, req, strlen(req));
	/* "reconf" with the context, or the answer at once. */
	while (!e && got < sizeof(resp) - 1 && !memchr(resp, '\n', got)) {
		if (wait_readable(fd, UPDATE_WAIT_MS) <= 0)
			break;
		ssize_t n = recv_with_fds(fd, resp + got, sizeof(resp) - 1 - got, &rfd, 1, &nfds);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	resp[got] = 0;
	if (!strcmp(resp, "reconf\n") && nfds == 1) {
		/* Takes CAP_SYS_ADMIN over the sandbox's user namespace: its owner's. */
		snprintf(size, sizeof(size), "%" PRIu64, bytes);
		int r = 0;
		if (fsconfig(rfd, FSCONFIG_SET_STRING, "size", size, 0) ||
		    fsconfig(rfd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0))
			r = errno;
		close(rfd);
		rfd = -1;
		snprintf(done, sizeof(done), "done %d\n", r);
		resp[0] = 0;
		if (!(e = send_all(fd, done, strlen(done))))
			read_line(fd, resp, sizeof(resp), UPDATE_WAIT_MS);
	}
	if (rfd >= 0)
		close(rfd);
	close(fd);
	char *nl = strchr(resp, '\n');
	if (nl)
		*nl = 0;
	if (sscanf(resp, "ok %" SCNu64 "%n", now, &off) == 1 && !resp[off])
		return 0;
	snprintf(err, esize, "%s",
		 !strncmp(resp, "error ", 6) ? resp + 6
		 : e			     ? strerror(e)
		 : got			     ? "the sandbox gave a bad answer"
					     : "the sandbox did not answer");
	return -1;
}
