/* --strace: prints each finished guest syscall the way strace -f does, its arguments decoded by
 * strace_args.c: the lines, their `[pid N]` prefixes (or -o's pid column) and the column of
 * the result, a call that blocks while other tasks run split into its `<unfinished ...>` and
 * `<... resumed>` lines, the command's own execve, the signals a task takes (those it ignores
 * too) and how each thread and process ends. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "platform/platform.h"
#include "sentry/kernel.h"
#include "sentry/strace_args.h"
#include "sentry/syscall.h"
#include "sentry/task.h"

#define STRACE_COLUMN 40 /* where " = result" starts when the call is shorter, as strace -a */

static FILE *output;
/* -o FILE: every line starts with the pid in a column, as strace -f -o prints it. */
static bool pid_column;

void strace_set_output(FILE *out)
{
	output = out;
}

int strace_open(const char *path, bool append)
{
	int fd = open(
	    path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | (append ? O_APPEND : O_TRUNC), 0666);
	FILE *f;

	if (fd < 0)
		return -errno;
	if (!(f = fdopen(fd, "a"))) {
		int e = errno;
		close(fd);
		return -e;
	}
	/* A line at a time: what a killed Sentry traced is in the file, and `tail -f` follows. */
	setvbuf(f, NULL, _IOLBF, 0);
	strace_set_output(f);
	pid_column = true;
	return 0;
}

static FILE *out_stream(void)
{
	return output ? output : stderr;
}

static bool several_tasks(void)
{
	int n = 0;

	for_each_task(o)
		if (!o->zombie && ++n > 1)
			return true;
	return false;
}

/* Whether the syscall being served began with several tasks: its line (and the exit it
 * causes) carries the prefix even when the call has just ended the other ones, or itself. */
static pid_t dispatching = -1;
static bool dispatching_several;

/* "[pid     N] " while the sandbox has more than one task, as strace -f shows it; with -o,
 * "N     " on every line. */
static void prefix(FILE *out, struct task *t)
{
	if (pid_column)
		fprintf(out, "%-5d ", t->tid);
	else if (dispatching == t->tid ? dispatching_several : several_tasks())
		fprintf(out, "[pid %5d] ", t->tid);
}

/* The line whose call blocked, printed up to its arguments known on entry and left open:
 * the same task's end of the call continues it; anything else first ends it with
 * " <unfinished ...>", and the call's end is then a `<... NAME resumed>` line. */
static pid_t open_tid = -1;
static long open_col;

static void end_open_line(FILE *out, pid_t tid)
{
	if (open_tid < 0 || open_tid == tid)
		return;
	fputs(" <unfinished ...>\n", out);
	open_tid = -1;
}

/* The part of the call known on entry as strace_enter saw it: what the arguments point to may
 * not survive the handler (execve's argv, a sigprocmask whose old set is its new one). Printed
 * by strace_print when it is the same task's same call. */
static struct {
	pid_t tid;
	long nr;
	char *text;
} entered;

/* The ends of the threads of the task whose syscall is being served, if that syscall ended
 * them: printed after the call's own line, as strace does, each line with its prefix. */
static char exit_lines[4096];
static size_t exit_len;

static bool entered_now(struct task *t)
{
	return entered.text && entered.tid == t->tid && entered.nr == t->sc.nr;
}

void strace_enter(struct task *t)
{
	size_t len;
	FILE *m;

	dispatching = t->tid;
	dispatching_several = several_tasks();
	free(entered.text);
	entered.text = NULL;
	if (!(m = open_memstream(&entered.text, &len)))
		return;
	strace_print_call(m, t, 0, STRACE_ENTRY);
	fclose(m);
	entered.tid = t->tid;
	entered.nr = t->sc.nr;
}

void strace_exec_init(struct task *t, const char *path, char *const argv[], unsigned long envp,
		      int envc)
{
	FILE *out = out_stream();
	int i;

	prefix(out, t);
	fputs("execve(", out);
	strace_quote(out, (const unsigned char *)path, (int)strlen(path), false);
	fputs(", [", out);
	for (i = 0; argv[i] && i < STRACE_ARGV; i++) {
		int len = (int)strlen(argv[i]);
		fputs(i ? ", " : "", out);
		strace_quote(out, (const unsigned char *)argv[i],
			     len > STRACE_STR ? STRACE_STR : len, false);
		if (len > STRACE_STR)
			fputs("...", out);
	}
	fprintf(out, "%s], %#lx /* %d var%s */) = 0\n", argv[i] ? ", ..." : "", envp, envc,
		envc == 1 ? "" : "s");
}

