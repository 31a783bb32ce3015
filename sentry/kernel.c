/* The kernel's event loop and the life of a sandbox: start init, serve every stop of every
 * guest thread, park tasks that would block and re-run their syscall when the host
 * descriptor they wait on is ready, and end when init exits. */
#include "sentry/kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sentry/exec.h"
#include "sentry/fdtable.h"
#include "sentry/memfile.h"
#include "sentry/mm.h"
#include "sentry/syscall.h"
#include "sentry/task.h"
#include "vfs/vfs.h"

struct kernel kernel;

static int sigchld_fd = -1;

static void unlink_task(struct task *t)
{
	for (struct task **pp = &kernel.tasks; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			return;
		}
}

static void unblock(struct task *t)
{
	if (!t->blocked)
		return;
	t->blocked = false;
	if (t->block_fd >= 0) {
		kernel.nblocked_fd--;
		bool others = false;
		for (struct task *o = kernel.tasks; o; o = o->next)
			others |= o != t && o->blocked && o->block_fd == t->block_fd;
		if (!others)
			epoll_ctl(kernel.epfd, EPOLL_CTL_DEL, t->block_fd, NULL);
		t->block_fd = -1;
	}
}

void kernel_exit_group(struct task *t, int status)
{
	unblock(t);
	platform_kill(t->pt);
	unlink_task(t);
	if (t->tid == 1) {
		kernel.done = true;
		kernel.exit_status = (status & 0x7f) ? 128 + (status & 0x7f) : (status >> 8) & 0xff;
	}
	/* Handlers and --strace may still look at T until the event is handled. */
	t->exited = true;
	t->next = kernel.dead;
	kernel.dead = t;
}

static void free_dead(void)
{
	while (kernel.dead) {
		struct task *t = kernel.dead;
		kernel.dead = t->next;
		task_free(t);
	}
}

/* Serves T's current syscall and resumes it, unless it blocked or is gone. */
static void run_syscall(struct task *t)
{
	long ret = syscall_dispatch(t);

	if (ret == -ESENTRY_BLOCK || t->exited)
		return;
	platform_set_return(t->pt, ret);
	platform_resume(t->pt, 0);
}

/* A signal the guest's own instructions raised. Delivery to guest handlers comes with the
 * signals milestone; until then the default action ends the thread group. */
static void guest_signal(struct task *t, int sig)
{
	switch (sig) {
	case SIGSEGV:
	case SIGBUS:
	case SIGILL:
	case SIGFPE:
	case SIGTRAP:
	case SIGSYS:
		kernel_exit_group(t, sig | 0x80); /* core-dump actions set the core bit */
		return;
	default:
		/* Host signals aimed at a stub are not the guest's: drop them. */
		platform_resume(t->pt, 0);
	}
}

static void handle_event(const struct platform_event *ev)
{
	struct task *t = task_by_host_tid(ev->tid);

	if (!t)
		return; /* a stub being torn down */
	switch (ev->kind) {
	case PEV_SYSCALL:
		if (platform_syscall_info(t->pt, &t->sc)) {
			kernel_exit_group(t, SIGKILL);
			return;
		}
		t->mm->via = t->pt; /* injections go through the stopped thread */
		run_syscall(t);
		break;
	case PEV_SIGNAL:
		guest_signal(t, ev->sig);
		break;
	case PEV_STOP:
		platform_resume(t->pt, 0);
		break;
	case PEV_EXITED:
		/* The host thread died under us (killed from outside). */
		t->pt->tid = -1;
		kernel_exit_group(t, ev->sig ? ev->sig : ev->exit_status << 8);
		break;
	}
}

static void wake_fd(int fd)
{
	struct task *next;

	for (struct task *t = kernel.tasks; t; t = next) {
		next = t->next;
		if (t->blocked && t->block_fd == fd) {
			unblock(t);
			t->mm->via = t->pt; /* injections go through the stopped thread */
			run_syscall(t);
		}
	}
}

static void loop(void)
{
	struct platform_event ev;
	struct epoll_event evs[16];

	while (!kernel.done) {
		int r;
		/* The fast path: nothing waits on host descriptors, so wait for the guest only. */
		if (kernel.nblocked_fd == 0) {
			r = platform_wait(&ev, true);
			if (r == 0)
				handle_event(&ev);
			free_dead();
			if (r == -ECHILD)
				break;
			continue;
		}
		r = platform_wait(&ev, false);
		if (r == 0) {
			handle_event(&ev);
			free_dead();
			continue;
		}
		if (r == -ECHILD)
			break;
		int n = epoll_wait(kernel.epfd, evs, 16, -1);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.fd == sigchld_fd) {
				struct signalfd_siginfo si;
				while (read(sigchld_fd, &si, sizeof(si)) == sizeof(si))
					;
			} else {
				wake_fd(evs[i].data.fd);
				free_dead();
			}
		}
	}
}

