/* --strace: prints each finished guest syscall the way strace -f does, driven by the argument
 * formats in the syscall table: symbolic flags and signals, execve's argv, the signals a task
 * takes and how each process ends; a call that met a part this kernel does not implement is
 * marked. Strings and arrays are read from guest memory with the same checked accessors the
 * handlers use. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/syscall.h"
#include "sentry/task.h"

#define STRACE_STR 32	 /* characters of a string shown, as strace's -s default */
#define STRACE_ARGV 32	 /* elements of an argv shown */
#define STRACE_ENVP 4096 /* environment entries counted */

static FILE *output;

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

/* "[pid N] " while the sandbox has more than one task, as strace -f shows it. */
static void prefix(FILE *out, struct task *t)
{
	if (dispatching == t->tid ? dispatching_several : several_tasks())
		fprintf(out, "[pid %d] ", t->tid);
}

static void print_string(FILE *out, struct task *t, unsigned long addr, long len)
{
	char buf[STRACE_STR + 8];
	int n = len < 0 || len > STRACE_STR ? STRACE_STR : (int)len;

	if (len < 0) { /* NUL-terminated */
		long l = copy_string_in(t->mm, buf, addr, sizeof(buf));
		if (l == -EFAULT) {
			fprintf(out, "%#lx", addr);
			return;
		}
		n = l < 0 || l > STRACE_STR ? STRACE_STR : (int)l;
		len = l < 0 ? STRACE_STR + 1 : l;
	} else if (copy_in(t->mm, buf, addr, n)) {
		fprintf(out, "%#lx", addr);
		return;
	}
	fputc('"', out);
	for (int i = 0; i < n; i++) {
		unsigned char c = buf[i];
		if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 32 || c >= 127)
			fprintf(out, "\\%o", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
	if (len > STRACE_STR)
		fputs("...", out);
}

struct flag_name {
	unsigned long bit;
	const char *name;
};
#define FLAG(x)                                                                                    \
	{                                                                                          \
		x, #x                                                                              \
	}

/* BITS as NAMES joined by '|', the rest in hex; ZERO when nothing is set. */
static void print_flags(FILE *out, unsigned long bits, const struct flag_name *names, size_t n,
			const char *zero)
{
	bool any = false;

	for (size_t i = 0; i < n; i++)
		if (names[i].bit && (bits & names[i].bit) == names[i].bit) {
			fprintf(out, "%s%s", any ? "|" : "", names[i].name);
			bits &= ~names[i].bit;
			any = true;
		}
	if (bits)
		fprintf(out, "%s%#lx", any ? "|" : "", bits);
	else if (!any)
		fputs(zero, out);
}

static void print_open_flags(FILE *out, unsigned long f)
{
	static const struct flag_name bits[] = {
	    FLAG(O_CREAT),   FLAG(O_EXCL),     FLAG(O_NOCTTY),	  FLAG(O_TRUNC),
	    FLAG(O_APPEND),  FLAG(O_NONBLOCK), FLAG(O_DIRECTORY), FLAG(O_NOFOLLOW),
	    FLAG(O_CLOEXEC), FLAG(O_PATH),     FLAG(O_LARGEFILE), FLAG(O_NOATIME),
	    FLAG(O_TMPFILE), FLAG(O_DSYNC),    FLAG(O_ASYNC),	  FLAG(O_DIRECT)};
	const char *acc[] = {"O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE"};

	fputs(acc[f & O_ACCMODE], out);
	f &= ~(unsigned long)O_ACCMODE;
	if ((f & O_TMPFILE) == O_TMPFILE)
		f &= ~(unsigned long)O_DIRECTORY; /* part of O_TMPFILE */
	if (f) {
		fputc('|', out);
		print_flags(out, f, bits, sizeof(bits) / sizeof(bits[0]), "");
	}
}

static void print_prot(FILE *out, unsigned long p)
{
	static const struct flag_name bits[] = {FLAG(PROT_READ), FLAG(PROT_WRITE), FLAG(PROT_EXEC),
						FLAG(PROT_GROWSDOWN), FLAG(PROT_GROWSUP)};
	print_flags(out, p, bits, sizeof(bits) / sizeof(bits[0]), "PROT_NONE");
}

static void print_map_flags(FILE *out, unsigned long f)
{
	static const struct flag_name type[] = {FLAG(MAP_SHARED_VALIDATE), FLAG(MAP_SHARED),
						FLAG(MAP_PRIVATE)};
	static const struct flag_name bits[] = {
	    FLAG(MAP_FIXED),	 FLAG(MAP_ANONYMOUS), FLAG(MAP_FIXED_NOREPLACE),
	    FLAG(MAP_NORESERVE), FLAG(MAP_POPULATE),  FLAG(MAP_GROWSDOWN),
	    FLAG(MAP_STACK),	 FLAG(MAP_DENYWRITE), FLAG(MAP_EXECUTABLE),
	    FLAG(MAP_LOCKED),	 FLAG(MAP_NONBLOCK),  FLAG(MAP_HUGETLB),
	    FLAG(MAP_32BIT)};
	unsigned long t = f & 3;
	const char *tn = t == 3	  ? "MAP_SHARED_VALIDATE"
			 : t == 1 ? "MAP_SHARED"
			 : t == 2 ? "MAP_PRIVATE"
				  : "0";

	(void)type;
	fputs(tn, out);
	f &= ~3UL;
	if (f) {
		fputc('|', out);
		print_flags(out, f, bits, sizeof(bits) / sizeof(bits[0]), "");
	}
}

static void print_signal(FILE *out, long sig)
{
	const char *abbrev = sig > 0 && sig < SIGRTMIN ? sigabbrev_np((int)sig) : NULL;

	if (abbrev)
		fprintf(out, "SIG%s", abbrev);
	else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		fprintf(out, "SIGRT_%ld", sig - SIGRTMIN);
	else
		fprintf(out, "%ld", sig);
}

static void print_how(FILE *out, long how)
{
	const char *names[] = {"SIG_BLOCK", "SIG_UNBLOCK", "SIG_SETMASK"};

	if (how >= 0 && how <= 2)
		fputs(names[how], out);
	else
		fprintf(out, "%#lx", how);
}

/* An argv: ["ls", "-l"], at most STRACE_ARGV elements then "...". */
static void print_argv(FILE *out, struct task *t, unsigned long addr)
{
	uint64_t p;
	int i;

	if (!addr) {
		fputs("NULL", out);
		return;
	}
	fputc('[', out);
	for (i = 0;; i++) {
		if (copy_in(t->mm, &p, addr + 8 * i, sizeof(p))) {
			fprintf(out, "%s%#lx", i ? ", " : "", addr + 8 * i);
			break;
		}
		if (!p)
			break;
		if (i == STRACE_ARGV) {
			fputs(", ...", out);
			break;
		}
		if (i)
			fputs(", ", out);
		print_string(out, t, p, -1);
	}
	fputc(']', out);
}

/* An environment: its address and how many entries, as strace shows it by default. */
static void print_envp(FILE *out, struct task *t, unsigned long addr)
{
	uint64_t p = 1;
	int n = 0;

	if (!addr) {
		fputs("NULL", out);
		return;
	}
	while (n < STRACE_ENVP && !copy_in(t->mm, &p, addr + 8 * n, sizeof(p)) && p)
		n++;
	fprintf(out, "%#lx /* %d var%s */", addr, n, n == 1 ? "" : "s");
}

/* NAME(ARGS) of T's current syscall into OUT. */
static void print_call(FILE *out, struct task *t)
{
	const struct syscall_def *def = syscall_def(t->sc.nr);
	const char *name = syscall_name(t->sc.nr);
	const unsigned long *a = t->sc.args;

	if (!def) {
		fprintf(out, "%s(%#lx, %#lx, %#lx, ...)", name ? name : "syscall", a[0], a[1],
			a[2]);
		return;
	}
	fprintf(out, "%s(", def->name);
	for (int i = 0; def->args[i]; i++) {
		if (i)
			fputs(", ", out);
		switch (def->args[i]) {
		case 'd':
			fprintf(out, "%d", (int)a[i]);
			break;
		case 'u':
			fprintf(out, "%lu", a[i]);
			break;
		case 'o':
			fprintf(out, "%#lo", a[i]);
			break;
		case 'f':
			if ((int)a[i] == AT_FDCWD)
				fputs("AT_FDCWD", out);
			else
				fprintf(out, "%d", (int)a[i]);
			break;
		case 's':
			print_string(out, t, a[i], -1);
			break;
		case 'b':
			print_string(out, t, a[i], (long)a[i + 1]);
			break;
		case 'F':
			print_open_flags(out, a[i]);
			break;
		case 'P':
			print_prot(out, a[i]);
			break;
		case 'M':
			print_map_flags(out, a[i]);
			break;
		case 'S':
			print_signal(out, (int)a[i]);
			break;
		case 'H':
			print_how(out, (int)a[i]);
			break;
		case 'A':
			print_argv(out, t, a[i]);
			break;
		case 'E':
			print_envp(out, t, a[i]);
			break;
		case 'p':
			if (a[i])
				fprintf(out, "%#lx", a[i]);
			else
				fputs("NULL", out);
			break;
		default:
			fprintf(out, "%#lx", a[i]);
		}
	}
	fputc(')', out);
}

/* The call as strace_enter saw it, for the syscall whose handler replaces what its arguments
 * point to (execve): printed by strace_print when it is the same task's same call. */
static struct {
	pid_t tid;
	long nr;
	char *text;
} entered;

/* The end of the process of the task whose syscall is being served, if that syscall ended it:
 * printed after the call's own line, as strace does. */
static char exit_line[96];

void strace_enter(struct task *t)
{
	size_t len;
	FILE *m;

	dispatching = t->tid;
	dispatching_several = several_tasks();
	free(entered.text);
	entered.text = NULL;
	if (t->sc.nr != SYS_execve && t->sc.nr != SYS_execveat)
		return;
	if (!(m = open_memstream(&entered.text, &len)))
		return;
	print_call(m, t);
	fclose(m);
	entered.tid = t->tid;
	entered.nr = t->sc.nr;
}

/* The kernel's restart codes, as strace names them. */
static const char *const restart_names[] = {
    "ERESTARTSYS (To be restarted if SA_RESTART is set)", "ERESTARTNOINTR (To be restarted)",
    "ERESTARTNOHAND (To be restarted if no handler)",	  NULL,
    "ERESTART_RESTARTBLOCK (Interrupted by signal)",
};

void strace_print(struct task *t, long ret)
{
	const struct syscall_def *def = syscall_def(t->sc.nr);
	FILE *out = out_stream();

	prefix(out, t);
	if (entered.text && entered.tid == t->tid && entered.nr == t->sc.nr) {
		fputs(entered.text, out);
		free(entered.text);
		entered.text = NULL;
	} else {
		print_call(out, t);
	}
	if (ret == -ESENTRY_BLOCK)
		fputs(" <blocks>", out);
	else if (t->exited || t->sc.nr == SYS_exit || t->sc.nr == SYS_exit_group)
		fputs(" = ?", out);
	else if (ret <= -512 && ret >= -516 && restart_names[-ret - 512])
		fprintf(out, " = ? %s", restart_names[-ret - 512]);
	else if (ret < 0 && ret > -4096)
		fprintf(out, " = -1 %s (%s)", strerrorname_np(-ret) ? strerrorname_np(-ret) : "E?",
			strerror(-ret));
	else if (def && def->ret == 'x')
		fprintf(out, " = %#lx", ret);
	else
		fprintf(out, " = %ld", ret);
	/* What the table and the handler know of what is missing. */
	if (syscall_unsupported_now())
		fprintf(out, " <unsupported: %s>", syscall_unsupported_now());
	else if (ret == -ENOSYS && (!def || def->support == SYSCALL_UNIMPLEMENTED))
		fputs(" <unimplemented>", out);
	fputc('\n', out);
	if (exit_line[0]) {
		prefix(out, t);
		fputs(exit_line, out);
		exit_line[0] = 0;
	}
	dispatching = -1;
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

	prefix(out, t);
	fputs("--- ", out);
	print_signal(out, si->si_signo);
	fputs(" {si_signo=", out);
	print_signal(out, si->si_signo);
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
			print_signal(out, si->si_status);
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

void strace_exit(struct task *t, int status)
{
	char sig[32];
	FILE *m = fmemopen(sig, sizeof(sig), "w");

	if (m) {
		print_signal(m, status & 0x7f);
		fclose(m);
	}
	if (status & 0x7f)
		snprintf(exit_line, sizeof(exit_line), "+++ killed by %s%s +++\n", m ? sig : "?",
			 (status & 0x80) ? " (core dumped)" : "");
	else
		snprintf(exit_line, sizeof(exit_line), "+++ exited with %d +++\n",
			 (status >> 8) & 0xff);
	if (dispatching == t->tid)
		return; /* after the line of the syscall that ends it */
	FILE *out = out_stream();
	prefix(out, t);
	fputs(exit_line, out);
	exit_line[0] = 0;
}