static void print_notes(struct task *t);

/* The kernel's restart codes, as strace names them. */
static const char *const restart_names[] = {
    "ERESTARTSYS (To be restarted if SA_RESTART is set)", "ERESTARTNOINTR (To be restarted)",
    "ERESTARTNOHAND (To be restarted if no handler)",	  NULL,
    "ERESTART_RESTARTBLOCK (Interrupted by signal)",
};

/* T's process has been sent SIGKILL: the call that sent it never returns, as strace sees it. */
static bool doomed(struct task *t)
{
	uint64_t kill = 1ULL << (SIGKILL - 1);

	return (t->pending.set & kill) ||
	       (t->group_leader && (t->group_leader->shared_pending.set & kill));
}

/* " = RET" after the call, from column STRACE_COLUMN when the line is shorter. */
static void print_result(FILE *out, struct task *t, long col, long ret)
{
	const struct syscall_def *def = syscall_def(t->sc.nr);
	struct user_regs_struct regs;

	/* rt_sigreturn "returns" what the frame put back in rax, as strace reads it. */
	if (t->sc.nr == SYS_rt_sigreturn && !t->exited && t->pt && !platform_get_regs(t->pt, &regs))
		ret = (long)regs.rax;
	if (col < STRACE_COLUMN)
		fprintf(out, "%*s= ", (int)(STRACE_COLUMN - col), "");
	else
		fputs(" = ", out);
	if (t->exited || t->sc.nr == SYS_exit || t->sc.nr == SYS_exit_group || doomed(t)) {
		fputs("?", out);
	} else if (ret <= -512 && ret >= -516 && restart_names[-ret - 512]) {
		fprintf(out, "? %s", restart_names[-ret - 512]);
	} else if (ret < 0 && ret > -4096) {
		fprintf(out, "-1 %s (%s)", strerrorname_np(-ret) ? strerrorname_np(-ret) : "E?",
			strerror(-ret));
	} else if (def && def->ret == 'x') {
		fprintf(out, "%#lx", ret);
	} else if (t->sc.nr == SYS_umask) {
		fprintf(out, "%#03lo", ret);
	} else if (t->sc.nr == SYS_fcntl && (int)t->sc.args[1] == F_GETFD) {
		fprintf(out, "%#lx%s", ret, ret == FD_CLOEXEC ? " (flags FD_CLOEXEC)" : "");
	} else if (t->sc.nr == SYS_fcntl && (int)t->sc.args[1] == F_GETFL) {
		fprintf(out, "%#lx (flags ", ret);
		strace_print_open_flags(out, (unsigned long)ret);
		fputc(')', out);
	} else if (strace_print_detail(out, t, ret)) {
	} else if ((t->sc.nr == SYS_poll || t->sc.nr == SYS_ppoll) && ret >= 0) {
		fprintf(out, "%ld ", ret);
		if (ret) {
			fputc('(', out);
			strace_print_pollfds(out, t, t->sc.args[0], t->sc.args[1], true);
			fputc(')', out);
		} else {
			fputs("(Timeout)", out);
		}
	} else {
		fprintf(out, "%ld", ret);
	}
	/* What the table and the handler know of what is missing. */
	if (syscall_unsupported_now())
		fprintf(out, " <unsupported: %s>", syscall_unsupported_now());
	else if (ret == -ENOSYS && (!def || def->support == SYSCALL_UNIMPLEMENTED))
		fputs(" <unimplemented>", out);
	fputc('\n', out);
}

