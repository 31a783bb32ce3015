/* minisentry as an OCI runtime: the command line engines (podman's conmon, containerd's runc
 * shim, Docker through containerd) drive runc with, over minisentry's own sandbox. A container
 * is a directory ROOT/ID holding state.json and, until it is started, exec.fifo. `create`
 * forks the container's process, which waits on that FIFO, and returns once its pid is
 * written; `start` opens the FIFO, and the process goes on to become a sandbox exactly as
 * `minisentry run` does (the launcher, then the Sentry in its namespaces): the pid the engine
 * waits on exits with the guest's status. docs/oci.md says what is taken from config.json and
 * what is refused. */
#include "sentry/oci.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/limits.h"
#include "oci/json.h"
#include "oci/spec.h"
#include "oci/seccomp.h"
#include "sentry/checkpoint.h"
#include "sentry/control.h"
#include "sentry/kernel.h"
#include "sentry/resources.h"

#define OCI_VERSION "1.0.2"
#define FIFO_NAME "exec.fifo"
#define STATE_NAME "state.json"
/* How long `start` waits for a created container to take the FIFO's byte. */
#define START_TIMEOUT_MS 10000
/* How long `delete --force` and `kill` waits for a killed container to be gone. */
#define GONE_TIMEOUT_MS 5000

/* The global flags, as runc takes them before the command. */
static struct {
	const char *root;
	const char *log;
	bool log_json;
} g;

/* --- errors -------------------------------------------------------------------------------- */

/* One line on stderr, and in the --log file (a JSON record with --log-format json, which is
 * where conmon and the containerd shim look for the reason a command failed). Returns 1. */
static int oci_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int oci_fail(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "minisentry: %s\n", msg);
	if (g.log) {
		FILE *f = fopen(g.log, "ae");
		if (f) {
			char when[64];
			time_t now = time(NULL);
			struct tm tm;
			gmtime_r(&now, &tm);
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
			if (g.log_json) {
				fputs("{\"level\":\"error\",\"msg\":", f);
				json_write_string(f, msg);
				fprintf(f, ",\"time\":\"%s\"}\n", when);
			} else {
				fprintf(f, "time=\"%s\" level=error msg=\"%s\"\n", when, msg);
			}
			fclose(f);
		}
	}
	return 1;
}

/* --- the runtime root and a container's directory ------------------------------------------ */

static const char *root_dir(void)
{
	static char buf[PATH_MAX];
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (g.root)
		return g.root;
	if (geteuid() != 0 && xdg && xdg[0] == '/')
		snprintf(buf, sizeof(buf), "%s/minisentry/oci", xdg);
	else
		snprintf(buf, sizeof(buf), "/run/minisentry/oci");
	return buf;
}

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

