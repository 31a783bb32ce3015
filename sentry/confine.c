/* The Sentry confines itself (docs/security.md): namespaces from the launcher, then, once the
 * sandbox is set up, an empty root, resource limits, no capabilities in any set, no_new_privs,
 * not dumpable, and its own seccomp allowlist. Stubs are moved into a user namespace of their
 * own, under an unprivileged host uid when we were started as root, before they run the stub
 * page. Nothing here is undone: after confine_lock the Sentry cannot get any of it back. */
#include "sentry/confine.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <grp.h>
#include <linux/securebits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/platform.h"
#include "sentry/control.h"
#include "sentry/kernel.h"
#include "sentry/launcher.h"
#include "sentry/marks.h"

/* Started as root, stubs run as nobody: no host file, process or key of root's is theirs. */
#define STUB_HOST_ID 65534
/* The Sentry holds a host descriptor per open lower-layer file and per looked-up name. */
#define SENTRY_NOFILE 65536
/* Host tasks (stub processes and their threads) of one sandbox, counted in the stubs' user
 * namespace: a backstop against a guest fork bomb, above what the tests' 5000 processes need. */
#define STUB_NPROC 16384
/* The highest pid of the sandbox's PID namespace. */
#define SANDBOX_PID_MAX "32768"

#define NAMESPACES                                                                                 \
	(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | \
	 CLONE_NEWCGROUP)

