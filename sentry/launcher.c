/* The launcher: the process `minisentry run` and `restore` start as. It forks the Sentry into
 * its namespaces (the Sentry must be a child to be pid 1 of a new PID namespace, and only a
 * process outside a user namespace may map more than its own id into it), writes the id maps,
 * and from then on only waits: it passes on the signals the command gets as the Sentry itself
 * would have got them, and exits as the Sentry did, so callers see one process as before. */
#include "sentry/launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "sentry/control.h"
#include "sentry/kernel.h"
#include "sentry/marks.h"

static int write_proc(pid_t pid, const char *file, const char *text)
{
	char path[64];
	int fd, err = 0;
	size_t len = strlen(text);

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		err = -errno;
	close(fd);
	return err;
}

static int write_maps(pid_t pid, const struct launcher_maps *m)
{
	int err = 0;

	if (m->deny_setgroups)
		err = write_proc(pid, "setgroups", "deny");
	if (!err)
		err = write_proc(pid, "uid_map", m->uid_map);
	if (!err)
		err = write_proc(pid, "gid_map", m->gid_map);
	return err;
}

/* --- passing signals on -------------------------------------------------------------------- */

/* The signals the Sentry handles (SigCgt of its status): it gets those as it always did. */
static unsigned long long caught_signals(pid_t pid)
{
	char path[64], line[128];
	unsigned long long mask = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigCgt: %llx", &mask) == 1)
			break;
	fclose(f);
	return mask;
}

/* The signals the Sentry's event loop acts on (sentry/kernel.c: passed on to the guest's
 * foreground group, or ending the sandbox). It keeps them blocked and takes them with
 * sigwaitinfo, which unblocks them while it waits, so its status does not show them. */
static bool sentry_takes(int sig)
{
	return sig == SIGINT || sig == SIGQUIT || sig == SIGTSTP || sig == SIGWINCH ||
	       sig == SIGTERM || sig == SIGHUP;
}

static bool default_ignores(int sig)
{
	return sig == SIGCHLD || sig == SIGCONT || sig == SIGURG || sig == SIGWINCH;
}