/* PATH of FILE (or the directory itself when NULL) of container ID. */
static int ctr_path(const char *id, const char *file, char *buf, size_t size)
{
	int n = file ? snprintf(buf, size, "%s/%s/%s", root_dir(), id, file)
		     : snprintf(buf, size, "%s/%s", root_dir(), id);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* Container ids: what the control socket takes as a sandbox name (1-64 of letters, digits,
 * '.', '_', '-'), which covers the 64 hex digits engines use. */
static bool valid_id(const char *id)
{
	char path[PATH_MAX];

	return control_socket_path(id, path, sizeof(path));
}

/* What state.json holds, and what is derived from it. */
struct ctr {
	char id[80];
	char control[PATH_MAX]; /* the sandbox's control socket (exec) */
	pid_t pid;
	unsigned long long starttime;
	char bundle[PATH_MAX];
	char rootfs[PATH_MAX];
	char created[64];
	struct json *doc; /* for the annotations */
};

static void ctr_free(struct ctr *c)
{
	json_free(c->doc);
	c->doc = NULL;
}

/* Field 22 of /proc/PID/stat (when the process started), and its state letter: a pid that is
 * reused, or a zombie, is not the container's process any more. */
static bool proc_start(pid_t pid, unsigned long long *start, char *state)
{
	char path[64], buf[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%c", state) != 1)
		return false;
	/* After the state: 18 fields to starttime. */
	for (int i = 0; i < 19 && p; i++)
		p = strchr(p + 1, ' ');
	return p && sscanf(p + 1, "%llu", start) == 1;
}

static bool ctr_alive(const struct ctr *c)
{
	unsigned long long start;
	char st;

	return c->pid > 0 && proc_start(c->pid, &start, &st) && start == c->starttime &&
	       st != 'Z' && st != 'X';
}

static const char *ctr_status(const struct ctr *c)
{
	char fifo[PATH_MAX];
	struct stat st;

	if (!ctr_alive(c))
		return "stopped";
	if (ctr_path(c->id, FIFO_NAME, fifo, sizeof(fifo)) == 0 && stat(fifo, &st) == 0)
		return "created";
	/* Paused is the Sentry's to say (runc reads its cgroup's freezer). */
	if (c->control[0] && control_frozen(c->control) == 1)
		return "paused";
	return "running";
}

static int ctr_load(const char *id, struct ctr *c)
{
	char path[PATH_MAX], err[200];
	int64_t v;

	memset(c, 0, sizeof(*c));
	if (!valid_id(id))
		return oci_fail("'%s' is not a valid container id", id);
	if (ctr_path(id, STATE_NAME, path, sizeof(path)))
		return oci_fail("container %s: path too long", id);
	if (access(path, F_OK))
		return oci_fail("container %s does not exist", id);
	if (!(c->doc = json_parse_file(path, err, sizeof(err))))
		return oci_fail("container %s: %s: %s", id, path, err);
	snprintf(c->id, sizeof(c->id), "%s", id);
	if (json_int(json_get(c->doc, "pid"), &v) && v > 0 && v < INT_MAX)
		c->pid = (pid_t)v;
	if (json_int(json_get(c->doc, "starttime"), &v) && v >= 0)
		c->starttime = (unsigned long long)v;
	snprintf(c->bundle, sizeof(c->bundle), "%s",
		 json_str(json_get(c->doc, "bundle")) ? json_str(json_get(c->doc, "bundle")) : "");
	snprintf(c->rootfs, sizeof(c->rootfs), "%s",
		 json_str(json_get(c->doc, "rootfs")) ? json_str(json_get(c->doc, "rootfs")) : "");
	snprintf(c->control, sizeof(c->control), "%s",
		 json_str(json_get(c->doc, "controlSocket"))
		     ? json_str(json_get(c->doc, "controlSocket"))
		     : "");
	snprintf(c->created, sizeof(c->created), "%s",
		 json_str(json_get(c->doc, "created")) ? json_str(json_get(c->doc, "created"))
						       : "");
	return 0;
}

static void write_annotations(FILE *f, const struct json *a)
{
	fputs("{", f);
	for (size_t i = 0; a && i < a->len; i++) {
		fputs(i ? "," : "", f);
		json_write_string(f, a->keys[i]);
		fputc(':', f);
		json_write_string(f, a->items[i]->str);
	}
	fputs("}", f);
}

/* The state of a container as `state` prints it (runtime-spec "State"), to F. */
static void write_state(FILE *f, const struct ctr *c, const char *status, bool internal)
{
	fprintf(f, "{\"ociVersion\":\"%s\",\"id\":", OCI_VERSION);
	json_write_string(f, c->id);
	if (!internal) {
		fputs(",\"status\":", f);
		json_write_string(f, status);
	}
	fprintf(f, ",\"pid\":%d", internal || strcmp(status, "stopped") ? (int)c->pid : 0);
	if (internal)
		fprintf(f, ",\"starttime\":%llu", c->starttime);
	fputs(",\"bundle\":", f);
	json_write_string(f, c->bundle);
	fputs(",\"rootfs\":", f);
	json_write_string(f, c->rootfs);
	fputs(",\"created\":", f);
	json_write_string(f, c->created);
	fputs(",\"owner\":\"\",\"annotations\":", f);
	write_annotations(f, json_get(c->doc, "annotations"));
	fputs("}\n", f);
}

/* Writes PATH whole or not at all (a temporary file renamed over it). */
static int write_atomic(const char *path, const char *data, size_t len)
{
	char tmp[PATH_MAX + 8];
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		return -errno;
	if (write(fd, data, len) != (ssize_t)len)
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* state.json of C, with ANNOTATIONS (the spec's, or NULL). */
static int save_state(const struct ctr *c, const struct json *annotations)
{
	char path[PATH_MAX], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return -ENOMEM;
	fprintf(f, "{\"ociVersion\":\"%s\",\"id\":", OCI_VERSION);
	json_write_string(f, c->id);
	fprintf(f, ",\"pid\":%d,\"starttime\":%llu,\"bundle\":", (int)c->pid, c->starttime);
	json_write_string(f, c->bundle);
	fputs(",\"rootfs\":", f);
	json_write_string(f, c->rootfs);
	fputs(",\"created\":", f);
	json_write_string(f, c->created);
	fputs(",\"controlSocket\":", f);
	json_write_string(f, c->control);
	fputs(",\"annotations\":", f);
	write_annotations(f, annotations);
	fputs("}\n", f);
	fclose(f);
	int err = ctr_path(c->id, STATE_NAME, path, sizeof(path));
	if (!err)
		err = write_atomic(path, buf, len);
	free(buf);
	return err;
}

/* Removes container ID's directory and what the runtime put in it. */
static void ctr_remove(const char *id)
{
	char dir[PATH_MAX];
	DIR *d;
	struct dirent *de;

	if (ctr_path(id, NULL, dir, sizeof(dir)) || !(d = opendir(dir)))
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	rmdir(dir);
}

/* --- from config.json to the sandbox's configuration --------------------------------------- */

/* Everything a kernel_config points to, owned here for the life of the container process. */
struct mapped {
	struct kernel_config cfg;
	struct kernel_bind *binds;
	struct kernel_fsmount *fsmounts;
	struct kernel_rlimit rlimits[OCI_MAX_RLIMITS];
	struct caps_sets caps;
	struct oci_bpf seccomp;
	char *rootfs;
};

/* PATH, relative to the bundle when it is not absolute: malloc'd. */
static char *in_bundle(const char *bundle, const char *path)
{
	char *out;

	if (path[0] == '/')
		return strdup(path);
	return asprintf(&out, "%s/%s", bundle, path) < 0 ? NULL : out;
}

/* S's process.capabilities as the five sets a process starts with. */
static struct caps_sets spec_caps(const struct oci_spec *s)
{
	return (struct caps_sets){s->cap_bounding, s->cap_effective, s->cap_permitted,
				  s->cap_inheritable, s->cap_ambient};
}

static int map_spec(const struct oci_spec *s, const char *bundle, const char *id, struct mapped *m)
{
	struct kernel_config *cfg = &m->cfg;
	struct stat st;

	memset(m, 0, sizeof(*m));
	if (!s->has_process)
		return oci_fail("config.json has no process to run");
	if (!(m->rootfs = in_bundle(bundle, s->root_path)))
		return oci_fail("out of memory");
	if (stat(m->rootfs, &st) || !S_ISDIR(st.st_mode))
		return oci_fail("root.path '%s': %s", m->rootfs,
				errno ? strerror(errno) : "not a directory");
	cfg->rootfs = m->rootfs;
	cfg->argv = (char **)s->args;
	static char *no_env[] = {NULL};
	cfg->envp = s->env ? (char **)s->env : no_env;
	cfg->cwd = s->cwd;
	cfg->user_set = true;
	cfg->uid = s->uid;
	cfg->gid = s->gid;
	cfg->groups = s->gids;
	cfg->ngroups = (int)s->ngids;
	cfg->umask_set = s->has_umask;
	cfg->umask = s->umask;
	cfg->no_new_privs = s->no_new_privileges;
	if (s->has_caps) {
		m->caps = spec_caps(s);
		cfg->caps = &m->caps;
	}
	for (size_t i = 0; i < s->nrlimits; i++)
		m->rlimits[i] = (struct kernel_rlimit){s->rlimits[i].resource, s->rlimits[i].soft,
						       s->rlimits[i].hard};
	cfg->rlimits = m->rlimits;
	cfg->nrlimits = (int)s->nrlimits;
	/* linux.seccomp: init starts filtered by it, as runc installs it just before it runs
	 * the process; the guest sees a filter of its own (Seccomp: 2 in /proc/PID/status). */
	if (s->seccomp) {
		char err[256];
		if (oci_seccomp_compile(s->seccomp, &m->seccomp, err, sizeof(err)))
			return oci_fail("%s", err);
		cfg->seccomp_prog = m->seccomp.insns;
		cfg->seccomp_len = m->seccomp.len;
		cfg->seccomp_log = m->seccomp.log;
	}
	cfg->hostname = s->hostname;
	cfg->root_readonly = s->root_readonly;
	cfg->placement = PLACEMENT_AUTO;
	cfg->platform = kernel_default_platform();
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cfg->cpus = n < 1 ? 1 : n > MAX_CPUS ? MAX_CPUS : (int)n;
	/* Without a network namespace of its own, a container shares the host's (podman
	 * --network host); with one, or one to join, it gets the sandbox's private network. */
	cfg->network = s->namespaces & OCI_NS_NETWORK ? NETWORK_LOOPBACK : NETWORK_HOST;
	if (s->pids_limit > 0)
		cfg->pids = s->pids_limit > PIDS_MAX ? PIDS_MAX : (int)s->pids_limit;
	/* linux.resources.memory.limit bounds all the sandbox's memory, as --memory does (whose
	 * least is MEMORY_MIN: a smaller limit gets that). */
	if (s->memory_limit > 0)
		cfg->memory =
		    (uint64_t)s->memory_limit < MEMORY_MIN ? MEMORY_MIN : (uint64_t)s->memory_limit;
	cfg->id = id;
	/* The container's stderr is the application's: no notices of unimplemented syscalls. */
	cfg->quiet = true;

	m->binds = calloc(s->nmounts + 1, sizeof(*m->binds));
	m->fsmounts = calloc(s->nmounts + 1, sizeof(*m->fsmounts));
	if (!m->binds || !m->fsmounts)
		return oci_fail("out of memory");
	for (size_t i = 0; i < s->nmounts; i++) {
		const struct oci_mount *o = &s->mounts[i];
		switch (o->kind) {
		case OCI_MOUNT_BIND: {
			struct kernel_bind *b = &m->binds[cfg->nbinds];
			char *src = in_bundle(bundle, o->source);
			if (!src || !(b->src = realpath(src, NULL))) {
				int e = errno;
				free(src);
				return oci_fail("mount %s: source '%s': %s", o->destination,
						o->source, strerror(e));
			}
			free(src);
			b->dst = o->destination;
			b->ro = o->ro;
			cfg->nbinds++;
			break;
		}
		case OCI_MOUNT_PROC:
		case OCI_MOUNT_SYSFS:
		case OCI_MOUNT_TMPFS:
			/* /dev is the sandbox's own devfs, whatever an engine mounts there. */
			if (o->kind == OCI_MOUNT_TMPFS && !strcmp(o->destination, "/dev"))
				break;
			m->fsmounts[cfg->nfsmounts++] =
			    (struct kernel_fsmount){o->kind == OCI_MOUNT_PROC	 ? "proc"
						    : o->kind == OCI_MOUNT_SYSFS ? "sysfs"
										 : "tmpfs",
						    o->destination};
			break;
		case OCI_MOUNT_IGNORED:
			break;
		}
	}
	cfg->binds = m->binds;
	cfg->fsmounts = m->fsmounts;
	return 0;
}

/* --- the console --------------------------------------------------------------------------- */

/* A new pseudo-terminal for a `terminal: true` process: its master is sent to the engine's
 * console socket (SCM_RIGHTS, the terminal's name as the message, as runc does), its slave
 * returned for the container's stdio. */
static int console_slave(const char *socket_path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int master, slave = -1, sock = -1;
	char name[64];

	if (strlen(socket_path) >= sizeof(sa.sun_path))
		return oci_fail("--console-socket '%s': path too long", socket_path), -1;
	if ((master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0 || grantpt(master) ||
	    unlockpt(master) || ptsname_r(master, name, sizeof(name))) {
		oci_fail("cannot make a terminal: %s", strerror(errno));
		goto out;
	}
	if ((slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		oci_fail("cannot open the terminal %s: %s", name, strerror(errno));
		goto out;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", socket_path);
	if ((sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(sock, (struct sockaddr *)&sa, sizeof(sa))) {
		oci_fail("--console-socket '%s': %s", socket_path, strerror(errno));
		goto fail;
	}
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = {name, strlen(name)};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf)};
	memset(&ctl, 0, sizeof(ctl));
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &master, sizeof(int));
	if (sendmsg(sock, &msg, MSG_NOSIGNAL) < 0) {
		oci_fail("--console-socket '%s': %s", socket_path, strerror(errno));
		goto fail;
	}
	goto out;
fail:
	close(slave);
	slave = -1;
out:
	if (sock >= 0)
		close(sock);
	if (master >= 0)
		close(master);
	return slave;
}

/* --- create, start, run -------------------------------------------------------------------- */

struct create_opts {
	const char *bundle;
	const char *pid_file;
	const char *console_socket;
	bool detach;
};

static void rfc3339_now(char *buf, size_t size)
{
	struct timespec ts;
	struct tm tm;
	char base[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%09ldZ", base, ts.tv_nsec);
}

/* The container's process, after fork: waits for `start` on the FIFO, then becomes the
 * sandbox. Never returns. */
static __attribute__((noreturn)) void container_process(struct mapped *m, const char *fifo,
							int ready, int tty)
{
	int fd;

	setsid();
	if (tty >= 0) {
		ioctl(tty, TIOCSCTTY, 0);
		for (int i = 0; i < 3; i++)
			dup2(tty, i);
		if (tty > 2)
			close(tty);
	}
	if (write(ready, "r", 1) != 1)
		_exit(1);
	close(ready);
	/* Blocks until `start` opens the FIFO for reading. */
	while ((fd = open(fifo, O_WRONLY | O_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (fd < 0 || write(fd, "0", 1) != 1)
		_exit(1);
	close(fd);
	int r = kernel_run(&m->cfg);
	if (r < 0)
		r = r == -ENOENT ? 127 : 126;
	fflush(NULL);
	confine_exiting(r);
	exit(r);
}

static int write_pid_file(const char *path, pid_t pid)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%d", (int)pid);

	return write_atomic(path, buf, (size_t)n);
}

/* Creates container ID from its bundle: *PID gets the container's process. */
static int create(const char *id, const struct create_opts *o, pid_t *pid)
{
	char bundle[PATH_MAX], dir[PATH_MAX], fifo[PATH_MAX], err[512];
	struct oci_spec spec;
	struct mapped *m = calloc(1, sizeof(*m));
	struct ctr c = {0};
	int ready[2], tty = -1;

	if (!m)
		return oci_fail("out of memory");
	if (!valid_id(id))
		return oci_fail(
		    "'%s' is not a valid container id (1-64 letters, digits, '.', '_', '-')", id);
	if (!realpath(o->bundle ? o->bundle : ".", bundle))
		return oci_fail("bundle '%s': %s", o->bundle ? o->bundle : ".", strerror(errno));
	if (oci_spec_load(bundle, &spec, err, sizeof(err)))
		return oci_fail("%s", err);
	if (map_spec(&spec, bundle, id, m))
		return 1;
	if (spec.terminal && !o->console_socket && o->detach)
		return oci_fail("process.terminal needs --console-socket to be detached");
	int e = mkdir_p(root_dir(), 0711);
	if (e || ctr_path(id, NULL, dir, sizeof(dir)) ||
	    ctr_path(id, FIFO_NAME, fifo, sizeof(fifo)))
		return oci_fail("runtime root '%s': %s", root_dir(),
				strerror(e ? -e : ENAMETOOLONG));
	if (mkdir(dir, 0711))
		return errno == EEXIST ? oci_fail("container %s already exists", id)
				       : oci_fail("%s: %s", dir, strerror(errno));
	if (mkfifo(fifo, 0600)) {
		oci_fail("%s: %s", fifo, strerror(errno));
		goto fail;
	}
	if (spec.terminal && o->console_socket && (tty = console_slave(o->console_socket)) < 0)
		goto fail;
	if (pipe2(ready, O_CLOEXEC)) {
		oci_fail("pipe: %s", strerror(errno));
		goto fail;
	}
	fflush(NULL);
	*pid = fork();
	if (*pid < 0) {
		oci_fail("fork: %s", strerror(errno));
		goto fail;
	}
	if (*pid == 0) {
		close(ready[0]);
		container_process(m, fifo, ready[1], tty);
	}
	close(ready[1]);
	if (tty >= 0)
		close(tty);
	char b;
	ssize_t n;
	while ((n = read(ready[0], &b, 1)) < 0 && errno == EINTR)
		;
	close(ready[0]);
	if (n != 1) {
		oci_fail("the container's process ended before it was ready");
		goto fail;
	}
	char st;
	snprintf(c.id, sizeof(c.id), "%s", id);
	c.pid = *pid;
	proc_start(c.pid, &c.starttime, &st);
	snprintf(c.bundle, sizeof(c.bundle), "%s", bundle);
	snprintf(c.rootfs, sizeof(c.rootfs), "%s", m->rootfs);
	rfc3339_now(c.created, sizeof(c.created));
	/* Where the sandbox will listen: its process has our environment. */
	control_socket_path(id, c.control, sizeof(c.control));
	if ((e = save_state(&c, spec.annotations))) {
		oci_fail("%s/%s: %s", dir, STATE_NAME, strerror(-e));
		kill(*pid, SIGKILL);
		goto fail;
	}
	if (o->pid_file && (e = write_pid_file(o->pid_file, *pid))) {
		oci_fail("--pid-file '%s': %s", o->pid_file, strerror(-e));
		kill(*pid, SIGKILL);
		goto fail;
	}
	return 0;
fail:
	ctr_remove(id);
	return 1;
}

/* Lets created container C go: its process takes the FIFO's byte and becomes the sandbox. */
static int start(const struct ctr *c)
{
	char fifo[PATH_MAX], b;
	const char *status = ctr_status(c);
	struct pollfd p;
	int fd;

	if (strcmp(status, "created"))
		return oci_fail("cannot start a container that is %s", status);
	if (ctr_path(c->id, FIFO_NAME, fifo, sizeof(fifo)) ||
	    (fd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return oci_fail("container %s: %s", c->id, strerror(errno));
	p = (struct pollfd){.fd = fd, .events = POLLIN};
	int r;
	while ((r = poll(&p, 1, START_TIMEOUT_MS)) < 0 && errno == EINTR)
		;
	bool took = r == 1 && read(fd, &b, 1) == 1;
	close(fd);
	if (!took)
		return oci_fail("container %s did not start", c->id);
	unlink(fifo);
	return 0;
}

/* --- the commands -------------------------------------------------------------------------- */

enum {
	OPT_BUNDLE = 0x200,
	OPT_PID_FILE,
	OPT_CONSOLE,
	OPT_IGNORED_FLAG,
	OPT_IGNORED_VALUE,
	OPT_IGNORE_PAUSED,
	OPT_NO_NEW_PRIVS
};

/* Options of create and run; runc's others are accepted and mean nothing here. */
static const struct option create_opts[] = {
    {"bundle", required_argument, NULL, 'b'},
    {"pid-file", required_argument, NULL, OPT_PID_FILE},
    {"console-socket", required_argument, NULL, OPT_CONSOLE},
    {"detach", no_argument, NULL, 'd'},
    {"no-pivot", no_argument, NULL, OPT_IGNORED_FLAG},
    {"no-new-keyring", no_argument, NULL, OPT_IGNORED_FLAG},
    {"no-subreaper", no_argument, NULL, OPT_IGNORED_FLAG},
    {"keep", no_argument, NULL, OPT_IGNORED_FLAG},
    {"preserve-fds", required_argument, NULL, OPT_IGNORED_VALUE},
    {NULL, 0, NULL, 0}};

/* Parses create's or run's options into O; the container id's index, or -1 (reported). */
static int parse_create(int argc, char **argv, struct create_opts *o, const char *cmd)
{
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+b:d", create_opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			o->bundle = optarg;
			break;
		case OPT_PID_FILE:
			o->pid_file = optarg;
			break;
		case OPT_CONSOLE:
			o->console_socket = optarg;
			break;
		case 'd':
			o->detach = true;
			break;
		case OPT_IGNORED_FLAG:
		case OPT_IGNORED_VALUE:
			break;
		default:
			oci_fail("%s: unknown option %s", cmd, argv[optind - 1]);
			return -1;
		}
	}
	if (optind != argc - 1) {
		oci_fail("%s needs exactly one container id", cmd);
		return -1;
	}
	return optind;
}

static int cmd_create(int argc, char **argv)
{
	struct create_opts o = {.detach = true};
	pid_t pid;
	int i = parse_create(argc, argv, &o, "create");

	if (i < 0)
		return 2;
	return create(argv[i], &o, &pid);
}

static int cmd_run(int argc, char **argv)
{
	struct create_opts o = {0};
	struct ctr c;
	pid_t pid;
	int i = parse_create(argc, argv, &o, "run"), st;

	if (i < 0)
		return 2;
	if (create(argv[i], &o, &pid) || ctr_load(argv[i], &c))
		return 1;
	int r = start(&c);
	ctr_free(&c);
	if (r || o.detach)
		return r;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	ctr_remove(argv[i]);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Commands that take exactly one container id and no options but FLAGS (accepted). */
static int one_id(int argc, char **argv, const char *cmd, const char *const *flags)
{
	int idx = -1;

	for (int i = 1; i < argc; i++) {
		bool flag = false;
		for (const char *const *f = flags; f && *f; f++)
			flag |= !strcmp(argv[i], *f);
		if (flag)
			continue;
		if (argv[i][0] == '-' || idx >= 0) {
			oci_fail("%s: %s %s", cmd,
				 argv[i][0] == '-' ? "unknown option" : "unexpected", argv[i]);
			return -1;
		}
		idx = i;
	}
	if (idx < 0)
		oci_fail("%s needs a container id", cmd);
	return idx;
}

static int cmd_start(int argc, char **argv)
{
	struct ctr c;
	int i = one_id(argc, argv, "start", NULL);

	if (i < 0)
		return 2;
	if (ctr_load(argv[i], &c))
		return 1;
	int r = start(&c);
	ctr_free(&c);
	return r;
}

static int cmd_state(int argc, char **argv)
{
	struct ctr c;
	int i = one_id(argc, argv, "state", NULL);

	if (i < 0)
		return 2;
	if (ctr_load(argv[i], &c))
		return 1;
	write_state(stdout, &c, ctr_status(&c), false);
	ctr_free(&c);
	return 0;
}

/* Signal NAME: a number, or a name with or without SIG. */
static int parse_signal(const char *name)
{
	char *end;
	long n = strtol(name, &end, 10);

	if (*name && !*end)
		return n >= 1 && n < NSIG ? (int)n : -1;
	if (!strncasecmp(name, "SIG", 3))
		name += 3;
	for (int s = 1; s < NSIG; s++) {
		const char *abbrev = sigabbrev_np(s);
		if (abbrev && !strcasecmp(abbrev, name))
			return s;
	}
	return -1;
}

/* Waits up to MS milliseconds for container C's process to be gone. */
static bool wait_gone(const struct ctr *c, int ms)
{
	for (int waited = 0; waited < ms; waited += 10) {
		if (!ctr_alive(c))
			return true;
		usleep(10000);
	}
	return !ctr_alive(c);
}

static int cmd_kill(int argc, char **argv)
{
	static const char *const flags[] = {"--all", "-a", NULL};
	const char *args[2] = {NULL, NULL};
	int n = 0, sig = SIGTERM;
	struct ctr c;

	for (int i = 1; i < argc; i++) {
		bool flag = false;
		for (const char *const *f = flags; *f; f++)
			flag |= !strcmp(argv[i], *f);
		if (flag)
			continue;
		if (n == 2 || (argv[i][0] == '-' && n == 0))
			return oci_fail("kill: unexpected %s", argv[i]), 2;
		args[n++] = argv[i];
	}
	if (!n)
		return oci_fail("kill needs a container id"), 2;
	if (args[1] && (sig = parse_signal(args[1])) < 0)
		return oci_fail("kill: '%s' is not a signal", args[1]), 2;
	if (ctr_load(args[0], &c))
		return 1;
	const char *status = ctr_status(&c);
	int r = 0;
	if (!strcmp(status, "stopped"))
		r = oci_fail("container %s is not running", c.id);
	else if (kill(c.pid, sig))
		r = oci_fail("kill %s: %s", c.id, strerror(errno));
	ctr_free(&c);
	return r;
}

static int cmd_delete(int argc, char **argv)
{
	static const char *const flags[] = {"--force", "-f", NULL};
	bool force = false;
	struct ctr c;
	int i = one_id(argc, argv, "delete", flags);

	if (i < 0)
		return 2;
	for (int k = 1; k < argc; k++)
		force |= !strcmp(argv[k], "--force") || !strcmp(argv[k], "-f");
	if (ctr_load(argv[i], &c)) {
		/* runc: deleting what is not there with --force is not an error. */
		return force ? 0 : 1;
	}
	const char *status = ctr_status(&c);
	/* A created container never ran: deleting it ends its waiting process. */
	if ((!strcmp(status, "running") || !strcmp(status, "paused")) && !force) {
		ctr_free(&c);
		return oci_fail("cannot delete container %s that is %s (--force kills it)", argv[i],
				status);
	}
	if (strcmp(status, "stopped")) {
		kill(c.pid, SIGKILL);
		if (!wait_gone(&c, GONE_TIMEOUT_MS)) {
			ctr_free(&c);
			return oci_fail("container %s did not die", argv[i]);
		}
	}
	ctr_free(&c);
	ctr_remove(argv[i]);
	return 0;
}

/* The container's host processes: its own and every descendant (the launcher, the Sentry
 * and its stubs), from /proc/PID/task/TID/children. */
static void list_tree(pid_t pid, FILE *out, bool json, bool *first, int depth)
{
	char path[64], buf[4096];
	DIR *d;
	struct dirent *de;

	fprintf(out, json ? "%s%d" : "%s%d\n", json ? (*first ? "" : ",") : "", (int)pid);
	*first = false;
	if (depth > 64)
		return;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char cpath[320];
		snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/children", (int)pid, de->d_name);
		FILE *f = fopen(cpath, "re");
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = 0;
		for (char *s = strtok(buf, " \n"); s; s = strtok(NULL, " \n"))
			list_tree((pid_t)atoi(s), out, json, first, depth + 1);
	}
	closedir(d);
}

static int cmd_ps(int argc, char **argv)
{
	bool json = false;
	int idx = -1;
	struct ctr c;

	for (int i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "--format") || !strcmp(argv[i], "-f")) && i + 1 < argc)
			json = !strcmp(argv[++i], "json");
		else if (!strncmp(argv[i], "--format=", 9))
			json = !strcmp(argv[i] + 9, "json");
		else if (argv[i][0] != '-' && idx < 0)
			idx = i;
		else
			return oci_fail("ps: unexpected %s", argv[i]), 2;
	}
	if (idx < 0)
		return oci_fail("ps needs a container id"), 2;
	if (ctr_load(argv[idx], &c))
		return 1;
	bool first = true;
	if (json)
		fputs("[", stdout);
	else
		puts("PID");
	if (ctr_alive(&c))
		list_tree(c.pid, stdout, json, &first, 0);
	if (json)
		puts("]");
	ctr_free(&c);
	return 0;
}

static int cmd_features(void)
{
	printf(
	    "{\"ociVersionMin\":\"1.0.0\",\"ociVersionMax\":\"" OCI_VERSION "\","
	    "\"hooks\":[],"
	    "\"mountOptions\":[\"bind\",\"rbind\",\"ro\",\"rw\",\"nosuid\",\"nodev\",\"noexec\"],"
	    "\"linux\":{\"namespaces\":[\"pid\",\"network\",\"mount\",\"ipc\",\"uts\",\"user\","
	    "\"cgroup\"],"
	    "\"capabilities\":[");
	for (int cap = 0; oci_cap_name(cap); cap++)
		printf("%s\"%s\"", cap ? "," : "", oci_cap_name(cap));
	puts(
	    "],"
	    "\"cgroup\":{\"v1\":false,\"v2\":false,\"systemd\":false,\"systemdUser\":false},"
	    "\"seccomp\":{\"enabled\":true,\"actions\":[\"SCMP_ACT_ALLOW\",\"SCMP_ACT_ERRNO\","
	    "\"SCMP_ACT_KILL\",\"SCMP_ACT_KILL_PROCESS\",\"SCMP_ACT_KILL_THREAD\",\"SCMP_ACT_LOG\","
	    "\"SCMP_ACT_TRACE\",\"SCMP_ACT_TRAP\"],\"operators\":[\"SCMP_CMP_EQ\",\"SCMP_CMP_GE\","
	    "\"SCMP_CMP_GT\",\"SCMP_CMP_LE\",\"SCMP_CMP_LT\",\"SCMP_CMP_MASKED_EQ\",\"SCMP_CMP_"
	    "NE\"],"
	    "\"archs\":[\"SCMP_ARCH_X86\",\"SCMP_ARCH_X86_64\",\"SCMP_ARCH_X32\"],"
	    "\"knownFlags\":[\"SECCOMP_FILTER_FLAG_TSYNC\",\"SECCOMP_FILTER_FLAG_SPEC_ALLOW\","
	    "\"SECCOMP_FILTER_FLAG_LOG\",\"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV\"],"
	    "\"supportedFlags\":[\"SECCOMP_FILTER_FLAG_TSYNC\",\"SECCOMP_FILTER_FLAG_SPEC_ALLOW\","
	    "\"SECCOMP_FILTER_FLAG_LOG\",\"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV\"]},"
	    "\"apparmor\":{\"enabled\":false},"
	    "\"selinux\":{\"enabled\":false}},"
	    "\"annotations\":{\"org.opencontainers.runc.version\":\"minisentry\"}}");
	return 0;
}

/* exec: a new process in a running container, started by its Sentry (the control socket's
 * exec request). The process the engine waits on (--pid-file) is the one that waits for the
 * guest's process and exits with its status: this one, or with --detach a child of it. */
static int cmd_exec(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"process", required_argument, NULL, 'p'},
	    {"tty", no_argument, NULL, 't'},
	    {"console-socket", required_argument, NULL, OPT_CONSOLE},
	    {"cwd", required_argument, NULL, 'w'},
	    {"env", required_argument, NULL, 'e'},
	    {"user", required_argument, NULL, 'u'},
	    {"detach", no_argument, NULL, 'd'},
	    {"pid-file", required_argument, NULL, OPT_PID_FILE},
	    {"preserve-fds", required_argument, NULL, OPT_IGNORED_VALUE},
	    {"cap", required_argument, NULL, 'c'},
	    {"additional-gids", required_argument, NULL, 'g'},
	    {"apparmor", required_argument, NULL, OPT_IGNORED_VALUE},
	    {"process-label", required_argument, NULL, OPT_IGNORED_VALUE},
	    {"no-new-privs", no_argument, NULL, OPT_NO_NEW_PRIVS},
	    {"ignore-paused", no_argument, NULL, OPT_IGNORE_PAUSED},
	    {NULL, 0, NULL, 0}};
	const char *process = NULL, *console = NULL, *cwd = NULL, *pid_file = NULL, *user = NULL;
	bool tty = false, detach = false, ignore_paused = false;
	char **env = calloc((size_t)argc + 1, sizeof(char *)), err[512];
	int nenv = 0, c, nnp = -1, ngroups = 0;
	uint64_t add_caps = 0;
	gid_t groups[OCI_MAX_GIDS];
	struct caps_sets caps;
	struct oci_spec ps = {0};
	struct ctr ctr;

	if (!env)
		return oci_fail("out of memory");
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+p:tw:e:u:dc:g:", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			process = optarg;
			break;
		case 't':
			tty = true;
			break;
		case OPT_CONSOLE:
			console = optarg;
			break;
		case 'w':
			cwd = optarg;
			break;
		case 'e':
			if (!strchr(optarg, '='))
				return oci_fail("exec: --env needs KEY=VALUE, got %s", optarg), 2;
			env[nenv++] = optarg;
			break;
		case 'u':
			user = optarg;
			break;
		case 'd':
			detach = true;
			break;
		case OPT_PID_FILE:
			pid_file = optarg;
			break;
		case OPT_IGNORE_PAUSED:
			ignore_paused = true;
			break;
		case OPT_NO_NEW_PRIVS:
			nnp = 1;
			break;
		case 'c': {
			int cap = oci_cap_number(optarg);
			if (cap < 0)
				return oci_fail("exec: unknown capability %s", optarg), 2;
			add_caps |= UINT64_C(1) << cap;
			break;
		}
		case 'g': {
			char *end;
			unsigned long g = strtoul(optarg, &end, 10);
			if (end == optarg || *end || g > 0xfffffffeUL || ngroups == OCI_MAX_GIDS)
				return oci_fail("exec: --additional-gids needs a gid, got %s",
						optarg),
				       2;
			groups[ngroups++] = (gid_t)g;
			break;
		}
		case OPT_IGNORED_FLAG:
		case OPT_IGNORED_VALUE:
			break;
		default:
			return oci_fail("exec: unknown option %s", argv[optind - 1]), 2;
		}
	}
	if (optind >= argc)
		return oci_fail("exec needs a container id"), 2;
	const char *id = argv[optind++];
	char **args = argv + optind;
	uid_t uid = 0;
	gid_t gid = 0;
	if (process) {
		char *text, rerr[128];
		size_t len;
		if (json_read_file(process, &text, &len, rerr, sizeof(rerr)))
			return oci_fail("--process '%s': %s", process, rerr);
		int r = oci_process_parse(text, len, &ps, err, sizeof(err));
		free(text);
		if (r)
			return oci_fail("--process '%s': %s", process, err);
		args = (char **)ps.args;
		if (ps.env)
			env = (char **)ps.env;
		cwd = ps.cwd;
		uid = ps.uid;
		gid = ps.gid;
		tty = ps.terminal;
		for (size_t i = 0; i < ps.ngids && ngroups < OCI_MAX_GIDS; i++)
			groups[ngroups++] = ps.gids[i];
		if (nnp < 0)
			nnp = ps.no_new_privileges;
		if (ps.has_caps)
			caps = spec_caps(&ps);
	} else if (!*args) {
		return oci_fail("exec needs a command (or --process)"), 2;
	}
	if (user) {
		char *end;
		unsigned long u = strtoul(user, &end, 10), g2 = u;
		if (end == user || (*end && *end != ':') ||
		    (*end == ':' && ((g2 = strtoul(end + 1, &end, 10)), *end)))
			return oci_fail("exec: --user needs UID[:GID], got %s", user), 2;
		uid = (uid_t)u;
		gid = (gid_t)g2;
	}
	if (cwd && cwd[0] != '/')
		return oci_fail("exec: the working directory must be absolute, got %s", cwd), 2;
	if (ctr_load(id, &ctr))
		return 1;
	/* The container's config: its linux.seccomp filters every process exec'd into it too
	 * (as runc's exec installs it), and --cap adds to the process's bounding, effective and
	 * permitted sets, and to its ambient set when it has inheritable ones (as runc's exec
	 * does); the sets it adds to are the --process file's, or else the container's own
	 * process's. */
	struct oci_spec cs = {0};
	struct oci_bpf filter = {0};
	if (oci_spec_load(ctr.bundle, &cs, err, sizeof(err)) ||
	    (cs.seccomp && oci_seccomp_compile(cs.seccomp, &filter, err, sizeof(err)))) {
		oci_spec_free(&cs);
		ctr_free(&ctr);
		return oci_fail("exec: %s", err);
	}
	if (add_caps && !ps.has_caps) {
		ps.has_caps = true;
		caps = cs.has_caps ? spec_caps(&cs)
				   : (struct caps_sets){CAPS_ALL, CAPS_ALL, CAPS_ALL, 0, 0};
	}
	oci_spec_free(&cs);
	if (add_caps) {
		caps.bounding |= add_caps;
		caps.effective |= add_caps;
		caps.permitted |= add_caps;
		if (caps.inheritable)
			caps.ambient |= add_caps;
	}
	struct kernel_spawn spawn = {.argv = args,
				     .envp = env,
				     .cwd = cwd,
				     .uid = uid,
				     .gid = gid,
				     .groups = groups,
				     .ngroups = ngroups,
				     .no_new_privs = nnp,
				     .caps = ps.has_caps ? &caps : NULL,
				     .seccomp_prog = filter.insns,
				     .seccomp_len = filter.len,
				     .seccomp_log = filter.log,
				     .stdio = {0, 1, 2}};
	const char *status = ctr_status(&ctr);
	/* In a paused container (--ignore-paused) the process starts frozen, as with runc. */
	if (!strcmp(status, "paused") && !ignore_paused) {
		ctr_free(&ctr);
		return oci_fail("cannot exec in a paused container (use --ignore-paused to "
				"override)");
	}
	if ((strcmp(status, "running") && strcmp(status, "paused")) || !ctr.control[0]) {
		ctr_free(&ctr);
		return oci_fail("cannot exec in a container that is not running");
	}
	int slave = -1;
	if (tty) {
		if (!console && detach)
			return oci_fail("exec: a terminal needs --console-socket to be detached");
		if (console) {
			if ((slave = console_slave(console)) < 0)
				return 1;
			spawn.stdio[0] = spawn.stdio[1] = spawn.stdio[2] = slave;
		}
	}
	if (!detach) {
		int e;
		if (pid_file && (e = write_pid_file(pid_file, getpid())))
			return oci_fail("--pid-file '%s': %s", pid_file, strerror(-e));
		return control_exec(ctr.control, &spawn, -1);
	}
	int ready[2];
	if (pipe2(ready, O_CLOEXEC))
		return oci_fail("pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return oci_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		close(ready[0]);
		setsid();
		exit(control_exec(ctr.control, &spawn, ready[1]));
	}
	close(ready[1]);
	if (slave >= 0)
		close(slave);
	char b;
	ssize_t n;
	while ((n = read(ready[0], &b, 1)) < 0 && errno == EINTR)
		;
	close(ready[0]);
	if (n != 1)
		return 1; /* the child said why */
	int e;
	if (pid_file && (e = write_pid_file(pid_file, pid)))
		return oci_fail("--pid-file '%s': %s", pid_file, strerror(-e));
	return 0;
}

/* --- checkpoint and restore ---------------------------------------------------------------- */

/* runc's checkpoint and restore options that change nothing here, and those that cannot be
 * honoured (CRIU's page server, lazy pages, pre-dumps). */
static const char *const ckpt_flags[] = {
    "--tcp-established", "--ext-unix-sk",  "--shell-job",	   "--file-locks",
    "--auto-dedup",	 "--no-subreaper", "--no-pivot",	   "--empty-ns",
    "--skip-in-flight",	 "--link-remap",   "--tcp-skip-in-flight", NULL};
static const char *const ckpt_valued[] = {
    "--work-path", "--manage-cgroups-mode", "--status-fd",	   "--parent-path",
    "--empty-ns",  "--lsm-profile",	    "--lsm-mount-context", NULL};
static const char *const ckpt_refused[] = {"--pre-dump", "--lazy-pages", "--page-server", NULL};

/* ARG (with its value in NEXT, *I moved past it) is one of LIST, or LIST=VALUE. */
static bool option_in(const char *const *list, int argc, char **argv, int *i, bool valued)
{
	for (const char *const *f = list; *f; f++) {
		size_t n = strlen(*f);
		if (strncmp(argv[*i], *f, n) || (argv[*i][n] && argv[*i][n] != '='))
			continue;
		if (valued && !argv[*i][n] && *i + 1 < argc)
			++*i;
		return true;
	}
	return false;
}

/* A value option NAME at ARGV[*I] ("--x V" or "--x=V"): its value, *I moved past it. */
static const char *option_value(const char *name, int argc, char **argv, int *i)
{
	size_t n = strlen(name);

	if (!strncmp(argv[*i], name, n) && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (!strcmp(argv[*i], name) && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}

/* An empty file NAME in directory DIR, if there is none. */
static void touch_in(const char *dir, const char *name)
{
	char path[PATH_MAX + 32];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) >= 0)
		close(fd);
}

/* checkpoint: the sandbox's image (minisentry's own format) in --image-path; the container
 * ends unless --leave-running, as with runc. */
static int cmd_checkpoint(int argc, char **argv)
{
	const char *image = NULL, *work = NULL, *id = NULL, *v;
	bool leave = false;
	struct ctr c;

	for (int i = 1; i < argc; i++) {
		if ((v = option_value("--image-path", argc, argv, &i)))
			image = v;
		else if ((v = option_value("--work-path", argc, argv, &i)))
			work = v;
		else if (!strcmp(argv[i], "--leave-running"))
			leave = true;
		else if (option_in(ckpt_refused, argc, argv, &i, false))
			return oci_fail(
			    "checkpoint: %s is not supported (the image is written whole, "
			    "at once)",
			    argv[i]);
		else if (option_in(ckpt_flags, argc, argv, &i, false) ||
			 option_in(ckpt_valued, argc, argv, &i, true))
			continue;
		else if (argv[i][0] != '-' && !id)
			id = argv[i];
		else
			return oci_fail("checkpoint: unexpected %s", argv[i]), 2;
	}
	if (!id)
		return oci_fail("checkpoint needs a container id"), 2;
	if (ctr_load(id, &c))
		return 1;
	/* A paused one too: its image is of the guest as it was stopped. */
	if (strcmp(ctr_status(&c), "running") && strcmp(ctr_status(&c), "paused")) {
		ctr_free(&c);
		return oci_fail("cannot checkpoint a container that is not running");
	}
	char def[PATH_MAX + 16];
	if (!image) {
		snprintf(def, sizeof(def), "%s/checkpoint", c.bundle);
		image = def;
	}
	struct control_checkpoint_opts co = {.leave_running = leave, .force = true, .quiet = true};
	int r = control_checkpoint(id, image, &co);
	if (!r && !leave && !wait_gone(&c, GONE_TIMEOUT_MS))
		r = oci_fail("container %s did not end after its checkpoint", id);
	/* Engines look for CRIU's files: inventory.img to know a checkpoint is complete
	 * (podman's restore refuses without it), stats-dump in the work directory (podman's
	 * export packs it). Empty ones say so; the image loader ignores them. */
	if (!r) {
		touch_in(image, "inventory.img");
		if (work)
			touch_in(work, "stats-dump");
	}
	ctr_free(&c);
	return r;
}

/* restore: a new container ID from a checkpoint image, with the bundle's config for what is
 * the host's (rootfs, bind mounts by their guest path, terminal): runc's create and start in
 * one, the process running a restored sandbox. */
static int cmd_restore(int argc, char **argv)
{
	struct create_opts o = {0};
	const char *image = NULL, *work = NULL, *id = NULL, *v;
	char bundle[PATH_MAX], dir[PATH_MAX], err[512];
	struct oci_spec spec;
	struct mapped *m = calloc(1, sizeof(*m));
	struct ctr c = {0};
	int tty = -1, ready[2], st;
	pid_t pid;

	if (!m)
		return oci_fail("out of memory");
	for (int i = 1; i < argc; i++) {
		if ((v = option_value("--image-path", argc, argv, &i)))
			image = v;
		else if ((v = option_value("--work-path", argc, argv, &i)))
			work = v;
		else if ((v = option_value("--bundle", argc, argv, &i)) ||
			 (v = option_value("-b", argc, argv, &i)))
			o.bundle = v;
		else if ((v = option_value("--pid-file", argc, argv, &i)))
			o.pid_file = v;
		else if ((v = option_value("--console-socket", argc, argv, &i)))
			o.console_socket = v;
		else if (!strcmp(argv[i], "--detach") || !strcmp(argv[i], "-d"))
			o.detach = true;
		else if (option_in(ckpt_refused, argc, argv, &i, false))
			return oci_fail("restore: %s is not supported", argv[i]);
		else if (option_in(ckpt_flags, argc, argv, &i, false) ||
			 option_in(ckpt_valued, argc, argv, &i, true) ||
			 !strcmp(argv[i], "--no-new-keyring") || !strcmp(argv[i], "--keep"))
			continue;
		else if (argv[i][0] != '-' && !id)
			id = argv[i];
		else
			return oci_fail("restore: unexpected %s", argv[i]), 2;
	}
	if (!id)
		return oci_fail("restore needs a container id"), 2;
	if (!valid_id(id))
		return oci_fail("'%s' is not a valid container id", id);
	if (!realpath(o.bundle ? o.bundle : ".", bundle))
		return oci_fail("bundle '%s': %s", o.bundle ? o.bundle : ".", strerror(errno));
	char def[PATH_MAX + 16];
	if (!image) {
		snprintf(def, sizeof(def), "%s/checkpoint", bundle);
		image = def;
	}
	if (oci_spec_load(bundle, &spec, err, sizeof(err)))
		return oci_fail("%s", err);
	if (map_spec(&spec, bundle, id, m))
		return 1;
	int e = mkdir_p(root_dir(), 0711);
	if (e || ctr_path(id, NULL, dir, sizeof(dir)))
		return oci_fail("runtime root '%s': %s", root_dir(),
				strerror(e ? -e : ENAMETOOLONG));
	if (mkdir(dir, 0711))
		return errno == EEXIST ? oci_fail("container %s already exists", id)
				       : oci_fail("%s: %s", dir, strerror(errno));
	if (spec.terminal && o.console_socket && (tty = console_slave(o.console_socket)) < 0)
		goto fail;
	/* The bundle's bind mounts stand for the image's on the same guest paths; the rootfs is
	 * the bundle's (the same tree, checked by its fingerprint). */
	struct kernel_restore_opts *ro = calloc(1, sizeof(*ro));
	if (!ro || pipe2(ready, O_CLOEXEC)) {
		oci_fail("out of memory");
		goto fail;
	}
	ro->rootfs = m->rootfs;
	ro->binds = m->cfg.binds;
	ro->nbinds = m->cfg.nbinds;
	fflush(NULL);
	if ((pid = fork()) < 0) {
		oci_fail("fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		close(ready[0]);
		setsid();
		if (tty >= 0) {
			ioctl(tty, TIOCSCTTY, 0);
			for (int i = 0; i < 3; i++)
				dup2(tty, i);
		}
		confine_set_ready_fd(ready[1]);
		int r = kernel_restore(&m->cfg, image, ro, false);
		r = r < 0 ? 1 : r;
		fflush(NULL);
		confine_exiting(r);
		exit(r);
	}
	close(ready[1]);
	if (tty >= 0)
		close(tty);
	/* Back only once the image is loaded (an engine may remove it then, as podman does). */
	char b;
	ssize_t n;
	while ((n = read(ready[0], &b, 1)) < 0 && errno == EINTR)
		;
	close(ready[0]);
	if (n != 1) {
		oci_fail("container %s: the restore failed", id);
		goto fail;
	}
	if (work)
		touch_in(work, "stats-restore");
	char stc;
	snprintf(c.id, sizeof(c.id), "%s", id);
	c.pid = pid;
	proc_start(pid, &c.starttime, &stc);
	snprintf(c.bundle, sizeof(c.bundle), "%s", bundle);
	snprintf(c.rootfs, sizeof(c.rootfs), "%s", m->rootfs);
	rfc3339_now(c.created, sizeof(c.created));
	control_socket_path(id, c.control, sizeof(c.control));
	if ((e = save_state(&c, spec.annotations)) ||
	    (o.pid_file && (e = write_pid_file(o.pid_file, pid)))) {
		oci_fail("container %s: %s", id, strerror(-e));
		kill(pid, SIGKILL);
		goto fail;
	}
	if (o.detach)
		return 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	ctr_remove(id);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
fail:
	ctr_remove(id);
	return 1;
}

/* --- pause, resume, update, events --------------------------------------------------------- */

/* What pause, resume, update and events act on: container ID's sandbox, or else the sandbox
 * named ID (`minisentry run --id ID`). */
struct target {
	char path[PATH_MAX]; /* its control socket */
	char status[16];     /* "running", "paused", or a container's other statuses */
	bool container;
};

/* A container just started may not have its sandbox listening yet (runc's cgroup is there at
 * once): waits up to START_TIMEOUT_MS, while its process lives, for the sandbox at PATH to
 * answer. */
static void wait_listening(const struct ctr *c, const char *path)
{
	struct timespec t0, now;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (control_frozen(path) < 0 && ctr_alive(c)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >=
		    START_TIMEOUT_MS)
			return;
		usleep(20000);
	}
}

static int find_target(const char *id, struct target *t)
{
	char state[PATH_MAX];
	struct ctr c;

	memset(t, 0, sizeof(*t));
	if (!valid_id(id))
		return oci_fail("'%s' is not a valid container id", id);
	if (ctr_path(id, STATE_NAME, state, sizeof(state)) == 0 && access(state, F_OK) == 0) {
		if (ctr_load(id, &c))
			return 1;
		t->container = true;
		snprintf(t->status, sizeof(t->status), "%s", ctr_status(&c));
		if (c.control[0])
			snprintf(t->path, sizeof(t->path), "%s", c.control);
		else
			control_socket_path(id, t->path, sizeof(t->path));
		if (!strcmp(t->status, "running"))
			wait_listening(&c, t->path);
		ctr_free(&c);
		return 0;
	}
	control_socket_path(id, t->path, sizeof(t->path));
	int frozen = control_frozen(t->path);
	if (frozen < 0)
		return oci_fail("container %s does not exist (nor a running sandbox of that name)",
				id);
	snprintf(t->status, sizeof(t->status), "%s", frozen ? "paused" : "running");
	return 0;
}

/* pause (RESUME false) and resume: the guest stops as a checkpoint stops it, and goes on. */
static int cmd_freeze(int argc, char **argv, bool resume)
{
	const char *cmd = resume ? "resume" : "pause";
	struct target t;
	char err[512];
	int i = one_id(argc, argv, cmd, NULL);

	if (i < 0)
		return 2;
	if (find_target(argv[i], &t))
		return 1;
	if (strcmp(t.status, resume ? "paused" : "running"))
		return oci_fail("cannot %s %s: it is %s%s", cmd, argv[i], t.status,
				resume ? ", not paused" : "");
	if (control_freeze(t.path, !resume, err, sizeof(err)))
		return oci_fail("%s %s: %s", cmd, argv[i], err);
	return 0;
}

/* A size as runc takes one: bytes, or a number (a fraction allowed) with k, m, g, t or p
 * (binary units, an optional b after it); -1 for no limit. False if S is none. */
static bool parse_size(const char *s, int64_t *out)
{
	static const char units[] = "kmgtp";
	const char *u;
	char *end;
	double v;

	if (!strcmp(s, "-1")) {
		*out = -1;
		return true;
	}
	errno = 0;
	if (!*s || !strchr("0123456789.", *s) || ((v = strtod(s, &end)), errno) || end == s)
		return false;
	if (*end && (u = strchr(units, tolower((unsigned char)*end)))) {
		for (int k = 0; k <= u - units; k++)
			v *= 1024;
		end++;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || v >= 9.2e18)
		return false;
	*out = (int64_t)v;
	return true;
}

/* runc's update options that ask for what a sandbox cannot change while it runs (nor at all). */
static const char *const update_refused[] = {"--cpu-period",	     "--cpu-quota",
					     "--cpu-share",	     "--cpu-rt-period",
					     "--cpu-rt-runtime",     "--cpuset-cpus",
					     "--cpuset-mems",	     "--blkio-weight",
					     "--kernel-memory",	     "--kernel-memory-tcp",
					     "--memory-reservation", "--l3-cache-schema",
					     "--mem-bw-schema",	     NULL};

/* update: the memory bound (linux.resources.memory.limit, --memory) and the pids bound
 * (pids.limit, --pids) of a running sandbox change at once; what a sandbox cannot change is
 * refused in one line, and nothing is changed then. */
static int cmd_update(int argc, char **argv)
{
	struct oci_resources r = {0};
	const char *file = NULL, *id = NULL, *v;
	char err[512];
	struct target t;
	bool flags = false;

	for (int i = 1; i < argc; i++) {
		if ((v = option_value("--resources", argc, argv, &i)) ||
		    (v = option_value("-r", argc, argv, &i))) {
			file = v;
		} else if ((v = option_value("--memory", argc, argv, &i))) {
			if (!parse_size(v, &r.memory))
				return oci_fail("update: --memory '%s' is not a size", v), 2;
			flags = true;
		} else if ((v = option_value("--memory-swap", argc, argv, &i))) {
			if (!parse_size(v, &r.swap))
				return oci_fail("update: --memory-swap '%s' is not a size", v), 2;
			flags = true;
		} else if ((v = option_value("--pids-limit", argc, argv, &i))) {
			char *end;
			errno = 0;
			r.pids = strtoll(v, &end, 10);
			if (!*v || *end || errno)
				return oci_fail("update: --pids-limit '%s' is not a number", v), 2;
			flags = true;
		} else if (option_in(update_refused, argc, argv, &i, true)) {
			return oci_fail("update: %s cannot be changed: the sandbox has no such "
					"controller",
					argv[i][0] == '-' ? argv[i] : argv[i - 1]);
		} else if (argv[i][0] != '-' && !id) {
			id = argv[i];
		} else {
			return oci_fail("update: unexpected %s", argv[i]), 2;
		}
	}
	if (!id)
		return oci_fail("update needs a container id"), 2;
	/* As runc: with a resources file, the other options are ignored. */
	if (file) {
		char *text = NULL, rerr[128];
		size_t len = 0;
		if (!strcmp(file, "-")) {
			FILE *mem = open_memstream(&text, &len);
			char buf[4096];
			size_t n, total = 0;
			/* One byte past the parser's most is enough for it to refuse. */
			while (mem && total <= JSON_MAX_SIZE &&
			       (n = fread(buf, 1, sizeof(buf), stdin)) > 0) {
				fwrite(buf, 1, n, mem);
				total += n;
			}
			if (!mem || fclose(mem))
				return oci_fail("update: cannot read the resources from stdin");
		} else if (json_read_file(file, &text, &len, rerr, sizeof(rerr))) {
			return oci_fail("update: --resources '%s': %s", file, rerr);
		}
		int e = oci_resources_parse(text, len, &r, err, sizeof(err));
		free(text);
		if (e)
			return oci_fail("update: %s", err);
	} else if (!flags) {
		return oci_fail("update: nothing to change (--memory, --memory-swap, --pids-limit "
				"or --resources)"),
		       2;
	}
	if (find_target(id, &t))
		return 1;
	if (strcmp(t.status, "running") && strcmp(t.status, "paused"))
		return oci_fail("cannot update %s: it is %s (the limits of a container that has "
				"not started are its config.json's)",
				id, t.status);
	struct kernel_usage u;
	if (control_stats(t.path, &u, err, sizeof(err)))
		return oci_fail("update %s: %s", id, err);
	/* No limit is the sandbox's default bound, the one it gets without one. */
	struct sysinfo si;
	uint64_t mem = r.memory > 0 ? (uint64_t)r.memory
		       : r.memory < 0 && sysinfo(&si) == 0
			   ? (uint64_t)si.totalram * si.mem_unit / DEFAULT_MEMORY_SHARE
			   : 0;
	if (mem && mem < MEMORY_MIN)
		mem = MEMORY_MIN; /* as config.json's at create */
	mem &= ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
	/* Memory and swap together: there is no swap, so a bound at least the memory's changes
	 * nothing, and one below it is refused as runc refuses it. */
	uint64_t bound = mem ? mem : u.memory_limit;
	if (r.swap > 0 && (uint64_t)r.swap < bound)
		return oci_fail(
		    "update %s: the memory+swap limit (%lld) must be at least the memory "
		    "limit (%llu)",
		    id, (long long)r.swap, (unsigned long long)bound);
	uint64_t now;
	if (mem && mem != u.memory_limit && control_set_memory(t.path, mem, &now, err, sizeof(err)))
		return oci_fail("update %s: memory limit: %s", id, err);
	if (r.pids &&
	    control_set_pids(t.path, r.pids < 0 || r.pids > PIDS_MAX ? PIDS_MAX : (uint64_t)r.pids,
			     err, sizeof(err)))
		return oci_fail("update %s: pids limit: %s", id, err);
	return 0;
}

/* runc's stats event: {"type":"stats","id":ID,"data":{...}} in one line, in the shape of runc's
 * types.Stats (cgroup figures from the sandbox's own accounting). */
static void print_stats(const char *id, const struct kernel_usage *u)
{
	fputs("{\"type\":\"stats\",\"id\":", stdout);
	json_write_string(stdout, id);
	printf(",\"data\":{\"cpu\":{\"usage\":{\"total\":%llu,\"kernel\":%llu,\"user\":%llu},"
	       "\"throttling\":{}},\"cpuset\":{},"
	       "\"memory\":{\"usage\":{\"limit\":%llu,\"usage\":%llu,\"failcnt\":%llu},"
	       "\"swap\":{\"limit\":%llu,\"usage\":%llu,\"failcnt\":0},"
	       "\"kernel\":{\"limit\":0,\"failcnt\":0},\"kernelTCP\":{\"limit\":0,\"failcnt\":0},"
	       "\"raw\":{\"oom_kill\":%llu}},"
	       "\"pids\":{\"current\":%llu,\"limit\":%llu},"
	       "\"blkio\":{},\"hugetlb\":{},\"intel_rdt\":{},\"network_interfaces\":null}}\n",
	       (unsigned long long)(u->cpu_user_ns + u->cpu_kernel_ns),
	       (unsigned long long)u->cpu_kernel_ns, (unsigned long long)u->cpu_user_ns,
	       (unsigned long long)u->memory_limit, (unsigned long long)u->memory_used,
	       (unsigned long long)u->oom_kills, (unsigned long long)u->memory_limit,
	       (unsigned long long)u->memory_used, (unsigned long long)u->oom_kills,
	       (unsigned long long)u->tasks, (unsigned long long)u->pids_limit);
	fflush(stdout);
}

/* A Go duration as runc's --interval takes it ("5s", "250ms", "1m30s"): milliseconds, or -1. */
static long long parse_interval(const char *s)
{
	double total = 0;

	if (!*s)
		return -1;
	while (*s) {
		char *end;
		errno = 0;
		double v = strtod(s, &end);
		if (errno || end == s || v < 0 || *s == '+' || *s == '-')
			return -1;
		double ms = !strncmp(end, "ns", 2)   ? 1e-6
			    : !strncmp(end, "us", 2) ? 1e-3
			    : !strncmp(end, "ms", 2) ? 1
			    : *end == 's'	     ? 1e3
			    : *end == 'm'	     ? 6e4
			    : *end == 'h'	     ? 3.6e6
						     : -1;
		if (ms < 0)
			return -1;
		total += v * ms;
		s = end +
		    ((!strncmp(end, "ns", 2) || !strncmp(end, "us", 2) || !strncmp(end, "ms", 2))
			 ? 2
			 : 1);
	}
	return total >= 1 && total < 1e12 ? (long long)total : -1;
}

/* Waits up to MS milliseconds for events on FD, the sandbox's event connection, and prints
 * those that came ({"type":TYPE,"id":ID}). False once the connection is closed (the sandbox
 * is gone). */
static bool print_events(int fd, const char *id, long long ms)
{
	static char buf[256];
	static size_t got;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char *nl;

	if (poll(&p, 1, ms > INT_MAX ? INT_MAX : (int)ms) <= 0)
		return true;
	ssize_t n = read(fd, buf + got, sizeof(buf) - 1 - got);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	if (n == 0) {
		close(fd);
		return false;
	}
	got += (size_t)n;
	while ((nl = memchr(buf, '\n', got))) {
		*nl = 0;
		fputs("{\"type\":", stdout);
		json_write_string(stdout, buf);
		fputs(",\"id\":", stdout);
		json_write_string(stdout, id);
		fputs("}\n", stdout);
		got -= (size_t)(nl + 1 - buf);
		memmove(buf, nl + 1, got);
	}
	if (got == sizeof(buf) - 1)
		got = 0; /* no event is that long */
	fflush(stdout);
	return true;
}

/* events: with --stats one stats event; without, a stats event every --interval (5s) and an
 * "oom" event whenever the sandbox's OOM killer kills, until the sandbox ends. */
static int cmd_events(int argc, char **argv)
{
	const char *id = NULL, *v;
	bool once = false;
	long long interval = 5000;
	char err[512];
	struct target t;
	struct kernel_usage u;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--stats"))
			once = true;
		else if ((v = option_value("--interval", argc, argv, &i))) {
			if ((interval = parse_interval(v)) < 0)
				return oci_fail("events: --interval '%s' is not a duration", v), 2;
		} else if (argv[i][0] != '-' && !id)
			id = argv[i];
		else
			return oci_fail("events: unexpected %s", argv[i]), 2;
	}
	if (!id)
		return oci_fail("events needs a container id"), 2;
	if (find_target(id, &t))
		return 1;
	if (strcmp(t.status, "running") && strcmp(t.status, "paused"))
		return oci_fail("container %s is not running", id);
	if (once) {
		if (control_stats(t.path, &u, err, sizeof(err)))
			return oci_fail("events %s: %s", id, err);
		print_stats(id, &u);
		return 0;
	}
	int fd = control_events(t.path, err, sizeof(err));
	if (fd < 0)
		return oci_fail("events %s: %s", id, err);
	struct timespec now, next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		next.tv_sec += interval / 1000;
		next.tv_nsec += (interval % 1000) * 1000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000;
		}
		long long left;
		do {
			clock_gettime(CLOCK_MONOTONIC, &now);
			left = (next.tv_sec - now.tv_sec) * 1000LL +
			       (next.tv_nsec - now.tv_nsec) / 1000000;
			if (!print_events(fd, id, left > 0 ? left : 0))
				return 0; /* the sandbox is gone: so are its events */
		} while (left > 0);
		if (control_stats(t.path, &u, err, sizeof(err)))
			return 0;
		/* An event the statistics already count comes first. */
		if (!print_events(fd, id, 0))
			return 0;
		print_stats(id, &u);
	}
}