#define SECBITS_ALL_LOCKED                                                                         \
	(SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |        \
	 SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |                      \
	 SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

static struct {
	bool active; /* in our own namespaces (not --unsafe-no-confine) */
	bool locked;
	bool root; /* started as host root */
	struct confine_opts opts;
	struct launcher_link link;
	int userns_fd; /* the stubs' user namespace */
	uid_t stub_uid;
	gid_t stub_gid;
	int rootfs_fd;
	char *rootfs_src;
	char rootfs_path[32];
	int srt_dirfd;
	char srt_name[64];
	char *srt_dir; /* the directory SRT_DIRFD is, its links resolved */
	char *srt_image;
} conf = {
    .userns_fd = -1, .rootfs_fd = -1, .srt_dirfd = -1, .link = {.restart_fd = -1, .maps_fd = -1}};

static int fail(int err, const char *what)
{
	fprintf(stderr, "minisentry: cannot confine the sandbox: %s: %s\n", what, strerror(err));
	return -err;
}

bool confine_active(void)
{
	return conf.active;
}

bool confine_locked_or_off(void)
{
	return !conf.active || conf.locked;
}

/* Every capability of every set gone, and the securebits locked so that none comes back
 * (not by exec as root, not by setuid, not as ambient). */
static int drop_caps(void)
{
	cap_t none;
	int err = 0;

	for (cap_value_t c = 0; c < cap_max_bits(); c++)
		if (cap_drop_bound(c) && errno != EINVAL)
			return -errno;
	if (cap_set_secbits(SECBITS_ALL_LOCKED) || cap_reset_ambient())
		return -errno;
	if (!(none = cap_init()))
		return -ENOMEM;
	if (cap_set_proc(none))
		err = -errno;
	cap_free(none);
	return err;
}

/* --- the save-restore test's image directory ----------------------------------------------- */

/* $TMPDIR (or /tmp). The slots variant keeps its pool beside its images, and slots are
 * memory: there it is /dev/shm unless $TMPDIR is a tmpfs. */
static int srt_open(bool slots)
{
	const char *tmp = getenv("TMPDIR");
	unsigned int rnd = 0;
	struct statfs sf;

	if (!tmp || tmp[0] != '/')
		tmp = "/tmp";
	if (slots && (statfs(tmp, &sf) || sf.f_type != TMPFS_MAGIC))
		tmp = "/dev/shm";
	if (!(conf.srt_dir = realpath(tmp, NULL)))
		return fail(errno, tmp);
	conf.srt_dirfd = open(conf.srt_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (conf.srt_dirfd < 0)
		return fail(errno, conf.srt_dir);
	if (getrandom(&rnd, sizeof(rnd), 0) < 0)
		rnd = (unsigned int)getpid();
	snprintf(conf.srt_name, sizeof(conf.srt_name), "minisentry-srt.%d.%08x", (int)getpid(),
		 rnd);
	if (asprintf(&conf.srt_image, "%s/%s", conf.srt_dir, conf.srt_name) < 0)
		return -ENOMEM;
	return 0;
}

int confine_srt_dirfd(void)
{
	return conf.srt_dirfd;
}

const char *confine_srt_name(void)
{
	return conf.srt_name;
}

void confine_srt_remove(const char *path)
{
	const char *slash = strrchr(path, '/');
	struct dirent *de;
	DIR *d;
	int fd;

	if (!slash || !conf.srt_dir || conf.srt_dirfd < 0 ||
	    strlen(conf.srt_dir) != (size_t)(slash - path) ||
	    strncmp(conf.srt_dir, path, slash - path) || !slash[1] || !strcmp(slash + 1, "..") ||
	    !strcmp(slash + 1, "."))
		return;
	fd = openat(conf.srt_dirfd, slash + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(fd, de->d_name, 0);
	closedir(d);
	unlinkat(conf.srt_dirfd, slash + 1, AT_REMOVEDIR);
}

void confine_srt_restart(void)
{
	char *argv[CONTROL_RESTORE_ARGV_MAX(kernel.cfg.nbinds)];

	fflush(NULL);
	if (conf.active) {
		/* The launcher restores the image once we are gone. */
		if (write(conf.link.restart_fd, "r", 1) != 1)
			_exit(125);
		_exit(0);
	}
	/* Not confined: this process is its own launcher. */
	control_restore_argv(&kernel.cfg, conf.srt_image, argv,
			     CONTROL_RESTORE_ARGV_MAX(kernel.cfg.nbinds));
	closefrom(3);
	kernel_stop_tick(); /* an interval timer outlives exec */
	execv("/proc/self/exe", argv);
	fprintf(stderr, "minisentry: save-restore test: cannot restart: %s\n", strerror(errno));
	_exit(125);
}

void confine_note_socket(unsigned long long ino)
{
	unsigned char msg[9] = {'s'};

	if (!conf.active)
		return;
	for (int i = 0; i < 8; i++)
		msg[1 + i] = ino >> (8 * i);
	if (write(conf.link.restart_fd, msg, sizeof(msg)) != sizeof(msg)) {
		/* The launcher then leaves the socket file for the next Sentry of that name. */
	}
}

void confine_set_ready_fd(int fd)
{
	launcher_set_ready_fd(fd);
}

void confine_note_loaded(void)
{
	if (conf.active && write(conf.link.restart_fd, "l", 1) != 1) {
		/* The launcher is gone: so is whoever waited. */
	}
}

void confine_exiting(int status)
{
	unsigned char msg[2] = {'x', (unsigned char)status};
	static bool said;

#if defined(__SANITIZE_ADDRESS__)
	/* A sanitizer's report at exit (LeakSanitizer's) must still decide the status. */
	return;
#endif
	if (!conf.active || said)
		return;
	said = true;
	if (write(conf.link.restart_fd, msg, sizeof(msg)) != sizeof(msg)) {
		/* The launcher then waits for our exit itself. */
	}
}

/* --- step 1: the namespaces ---------------------------------------------------------------- */

/* Whatever descriptors we were started with beyond stdio are not the sandbox's: only those
 * set-up opens, and the launcher link, go into the confined Sentry. */
static void close_inherited(void)
{
	int keep[3] = {conf.link.restart_fd, conf.link.maps_fd, conf.srt_dirfd}, from = 3;

	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (keep[j] < keep[i]) {
				int t = keep[i];
				keep[i] = keep[j];
				keep[j] = t;
			}
	for (int i = 0; i < 3; i++) {
		if (keep[i] < from)
			continue;
		if (keep[i] > from)
			syscall(SYS_close_range, from, keep[i] - 1, 0);
		from = keep[i] + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0);
}

/* The network namespace is made by a thread of ours while the Sentry sets up: a new network
 * namespace costs some 0.5 ms of the kernel's (its loopback device, sysctl tables), most of
 * what the other six together cost, and more while the other CPU is busy. The thread hands it
 * to the stub factory on a socket of their own (the factory joins it in stub_hook, before it
 * enters the stubs' user namespace and before the stub page runs), and the Sentry joins it at
 * the lock: nothing waits for it before then, and every stub and the Sentry are in it before
 * the guest's first instruction. */
static struct {
	pthread_t thread;
	bool started;
	int fd;
	int err;
	int sock[2]; /* the thread sends on [0], the factory receives on [1] */
} netns = {.fd = -1, .sock = {-1, -1}};

static void *make_netns(void *arg)
{
	char ctl[CMSG_SPACE(sizeof(int))] = {0};
	char byte = 'n';
	struct iovec iov = {&byte, 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

	(void)arg;
	if (unshare(CLONE_NEWNET))
		netns.err = errno;
	else if ((netns.fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) < 0)
		netns.err = errno;
	if (netns.fd >= 0) {
		msg.msg_control = ctl;
		msg.msg_controllen = sizeof(ctl);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &netns.fd, sizeof(int));
		if (sendmsg(netns.sock[0], &msg, MSG_NOSIGNAL) != 1)
			netns.err = errno;
	}
	/* Without the namespace, the factory reads the end and gives up. */
	shutdown(netns.sock[0], SHUT_WR);
	return NULL;
}

/* In the factory: into the network namespace the thread made. */
static int factory_join_netns(void)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	char byte;
	struct iovec iov = {&byte, 1};
	struct msghdr msg = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)};
	struct cmsghdr *c;
	int fd;

	close(netns.sock[0]);
	if (recvmsg(netns.sock[1], &msg, MSG_CMSG_CLOEXEC) != 1 || !(c = CMSG_FIRSTHDR(&msg)) ||
	    c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	int err = setns(fd, CLONE_NEWNET);
	close(fd);
	close(netns.sock[1]);
	return err;
}

static int join_netns(void)
{
	int err;

	if (!netns.started)
		return 0;
	netns.started = false;
	if ((err = pthread_join(netns.thread, NULL)))
		return fail(err, "the network namespace");
	close(netns.sock[0]);
	close(netns.sock[1]);
	netns.sock[0] = netns.sock[1] = -1;
	if (netns.fd < 0)
		return fail(netns.err, "the network namespace");
	err = setns(netns.fd, CLONE_NEWNET) ? errno : 0;
	close(netns.fd);
	netns.fd = -1;
	return err ? fail(err, "the network namespace") : 0;
}

int confine_join_network(void)
{
	return conf.active ? join_netns() : 0;
}

/* Whether we run in the host's own user namespace (its uid map is the whole range). */
static bool in_initial_userns(void)
{
	unsigned long inside, outside, count;
	FILE *f = fopen("/proc/self/uid_map", "re");
	int n = f ? fscanf(f, "%lu %lu %lu", &inside, &outside, &count) : 0;

	if (f)
		fclose(f);
	return n == 3 && inside == 0 && outside == 0 && count == 4294967295UL;
}

int confine_launch(const struct confine_opts *o, const struct kernel_config *cfg)
{
	char uid_map[64], gid_map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int err;

	conf.opts = *o;
	if (cfg->save_restore_test && (err = srt_open(cfg->save_restore_slots)))
		return err;
	if (o->unsafe_off)
		return 0;
	/* Identity maps: the ids the Sentry and its stubs have are the host's ones. */
	conf.root = uid == 0;
	if (conf.root) {
		if (gid == STUB_HOST_ID)
			return fail(EINVAL, "started with the stubs' group id 65534");
		conf.stub_uid = conf.stub_gid = STUB_HOST_ID;
		snprintf(uid_map, sizeof(uid_map), "0 0 1\n%d %d 1\n", STUB_HOST_ID, STUB_HOST_ID);
		snprintf(gid_map, sizeof(gid_map), "%u %u 1\n%d %d 1\n", gid, gid, STUB_HOST_ID,
			 STUB_HOST_ID);
	} else {
		conf.stub_uid = uid;
		conf.stub_gid = gid;
		snprintf(uid_map, sizeof(uid_map), "%u %u 1\n", uid, uid);
		snprintf(gid_map, sizeof(gid_map), "%u %u 1\n", gid, gid);
	}
	struct launcher_maps maps = {uid_map, gid_map, !conf.root};
	/* Only --network host keeps the host's network namespace: its guest sockets are the
	 * Sentry's host sockets. */
	bool new_net = cfg->network != NETWORK_HOST;
	int ns = NAMESPACES & ~CLONE_NEWNET;
	err = launcher_start(ns, &maps, cfg, conf.srt_image, &conf.link);
	if (err && conf.root && !in_initial_userns()) {
		/* Root of a user namespace (a container), where nobody may not be mapped: the stubs
		 * keep our ids, which are not the host's root. */
		conf.root = false;
		conf.stub_uid = uid;
		conf.stub_gid = gid;
		snprintf(uid_map, sizeof(uid_map), "%u %u 1\n", uid, uid);
		snprintf(gid_map, sizeof(gid_map), "%u %u 1\n", gid, gid);
		maps.deny_setgroups = true;
		err = launcher_start(ns, &maps, cfg, conf.srt_image, &conf.link);
	}
	if (err)
		return fail(-err, "new user, PID, mount, network, IPC, UTS and cgroup namespaces "
				  "(README.md, Confinement, says what they need)");
	conf.active = true;
	close_inherited();
	mark("launch: maps, closed");
	if (new_net) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, netns.sock))
			return fail(errno, "the network namespace");
		int e = pthread_create(&netns.thread, NULL, make_netns, NULL);
		if (e)
			return fail(e, "the network namespace");
		netns.started = true;
	}
	mark("launch: netns thread");
	/* Mounts of our own from here on, and a /proc that shows our PID namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return fail(errno, "private mounts");
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		return fail(errno, "mount /proc");
	/* Host tasks of the whole sandbox, the Sentry's own forks included (RLIMIT_NPROC does
	 * not count root's): Linux 6.14 and later keep a pid_max per PID namespace. */
	int fd = open("/proc/sys/kernel/pid_max", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, SANDBOX_PID_MAX, strlen(SANDBOX_PID_MAX)) < 0) {
			/* An older kernel: the host's pid_max is the bound. */
		}
		close(fd);
	}
	return 0;
}