static bool default_stops(int sig)
{
	return sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Ends the launcher the way signal SIG ends a process, without a core file. */
static __attribute__((noreturn)) void die_of(int sig)
{
	struct rlimit none = {0, 0};
	sigset_t one;

	setrlimit(RLIMIT_CORE, &none);
	signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	_exit(128 + sig);
}

/* Signal SIG (with SI) came to the launcher. The Sentry, as pid 1 of its namespace, ignores
 * every signal it has no handler for (SIGKILL and SIGSTOP apart), so the launcher plays the
 * default action for it: the whole command stops, or dies of the signal. */
static void pass_on(pid_t sentry, int sig, const siginfo_t *si)
{
	int st;

	/* A terminal sends its signals to the whole foreground group, the Sentry included; but
	 * the stop of SIGTTIN and SIGTTOU (a background Sentry used the terminal) is ours to
	 * play, or the Sentry would retry its read or write for ever. */
	if (si->si_code == SI_KERNEL && sig != SIGTTIN && sig != SIGTTOU)
		return;
	if (sentry_takes(sig) || (sig < 64 && (caught_signals(sentry) & (1ULL << (sig - 1))))) {
		kill(sentry, sig);
	} else if (default_ignores(sig)) {
		kill(sentry, sig); /* SIGCONT still resumes it */
	} else if (default_stops(sig)) {
		kill(sentry, SIGSTOP);
		raise(SIGSTOP);
	} else {
		kill(sentry, SIGKILL);
		while (waitpid(sentry, &st, 0) < 0 && errno == EINTR)
			;
		die_of(sig);
	}
}

void launcher_pass_on(pid_t sentry, int sig, const siginfo_t *si)
{
	pass_on(sentry, sig, si);
}

void launcher_die_of(int sig)
{
	die_of(sig);
}

/* --- the end ------------------------------------------------------------------------------- */

/* Where the launcher says that the Sentry has loaded its image (launcher_set_ready_fd). */
static int ready_fd = -1;

void launcher_set_ready_fd(int fd)
{
	ready_fd = fd;
}

/* What the Sentry says on its link: a save-restore restart ('r'), its control socket's inode
 * ('s' and 8 bytes), its exit status once its sandbox is gone ('x' and a byte), that a restore
 * has loaded its image ('l'). */
struct sentry_notes {
	bool restart;
	bool have_sock;
	unsigned long long sock_ino;
	bool exited;
	int status;
	unsigned char buf[64]; /* a message not read whole yet */
	size_t len;
};

static void read_notes(int fd, struct sentry_notes *n)
{
	ssize_t got;

	while ((got = read(fd, n->buf + n->len, sizeof(n->buf) - n->len)) > 0) {
		size_t len = n->len + (size_t)got, i = 0;
		while (i < len) {
			unsigned char c = n->buf[i];
			size_t need = c == 's' ? 9 : c == 'x' ? 2 : 1;
			if (i + need > len)
				break;
			if (c == 'l') {
				if (ready_fd >= 0 && write(ready_fd, "l", 1) != 1) {
					/* whoever waited is gone */
				}
				if (ready_fd >= 0)
					close(ready_fd);
				ready_fd = -1;
			} else if (c == 'r') {
				n->restart = true;
			} else if (c == 's') {
				n->have_sock = true;
				n->sock_ino = 0;
				for (int k = 0; k < 8; k++)
					n->sock_ino |= (unsigned long long)n->buf[i + 1 + k]
						       << (8 * k);
			} else if (c == 'x') {
				n->exited = true;
				n->status = n->buf[i + 1];
			}
			i += need;
		}
		memmove(n->buf, n->buf + i, len - i);
		n->len = len - i;
	}
}

static __attribute__((noreturn)) void wait_for(pid_t sentry, int notes_fd,
					       const struct kernel_config *cfg,
					       const char *srt_image, const sigset_t *orig_mask)
{
	struct termios tty;
	bool have_tty = tcgetattr(0, &tty) == 0;
	sigset_t all;
	siginfo_t si;
	int st;

	struct sentry_notes notes = {0};
	sigfillset(&all);
	/* Notes wake us (SIGIO): once the Sentry has said how it ends, its sandbox is gone, and
	 * the caller need not wait while the kernel tears its namespaces down. */
	fcntl(notes_fd, F_SETOWN, getpid());
	fcntl(notes_fd, F_SETFL, O_NONBLOCK | O_ASYNC);
	for (;;) {
		int sig = sigwaitinfo(&all, &si);
		if (sig < 0)
			continue;
		if (sig == SIGIO) {
			read_notes(notes_fd, &notes);
			if (notes.exited) {
				mark("launcher: exit");
				if (cfg->id && notes.have_sock)
					control_forget(cfg->id, notes.sock_ino);
				/* Nothing registered to run at exit: the caller waits for us, and
				 * glibc's exit handlers are text pages never faulted in yet. */
				fflush(NULL);
				_exit(notes.status);
			}
			continue;
		}
		if (sig != SIGCHLD) {
			pass_on(sentry, sig, &si);
			continue;
		}
		pid_t r = waitpid(sentry, &st, WNOHANG);
		if (r == sentry && (WIFEXITED(st) || WIFSIGNALED(st)))
			break;
	}
	read_notes(notes_fd, &notes);
	if (cfg->id && notes.have_sock)
		control_forget(cfg->id, notes.sock_ino);
	if (notes.restart && cfg->save_restore_test && srt_image && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0) {
		char *argv[CONTROL_RESTORE_ARGV_MAX(cfg->nbinds)];
		control_restore_argv(cfg, srt_image, argv, CONTROL_RESTORE_ARGV_MAX(cfg->nbinds));
		/* A SIGIO of the link may be pending, and a pending signal outlives exec: ignoring
		 * it discards it. */
		signal(SIGIO, SIG_IGN);
		signal(SIGIO, SIG_DFL);
		sigprocmask(SIG_SETMASK, orig_mask, NULL);
		execv("/proc/self/exe", argv);
		fprintf(stderr, "minisentry: save-restore test: cannot restart: %s\n",
			strerror(errno));
		_exit(125);
	}
	if (WIFEXITED(st))
		exit(WEXITSTATUS(st));
	if (have_tty)
		tcsetattr(0, TCSADRAIN, &tty); /* whatever the guest left it in */
	if (WTERMSIG(st) == SIGSYS)
		fprintf(stderr, "minisentry: the Sentry made a host system call its seccomp "
				"allowlist does not have and was killed (--debug-host-syscalls "
				"names it)\n");
	die_of(WTERMSIG(st));
}

int launcher_start(unsigned long nsflags, const struct launcher_maps *maps,
		   const struct kernel_config *cfg, const char *srt_image,
		   struct launcher_link *link)
{
	sigset_t all, orig;
	int go[2], notes[2], err;
	pid_t self = getpid(), pid;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(notes, O_CLOEXEC)) {
		err = -errno;
		goto out_go;
	}
	/* Every signal waits for sigwaitinfo from here on; the Sentry starts with the mask we had.
	 */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &orig);
	mark("launcher: clone");
	fflush(NULL);
	pid = (pid_t)syscall(SYS_clone, nsflags | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid < 0) {
		err = -errno;
		sigprocmask(SIG_SETMASK, &orig, NULL);
		goto out_notes;
	}
	if (pid == 0) {
		/* The Sentry: it dies with its launcher (set before anything can fail: the maps'
		 * pipe then reads an end of file). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		mark("sentry: born");
		close(go[1]);
		close(notes[0]);
		/* The signals its loop takes stay blocked from here on: as pid 1 it would discard
		 * one that came before it blocks them (it has no handler), and a SIGTERM passed on
		 * in its first milliseconds would be lost. Blocked, it waits for the loop. */
		sigset_t keep = orig;
		for (int sig = 1; sig < 32; sig++)
			if (sentry_takes(sig))
				sigaddset(&keep, sig);
		sigprocmask(SIG_SETMASK, &keep, NULL);
		link->launcher_pid = self;
		link->restart_fd = notes[1];
		link->maps_fd = go[0];
		return 0;
	}
	close(go[0]);
	close(notes[1]);
	if ((err = write_maps(pid, maps))) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		sigprocmask(SIG_SETMASK, &orig, NULL);
		close(go[1]);
		close(notes[0]);
		return err;
	}
	if (write(go[1], "g", 1) != 1 && errno == EPIPE) {
		/* It is gone already (it refused its options before it needed the maps): its
		 * status says how. The write's own SIGPIPE waits, blocked, and would be passed on
		 * as the command's: it is not, so it is taken here. */
		sigset_t pipe_only;
		struct timespec now = {0, 0};
		sigemptyset(&pipe_only);
		sigaddset(&pipe_only, SIGPIPE);
		sigtimedwait(&pipe_only, NULL, &now);
	}
	mark("launcher: maps written");
	close(go[1]);
	wait_for(pid, notes[0], cfg, srt_image, &orig);

out_notes:
	close(notes[0]);
	close(notes[1]);
out_go:
	close(go[0]);
	close(go[1]);
	return err;
}

void launcher_maps_written(struct launcher_link *link)
{
	char c;

	if (link->maps_fd < 0)
		return;
	if (read(link->maps_fd, &c, 1) != 1)
		_exit(126); /* the launcher says why */
	close(link->maps_fd);
	link->maps_fd = -1;
}