void strace_print(struct task *t, long ret)
{
	FILE *out = out_stream(), *m;
	char *buf = NULL;
	size_t len = 0;
	long col = 0;

	if (!(m = open_memstream(&buf, &len)))
		return;
	if (ret == -ESENTRY_BLOCK) {
		/* What is known on entry now, the rest when the call ends. */
		end_open_line(out, t->tid);
		prefix(m, t);
		if (entered_now(t))
			fputs(entered.text, m);
		else
			strace_print_call(m, t, ret, STRACE_ENTRY);
		fclose(m);
		free(entered.text);
		entered.text = NULL;
		fputs(buf, out);
		fflush(out);
		free(buf);
		open_tid = t->tid;
		open_col = (long)len;
		t->blk.strace_shown = true;
		dispatching = -1;
		return;
	}
	/* Killed in the call it blocked in: it never returns, and what it would write is not
	 * shown. */
	bool killed = t->blk.strace_shown && doomed(t);

	if (t->blk.strace_shown && open_tid == t->tid) {
		col = open_col;
		open_tid = -1;
		if (killed)
			fputs(" <unfinished ...>)", m);
		else
			strace_print_call(m, t, ret, STRACE_EXIT);
	} else if (t->blk.strace_shown) {
		end_open_line(out, t->tid);
		prefix(m, t);
		fprintf(m, "<... %s resumed>",
			syscall_name(t->sc.nr) ? syscall_name(t->sc.nr) : "?");
		if (killed)
			fputc(')', m);
		else
			strace_print_call(m, t, ret, STRACE_EXIT);
	} else {
		end_open_line(out, t->tid);
		prefix(m, t);
		if (entered_now(t)) {
			fputs(entered.text, m);
			strace_print_call(m, t, ret, STRACE_EXIT);
		} else {
			strace_print_call(m, t, ret, STRACE_WHOLE);
		}
	}
	free(entered.text);
	entered.text = NULL;
	t->blk.strace_shown = false;
	fflush(m);
	col += (long)len;
	print_result(m, t, col, ret);
	fwrite(exit_lines, 1, exit_len, m);
	exit_len = 0;
	fclose(m);
	fputs(buf, out);
	free(buf);
	dispatching = -1;
	print_notes(t);
}

static const char *code_name(const siginfo_t *si)
{
	static const char *chld[] = {NULL,	    "CLD_EXITED",  "CLD_KILLED",   "CLD_DUMPED",
				     "CLD_TRAPPED", "CLD_STOPPED", "CLD_CONTINUED"};
	static const char *segv[] = {NULL, "SEGV_MAPERR", "SEGV_ACCERR"};

	switch (si->si_code) {
	case SI_USER:
		return "SI_USER";
	case SI_KERNEL:
		return "SI_KERNEL";
	case SI_QUEUE:
		return "SI_QUEUE";
	case SI_TIMER:
		return "SI_TIMER";
	case SI_TKILL:
		return "SI_TKILL";
	case SI_MESGQ:
		return "SI_MESGQ";
	case SI_ASYNCIO:
		return "SI_ASYNCIO";
	}
	if (si->si_signo == SIGCHLD && si->si_code > 0 && si->si_code <= 6)
		return chld[si->si_code];
	if (si->si_signo == SIGSEGV && si->si_code > 0 && si->si_code <= 2)
		return segv[si->si_code];
	return NULL;
}

void strace_signal(struct task *t, const void *siginfo)
{
	const siginfo_t *si = siginfo;
	const char *code = code_name(si);
	FILE *out = out_stream();

	if (si->si_signo == SIGKILL)
		return; /* a tracer never sees it delivered */
	end_open_line(out, -1);
	prefix(out, t);
	fputs("--- ", out);
	strace_print_signal(out, si->si_signo);
	fputs(" {si_signo=", out);
	strace_print_signal(out, si->si_signo);
	if (code)
		fprintf(out, ", si_code=%s", code);
	else
		fprintf(out, ", si_code=%d", si->si_code);
	if (si->si_code == SI_TIMER) {
		fprintf(out, ", si_timerid=%#x, si_overrun=%d, si_int=%d, si_ptr=%p",
			si->si_timerid, si->si_overrun, si->si_value.sival_int,
			si->si_value.sival_ptr);
	} else if (si->si_signo == SIGCHLD && si->si_code > 0) {
		fprintf(out, ", si_pid=%d, si_uid=%u, si_status=", si->si_pid, si->si_uid);
		if (si->si_code == CLD_EXITED)
			fprintf(out, "%d", si->si_status);
		else
			strace_print_signal(out, si->si_status);
		fprintf(out, ", si_utime=%ld, si_stime=%ld", (long)si->si_utime,
			(long)si->si_stime);
	} else if ((si->si_signo == SIGSEGV || si->si_signo == SIGBUS || si->si_signo == SIGFPE ||
		    si->si_signo == SIGILL) &&
		   si->si_code > 0) {
		if (si->si_addr)
			fprintf(out, ", si_addr=%p", si->si_addr);
		else
			fputs(", si_addr=NULL", out);
	} else if (si->si_code == SI_USER || si->si_code == SI_TKILL || si->si_code == SI_QUEUE) {
		fprintf(out, ", si_pid=%d, si_uid=%u", si->si_pid, si->si_uid);
		if (si->si_code == SI_QUEUE)
			fprintf(out, ", si_int=%d, si_ptr=%p", si->si_value.sival_int,
				si->si_value.sival_ptr);
	}
	fputs("} ---\n", out);
}