static void teardown(void)
{
	free_dead();
	while (kernel.tasks) {
		struct task *t = kernel.tasks;
		platform_kill(t->pt);
		unlink_task(t);
		task_free(t);
	}
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
}

static int setup_events(void)
{
	sigset_t chld;

	kernel.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (kernel.epfd < 0)
		return -errno;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	sigchld_fd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sigchld_fd < 0)
		return -errno;
	struct epoll_event e = {.events = EPOLLIN, .data.fd = sigchld_fd};
	if (epoll_ctl(kernel.epfd, EPOLL_CTL_ADD, sigchld_fd, &e))
		return -errno;
	signal(SIGPIPE, SIG_IGN); /* a closed stdout is the guest's EPIPE, not our death */
	return 0;
}

/* The sandbox's stdio: the Sentry's own descriptors 0-2, wrapped as files. */
static int install_stdio(struct task *t)
{
	for (int fd = 0; fd < 3; fd++) {
		int flags = fcntl(fd, F_GETFL);
		if (flags < 0)
			continue; /* closed on the host: closed in the guest */
		int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (dup < 0)
			return -errno;
		struct vfs_file *f = vfs_file_host_fd(dup, flags & ~O_CLOEXEC, true);
		if (!f)
			return -ENOMEM;
		if (fdtable_install_at(t->files, fd, f, false, 3) < 0)
			return -ENOMEM;
	}
	return 0;
}

static struct task *make_init(void)
{
	struct task *t = task_new(1);

	if (!t)
		return NULL;
	t->ppid = 0;
	t->files = fdtable_new();
	t->sighand = calloc(1, sizeof(*t->sighand));
	if (!t->files || !t->sighand) {
		task_free(t);
		return NULL;
	}
	t->sighand->refs = 1;
	t->fs.root = vfs_dentry_get(kernel.root);
	t->fs.cwd = vfs_dentry_get(kernel.root);
	return t;
}

static const char *env_lookup(char **envp, const char *key)
{
	size_t n = strlen(key);

	for (; envp && *envp; envp++)
		if (!strncmp(*envp, key, n) && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

static int start_init(struct task *t)
{
	const char *cmd = kernel.cfg.argv[0];
	char found[4096];
	int err;

	if (kernel.cfg.cwd) {
		struct vfs_dentry *d;
		err = vfs_lookup(&t->fs, NULL, kernel.cfg.cwd, VFS_LOOKUP_FOLLOW | VFS_LOOKUP_DIRECTORY, &d);
		if (err) {
			fprintf(stderr, "minisentry: --cwd %s: %s\n", kernel.cfg.cwd, strerror(-err));
			return err;
		}
		vfs_dentry_put(t->fs.cwd);
		t->fs.cwd = d;
	}
	if (!strchr(cmd, '/')) {
		if (exec_find_in_path(t, cmd, env_lookup(kernel.cfg.envp, "PATH"), found,
				      sizeof(found))) {
			fprintf(stderr, "minisentry: %s: command not found in the sandbox\n", cmd);
			return -ENOENT;
		}
		cmd = found;
	}
	if ((err = exec_load(t, cmd, kernel.cfg.argv, kernel.cfg.envp))) {
		fprintf(stderr, "minisentry: %s: %s\n", cmd,
			err == -ENOEXEC ? "not an executable this sandbox can run (Exec format error)"
					: strerror(-err));
		return err;
	}
	return 0;
}

int kernel_run(const struct kernel_config *cfg)
{
	int err;
	struct task *init;

	kernel.cfg = *cfg;
	kernel.next_pid = 2;
	if ((err = vfs_mount_host_root(cfg->rootfs, &kernel.root))) {
		fprintf(stderr, "minisentry: rootfs '%s': %s\n", cfg->rootfs, strerror(-err));
		return err;
	}
	if ((err = memfile_init()) || (err = platform_init(memfile_fd(), cfg->placement)) ||
	    (err = setup_events())) {
		fprintf(stderr, "minisentry: cannot set up the sandbox: %s\n", strerror(-err));
		return err;
	}
	if (!(init = make_init()) || install_stdio(init)) {
		fprintf(stderr, "minisentry: cannot set up the sandbox: out of memory\n");
		return -ENOMEM;
	}
	kernel.tasks = init;
	if ((err = start_init(init))) {
		teardown();
		return err;
	}
	platform_resume(init->pt, 0);
	loop();
	teardown();
	return kernel.exit_status;
}
