/* Warm slots (docs/checkpoint.md, "Warm slots"). A slot restore used to pay a whole confined
 * start before its guest ran: namespaces, the stubs' user namespace and factory, the rootfs
 * opened, the slot mapped, the lock. A waiting Sentry does all of that ahead of time for one
 * slot, locks itself in, and only then waits on DIR/warm.I.sock for the one request it will
 * serve; the restore client claims the slot as any claimer does (the pool's lock), hands over
 * its stdio, the image's directory, the lock (the pool's descriptor) and its options, relays
 * the signals it gets, and exits as the sandbox ended. Everything the Sentry reads from the
 * request and the image comes after its lock. */
#include "sentry/warm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mem/memfile.h"
#include "sentry/checkpoint.h"
#include "sentry/control.h"
#include "sentry/kernel.h"
#include "sentry/launcher.h"
#include "sentry/mm.h"

#define WARM_MAGIC "MSWARM01"
/* stdin, stdout, stderr, the image's directory, the pool (holding the slot's lock), and with
 * --id the control socket, listening. */
#define WARM_FD_IMAGE 3
#define WARM_FD_POOL 4
#define WARM_FD_CONTROL 5
#define WARM_FDS_MAX 6
#define WARM_ID_MAX 80
#define WARM_IMAGE_MAX 4096
/* The client's wait for the Sentry's answer, and the Sentry's for the request once connected. */
#define WARM_REPLY_MS 5000
#define WARM_REQUEST_MS 2000
/* How often a waiting Sentry looks whether its pool is still there. */
#define WARM_IDLE_CHECK_MS 1000
/* How long `slots --warm` waits for its Sentries to listen. */
#define WARM_START_MS 20000

/* The request: one message of a SOCK_SEQPACKET connection, with its descriptors. */
struct warm_request {
	char magic[8];
	uint32_t size; /* sizeof(struct warm_request): the same build on both sides */
	uint32_t nfds;
	int64_t main_sec, main_nsec; /* the client's main(), CLOCK_MONOTONIC (--stats) */
	int32_t client_pid;	     /* what a ping of the sandbox reports */
	uint8_t stats, quiet, strace, force;
	uint8_t platform, placement, pad[2];
	char id[WARM_ID_MAX];	    /* --id, or empty */
	char image[WARM_IMAGE_MAX]; /* the image's path as given: messages name it */
};

/* The answers: 'g' (the slot is claimed, the restore goes on), 'f' (refused before the claim:
 * restore without me), then 'x' and the exit status once the sandbox has ended and its slot
 * is back in the pool. */

static int fail(const char *what, const char *why)
{
	fprintf(stderr, "minisentry: %s: %s\n", what, why);
	return 1;
}

/* DIR/warm.I.sock by the directory's descriptor: no length limit on DIR. */
static void sock_addr(int dirfd, unsigned index, const char *suffix, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d/warm.%u.sock%s", dirfd,
		 index, suffix);
}

static void sock_name(unsigned index, char *buf, size_t size)
{
	snprintf(buf, size, "warm.%u.sock", index);
}

static bool lock_byte(int fd, unsigned at)
{
	struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = at, .l_len = 1};

	return fcntl(fd, F_OFD_SETLK, &l) == 0;
}

static bool byte_locked(int fd, unsigned at)
{
	struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = at, .l_len = 1};

	return fcntl(fd, F_OFD_GETLK, &l) == 0 && l.l_type != F_UNLCK;
}