/* --- the global flags and the dispatch ----------------------------------------------------- */

static const char *const commands[] = {"create", "start",    "state", "kill",  "delete",
				       "ps",	 "features", "exec",  "pause", "resume",
				       "events", "update",   NULL};

static bool is_command(const char *s)
{
	for (const char *const *c = commands; *c; c++)
		if (!strcmp(s, *c))
			return true;
	return false;
}

/* A global flag at ARGV[*I]: consumed (its value too), true; false if it is none. */
static bool global_flag(int argc, char **argv, int *i)
{
	static const char *const with_value[] = {"--root", "--log",	 "--log-format",
						 "--criu", "--rootless", NULL};
	static const char *const without[] = {"--systemd-cgroup", "--debug", NULL};
	const char *a = argv[*i];

	for (const char *const *f = without; *f; f++)
		if (!strcmp(a, *f))
			return true;
	for (const char *const *f = with_value; *f; f++) {
		size_t n = strlen(*f);
		const char *v = NULL;
		if (!strncmp(a, *f, n) && a[n] == '=')
			v = a + n + 1;
		else if (!strcmp(a, *f) && *i + 1 < argc)
			v = argv[++*i];
		else
			continue;
		if (!strcmp(*f, "--root"))
			g.root = v;
		else if (!strcmp(*f, "--log"))
			g.log = v;
		else if (!strcmp(*f, "--log-format"))
			g.log_json = !strcmp(v, "json");
		return true;
	}
	return false;
}