/* --- step 2: the stubs' user namespace ----------------------------------------------------- */

/* In every new stub, before the stub page runs: into the stubs' user namespace, as the stub
 * ids, with no capability, no core, and a bound on host tasks. The Sentry seized it before, and
 * stays its tracer across the id change. It owns that namespace, so it keeps the capabilities
 * (signals, affinity) it needs over the stub with an empty set of its own. */
static void stub_hook(void)
{
	struct rlimit nproc, none = {0, 0};

	if ((netns.started && factory_join_netns()) || setns(conf.userns_fd, CLONE_NEWUSER) ||
	    setresgid(conf.stub_gid, conf.stub_gid, conf.stub_gid) ||
	    (conf.root && setgroups(0, NULL)) ||
	    setresuid(conf.stub_uid, conf.stub_uid, conf.stub_uid))
		_exit(126);
	if (getrlimit(RLIMIT_NPROC, &nproc) == 0) {
		if (nproc.rlim_max > STUB_NPROC)
			nproc.rlim_max = STUB_NPROC;
		nproc.rlim_cur = nproc.rlim_max;
		setrlimit(RLIMIT_NPROC, &nproc);
	}
	if (setrlimit(RLIMIT_CORE, &none) || drop_caps() || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		_exit(126);
	close(conf.userns_fd);
}

static int write_map(pid_t pid, const char *file, unsigned int id)
{
	char path[64], map[32];
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	int len = snprintf(map, sizeof(map), "%u %u 1\n", id, id);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	if (write(fd, map, len) != len)
		err = -errno;
	close(fd);
	return err;
}

/* The stubs' user namespace's holder: it only waits to be killed, on a stack of its own. */
static char userns_helper_stack[16384] __attribute__((aligned(16)));

static int userns_helper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

void confine_maps_ready(void)
{
	if (conf.active)
		launcher_maps_written(&conf.link);
}

int confine_prepare_stubs(void)
{
	char path[64];
	int err = 0;
	pid_t h;

	if (!conf.active)
		return 0;
	/* The stubs' ids are mapped through ours. */
	launcher_maps_written(&conf.link);
	/* Root's supplementary groups would open files by group. The system call, not glibc's
	 * setgroups, which changes every thread's and so would wait for the network thread to
	 * leave the kernel (0.5 ms): only this thread's matter, the one every later thread is
	 * made by, and the network thread is gone before the lock. */
	if (conf.root && syscall(SYS_setgroups, 0, NULL))
		return fail(errno, "setgroups");
	/* A helper born in the new namespace holds it while we map it and take a handle. It
	 * shares our memory (CLONE_VM), so neither its birth nor its death copies or tears down
	 * the Sentry's address space (a fork and exit cost 0.3 ms of start-up). */
	h = clone(userns_helper, userns_helper_stack + sizeof(userns_helper_stack),
		  CLONE_NEWUSER | CLONE_VM | SIGCHLD, NULL);
	if (h < 0)
		return fail(errno, "the stubs' user namespace");
	if ((err = write_map(h, "uid_map", conf.stub_uid)) ||
	    (err = write_map(h, "gid_map", conf.stub_gid))) {
		err = fail(-err, "the stubs' id maps");
	} else {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)h);
		if ((conf.userns_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			err = fail(errno, path);
		else
			platform_set_stub_hook(stub_hook);
	}
	kill(h, SIGKILL);
	waitpid(h, NULL, 0);
	return err;
}

/* --- the root filesystem ------------------------------------------------------------------- */

const char *confine_rootfs(const char *rootfs)
{
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
					      MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC |
					      MOUNT_ATTR_NOSYMFOLLOW};
	int fd;

	if (!conf.active)
		return rootfs;
	if (conf.rootfs_src) {
		if (strcmp(conf.rootfs_src, rootfs)) {
			errno = EXDEV; /* one root filesystem per Sentry */
			return NULL;
		}
		return conf.rootfs_path;
	}
	if (conf.locked) {
		errno = EPERM;
		return NULL;
	}
	/* A copy of the tree detached from every other mount: ".." at its top stays there, so
	 * the descriptor reaches nothing outside it, and nothing in it can be written. */
	fd = open_tree(AT_FDCWD, rootfs, OPEN_TREE_CLONE | AT_RECURSIVE | OPEN_TREE_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) ||
	    !(conf.rootfs_src = strdup(rootfs))) {
		int e = errno ? errno : ENOMEM;
		close(fd);
		errno = e;
		return NULL;
	}
	conf.rootfs_fd = fd;
	snprintf(conf.rootfs_path, sizeof(conf.rootfs_path), "/proc/self/fd/%d", fd);
	return conf.rootfs_path;
}