/* Signals sent to a task that ignores them, which Linux discards: a traced task still takes
 * them (strace shows them), so they are shown when the task would have taken them, after the
 * syscall it is in. At most NOTES_MAX wait. */
#define NOTES_MAX 256
struct note {
	struct note *next;
	pid_t tid;
	siginfo_t si;
};
static struct note *notes;
static int nnotes;

void strace_ignored_signal(struct task *t, const void *siginfo)
{
	struct note *n, **pp;

	if (!t->blk.blocked && dispatching != t->tid) {
		strace_signal(t, siginfo);
		return;
	}
	if (nnotes >= NOTES_MAX || !(n = calloc(1, sizeof(*n))))
		return;
	n->tid = t->tid;
	memcpy(&n->si, siginfo, sizeof(n->si));
	for (pp = &notes; *pp; pp = &(*pp)->next)
		;
	*pp = n;
	nnotes++;
}

/* Prints (SHOW) or drops the signals noted for T. */
static void take_notes(struct task *t, bool show)
{
	for (struct note **pp = &notes; *pp;) {
		struct note *n = *pp;
		if (n->tid != t->tid) {
			pp = &n->next;
			continue;
		}
		*pp = n->next;
		nnotes--;
		if (show)
			strace_signal(t, &n->si);
		free(n);
	}
}

static void print_notes(struct task *t)
{
	if (notes)
		take_notes(t, true);
}

/* The end of thread T by STATUS: the call it blocked in never returns (`= ?`), then its
 * `+++` line. DEFERRED: after the line of the syscall being served, which ends it. */
static void thread_end(struct task *t, int status, bool deferred)
{
	FILE *out = out_stream(), *m;
	char *buf = NULL, sig[32];
	size_t len = 0;

	if (notes)
		take_notes(t, false);
	if (!(m = open_memstream(&buf, &len)))
		return;
	if (!deferred && open_tid == t->tid) {
		fputs(" <unfinished ...>) = ?\n", m);
		open_tid = -1;
	} else if (t->blk.strace_shown) {
		const char *name = syscall_name(t->sc.nr);
		prefix(m, t);
		fprintf(m, "<... %s resumed>)", name ? name : "?");
		fflush(m);
		fprintf(m, "%*s= ?\n", len < STRACE_COLUMN ? (int)(STRACE_COLUMN - len) : 1, "");
	}
	t->blk.strace_shown = false;
	prefix(m, t);
	if (status & 0x7f)
		fprintf(m, "+++ killed by %s%s +++\n",
			strace_signal_name(status & 0x7f, sig, sizeof(sig)),
			(status & 0x80) ? " (core dumped)" : "");
	else
		fprintf(m, "+++ exited with %d +++\n", (status >> 8) & 0xff);
	fclose(m);
	if (deferred) {
		if (len < sizeof(exit_lines) - exit_len) {
			memcpy(exit_lines + exit_len, buf, len);
			exit_len += len;
		}
	} else {
		end_open_line(out, t->tid);
		fputs(buf, out);
	}
	free(buf);
}

void strace_exit(struct task *t, int status)
{
	bool deferred = dispatching == t->tid;

	/* The other threads first, each with its own end, as strace sees them go. */
	if (t->group_leader)
		for_each_thread_of(t->group_leader, o)
			if (o != t && !o->thread_gone && !o->zombie && !o->exited)
				thread_end(o, status, deferred);
	thread_end(t, status, deferred);
}

void strace_exit_thread(struct task *t, int status)
{
	thread_end(t, status, dispatching == t->tid);
}