static int send_byte(int fd, char c, int status)
{
	char msg[2] = {c, (char)status};
	struct iovec iov = {msg, c == 'x' ? 2 : 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

	return sendmsg(fd, &m, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* --- starting waiting Sentries --------------------------------------------------------------- */

/* Starts `minisentry slots --serve-slot INDEX DIR` in a session of its own, not our child: it
 * outlives us, and nobody waits for it. */
static int spawn_serve(const char *dir, unsigned index)
{
	char idx[16];
	pid_t c;
	int st;

	snprintf(idx, sizeof(idx), "%u", index);
	fflush(NULL);
	if ((c = fork()) < 0)
		return -errno;
	if (c == 0) {
		if (fork() == 0) {
			sigset_t none;
			char *argv[] = {"minisentry", "slots",	   "--serve-slot",
					idx,	      (char *)dir, NULL};
			sigemptyset(&none);
			sigprocmask(SIG_SETMASK, &none, NULL);
			setsid();
			syscall(SYS_close_range, 3, ~0U, 0);
			execv("/proc/self/exe", argv);
			_exit(127);
		}
		_exit(0);
	}
	while (waitpid(c, &st, 0) < 0 && errno == EINTR)
		;
	return 0;
}

int warm_start_all(const char *dir)
{
	char name[64];
	struct stat st;
	int dfd, wfd, count;

	if ((count = memfile_slots_count(dir)) < 0)
		return fail("slots", "no pool there (minisentry slots --base GOLDEN makes one)");
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return fail("slots", strerror(errno));
	wfd = openat(dfd, "warm", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (wfd < 0) {
		close(dfd);
		return fail("slots", strerror(errno));
	}
	/* Slots whose Sentry waits already (it holds its byte of DIR/warm) are left alone; each
	 * started one is ready when its socket is there, a new one (listening before it appears
	 * under that name). */
	ino_t *was = calloc(count, sizeof(*was));
	bool *want = calloc(count, sizeof(*want));
	int ret = 0;
	if (!was || !want) {
		ret = fail("slots", "out of memory");
		goto out;
	}
	for (int i = 0; i < count; i++) {
		sock_name(i, name, sizeof(name));
		was[i] = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) ? 0 : st.st_ino;
		want[i] = !byte_locked(wfd, i);
		if (want[i] && spawn_serve(dir, i)) {
			ret = fail("slots", "cannot start a waiting Sentry");
			goto out;
		}
	}
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < count;) {
		sock_name(i, name, sizeof(name));
		if (!want[i] || (!fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
				 S_ISSOCK(st.st_mode) && st.st_ino != was[i])) {
			i++;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >
		    WARM_START_MS) {
			char why[PATH_MAX + 64];
			snprintf(
			    why, sizeof(why),
			    "the waiting Sentry of slot.%d did not start (%s/warm.log says why)", i,
			    dir);
			ret = fail("slots", why);
			goto out;
		}
		usleep(2000);
	}
out:
	free(was);
	free(want);
	close(wfd);
	close(dfd);
	return ret;
}

/* --- the waiting Sentry ---------------------------------------------------------------------- */

static struct {
	int listen_fd, warm_fd, sig_fd, conn;
	int fds[WARM_FDS_MAX];
	int nfds;
	struct warm_request req;
} w = {.listen_fd = -1, .warm_fd = -1, .sig_fd = -1, .conn = -1, .nfds = 0};

static void close_fds(void)
{
	for (int i = 0; i < w.nfds; i++)
		if (w.fds[i] >= 0)
			close(w.fds[i]);
	w.nfds = 0;
}

/* Before the lock: DIR/warm's byte INDEX taken (or another Sentry waits for this slot: 1),
 * and the socket listening under its name. The directory's descriptor is not kept: a locked
 * Sentry must reach no other slot. */
static int listen_for_requests(const char *dir, unsigned index)
{
	struct sockaddr_un sa, fresh;
	char name[64], tmp[80];
	int dfd, err = 0;

	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -errno;
	w.warm_fd = openat(dfd, "warm", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (w.warm_fd < 0) {
		err = -errno;
		goto out;
	}
	if (!lock_byte(w.warm_fd, index)) {
		err = 1;
		goto out;
	}
	sock_name(index, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), "%s.new", name);
	unlinkat(dfd, tmp, 0);
	sock_addr(dfd, index, ".new", &fresh);
	sock_addr(dfd, index, "", &sa);
	w.listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	mode_t old = umask(0177); /* the socket 0600 */
	if (w.listen_fd < 0 || bind(w.listen_fd, (struct sockaddr *)&fresh, sizeof(fresh)) ||
	    listen(w.listen_fd, 4) || renameat(dfd, tmp, dfd, name))
		err = -errno;
	umask(old);
out:
	close(dfd);
	return err;
}

/* Whether the pool this Sentry waits for was removed (rm -rf of its directory ends us). */
static bool pool_gone(void)
{
	struct stat a, b;

	return fstat(memfile_slot_pool_fd(), &a) || a.st_nlink == 0 ||
	       fstat(memfile_slot_fd(), &b) || b.st_nlink == 0;
}

/* The request on connection C, checked as hostile input: one whole message of the expected
 * size and version, its strings terminated, its descriptors of the kinds they must be.
 * 0 (W.REQ and W.FDS filled), 1 when it asks for what this Sentry was not started with (the
 * client restores without us), or -1 when it is malformed. */
static int read_request(int c, const struct kernel_config *cfg)
{
	char cbuf[CMSG_SPACE(sizeof(int) * WARM_FDS_MAX)];
	struct iovec iov = {&w.req, sizeof(w.req)};
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct pollfd p = {.fd = c, .events = POLLIN};
	struct stat st;
	ssize_t n;

	w.nfds = 0;
	if (poll(&p, 1, WARM_REQUEST_MS) != 1)
		return -1;
	n = recvmsg(c, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	for (struct cmsghdr *h = n >= 0 ? CMSG_FIRSTHDR(&m) : NULL; h; h = CMSG_NXTHDR(&m, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
			if (w.nfds < WARM_FDS_MAX)
				w.fds[w.nfds++] = fd;
			else
				close(fd);
		}
	}
	const struct warm_request *r = &w.req;
	if (n != (ssize_t)sizeof(*r) || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    memcmp(r->magic, WARM_MAGIC, 8) || r->size != sizeof(*r) ||
	    r->nfds != (uint32_t)w.nfds || !memchr(r->id, 0, sizeof(r->id)) ||
	    !memchr(r->image, 0, sizeof(r->image)) || !r->image[0] ||
	    w.nfds != (r->id[0] ? WARM_FDS_MAX : WARM_FDS_MAX - 1) || r->stats > 1 ||
	    r->quiet > 1 || r->strace > 1 || r->force > 1)
		return -1;
	for (int i = 0; i < w.nfds; i++) {
		if (fstat(w.fds[i], &st))
			return -1;
		if ((i == WARM_FD_IMAGE && !S_ISDIR(st.st_mode)) ||
		    (i == WARM_FD_POOL && !S_ISREG(st.st_mode)) ||
		    (i == WARM_FD_CONTROL && !S_ISSOCK(st.st_mode)))
			return -1;
	}
	if (r->platform != (uint8_t)cfg->platform || r->placement != (uint8_t)cfg->placement)
		return 1;
	return 0;
}

/* Waits for a request it can serve, and claims the slot with it: 0 (W.CONN, W.REQ, W.FDS
 * set), or -1 when the pool went away or a signal told us to end. */
static int wait_for_request(const char *dir, const struct kernel_config *cfg)
{
	for (;;) {
		struct pollfd p[2] = {{.fd = w.listen_fd, .events = POLLIN},
				      {.fd = w.sig_fd, .events = POLLIN}};
		int r = poll(p, 2, WARM_IDLE_CHECK_MS);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || p[1].revents || (r == 0 && pool_gone()))
			return -1;
		if (r == 0)
			continue;
		int c = accept4(w.listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		int got = read_request(c, cfg);
		char *err = NULL;
		if (got == 0) {
			/* The pool's descriptor is taken over (or closed) by the claim. */
			int pool = w.fds[WARM_FD_POOL];
			w.fds[WARM_FD_POOL] = -1;
			if (memfile_slot_adopt(pool, dir, &err) == 0) {
				w.conn = c;
				return 0;
			}
			free(err);
			got = 1;
			if (memfile_slot_pool_fd() < 0) {
				/* The claim failed half-way (its recovery): the slot is in use, for
				 * its next claimer to recover, and this Sentry has none left. */
				send_byte(c, 'f', 0);
				close_fds();
				close(c);
				return -1;
			}
		}
		if (got == 1)
			send_byte(c, 'f', 0);
		close_fds();
		close(c);
	}
}

/* The client's stdio becomes ours (the guest's, as a restore's stdio is). */
static int take_stdio(void)
{
	for (int i = 0; i < 3; i++) {
		close(i);
		if (fcntl(w.fds[i], F_DUPFD, i) != i)
			return -EBADF;
		close(w.fds[i]);
		w.fds[i] = -1;
	}
	return 0;
}

/* Where a waiting Sentry's own messages go before it has a client: DIR/warm.log. */
static void quiet_stdio(const char *dir)
{
	char log[PATH_MAX + 16];
	int null = open("/dev/null", O_RDWR | O_CLOEXEC), fd;

	snprintf(log, sizeof(log), "%s/warm.log", dir);
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(fd >= 0 ? fd : null, 2);
		close(null);
	}
	if (fd >= 0)
		close(fd);
}

/* What a restore allocates (its sections, the memory's index, the load's buffers: 0.4 MiB for
 * a delta of a 1 GiB golden image) comes from heap pages that are there and writable: a fault
 * costs 10-80 us in a paravirtualised guest, and after the forks of the set-up every page of
 * the Sentry's own memory faults again at its first write. The heap keeps its freed top
 * (keep_heap_for_messages, sentry/kernel.c). */
#define WARM_HEAP_BYTES (2 << 20)

static void prefault_heap(void)
{
	char *p = malloc(WARM_HEAP_BYTES);

	if (p) {
		memset(p, 1, WARM_HEAP_BYTES);
		__asm__ volatile("" : : "r"(p) : "memory"); /* the writes must happen */
		free(p);
	}
}

int warm_serve(const char *dir, unsigned index)
{
	struct kernel_config cfg = {.placement = PLACEMENT_AUTO,
				    .platform = kernel_default_platform()};
	struct kernel_restore_opts o = {0};
	char rootfs[4096], *err = NULL;
	const void *kdata;
	size_t klen;
	sigset_t ends;
	int r;

	quiet_stdio(dir);
	if ((r = confine_launch(&cfg.confine, &cfg)))
		return 1; /* said */
	/* Everything that does not depend on the image: the slot mapped, the platform, the
	 * stubs' factory, the golden image's rootfs. */
	if ((r = memfile_slot_prepare(dir, index, &err))) {
		fprintf(stderr, "minisentry: slots: %s\n", err ? err : strerror(-r));
		free(err);
		return 1;
	}
	if (kernel_warm_setup(&cfg))
		return 1; /* said */
	if (memfile_slot_golden_section("kernel", &kdata, &klen) ||
	    kernel_ckpt_rootfs(kdata, klen, rootfs, sizeof(rootfs)))
		return fail("slots", "the golden image has no kernel record");
	if (!confine_rootfs(rootfs)) {
		fprintf(stderr, "minisentry: slots: rootfs '%s': %s\n", rootfs, strerror(errno));
		return 1;
	}
	if ((r = listen_for_requests(dir, index)))
		return r > 0 ? 0 : fail("slots: cannot listen for requests", strerror(-r));
	sigemptyset(&ends);
	sigaddset(&ends, SIGTERM);
	sigaddset(&ends, SIGINT);
	sigaddset(&ends, SIGHUP);
	if ((w.sig_fd = signalfd(-1, &ends, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		return fail("slots", strerror(errno));
	if (confine_lock())
		return 1; /* said */
	/* The restored init's stub, made now (it would be made the same way once the image is
	 * read): a restore that finds none makes its own. */
	mm_prepare_spare_stub();
	prefault_heap();
	/* Locked in: from here on, what comes is untrusted. */
	if (wait_for_request(dir, &cfg))
		return 0;
	/* One request per Sentry: the next one's Sentry may start now. */
	close(w.listen_fd);
	close(w.warm_fd);
	close(w.sig_fd);
	if (take_stdio()) {
		memfile_slot_release(); /* nothing was written to it */
		return 1;
	}
	send_byte(w.conn, 'g', 0);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	kernel_main_start = (struct timespec){w.req.main_sec, w.req.main_nsec};
	if (w.req.main_sec < 0 || w.req.main_nsec < 0 || w.req.main_nsec >= 1000000000 ||
	    w.req.main_sec > now.tv_sec)
		kernel_main_start = now;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &kernel_cpu_start);
	cfg.stats = w.req.stats;
	cfg.quiet = w.req.quiet;
	cfg.strace = w.req.strace;
	o.force = w.req.force;
	o.slots = dir;
	o.image_by_fd = true;
	o.image_fd = w.fds[WARM_FD_IMAGE];
	if (w.req.id[0]) {
		cfg.id = w.req.id;
		if (control_adopt(cfg.id, w.fds[WARM_FD_CONTROL], kernel.epfd)) {
			fprintf(stderr, "minisentry: restore: --id '%s': not a sandbox name\n",
				cfg.id);
			w.fds[WARM_FD_CONTROL] = -1;
			kernel_slot_done();
			send_byte(w.conn, 'x', 1);
			return 1;
		}
		w.fds[WARM_FD_CONTROL] = -1;
		control_set_caller_pid(w.req.client_pid);
	}
	kernel_watch_client(w.conn);
	r = kernel_warm_restore(&cfg, w.req.image, &o);
	if (r < 0)
		r = 1;
	fflush(NULL);
	send_byte(w.conn, 'x', r);
	return r;
}

/* --- the restore client ---------------------------------------------------------------------- */

/* A Sentry that ended without saying its status: how it ended, through its pidfd (Linux 6.15's
 * PIDFD_GET_INFO, which the headers may predate). */
struct pidfd_exit_info {
	uint64_t mask;
	uint64_t cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
	uint32_t coredump_mask, spare;
};
#define PIDFD_INFO_EXIT_ (1ULL << 3)
#define PIDFD_GET_INFO_ _IOWR(0xFF, 11, struct pidfd_exit_info)
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

static int exit_status_of(int pidfd)
{
	struct pidfd_exit_info info = {.mask = PIDFD_INFO_EXIT_};
	struct pollfd p = {.fd = pidfd, .events = POLLIN};

	/* Readable once it has exited; the status is there once its launcher reaped it. */
	for (int i = 0; pidfd >= 0 && i < 100; i++) {
		poll(&p, 1, 20);
		info.mask = PIDFD_INFO_EXIT_;
		if (ioctl(pidfd, PIDFD_GET_INFO_, &info) == 0 && (info.mask & PIDFD_INFO_EXIT_))
			return info.exit_code;
	}
	return -1;
}

static bool warm_eligible(const struct kernel_config *cfg, const struct kernel_restore_opts *o,
			  bool delete_image)
{
	return o->slots && !delete_image && !o->lazy && !o->rootfs && !o->nbinds && !o->key &&
	       !cfg->strace_file && !cfg->save_restore_test && !cfg->confine.unsafe_off &&
	       cfg->confine.debug == CONFINE_DEBUG_OFF && !cfg->memory && !cfg->pids &&
	       cfg->network == NETWORK_LOOPBACK && (!cfg->id || strlen(cfg->id) < WARM_ID_MAX);
}

/* The request, sent with its descriptors. */
static int send_request(int conn, const struct kernel_config *cfg,
			const struct kernel_restore_opts *o, const char *image, int imgfd,
			int poolfd, int ctlfd)
{
	static struct warm_request req;
	int fds[WARM_FDS_MAX] = {0, 1, 2, imgfd, poolfd, ctlfd};
	int nfds = ctlfd >= 0 ? WARM_FDS_MAX : WARM_FDS_MAX - 1;
	char cbuf[CMSG_SPACE(sizeof(fds))];
	struct iovec iov = {&req, sizeof(req)};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = cbuf,
			   .msg_controllen = CMSG_SPACE(nfds * sizeof(int))};

	memset(&req, 0, sizeof(req));
	memcpy(req.magic, WARM_MAGIC, 8);
	req.size = sizeof(req);
	req.nfds = nfds;
	req.main_sec = kernel_main_start.tv_sec;
	req.main_nsec = kernel_main_start.tv_nsec;
	req.client_pid = getpid();
	req.stats = cfg->stats;
	req.quiet = cfg->quiet;
	req.strace = cfg->strace;
	req.force = o->force;
	req.platform = (uint8_t)cfg->platform;
	req.placement = (uint8_t)cfg->placement;
	if (cfg->id)
		snprintf(req.id, sizeof(req.id), "%s", cfg->id);
	snprintf(req.image, sizeof(req.image), "%s", image);
	memset(cbuf, 0, sizeof(cbuf));
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	memcpy(CMSG_DATA(h), fds, nfds * sizeof(int));
	return sendmsg(conn, &m, MSG_NOSIGNAL) == (ssize_t)sizeof(req) ? 0 : -1;
}

/* One answer of the Sentry into BUF (2 bytes); its length, 0 at the end of the connection,
 * -1 after TIMEOUT_MS (-1: none) without one. */
static int read_answer(int conn, char *buf, int timeout_ms)
{
	struct pollfd p = {.fd = conn, .events = POLLIN};

	if (poll(&p, 1, timeout_ms) != 1)
		return -1;
	ssize_t n = recv(conn, buf, 2, MSG_DONTWAIT);
	return n < 0 ? 0 : (int)n;
}

/* The Sentry runs the sandbox: the signals we get go to it as our launcher would pass them on,
 * until it says how the sandbox ended. */
static int relay(int conn, pid_t sentry, int pidfd)
{
	struct signalfd_siginfo ssi;
	sigset_t all;
	char ans[2];

	sigfillset(&all);
	int sfd = signalfd(-1, &all, SFD_CLOEXEC | SFD_NONBLOCK);
	for (;;) {
		struct pollfd p[2] = {{.fd = conn, .events = POLLIN},
				      {.fd = sfd, .events = POLLIN}};
		if (poll(p, sfd >= 0 ? 2 : 1, -1) < 0)
			continue;
		if (sfd >= 0 && (p[1].revents & POLLIN) &&
		    read(sfd, &ssi, sizeof(ssi)) == sizeof(ssi)) {
			/* A terminal's signal reached only us (the Sentry has a session of its
			 * own): passed on as any other. */
			siginfo_t si = {.si_signo = (int)ssi.ssi_signo, .si_code = SI_USER};
			if (ssi.ssi_signo != SIGCHLD)
				launcher_pass_on(sentry, (int)ssi.ssi_signo, &si);
			continue;
		}
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		int n = read_answer(conn, ans, 0);
		if (n == 2 && ans[0] == 'x')
			return (unsigned char)ans[1];
		if (n > 0)
			continue;
		/* Gone without a word: it was killed. */
		int st = exit_status_of(pidfd);
		if (st >= 0 && WIFSIGNALED(st))
			launcher_die_of(WTERMSIG(st));
		if (st >= 0 && WIFEXITED(st))
			return WEXITSTATUS(st);
		fprintf(stderr, "minisentry: restore: the slot's Sentry ended without a status\n");
		return 128 + SIGKILL;
	}
}

int warm_restore(const struct kernel_config *cfg, const struct kernel_restore_opts *o,
		 const char *image, bool delete_image)
{
	int dfd = -1, imgfd = -1, poolfd = -1, conn = -1, ctlfd = -1, pidfd = -1, ret = WARM_COLD;
	unsigned long long ino = 0;
	unsigned index = 0;
	struct sockaddr_un sa;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	sigset_t all, orig;
	char *err = NULL, ans[2];

	if (!warm_eligible(cfg, o, delete_image))
		return WARM_COLD;
	/* A pool without waiting Sentries has no DIR/warm: nothing reserved, nothing started. */
	if ((dfd = open(o->slots, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    faccessat(dfd, "warm", F_OK, AT_SYMLINK_NOFOLLOW) ||
	    (imgfd = open(image, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		goto out;
	if ((poolfd = memfile_slot_reserve(o->slots, &index, &err)) < 0) {
		free(err); /* the direct restore says it */
		goto out;
	}
	sock_addr(dfd, index, "", &sa);
	conn = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (conn < 0 || connect(conn, (struct sockaddr *)&sa, sizeof(sa))) {
		/* Its Sentry is gone (killed, crashed) or still starting: a new one is started if
		 * none is, and this restore is made directly. */
		close(poolfd);
		poolfd = -1;
		spawn_serve(o->slots, index);
		goto out;
	}
	if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		goto out;
	len = sizeof(pidfd);
	if (getsockopt(conn, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len))
		pidfd = (int)syscall(SYS_pidfd_open, cred.pid, 0);
	/* Every signal waits for the relay from here: none is lost while the request is made. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &orig);
	if (cfg->id && (ctlfd = control_bind(cfg->id, &ino)) < 0) {
		ret = 1; /* said */
		sigprocmask(SIG_SETMASK, &orig, NULL);
		goto out;
	}
	int n = send_request(conn, cfg, o, image, imgfd, poolfd, ctlfd)
		    ? -1
		    : read_answer(conn, ans, WARM_REPLY_MS);
	if (n < 1 || ans[0] != 'g') {
		/* Refused, or no answer: it may not claim the slot later, and this restore is made
		 * directly. A Sentry that died after its claim leaves the slot in use, for the
		 * next claimer to recover. */
		if (n < 0)
			kill(cred.pid, SIGKILL);
		if (ctlfd >= 0)
			control_forget(cfg->id, ino);
		sigprocmask(SIG_SETMASK, &orig, NULL);
		goto out;
	}
	/* The claim is the Sentry's now: the lock goes with its descriptor. */
	close(poolfd);
	poolfd = -1;
	close(imgfd);
	imgfd = -1;
	if (ctlfd >= 0)
		close(ctlfd);
	ctlfd = -1;
	ret = relay(conn, cred.pid, pidfd);
	if (cfg->id)
		control_forget(cfg->id, ino);
	/* The slot is back in the pool: its next Sentry starts, off the next restore's path. */
	spawn_serve(o->slots, index);
out:
	if (ctlfd >= 0)
		close(ctlfd);
	if (pidfd >= 0)
		close(pidfd);
	if (conn >= 0)
		close(conn);
	if (poolfd >= 0)
		close(poolfd);
	if (imgfd >= 0)
		close(imgfd);
	if (dfd >= 0)
		close(dfd);
	return ret;
}