int confine_open_bind(const char *host, bool ro)
{
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					      MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NOSYMFOLLOW |
					      (ro ? MOUNT_ATTR_RDONLY : 0)};
	int fd;

	if (!conf.active) {
		fd = open(host, O_PATH | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	if (conf.locked)
		return -EPERM;
	/* As the rootfs: a detached copy, at whose top ".." stays, read-only unless the user
	 * asked for a writable one. */
	fd = open_tree(AT_FDCWD, host, OPEN_TREE_CLONE | AT_RECURSIVE | OPEN_TREE_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr))) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* --- step 3: the lock ---------------------------------------------------------------------- */

static void set_limits(void)
{
	struct rlimit r, zero = {0, 0};

	setrlimit(RLIMIT_CORE, &zero);
	setrlimit(RLIMIT_MEMLOCK, &zero);
	setrlimit(RLIMIT_MSGQUEUE, &zero);
	if (getrlimit(RLIMIT_NOFILE, &r) == 0) {
		if (r.rlim_max > SENTRY_NOFILE)
			r.rlim_max = SENTRY_NOFILE;
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
	if (getrlimit(RLIMIT_NPROC, &r) == 0) {
		if (r.rlim_max > STUB_NPROC)
			r.rlim_max = STUB_NPROC;
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NPROC, &r);
	}
}