bool oci_command_line(int argc, char **argv)
{
	static const char *const run_flags[] = {
	    "-b",	  "--bundle",	      "-d",	    "--detach",
	    "--pid-file", "--console-socket", "--no-pivot", "--no-new-keyring",
	    "--keep",	  "--preserve-fds",   NULL};

	if (argc < 2)
		return false;
	if (argv[1][0] == '-' && strcmp(argv[1], "--help") && strcmp(argv[1], "-h") &&
	    strcmp(argv[1], "--version")) {
		int i = 1;
		return global_flag(argc, argv, &i);
	}
	if (is_command(argv[1]))
		return true;
	/* runc's checkpoint and restore (as against minisentry's own, with --image). */
	if (!strcmp(argv[1], "checkpoint") || !strcmp(argv[1], "restore")) {
		for (int i = 2; i < argc; i++)
			if (!strncmp(argv[i], "--image-path", 12) ||
			    !strncmp(argv[i], "--work-path", 11) ||
			    !strncmp(argv[i], "--bundle", 8) || !strcmp(argv[i], "-b"))
				return true;
		return false;
	}
	if (strcmp(argv[1], "run"))
		return false;
	/* `run --bundle DIR ID` and its kin, as against `run [options] ROOTFS`. */
	for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
		for (const char *const *f = run_flags; *f; f++) {
			size_t n = strlen(*f);
			if (!strncmp(argv[i], *f, n) && (!argv[i][n] || argv[i][n] == '='))
				return true;
		}
	return false;
}

