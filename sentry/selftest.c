/* --selftest-confinement: the locked Sentry does what a compromised one would try, and says
 * what happened to each attempt. Nothing here can harm the host even where confinement failed:
 * signals are signal 0, paths are opened read-only or created beside a marker, the socket is
 * never connected. An attempt is refused when it fails; the seccomp allowlist may instead end
 * the Sentry at once (SIGSYS), which the e2e test also accepts for the attempts it names. */
#include "sentry/confine.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sentry/kernel.h"

struct outcome {
	bool refused;
	char why[160];
};

static void say(struct outcome *o, bool refused, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(struct outcome *o, bool refused, const char *fmt, ...)
{
	va_list ap;

	o->refused = refused;
	va_start(ap, fmt);
	vsnprintf(o->why, sizeof(o->why), fmt, ap);
	va_end(ap);
}

/* Host paths outside the rootfs, through every door: absolute, beneath the rootfs descriptor
 * with "..", through /proc, and the rootfs's own host path. MINISENTRY_SELFTEST_PATH names a
 * file the test made on the host. */
static void probe_open(struct outcome *o)
{
	const char *marker = getenv("MINISENTRY_SELFTEST_PATH");
	char path[4096];
	const char *absolute[] = {"/etc/passwd", "/proc/1/root/etc/passwd", marker, NULL};
	int fd;

	for (int i = 0; absolute[i]; i++)
		if ((fd = open(absolute[i], O_RDONLY | O_CLOEXEC)) >= 0) {
			close(fd);
			return say(o, false, "opened %s", absolute[i]);
		}
	snprintf(path, sizeof(path), "%s/etc/passwd", kernel.cfg.rootfs);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		close(fd);
		return say(o, false, "opened %s by its host path", path);
	}
	if (marker && confine_rootfs_fd() >= 0) {
		snprintf(path, sizeof(path), "../../../../../../../../../../../../%s", marker);
		if ((fd = openat(confine_rootfs_fd(), path, O_RDONLY | O_CLOEXEC)) >= 0) {
			close(fd);
			return say(o, false, "opened %s beneath the rootfs", path);
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d/../../../../../../../../%s",
			 confine_rootfs_fd(), marker);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
			close(fd);
			return say(o, false, "opened %s", path);
		}
	}
	if (confine_rootfs_fd() >= 0 && (fd = openat(confine_rootfs_fd(), "etc/passwd",
						     O_WRONLY | O_APPEND | O_CLOEXEC)) >= 0) {
		close(fd);
		return say(o, false, "opened the rootfs's etc/passwd for writing");
	}
	say(o, true, "no host path outside the rootfs opens, the rootfs is read-only (%s)",
	    strerror(errno));
}

/* kill(1, ...) must not reach the host's init: pid 1 here is the Sentry itself. */
static void probe_kill(struct outcome *o)
{
	pid_t launcher = confine_launcher_pid();

	if (getpid() != 1)
		return say(o, false, "the Sentry is pid %d, not its own namespace's init",
			   (int)getpid());
	if (launcher > 1 && kill(launcher, 0) == 0)
		return say(o, false, "signal 0 reached host pid %d", (int)launcher);
	if (kill(1, 0) == 0)
		return say(o, true, "pid 1 is the Sentry itself");
	say(o, true, "kill: %s", strerror(errno));
}

static void probe_inet(struct outcome *o)
{
	static const int families[] = {AF_INET, AF_INET6, AF_NETLINK, AF_PACKET};

	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		int fd = socket(families[i], SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd >= 0) {
			close(fd);
			return say(o, false, "made a socket of family %d", families[i]);
		}
	}
	say(o, true, "socket: %s", strerror(errno));
}

/* The launcher is a host process that is not the Sentry's child. */
static void probe_ptrace(struct outcome *o)
{
	pid_t launcher = confine_launcher_pid();

	if (launcher > 1 && ptrace(PTRACE_SEIZE, launcher, 0, 0) == 0)
		return say(o, false, "seized host pid %d", (int)launcher);
	if (launcher > 1 && ptrace(PTRACE_ATTACH, launcher, 0, 0) == 0)
		return say(o, false, "attached to host pid %d", (int)launcher);
	say(o, true, "ptrace: %s", strerror(errno));
}

static void probe_mount(struct outcome *o)
{
	if (mount("none", "/", "tmpfs", 0, NULL) == 0)
		return say(o, false, "mounted a tmpfs on /");
	if (umount2("/proc", MNT_DETACH) == 0)
		return say(o, false, "unmounted /proc");
	say(o, true, "mount: %s", strerror(errno));
}

/* New namespaces would bring a full set of capabilities inside them. */
static void probe_unshare(struct outcome *o)
{
	if (unshare(CLONE_NEWUSER) == 0)
		return say(o, false, "made a new user namespace");
	say(o, true, "unshare: %s", strerror(errno));
}

static void probe_caps(struct outcome *o)
{
	cap_t caps = cap_get_proc();
	cap_t none = cap_init();
	bool empty = caps && none && cap_compare(caps, none) == 0;

	cap_free(caps);
	cap_free(none);
	if (!empty)
		return say(o, false, "the Sentry holds capabilities");
	if (cap_get_bound(CAP_SYS_ADMIN) > 0)
		return say(o, false, "CAP_SYS_ADMIN is in the bounding set");
	if (geteuid() != 0 && setresuid(0, 0, 0) == 0)
		return say(o, false, "became uid 0");
	say(o, true, "no capability in any set");
}

static void probe_exec(struct outcome *o)
{
	char *argv[] = {"minisentry", "--version", NULL};

	execv("/proc/self/exe", argv);
	say(o, true, "execve: %s", strerror(errno));
}

static const struct {
	const char *name;
	void (*run)(struct outcome *o);
} probes[] = {
    {"open", probe_open},     {"kill", probe_kill},   {"inet", probe_inet},
    {"ptrace", probe_ptrace}, {"mount", probe_mount}, {"unshare", probe_unshare},
    {"caps", probe_caps},     {"exec", probe_exec},
};

int confine_selftest(const char *list)
{
	int status = 0, ran = 0;

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		size_t n = strlen(probes[i].name);
		const char *at = strstr(list, probes[i].name);
		bool wanted = !strcmp(list, "all") ||
			      (at && (at == list || at[-1] == ',') && (at[n] == 0 || at[n] == ','));
		if (!wanted)
			continue;
		struct outcome o = {0};
		probes[i].run(&o);
		printf("selftest: %s: %s (%s)\n", probes[i].name, o.refused ? "refused" : "ALLOWED",
		       o.why);
		fflush(stdout);
		ran++;
		if (!o.refused)
			status = 1;
	}
	if (!ran) {
		fprintf(stderr, "minisentry: --selftest-confinement: no probe named in '%s'\n",
			list);
		return 2;
	}
	return status;
}