/* The new root: a read-only tmpfs holding only /proc, a procfs of our PID namespace with only
 * its process directories (subset=pid: no sysrq-trigger, no /proc/sys). The old root is
 * detached; the rootfs and the descriptors we hold are all that is left of the host. */
static int enter_empty_root(void)
{
	static const char *const mountpoints[] = {"/tmp", "/mnt", "/dev", "/run"};
	const char *mp = NULL;
	struct stat st;
	char proc[32];

	for (size_t i = 0; i < sizeof(mountpoints) / sizeof(mountpoints[0]) && !mp; i++)
		if (stat(mountpoints[i], &st) == 0 && S_ISDIR(st.st_mode))
			mp = mountpoints[i];
	if (!mp)
		return fail(ENOENT, "a directory to build the new root on");
	mark("root: stat");
	if (mount("minisentry", mp, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "size=4k,nr_inodes=8,mode=0555"))
		return fail(errno, "the new root");
	snprintf(proc, sizeof(proc), "%s/proc", mp);
	if (mkdir(proc, 0555))
		return fail(errno, "the new root's /proc");
	mark("root: tmpfs, mkdir");
	if (mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, "subset=pid"))
		return fail(errno, "the new root's /proc");
	mark("root: proc");
	if (chdir(mp) || syscall(SYS_pivot_root, ".", "."))
		return fail(errno, "pivot_root");
	/* The old root is stacked under the new one: detach it. */
	mark("root: pivot");
	if (umount2(".", MNT_DETACH) || chdir("/"))
		return fail(errno, "detaching the old root");
	mark("root: detach");
	if (mount(NULL, "/", NULL,
		  MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		return fail(errno, "a read-only new root");
	return 0;
}

int confine_lock(void)
{
	int err;

	if (!conf.active)
		return 0;
	if ((err = join_netns()))
		return err;
	set_limits();
	mark("lock: netns joined");
	if ((err = enter_empty_root()))
		return err;
	mark("lock: empty root");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		return fail(errno, "prctl");
	if ((err = drop_caps()))
		return fail(-err, "dropping capabilities");
	if (conf.opts.debug != CONFINE_DEBUG_NONE &&
	    (err = hostpolicy_install(conf.opts.debug, kernel.cfg.network == NETWORK_HOST)))
		return fail(-err, "the seccomp allowlist");
	conf.locked = true;
	return 0;
}

int confine_rootfs_fd(void)
{
	return conf.rootfs_fd;
}

int confine_launcher_pid(void)
{
	return conf.link.launcher_pid;
}