int oci_main(int argc, char **argv)
{
	int i = 1;

	while (i < argc && argv[i][0] == '-') {
		if (!global_flag(argc, argv, &i))
			return oci_fail("unknown global option %s", argv[i]), 2;
		i++;
	}
	if (i >= argc)
		return oci_fail("missing command (see minisentry --help)"), 2;
	const char *cmd = argv[i];
	argc -= i;
	argv += i;
	if (!strcmp(cmd, "create"))
		return cmd_create(argc, argv);
	if (!strcmp(cmd, "run"))
		return cmd_run(argc, argv);
	if (!strcmp(cmd, "start"))
		return cmd_start(argc, argv);
	if (!strcmp(cmd, "state"))
		return cmd_state(argc, argv);
	if (!strcmp(cmd, "kill"))
		return cmd_kill(argc, argv);
	if (!strcmp(cmd, "delete"))
		return cmd_delete(argc, argv);
	if (!strcmp(cmd, "ps"))
		return cmd_ps(argc, argv);
	if (!strcmp(cmd, "features"))
		return cmd_features();
	if (!strcmp(cmd, "exec"))
		return cmd_exec(argc, argv);
	if (!strcmp(cmd, "checkpoint"))
		return cmd_checkpoint(argc, argv);
	if (!strcmp(cmd, "restore"))
		return cmd_restore(argc, argv);
	if (!strcmp(cmd, "pause") || !strcmp(cmd, "resume"))
		return cmd_freeze(argc, argv, cmd[0] == 'r');
	if (!strcmp(cmd, "update"))
		return cmd_update(argc, argv);
	if (!strcmp(cmd, "events"))
		return cmd_events(argc, argv);
	return oci_fail("%s is not supported by minisentry's OCI runtime", cmd);
}
