/* The argument decoders of --strace: strace's names for constants and flags and the structures
 * it shows, one format letter of the syscall table (sentry/syscall.h) at a time, with the
 * per-call formats of the calls whose arguments depend on a command. What a call writes is
 * decoded after it; guest memory is read only through the checked accessors the handlers use,
 * so a bad pointer prints as an address. strace.c puts the lines together. */
#include "sentry/strace_args.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysinfo.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sentry/mm.h"
#include "sentry/syscall.h"
#include "sentry/task.h"

#define STRACE_ENVP 4096 /* environment entries counted */

static void print_addr(FILE *out, unsigned long a)
{
	if (a)
		fprintf(out, "%#lx", a);
	else
		fputs("NULL", out);
}

/* LEN bytes of BUF as strace quotes them; HEX quotes every byte as \xNN. */
void strace_quote(FILE *out, const unsigned char *buf, int len, bool hex)
{
	fputc('"', out);
	for (int i = 0; i < len; i++) {
		unsigned char c = buf[i];
		if (hex) {
			fprintf(out, "\\x%02x", c);
			continue;
		}
		switch (c) {
		case '"':
		case '\\':
			fprintf(out, "\\%c", c);
			continue;
		case '\f':
			fputs("\\f", out);
			continue;
		case '\n':
			fputs("\\n", out);
			continue;
		case '\r':
			fputs("\\r", out);
			continue;
		case '\t':
			fputs("\\t", out);
			continue;
		case '\v':
			fputs("\\v", out);
			continue;
		}
		if (c >= ' ' && c < 0x7f)
			fputc(c, out);
		else if (i + 1 < len && buf[i + 1] >= '0' && buf[i + 1] <= '9')
			fprintf(out, "\\%03o", c); /* a digit follows: all three */
		else
			fprintf(out, "\\%o", c);
	}
	fputc('"', out);
}

/* A string at ADDR: NUL-terminated when LEN < 0, else LEN bytes; at most STRACE_STR shown. */
static void print_string_ex(FILE *out, struct task *t, unsigned long addr, long len, bool hex)
{
	unsigned char buf[STRACE_STR + 8];
	int n = len < 0 || len > STRACE_STR ? STRACE_STR : (int)len;

	if (len < 0) { /* NUL-terminated */
		long l = copy_string_in(t->mm, (char *)buf, addr, sizeof(buf));
		if (l == -EFAULT) {
			print_addr(out, addr);
			return;
		}
		n = l < 0 || l > STRACE_STR ? STRACE_STR : (int)l;
		len = l < 0 ? STRACE_STR + 1 : l;
	} else if (copy_in(t->mm, buf, addr, n)) {
		print_addr(out, addr);
		return;
	}
	strace_quote(out, buf, n, hex);
	if (len > STRACE_STR)
		fputs("...", out);
}

/* A path at ADDR: strace shows it whole, whatever -s says. */
static void print_path(FILE *out, struct task *t, unsigned long addr)
{
	char buf[PATH_MAX + 1];
	long l = copy_string_in(t->mm, buf, addr, sizeof(buf));

	if (l == -EFAULT) {
		print_addr(out, addr);
		return;
	}
	l = l < 0 ? PATH_MAX : l;
	strace_quote(out, (const unsigned char *)buf, (int)l, false);
	if (l >= PATH_MAX)
		fputs("...", out);
}

static void print_string(FILE *out, struct task *t, unsigned long addr, long len)
{
	print_string_ex(out, t, addr, len, false);
}

struct flag_name {
	unsigned long bit;
	const char *name;
};
#define FLAG(x)                                                                                    \
	{                                                                                          \
		x, #x                                                                              \
	}
#define NFLAGS(a) (sizeof(a) / sizeof(a[0]))

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

/* VAL's name in NAMES, or VAL in DFL's format (a constant strace does not know). */
static void print_const(FILE *out, unsigned long val, const struct flag_name *names, size_t n,
			const char *dfl)
{
	for (size_t i = 0; i < n; i++)
		if (names[i].bit == val) {
			fputs(names[i].name, out);
			return;
		}
	fprintf(out, dfl, val);
}

/* Linux's x86_64 O_LARGEFILE (glibc's header makes it 0 on 64-bit: musl passes it). */
#define K_O_LARGEFILE 0100000
#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

void strace_print_open_flags(FILE *out, unsigned long f)
{
	/* strace's order; O_TMPFILE includes O_DIRECTORY's bit, so it comes first. */
	static const struct flag_name bits[] = {FLAG(O_CREAT),	    FLAG(O_EXCL),
						FLAG(O_NOCTTY),	    FLAG(O_TRUNC),
						FLAG(O_APPEND),	    FLAG(O_NONBLOCK),
						FLAG(O_SYNC),	    FLAG(O_DSYNC),
						FLAG(O_DIRECT),	    {K_O_LARGEFILE, "O_LARGEFILE"},
						FLAG(O_NOFOLLOW),   FLAG(O_NOATIME),
						FLAG(O_CLOEXEC),    FLAG(O_PATH),
						FLAG(O_TMPFILE),    FLAG(O_DIRECTORY),
						{O_ASYNC, "FASYNC"}};
	const char *acc[] = {"O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE"};

	fputs(acc[f & O_ACCMODE], out);
	f &= ~(unsigned long)O_ACCMODE;
	if (f) {
		fputc('|', out);
		print_flags(out, f, bits, NFLAGS(bits), "");
	}
}

/* The O_CLOEXEC/O_NONBLOCK flags of pipe2, dup3, eventfd2 and the like. */
static void print_fd_flags(FILE *out, unsigned long f)
{
	static const struct flag_name bits[] = {FLAG(O_NONBLOCK), FLAG(O_CLOEXEC)};
	print_flags(out, f, bits, NFLAGS(bits), "0");
}

static void print_prot(FILE *out, unsigned long p)
{
	static const struct flag_name bits[] = {FLAG(PROT_READ), FLAG(PROT_WRITE), FLAG(PROT_EXEC),
						FLAG(PROT_GROWSDOWN), FLAG(PROT_GROWSUP)};
	print_flags(out, p, bits, NFLAGS(bits), "PROT_NONE");
}

static void print_map_flags(FILE *out, unsigned long f)
{
	static const struct flag_name bits[] = {
	    FLAG(MAP_FIXED),	      FLAG(MAP_ANONYMOUS),  FLAG(MAP_32BIT),  FLAG(MAP_GROWSDOWN),
	    FLAG(MAP_DENYWRITE),      FLAG(MAP_EXECUTABLE), FLAG(MAP_LOCKED), FLAG(MAP_NORESERVE),
	    FLAG(MAP_POPULATE),	      FLAG(MAP_NONBLOCK),   FLAG(MAP_STACK),  FLAG(MAP_HUGETLB),
	    FLAG(MAP_FIXED_NOREPLACE)};
	unsigned long t = f & 3;
	const char *tn = t == 3	  ? "MAP_SHARED_VALIDATE"
			 : t == 1 ? "MAP_SHARED"
			 : t == 2 ? "MAP_PRIVATE"
				  : "0";

	fputs(tn, out);
	f &= ~3UL;
	if (f) {
		fputc('|', out);
		print_flags(out, f, bits, NFLAGS(bits), "");
	}
}

/* Signal names as strace has them: the kernel's real-time range starts at 32 (SIGRTMIN), the
 * rest are SIGRT_N counted from there. */
const char *strace_signal_name(long sig, char *buf, size_t size)
{
	const char *abbrev = sig > 0 && sig < 32 ? sigabbrev_np((int)sig) : NULL;

	if (abbrev)
		snprintf(buf, size, "SIG%s", abbrev);
	else if (sig == 32)
		snprintf(buf, size, "SIGRTMIN");
	else if (sig > 32 && sig <= 64)
		snprintf(buf, size, "SIGRT_%ld", sig - 32);
	else
		snprintf(buf, size, "%ld", sig);
	return buf;
}

void strace_print_signal(FILE *out, long sig)
{
	char buf[32];
	fputs(strace_signal_name(sig, buf, sizeof(buf)), out);
}

/* A signal set of BYTES bytes as strace shows it: [INT TERM], or ~[...] for the signals not
 * in it when two thirds or more are. */
static void print_sigset_value(FILE *out, const uint64_t *set, size_t bytes)
{
	unsigned nsig = (unsigned)bytes * 8, count = 0;
	bool inv, any = false;

	for (unsigned i = 0; i < nsig; i++)
		count += (set[i / 64] >> (i % 64)) & 1;
	inv = count >= nsig * 2 / 3;
	fputs(inv ? "~[" : "[", out);
	for (unsigned i = 0; i < nsig; i++) {
		if ((((set[i / 64] >> (i % 64)) & 1) != 0) == inv)
			continue;
		char buf[32];
		fprintf(out, "%s%s", any ? " " : "",
			strace_signal_name(i + 1, buf, sizeof(buf)) + 3);
		any = true;
	}
	fputc(']', out);
}

static void print_sigset(FILE *out, struct task *t, unsigned long addr, unsigned long size)
{
	uint64_t set[2] = {0, 0};

	if (!addr || size > sizeof(set) || !size || size % 4 || copy_in(t->mm, set, addr, size)) {
		print_addr(out, addr);
		return;
	}
	print_sigset_value(out, set, size);
}

static void print_how(FILE *out, long how)
{
	const char *names[] = {"SIG_BLOCK", "SIG_UNBLOCK", "SIG_SETMASK"};

	if (how >= 0 && how <= 2)
		fputs(names[how], out);
	else
		fprintf(out, "%#lx /* SIG_??? */", how);
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

/* --- structures ------------------------------------------------------------------------------ */

static void print_rlim(FILE *out, uint64_t v)
{
	if (v == UINT64_MAX)
		fputs("RLIM64_INFINITY", out);
	else if (v > 1024 && v % 1024 == 0)
		fprintf(out, "%lu*1024", (unsigned long)(v / 1024));
	else
		fprintf(out, "%lu", (unsigned long)v);
}

static void print_rlimit(FILE *out, struct task *t, unsigned long addr)
{
	uint64_t r[2];

	if (!addr || copy_in(t->mm, r, addr, sizeof(r))) {
		print_addr(out, addr);
		return;
	}
	fputs("{rlim_cur=", out);
	print_rlim(out, r[0]);
	fputs(", rlim_max=", out);
	print_rlim(out, r[1]);
	fputc('}', out);
}

static void print_rlimit_resource(FILE *out, unsigned long r)
{
	static const struct flag_name names[] = {
	    FLAG(RLIMIT_CPU),	   FLAG(RLIMIT_FSIZE), FLAG(RLIMIT_DATA),   FLAG(RLIMIT_STACK),
	    FLAG(RLIMIT_CORE),	   FLAG(RLIMIT_RSS),   FLAG(RLIMIT_NPROC),  FLAG(RLIMIT_NOFILE),
	    FLAG(RLIMIT_MEMLOCK),  FLAG(RLIMIT_AS),    FLAG(RLIMIT_LOCKS),  FLAG(RLIMIT_SIGPENDING),
	    FLAG(RLIMIT_MSGQUEUE), FLAG(RLIMIT_NICE),  FLAG(RLIMIT_RTPRIO), FLAG(RLIMIT_RTTIME)};
	/* RLIMIT_CPU is 0: print_const matches it by value. */
	print_const(out, (unsigned)r, names, NFLAGS(names), "%#lx /* RLIMIT_??? */");
}

static void print_timespec(FILE *out, struct task *t, unsigned long addr)
{
	struct timespec ts;

	if (!addr || copy_in(t->mm, &ts, addr, sizeof(ts))) {
		print_addr(out, addr);
		return;
	}
	fprintf(out, "{tv_sec=%ld, tv_nsec=%ld}", (long)ts.tv_sec, ts.tv_nsec);
}

/* utimensat's times: NULL, or [atime, mtime] with UTIME_NOW and UTIME_OMIT by name. */
static void print_utimes(FILE *out, struct task *t, unsigned long addr)
{
	struct timespec ts[2];

	if (!addr || copy_in(t->mm, ts, addr, sizeof(ts))) {
		print_addr(out, addr);
		return;
	}
	fputc('[', out);
	for (int i = 0; i < 2; i++) {
		fputs(i ? ", " : "", out);
		if (ts[i].tv_nsec == UTIME_NOW)
			fputs("UTIME_NOW", out);
		else if (ts[i].tv_nsec == UTIME_OMIT)
			fputs("UTIME_OMIT", out);
		else
			fprintf(out, "{tv_sec=%ld, tv_nsec=%ld}", (long)ts[i].tv_sec,
				ts[i].tv_nsec);
	}
	fputc(']', out);
}

static void print_clockid(FILE *out, long c)
{
	static const struct flag_name names[] = {FLAG(CLOCK_REALTIME),
						 FLAG(CLOCK_MONOTONIC),
						 FLAG(CLOCK_PROCESS_CPUTIME_ID),
						 FLAG(CLOCK_THREAD_CPUTIME_ID),
						 FLAG(CLOCK_MONOTONIC_RAW),
						 FLAG(CLOCK_REALTIME_COARSE),
						 FLAG(CLOCK_MONOTONIC_COARSE),
						 FLAG(CLOCK_BOOTTIME),
						 FLAG(CLOCK_REALTIME_ALARM),
						 FLAG(CLOCK_BOOTTIME_ALARM),
						 FLAG(CLOCK_TAI)};
	if (c < 0) {
		fprintf(out, "%ld", c);
		return;
	}
	print_const(out, (unsigned long)c, names, NFLAGS(names), "%#lx /* CLOCK_??? */");
}

static void print_mode_t(FILE *out, unsigned mode)
{
	static const struct flag_name types[] = {FLAG(S_IFREG), FLAG(S_IFSOCK), FLAG(S_IFIFO),
						 FLAG(S_IFLNK), FLAG(S_IFDIR),	FLAG(S_IFBLK),
						 FLAG(S_IFCHR)};
	const char *type = NULL;

	for (size_t i = 0; i < NFLAGS(types); i++)
		if ((mode & S_IFMT) == types[i].bit)
			type = types[i].name;
	if (type)
		fprintf(out, "%s|", type);
	else if (mode & S_IFMT)
		fprintf(out, "%#o|", mode & S_IFMT);
	if (mode & S_ISUID)
		fputs("S_ISUID|", out);
	if (mode & S_ISGID)
		fputs("S_ISGID|", out);
	if (mode & S_ISVTX)
		fputs("S_ISVTX|", out);
	fprintf(out, "%#03o", mode & 0777);
}

static void print_stat(FILE *out, struct task *t, unsigned long addr)
{
	struct stat st;

	if (!addr || copy_in(t->mm, &st, addr, sizeof(st))) {
		print_addr(out, addr);
		return;
	}
	fputs("{st_mode=", out);
	print_mode_t(out, st.st_mode);
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		fprintf(out, ", st_rdev=makedev(%#x, %#x), ...}", major(st.st_rdev),
			minor(st.st_rdev));
	else
		fprintf(out, ", st_size=%ld, ...}", (long)st.st_size);
}

static void print_uname(FILE *out, struct task *t, unsigned long addr)
{
	struct utsname u;

	if (!addr || copy_in(t->mm, &u, addr, sizeof(u))) {
		print_addr(out, addr);
		return;
	}
	u.sysname[sizeof(u.sysname) - 1] = u.nodename[sizeof(u.nodename) - 1] = 0;
	fputs("{sysname=", out);
	strace_quote(out, (unsigned char *)u.sysname, (int)strlen(u.sysname), false);
	fputs(", nodename=", out);
	strace_quote(out, (unsigned char *)u.nodename, (int)strlen(u.nodename), false);
	fputs(", ...}", out);
}

static void print_sigaction(FILE *out, struct task *t, unsigned long addr)
{
	static const struct flag_name flags[] = {
	    FLAG(SA_RESTORER),	FLAG(SA_ONSTACK), FLAG(SA_RESTART),   FLAG(SA_NODEFER),
	    FLAG(SA_RESETHAND), FLAG(SA_SIGINFO), FLAG(SA_NOCLDSTOP), FLAG(SA_NOCLDWAIT)};
	struct ksigaction sa;

	if (!addr || copy_in(t->mm, &sa, addr, sizeof(sa))) {
		print_addr(out, addr);
		return;
	}
	fputs("{sa_handler=", out);
	if (sa.handler == (uint64_t)(uintptr_t)SIG_DFL)
		fputs("SIG_DFL", out);
	else if (sa.handler == (uint64_t)(uintptr_t)SIG_IGN)
		fputs("SIG_IGN", out);
	else
		fprintf(out, "%#lx", (unsigned long)sa.handler);
	fputs(", sa_mask=", out);
	print_sigset_value(out, &sa.mask, sizeof(sa.mask));
	fputs(", sa_flags=", out);
	print_flags(out, sa.flags, flags, NFLAGS(flags), "0");
	if (sa.flags & SA_RESTORER)
		fprintf(out, ", sa_restorer=%#lx", (unsigned long)sa.restorer);
	fputc('}', out);
}

/* A wait status as strace spells it: [{WIFEXITED(s) && WEXITSTATUS(s) == 0}]. */
static void print_wait_status(FILE *out, struct task *t, unsigned long addr)
{
	int s;

	if (!addr || copy_in(t->mm, &s, addr, sizeof(s))) {
		print_addr(out, addr);
		return;
	}
	fputs("[{", out);
	if (WIFEXITED(s)) {
		fprintf(out, "WIFEXITED(s) && WEXITSTATUS(s) == %d", WEXITSTATUS(s));
	} else if (WIFSIGNALED(s)) {
		fputs("WIFSIGNALED(s) && WTERMSIG(s) == ", out);
		strace_print_signal(out, WTERMSIG(s));
		if (WCOREDUMP(s))
			fputs(" && WCOREDUMP(s)", out);
	} else if (WIFSTOPPED(s)) {
		fputs("WIFSTOPPED(s) && WSTOPSIG(s) == ", out);
		strace_print_signal(out, WSTOPSIG(s));
	} else if (WIFCONTINUED(s)) {
		fputs("WIFCONTINUED(s)", out);
	} else {
		fprintf(out, "%#x", s);
	}
	fputs("}]", out);
}

static void print_wait_options(FILE *out, unsigned long o)
{
	static const struct flag_name bits[] = {FLAG(WNOHANG),	  FLAG(WSTOPPED), FLAG(WEXITED),
						FLAG(WCONTINUED), FLAG(WNOWAIT),  FLAG(__WNOTHREAD),
						FLAG(__WALL),	  FLAG(__WCLONE)};
	print_flags(out, o, bits, NFLAGS(bits), "0");
}

static void print_int_array(FILE *out, struct task *t, unsigned long addr, int n)
{
	int v[2];

	if (!addr || n > 2 || copy_in(t->mm, v, addr, sizeof(int) * n)) {
		print_addr(out, addr);
		return;
	}
	fputc('[', out);
	for (int i = 0; i < n; i++)
		fprintf(out, "%s%d", i ? ", " : "", v[i]);
	fputc(']', out);
}

/* getdents64's buffer: its address and how many entries the call wrote. */
static void print_dirents(FILE *out, struct task *t, unsigned long addr, long ret)
{
	long n = 0, off = 0;
	uint16_t reclen;

	while (off + 18 < ret && !copy_in(t->mm, &reclen, addr + off + 16, sizeof(reclen)) &&
	       reclen) {
		off += reclen;
		n++;
	}
	fprintf(out, "%#lx /* %ld entr%s */", addr, n, n == 1 ? "y" : "ies");
}

/* poll's array: the events asked for, or (REVENTS) those the call found, of the fds that
 * have some, as strace shows them. */
void strace_print_pollfds(FILE *out, struct task *t, unsigned long addr, unsigned long n,
			  bool revents)
{
	static const struct flag_name bits[] = {
	    FLAG(POLLIN),     FLAG(POLLPRI),	FLAG(POLLOUT),	  FLAG(POLLERR),
	    FLAG(POLLHUP),    FLAG(POLLNVAL),	FLAG(POLLRDNORM), FLAG(POLLRDBAND),
	    FLAG(POLLWRNORM), FLAG(POLLWRBAND), FLAG(POLLMSG),	  FLAG(POLLRDHUP)};
	struct pollfd p;
	bool any = false;

	if (!addr || (!revents && n && copy_in(t->mm, &p, addr, sizeof(p)))) {
		print_addr(out, addr);
		return;
	}
	fputc('[', out);
	for (unsigned long i = 0; i < n; i++) {
		if (i == STRACE_STR) {
			fputs(", ...", out);
			break;
		}
		if (copy_in(t->mm, &p, addr + i * sizeof(p), sizeof(p))) {
			fprintf(out, "%s%#lx", any ? ", " : "", addr + i * sizeof(p));
			break;
		}
		if (revents && !p.revents)
			continue;
		fprintf(out, "%s{fd=%d, %s=", any ? ", " : "", p.fd,
			revents ? "revents" : "events");
		print_flags(out, (unsigned short)(revents ? p.revents : p.events), bits,
			    NFLAGS(bits), "0");
		fputc('}', out);
		any = true;
	}
	fputc(']', out);
}

static void print_futex_op(FILE *out, unsigned long op)
{
	static const char *const names[] = {
	    "FUTEX_WAIT",	    "FUTEX_WAKE",	 "FUTEX_FD",
	    "FUTEX_REQUEUE",	    "FUTEX_CMP_REQUEUE", "FUTEX_WAKE_OP",
	    "FUTEX_LOCK_PI",	    "FUTEX_UNLOCK_PI",	 "FUTEX_TRYLOCK_PI",
	    "FUTEX_WAIT_BITSET",    "FUTEX_WAKE_BITSET", "FUTEX_WAIT_REQUEUE_PI",
	    "FUTEX_CMP_REQUEUE_PI", "FUTEX_LOCK_PI2"};
	unsigned long cmd = op & 127, rest = op & ~(127UL | 128 | 256);

	if (cmd >= sizeof(names) / sizeof(names[0])) {
		fprintf(out, "%#lx /* FUTEX_??? */", op);
		return;
	}
	fprintf(out, "%s%s", names[cmd], (op & 128) ? "_PRIVATE" : "");
	if (op & 256)
		fputs("|FUTEX_CLOCK_REALTIME", out);
	if (rest)
		fprintf(out, "|%#lx", rest);
}

/* An iovec array of N elements: each one's data (LEN < 0: all of each as given; else the first
 * LEN bytes in all, as a read leaves them) and length, as strace shows them. */
static void print_iovecs(FILE *out, struct task *t, unsigned long addr, long n, long len)
{
	struct {
		uint64_t base, len;
	} v;

	if (!addr || n < 0) {
		print_addr(out, addr);
		return;
	}
	fputc('[', out);
	for (long i = 0; i < n; i++) {
		if (i == STRACE_STR) {
			fputs(", ...", out);
			break;
		}
		if (copy_in(t->mm, &v, addr + i * sizeof(v), sizeof(v))) {
			fprintf(out, "%s%#lx", i ? ", " : "", addr + i * sizeof(v));
			break;
		}
		long shown = v.len > LONG_MAX ? LONG_MAX : (long)v.len;
		if (len >= 0) {
			shown = shown < len ? shown : len;
			len -= shown;
		}
		fputs(i ? ", {iov_base=" : "{iov_base=", out);
		print_string(out, t, v.base, shown);
		fprintf(out, ", iov_len=%lu}", (unsigned long)v.len);
	}
	fputc(']', out);
}

static const struct flag_name families[] = {{AF_UNSPEC, "AF_UNSPEC"},	{AF_UNIX, "AF_UNIX"},
					    {AF_INET, "AF_INET"},	{AF_INET6, "AF_INET6"},
					    {AF_NETLINK, "AF_NETLINK"}, {AF_PACKET, "AF_PACKET"}};
static const struct flag_name protocols[] = {{0, "IPPROTO_IP"},	     {1, "IPPROTO_ICMP"},
					     {6, "IPPROTO_TCP"},     {17, "IPPROTO_UDP"},
					     {58, "IPPROTO_ICMPV6"}, {255, "IPPROTO_RAW"}};
static const struct flag_name advice[] = {
    {0, "MADV_NORMAL"},	     {1, "MADV_RANDOM"},	 {2, "MADV_SEQUENTIAL"},
    {3, "MADV_WILLNEED"},    {4, "MADV_DONTNEED"},	 {8, "MADV_FREE"},
    {9, "MADV_REMOVE"},	     {10, "MADV_DONTFORK"},	 {11, "MADV_DOFORK"},
    {12, "MADV_MERGEABLE"},  {13, "MADV_UNMERGEABLE"},	 {14, "MADV_HUGEPAGE"},
    {15, "MADV_NOHUGEPAGE"}, {16, "MADV_DONTDUMP"},	 {17, "MADV_DODUMP"},
    {18, "MADV_WIPEONFORK"}, {19, "MADV_KEEPONFORK"},	 {20, "MADV_COLD"},
    {21, "MADV_PAGEOUT"},    {22, "MADV_POPULATE_READ"}, {23, "MADV_POPULATE_WRITE"},
    {25, "MADV_COLLAPSE"},   {100, "MADV_HWPOISON"}};

static void print_socket_type(FILE *out, unsigned long t)
{
	static const struct flag_name types[] = {
	    {1, "SOCK_STREAM"},	   {2, "SOCK_DGRAM"}, {3, "SOCK_RAW"},	  {4, "SOCK_RDM"},
	    {5, "SOCK_SEQPACKET"}, {6, "SOCK_DCCP"},  {10, "SOCK_PACKET"}};
	static const struct flag_name bits[] = {{O_CLOEXEC, "SOCK_CLOEXEC"},
						{O_NONBLOCK, "SOCK_NONBLOCK"}};

	print_const(out, t & 0xf, types, NFLAGS(types), "%#lx /* SOCK_??? */");
	if (t & ~0xfUL) {
		fputc('|', out);
		print_flags(out, t & ~0xfUL, bits, NFLAGS(bits), "");
	}
}

/* N struct epoll_event, as strace shows them: [{events=EPOLLIN, data={u32=5, u64=5}}]. */
static void print_epoll_events(FILE *out, struct task *t, unsigned long addr, long n)
{
	static const struct flag_name bits[] = {{0x1, "EPOLLIN"},
						{0x2, "EPOLLPRI"},
						{0x4, "EPOLLOUT"},
						{0x8, "EPOLLERR"},
						{0x10, "EPOLLHUP"},
						{0x20, "EPOLLNVAL"},
						{0x40, "EPOLLRDNORM"},
						{0x80, "EPOLLRDBAND"},
						{0x100, "EPOLLWRNORM"},
						{0x200, "EPOLLWRBAND"},
						{0x400, "EPOLLMSG"},
						{0x2000, "EPOLLRDHUP"},
						{1u << 28, "EPOLLEXCLUSIVE"},
						{1u << 29, "EPOLLWAKEUP"},
						{1u << 30, "EPOLLONESHOT"},
						{1u << 31, "EPOLLET"}};
	struct __attribute__((packed)) {
		uint32_t events;
		uint64_t data;
	} e;
	bool array = t->sc.nr != SYS_epoll_ctl;

	if (!addr) {
		fputs("NULL", out);
		return;
	}
	if (array)
		fputc('[', out);
	for (long i = 0; i < n; i++) {
		if (i == STRACE_STR) {
			fputs(", ...", out);
			break;
		}
		if (copy_in(t->mm, &e, addr + i * sizeof(e), sizeof(e))) {
			fprintf(out, "%s%#lx", i ? ", " : "", addr + i * sizeof(e));
			break;
		}
		fputs(i ? ", {events=" : "{events=", out);
		print_flags(out, e.events, bits, NFLAGS(bits), "0");
		fprintf(out, ", data={u32=%u, u64=%lu}}", (uint32_t)e.data, (unsigned long)e.data);
	}
	if (array)
		fputc(']', out);
}

/* A socket address of LEN bytes, as strace shows the families it knows. */
static void print_sockaddr(FILE *out, struct task *t, unsigned long addr, long len)
{
	unsigned char b[sizeof(struct sockaddr_un)];
	uint16_t family;

	if (!addr || len < 2 || len > (long)sizeof(b) || copy_in(t->mm, b, addr, len)) {
		print_addr(out, addr);
		return;
	}
	memcpy(&family, b, 2);
	fputs("{sa_family=", out);
	print_const(out, family, families, NFLAGS(families), "%lu");
	if (family == AF_UNIX && len > 2) {
		const char *path = (const char *)b + 2;
		int n = (int)len - 2;
		fputs(", sun_path=", out);
		if (!path[0]) { /* abstract: the name is every byte after the NUL */
			fputc('@', out);
			strace_quote(out, (const unsigned char *)path + 1, n - 1, false);
		} else {
			strace_quote(out, (const unsigned char *)path, (int)strnlen(path, n),
				     false);
		}
	} else if (family == AF_INET && len >= 16) {
		char ip[16];
		snprintf(ip, sizeof(ip), "%u.%u.%u.%u", b[4], b[5], b[6], b[7]);
		fprintf(out, ", sin_port=htons(%u), sin_addr=inet_addr(\"%s\")", b[2] << 8 | b[3],
			ip);
	} else if (family == AF_INET6 && len >= 28) {
		char ip[64];
		uint32_t flow, scope;
		memcpy(&flow, b + 4, 4);
		memcpy(&scope, b + 24, 4);
		if (!inet_ntop(AF_INET6, b + 8, ip, sizeof(ip)))
			strcpy(ip, "?");
		fprintf(out,
			", sin6_port=htons(%u), sin6_flowinfo=htonl(%u), inet_pton(AF_INET6, "
			"\"%s\", &sin6_addr), sin6_scope_id=%u",
			b[2] << 8 | b[3], ntohl(flow), ip, scope);
	} else if (len > 2) {
		fputs(", sa_data=", out);
		strace_quote(out, b + 2, (int)len - 2, false);
	}
	fputc('}', out);
}

/* --- select, timers, alternate stacks, rusage ------------------------------------------------ */

static void print_timeval_value(FILE *out, const struct timeval *tv)
{
	fprintf(out, "{tv_sec=%ld, tv_usec=%ld}", (long)tv->tv_sec, (long)tv->tv_usec);
}

static void print_timeval(FILE *out, struct task *t, unsigned long addr)
{
	struct timeval tv;

	if (!addr || copy_in(t->mm, &tv, addr, sizeof(tv))) {
		print_addr(out, addr);
		return;
	}
	print_timeval_value(out, &tv);
}

/* The descriptors of select's set at ADDR below NFDS as [3 4]; with NAME (its result), as
 * "NAME [3 4]" after ", " if ANY, and only if some are set. Returns how many are. */
static int print_fdset(FILE *out, struct task *t, unsigned long addr, long nfds, const char *name,
		       bool *any)
{
	uint64_t w = 0;
	int n = 0;

	if (!addr || nfds < 0 || nfds > 1024 * 1024 || (nfds && copy_in(t->mm, &w, addr, 8))) {
		if (!name)
			print_addr(out, addr);
		return 0;
	}
	for (long fd = 0; fd < nfds; fd++) {
		if (fd && fd % 64 == 0 && copy_in(t->mm, &w, addr + fd / 8, sizeof(w)))
			break;
		if (!(w >> (fd % 64) & 1))
			continue;
		if (!n && name)
			fprintf(out, "%s%s [", *any ? ", " : "", name);
		else
			fputc(n ? ' ' : '[', out);
		fprintf(out, "%ld", fd);
		n++;
	}
	if (n) {
		fputc(']', out);
		if (any)
			*any = true;
	} else if (!name) {
		fputs("[]", out);
	}
	return n;
}

/* select's and pselect6's " (in [3], out [4], left {...})" after a call that found RET > 0
 * descriptors ready, " (Timeout)" after one that found none. */
static void print_select_result(FILE *out, struct task *t, long ret)
{
	const unsigned long *a = t->sc.args;
	static const char *const names[] = {"in", "out", "except"};
	bool any = false;

	if (!ret) {
		fputs(" (Timeout)", out);
		return;
	}
	fputs(" (", out);
	for (int k = 0; k < 3; k++)
		print_fdset(out, t, a[1 + k], (long)(int)a[0], names[k], &any);
	if (a[4]) {
		fputs(any ? ", left " : "left ", out);
		if (t->sc.nr == SYS_select)
			print_timeval(out, t, a[4]);
		else
			print_timespec(out, t, a[4]);
	}
	fputc(')', out);
}

/* pselect6's sixth argument: {sigset, its size}. */
static void print_pselect_sigmask(FILE *out, struct task *t, unsigned long addr)
{
	uint64_t d[2];

	if (!addr || copy_in(t->mm, d, addr, sizeof(d))) {
		print_addr(out, addr);
		return;
	}
	fputc('{', out);
	print_sigset(out, t, d[0], d[1]);
	fprintf(out, ", %lu}", (unsigned long)d[1]);
}

static void print_stack_t(FILE *out, struct task *t, unsigned long addr)
{
	static const struct flag_name bits[] = {
	    {1, "SS_ONSTACK"}, {2, "SS_DISABLE"}, {1u << 31, "SS_AUTODISARM"}};
	stack_t ss;

	if (!addr || copy_in(t->mm, &ss, addr, sizeof(ss))) {
		print_addr(out, addr);
		return;
	}
	fputs("{ss_sp=", out);
	print_addr(out, (unsigned long)ss.ss_sp);
	fputs(", ss_flags=", out);
	print_flags(out, (unsigned)ss.ss_flags, bits, NFLAGS(bits), "0");
	fprintf(out, ", ss_size=%lu}", (unsigned long)ss.ss_size);
}

static void print_itimerval(FILE *out, struct task *t, unsigned long addr)
{
	struct timeval v[2];

	if (!addr || copy_in(t->mm, v, addr, sizeof(v))) {
		print_addr(out, addr);
		return;
	}
	fputs("{it_interval=", out);
	print_timeval_value(out, &v[0]);
	fputs(", it_value=", out);
	print_timeval_value(out, &v[1]);
	fputc('}', out);
}

static void print_rusage(FILE *out, struct task *t, unsigned long addr)
{
	struct rusage ru;

	if (!addr || copy_in(t->mm, &ru, addr, sizeof(ru))) {
		print_addr(out, addr);
		return;
	}
	fputs("{ru_utime=", out);
	print_timeval_value(out, &ru.ru_utime);
	fputs(", ru_stime=", out);
	print_timeval_value(out, &ru.ru_stime);
	fputs(", ...}", out);
}

/* --- mount ------------------------------------------------------------------------------------ */

#define MS_MGC_MASK 0xffff0000UL
#define MS_MGC 0xc0ed0000UL

static void print_mount_flags(FILE *out, unsigned long f)
{
	static const struct flag_name bits[] = {{1, "MS_RDONLY"},
						{2, "MS_NOSUID"},
						{4, "MS_NODEV"},
						{8, "MS_NOEXEC"},
						{16, "MS_SYNCHRONOUS"},
						{32, "MS_REMOUNT"},
						{64, "MS_MANDLOCK"},
						{128, "MS_DIRSYNC"},
						{256, "MS_NOSYMFOLLOW"},
						{1024, "MS_NOATIME"},
						{2048, "MS_NODIRATIME"},
						{4096, "MS_BIND"},
						{8192, "MS_MOVE"},
						{16384, "MS_REC"},
						{32768, "MS_SILENT"},
						{1u << 16, "MS_POSIXACL"},
						{1u << 17, "MS_UNBINDABLE"},
						{1u << 18, "MS_PRIVATE"},
						{1u << 19, "MS_SLAVE"},
						{1u << 20, "MS_SHARED"},
						{1u << 21, "MS_RELATIME"},
						{1u << 22, "MS_KERNMOUNT"},
						{1u << 23, "MS_I_VERSION"},
						{1u << 24, "MS_STRICTATIME"},
						{1u << 25, "MS_LAZYTIME"},
						{1u << 30, "MS_ACTIVE"},
						{1u << 31, "MS_NOUSER"}};

	if ((f & MS_MGC_MASK) == MS_MGC) {
		fputs("MS_MGC_VAL", out);
		f &= ~MS_MGC_MASK;
		if (!f)
			return;
		fputc('|', out);
	}
	print_flags(out, f, bits, NFLAGS(bits), "0");
}

/* mount: the type and the data are strings unless the flags make the kernel ignore them (a
 * remount keeps its type; a bind, a move or a propagation change has neither). */
static const char *mount_format(unsigned long f)
{
	if ((f & MS_MGC_MASK) == MS_MGC)
		f &= ~MS_MGC_MASK;
	if (f & MS_REMOUNT)
		return "\"\"p|\"";
	if (f & (MS_BIND | MS_MOVE | MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE))
		return "\"\"p|p";
	return "\"\"\"|\"";
}

static void print_umount_flags(FILE *out, unsigned long f)
{
	static const struct flag_name bits[] = {
	    {1, "MNT_FORCE"}, {2, "MNT_DETACH"}, {4, "MNT_EXPIRE"}, {8, "UMOUNT_NOFOLLOW"}};
	print_flags(out, f, bits, NFLAGS(bits), "0");
}

/* --- socket options and messages -------------------------------------------------------------- */

static const struct flag_name sol_levels[] = {
    {0, "SOL_IP"},    {1, "SOL_SOCKET"},   {6, "SOL_TCP"},
    {17, "SOL_UDP"},  {41, "SOL_IPV6"},	   {58, "SOL_ICMPV6"},
    {255, "SOL_RAW"}, {263, "SOL_PACKET"}, {270, "SOL_NETLINK"}};

static const struct flag_name so_names[] = {
    {1, "SO_DEBUG"},	     {2, "SO_REUSEADDR"},      {3, "SO_TYPE"},
    {4, "SO_ERROR"},	     {5, "SO_DONTROUTE"},      {6, "SO_BROADCAST"},
    {7, "SO_SNDBUF"},	     {8, "SO_RCVBUF"},	       {9, "SO_KEEPALIVE"},
    {10, "SO_OOBINLINE"},    {11, "SO_NO_CHECK"},      {12, "SO_PRIORITY"},
    {13, "SO_LINGER"},	     {14, "SO_BSDCOMPAT"},     {15, "SO_REUSEPORT"},
    {16, "SO_PASSCRED"},     {17, "SO_PEERCRED"},      {18, "SO_RCVLOWAT"},
    {19, "SO_SNDLOWAT"},     {20, "SO_RCVTIMEO_OLD"},  {21, "SO_SNDTIMEO_OLD"},
    {25, "SO_BINDTODEVICE"}, {26, "SO_ATTACH_FILTER"}, {27, "SO_DETACH_FILTER"},
    {28, "SO_PEERNAME"},     {29, "SO_TIMESTAMP_OLD"}, {30, "SO_ACCEPTCONN"},
    {31, "SO_PEERSEC"},	     {32, "SO_SNDBUFFORCE"},   {33, "SO_RCVBUFFORCE"},
    {34, "SO_PASSSEC"},	     {36, "SO_MARK"},	       {38, "SO_PROTOCOL"},
    {39, "SO_DOMAIN"},	     {40, "SO_RXQ_OVFL"},      {42, "SO_PEEK_OFF"},
    {46, "SO_BUSY_POLL"},    {49, "SO_INCOMING_CPU"},  {59, "SO_PEERGROUPS"},
    {60, "SO_ZEROCOPY"}};
static const struct flag_name tcp_names[] = {
    {1, "TCP_NODELAY"},	      {2, "TCP_MAXSEG"},	 {3, "TCP_CORK"},
    {4, "TCP_KEEPIDLE"},      {5, "TCP_KEEPINTVL"},	 {6, "TCP_KEEPCNT"},
    {7, "TCP_SYNCNT"},	      {8, "TCP_LINGER2"},	 {9, "TCP_DEFER_ACCEPT"},
    {10, "TCP_WINDOW_CLAMP"}, {11, "TCP_INFO"},		 {12, "TCP_QUICKACK"},
    {13, "TCP_CONGESTION"},   {14, "TCP_MD5SIG"},	 {18, "TCP_USER_TIMEOUT"},
    {23, "TCP_FASTOPEN"},     {25, "TCP_NOTSENT_LOWAT"}, {30, "TCP_FASTOPEN_CONNECT"}};
static const struct flag_name ip_names[] = {{1, "IP_TOS"},
					    {2, "IP_TTL"},
					    {3, "IP_HDRINCL"},
					    {4, "IP_OPTIONS"},
					    {6, "IP_RECVOPTS"},
					    {7, "IP_RETOPTS"},
					    {8, "IP_PKTINFO"},
					    {10, "IP_MTU_DISCOVER"},
					    {11, "IP_RECVERR"},
					    {12, "IP_RECVTTL"},
					    {13, "IP_RECVTOS"},
					    {14, "IP_MTU"},
					    {15, "IP_FREEBIND"},
					    {19, "IP_TRANSPARENT"},
					    {24, "IP_BIND_ADDRESS_NO_PORT"},
					    {32, "IP_MULTICAST_IF"},
					    {33, "IP_MULTICAST_TTL"},
					    {34, "IP_MULTICAST_LOOP"},
					    {35, "IP_ADD_MEMBERSHIP"},
					    {36, "IP_DROP_MEMBERSHIP"}};
static const struct flag_name ipv6_names[] = {
    {1, "IPV6_ADDRFORM"},	 {7, "IPV6_CHECKSUM"},
    {16, "IPV6_UNICAST_HOPS"},	 {17, "IPV6_MULTICAST_IF"},
    {18, "IPV6_MULTICAST_HOPS"}, {19, "IPV6_MULTICAST_LOOP"},
    {20, "IPV6_ADD_MEMBERSHIP"}, {21, "IPV6_DROP_MEMBERSHIP"},
    {23, "IPV6_MTU_DISCOVER"},	 {24, "IPV6_MTU"},
    {25, "IPV6_RECVERR"},	 {26, "IPV6_V6ONLY"},
    {49, "IPV6_RECVPKTINFO"},	 {50, "IPV6_PKTINFO"},
    {67, "IPV6_TCLASS"}};
static const struct flag_name udp_names[] = {
    {1, "UDP_CORK"}, {100, "UDP_ENCAP"}, {103, "UDP_SEGMENT"}, {104, "UDP_GRO"}};

static void print_sockopt_name(FILE *out, unsigned long level, unsigned long name)
{
	static const struct {
		unsigned long level;
		const struct flag_name *names;
		size_t n;
	} levels[] = {{1, so_names, NFLAGS(so_names)},
		      {6, tcp_names, NFLAGS(tcp_names)},
		      {0, ip_names, NFLAGS(ip_names)},
		      {41, ipv6_names, NFLAGS(ipv6_names)},
		      {17, udp_names, NFLAGS(udp_names)}};

	for (size_t i = 0; i < NFLAGS(levels); i++)
		if (levels[i].level == (unsigned)level) {
			print_const(out, (unsigned)name, levels[i].names, levels[i].n, "%lu");
			return;
		}
	fprintf(out, "%u", (unsigned)name);
}

/* A socket option's value of LEN bytes: the structures strace shows (SO_LINGER, SO_PEERCRED),
 * else an int as [N], else the bytes. */
static void print_sockopt_value(FILE *out, struct task *t, unsigned long addr, long len)
{
	const unsigned long *a = t->sc.args;
	int v[3];

	if (!addr || len < 0) {
		print_addr(out, addr);
		return;
	}
	if ((unsigned)a[1] == SOL_SOCKET && (unsigned)a[2] == SO_LINGER && len == 8 &&
	    !copy_in(t->mm, v, addr, 8)) {
		fprintf(out, "{l_onoff=%d, l_linger=%d}", v[0], v[1]);
	} else if ((unsigned)a[1] == SOL_SOCKET && (unsigned)a[2] == SO_PEERCRED && len == 12 &&
		   !copy_in(t->mm, v, addr, 12)) {
		fprintf(out, "{pid=%d, uid=%u, gid=%u}", v[0], (unsigned)v[1], (unsigned)v[2]);
	} else if (len == 4 && !copy_in(t->mm, v, addr, 4)) {
		fprintf(out, "[%d]", v[0]);
	} else {
		print_string(out, t, addr, len);
	}
}

/* getsockopt's value: as many bytes as the length the call wrote back. */
static void print_getsockopt_value(FILE *out, struct task *t, unsigned long addr)
{
	uint32_t len;

	if (copy_in(t->mm, &len, t->sc.args[4], sizeof(len))) {
		print_addr(out, addr);
		return;
	}
	print_sockopt_value(out, t, addr, len);
}

static const struct flag_name msg_flags[] = {
    {0x1, "MSG_OOB"},	    {0x2, "MSG_PEEK"},		 {0x4, "MSG_DONTROUTE"},
    {0x8, "MSG_CTRUNC"},    {0x10, "MSG_PROXY"},	 {0x20, "MSG_TRUNC"},
    {0x40, "MSG_DONTWAIT"}, {0x80, "MSG_EOR"},		 {0x100, "MSG_WAITALL"},
    {0x200, "MSG_FIN"},	    {0x400, "MSG_SYN"},		 {0x800, "MSG_CONFIRM"},
    {0x1000, "MSG_RST"},    {0x2000, "MSG_ERRQUEUE"},	 {0x4000, "MSG_NOSIGNAL"},
    {0x8000, "MSG_MORE"},   {0x10000, "MSG_WAITFORONE"}, {0x40000000, "MSG_CMSG_CLOEXEC"}};

/* A message's control data, LEN bytes at ADDR: each cmsghdr, SCM_RIGHTS and SCM_CREDENTIALS
 * with their data. */
static void print_cmsgs(FILE *out, struct task *t, unsigned long addr, unsigned long len)
{
	static const struct flag_name types[] = {
	    {1, "SCM_RIGHTS"}, {2, "SCM_CREDENTIALS"}, {3, "SCM_SECURITY"}, {4, "SCM_PIDFD"}};
	struct cmsghdr h;
	unsigned long off = 0;
	int n = 0;

	fputc('[', out);
	while (off + sizeof(h) <= len && n < STRACE_STR) {
		if (copy_in(t->mm, &h, addr + off, sizeof(h))) {
			fprintf(out, "%s%#lx", n ? ", " : "", addr + off);
			break;
		}
		fprintf(out, "%s{cmsg_len=%lu, cmsg_level=", n ? ", " : "",
			(unsigned long)h.cmsg_len);
		print_const(out, (unsigned)h.cmsg_level, sol_levels, NFLAGS(sol_levels), "%lu");
		fputs(", cmsg_type=", out);
		if (h.cmsg_level == SOL_SOCKET)
			print_const(out, (unsigned)h.cmsg_type, types, NFLAGS(types), "%#lx");
		else
			fprintf(out, "%#x", (unsigned)h.cmsg_type);
		unsigned long dlen = h.cmsg_len > sizeof(h) ? h.cmsg_len - sizeof(h) : 0;
		if (dlen > len - off - sizeof(h))
			dlen = len - off - sizeof(h);
		if (h.cmsg_level == SOL_SOCKET && h.cmsg_type == SCM_RIGHTS) {
			fputs(", cmsg_data=[", out);
			for (unsigned long i = 0; i + 4 <= dlen && i < 4 * STRACE_STR; i += 4) {
				int fd;
				if (copy_in(t->mm, &fd, addr + off + sizeof(h) + i, 4))
					break;
				fprintf(out, "%s%d", i ? ", " : "", fd);
			}
			fputs("]}", out);
		} else if (h.cmsg_level == SOL_SOCKET && h.cmsg_type == SCM_CREDENTIALS &&
			   dlen >= 12) {
			int c[3];
			if (!copy_in(t->mm, c, addr + off + sizeof(h), sizeof(c)))
				fprintf(out, ", cmsg_data={pid=%d, uid=%u, gid=%u}}", c[0],
					(unsigned)c[1], (unsigned)c[2]);
			else
				fputs(", ...}", out);
		} else {
			fputs(", cmsg_data=", out);
			print_string_ex(out, t, addr + off + sizeof(h), (long)dlen, true);
			fputc('}', out);
		}
		n++;
		if (h.cmsg_len < sizeof(h))
			break;
		off += (h.cmsg_len + 7) & ~7UL;
	}
	fputc(']', out);
}

/* A struct msghdr as strace shows it; RECEIVED (recvmsg, after it): the RET bytes of data the
 * call wrote, the address and control data it filled in. */
static void print_msghdr(FILE *out, struct task *t, unsigned long addr, long ret, bool received)
{
	struct msghdr m;

	if (!addr || copy_in(t->mm, &m, addr, sizeof(m))) {
		print_addr(out, addr);
		return;
	}
	fputs("{msg_name=", out);
	if (m.msg_name && m.msg_namelen)
		print_sockaddr(out, t, (unsigned long)m.msg_name, m.msg_namelen);
	else
		print_addr(out, (unsigned long)m.msg_name);
	fprintf(out, ", msg_namelen=%u, msg_iov=", m.msg_namelen);
	print_iovecs(out, t, (unsigned long)m.msg_iov, (long)m.msg_iovlen, received ? ret : -1);
	fprintf(out, ", msg_iovlen=%lu", (unsigned long)m.msg_iovlen);
	if (m.msg_control && m.msg_controllen) {
		fputs(", msg_control=", out);
		print_cmsgs(out, t, (unsigned long)m.msg_control, m.msg_controllen);
	}
	fprintf(out, ", msg_controllen=%lu, msg_flags=", (unsigned long)m.msg_controllen);
	print_flags(out, (unsigned)m.msg_flags, msg_flags, NFLAGS(msg_flags), "0");
	fputc('}', out);
}

/* --- credentials, CPU and system figures ----------------------------------------------------- */

static void print_tms(FILE *out, struct task *t, unsigned long addr)
{
	struct tms tm;

	if (!addr || copy_in(t->mm, &tm, addr, sizeof(tm))) {
		print_addr(out, addr);
		return;
	}
	fprintf(out, "{tms_utime=%ld, tms_stime=%ld, tms_cutime=%ld, tms_cstime=%ld}",
		(long)tm.tms_utime, (long)tm.tms_stime, (long)tm.tms_cutime, (long)tm.tms_cstime);
}

/* N group ids at ADDR: [0, 5]. */
static void print_gid_list(FILE *out, struct task *t, unsigned long addr, long n)
{
	uint32_t g;

	if (!addr || n < 0 || n > 65536) {
		print_addr(out, addr);
		return;
	}
	fputc('[', out);
	for (long i = 0; i < n; i++) {
		if (i == STRACE_STR) {
			fputs(", ...", out);
			break;
		}
		if (copy_in(t->mm, &g, addr + 4 * i, sizeof(g))) {
			fprintf(out, "%s%#lx", i ? ", " : "", addr + 4 * i);
			break;
		}
		fprintf(out, "%s%u", i ? ", " : "", g);
	}
	fputc(']', out);
}

static void print_sysinfo(FILE *out, struct task *t, unsigned long addr)
{
	struct sysinfo si;

	if (!addr || copy_in(t->mm, &si, addr, sizeof(si))) {
		print_addr(out, addr);
		return;
	}
	fprintf(out,
		"{uptime=%ld, loads=[%lu, %lu, %lu], totalram=%lu, freeram=%lu, sharedram=%lu, "
		"bufferram=%lu, totalswap=%lu, freeswap=%lu, procs=%u, totalhigh=%lu, "
		"freehigh=%lu, mem_unit=%u}",
		si.uptime, si.loads[0], si.loads[1], si.loads[2], si.totalram, si.freeram,
		si.sharedram, si.bufferram, si.totalswap, si.freeswap, (unsigned)si.procs,
		si.totalhigh, si.freehigh, (unsigned)si.mem_unit);
}

static void print_statfs(FILE *out, struct task *t, unsigned long addr)
{
	static const struct flag_name magics[] = {
	    {0x9fa0, "PROC_SUPER_MAGIC"},	 {0x01021994, "TMPFS_MAGIC"},
	    {0x62656572, "SYSFS_MAGIC"},	 {0x794c7630, "OVERLAYFS_SUPER_MAGIC"},
	    {0x1cd1, "DEVPTS_SUPER_MAGIC"},	 {0xef53, "EXT2_SUPER_MAGIC"},
	    {0x9123683e, "BTRFS_SUPER_MAGIC"},	 {0x58465342, "XFS_SUPER_MAGIC"},
	    {0x63677270, "CGROUP2_SUPER_MAGIC"}, {0x27e0eb, "CGROUP_SUPER_MAGIC"},
	    {0x534f434b, "SOCKFS_MAGIC"},	 {0x50495045, "PIPEFS_MAGIC"},
	    {0x09041934, "ANON_INODE_FS_MAGIC"}, {0x858458f6, "RAMFS_MAGIC"},
	    {0x6969, "NFS_SUPER_MAGIC"},	 {0x73636673, "SECURITYFS_MAGIC"},
	    {0x64626720, "DEBUGFS_MAGIC"},	 {0x74726163, "TRACEFS_MAGIC"},
	    {0x65735546, "FUSE_SUPER_MAGIC"},	 {0x73717368, "SQUASHFS_MAGIC"},
	    {0x9660, "ISOFS_SUPER_MAGIC"},	 {0x4d44, "MSDOS_SUPER_MAGIC"},
	    {0x42494e4d, "BINFMTFS_MAGIC"},	 {0x6e736673, "NSFS_MAGIC"},
	    {0xcafe4a11, "BPF_FS_MAGIC"},	 {0x958458f6, "HUGETLBFS_MAGIC"},
	    {0x2fc12fc1, "ZFS_SUPER_MAGIC"},	 {0x01021997, "V9FS_MAGIC"}};
	/* strace lists ST_VALID first, then the others by bit. */
	static const struct flag_name flags[] = {
	    {32, "ST_VALID"},	   {1, "ST_RDONLY"},	    {2, "ST_NOSUID"},
	    {4, "ST_NODEV"},	   {8, "ST_NOEXEC"},	    {16, "ST_SYNCHRONOUS"},
	    {64, "ST_MANDLOCK"},   {128, "ST_WRITE"},	    {256, "ST_APPEND"},
	    {512, "ST_IMMUTABLE"}, {1024, "ST_NOATIME"},    {2048, "ST_NODIRATIME"},
	    {4096, "ST_RELATIME"}, {8192, "ST_NOSYMFOLLOW"}};
	struct statfs sf;
	int fsid[2];

	if (!addr || copy_in(t->mm, &sf, addr, sizeof(sf))) {
		print_addr(out, addr);
		return;
	}
	memcpy(fsid, &sf.f_fsid, sizeof(fsid));
	fputs("{f_type=", out);
	print_const(out, (unsigned long)sf.f_type, magics, NFLAGS(magics), "%#lx");
	fprintf(out,
		", f_bsize=%ld, f_blocks=%lu, f_bfree=%lu, f_bavail=%lu, f_files=%lu, f_ffree=%lu, "
		"f_fsid={val=[%#x, %#x]}, f_namelen=%ld, f_frsize=%ld, f_flags=",
		(long)sf.f_bsize, (unsigned long)sf.f_blocks, (unsigned long)sf.f_bfree,
		(unsigned long)sf.f_bavail, (unsigned long)sf.f_files, (unsigned long)sf.f_ffree,
		(unsigned)fsid[0], (unsigned)fsid[1], (long)sf.f_namelen, (long)sf.f_frsize);
	print_flags(out, (unsigned long)sf.f_flags, flags, NFLAGS(flags), "0");
	fputc('}', out);
}

/* A CPU set of LEN bytes: the numbers of the CPUs in it, [0 1]. */
static void print_cpu_set(FILE *out, struct task *t, unsigned long addr, long len)
{
	uint64_t w;
	bool any = false;

	if (!addr || len < 0 || len > 8192) {
		print_addr(out, addr);
		return;
	}
	fputc('[', out);
	for (long word = 0; word * 8 < len; word++) {
		if (copy_in(t->mm, &w, addr + word * 8, sizeof(w)))
			break;
		for (int b = 0; b < 64; b++)
			if (w >> b & 1) {
				fprintf(out, "%s%ld", any ? " " : "", word * 64 + b);
				any = true;
			}
	}
	fputc(']', out);
}

/* --- calls ----------------------------------------------------------------------------------- */

/* Format letters beyond the table's (sentry/syscall.h): decoders of strace's constants and
 * structures. Those in OUT_FORMATS are what the call writes: decoded after it, shown only
 * when it succeeded (else the address), and left for the `resumed` part of a blocked call. */
#define OUT_FORMATS "rqmyNBZjDzVwgYi8@_}=:`.'"
/* A backslash and a letter are one argument's format of a second set (EXT(c)); those in
 * OUT_EXT_FORMATS are what the call writes. */
#define EXT(c) (0x100 | (c))
#define OUT_EXT_FORMATS "TGisal"

static bool is_out(int code)
{
	if (code & 0x100)
		return strchr(OUT_EXT_FORMATS, code & 0xff) != NULL;
	return code && strchr(OUT_FORMATS, code);
}

/* The socklen_t an in/out length argument held when its call began, one slot per task: strace
 * shows [128 => 16] when the call changed it, [128] when it failed. */
static struct {
	pid_t tid;
	long nr;
	uint32_t val;
} entry_lens[64];

static void stash_entry_len(struct task *t, unsigned long addr)
{
	uint32_t v;
	int slot = (int)(t->tid & 63);

	entry_lens[slot].tid = 0;
	if (addr && !copy_in(t->mm, &v, addr, sizeof(v))) {
		entry_lens[slot].tid = t->tid;
		entry_lens[slot].nr = t->sc.nr;
		entry_lens[slot].val = v;
	}
}

static bool entry_len(struct task *t, uint32_t *v)
{
	int slot = (int)(t->tid & 63);

	if (entry_lens[slot].tid != t->tid || entry_lens[slot].nr != t->sc.nr)
		return false;
	*v = entry_lens[slot].val;
	return true;
}

/* An in/out length at ADDR after its call: [N => M], or [M] when unchanged (or not known);
 * after a failed call, what it held: [N]. */
static void print_inout_len(FILE *out, struct task *t, unsigned long addr, bool ok)
{
	uint32_t before, after;
	bool known = entry_len(t, &before);

	if (!ok) {
		if (known)
			fprintf(out, "[%u]", before);
		else
			print_addr(out, addr);
	} else if (!addr || copy_in(t->mm, &after, addr, sizeof(after))) {
		print_addr(out, addr);
	} else if (known && before != after) {
		fprintf(out, "[%u => %u]", before, after);
	} else {
		fprintf(out, "[%u]", after);
	}
}

/* FMT as one code per argument (at most 6); returns how many. */
static int format_codes(const char *fmt, int codes[6])
{
	int n = 0;

	for (; *fmt && n < 6; fmt++)
		if (*fmt == '\\' && fmt[1])
			codes[n++] = EXT((unsigned char)*++fmt);
		else
			codes[n++] = (unsigned char)*fmt;
	return n;
}

/* A call whose arguments depend on another one: the format for this instance. */
static const char *call_format(struct task *t, const struct syscall_def *def)
{
	const unsigned long *a = t->sc.args;
	bool creat = (a[1 + (t->sc.nr == SYS_openat)] & O_CREAT) ||
		     (a[1 + (t->sc.nr == SYS_openat)] & O_TMPFILE) == O_TMPFILE;

	switch (t->sc.nr) {
	case SYS_open:
		return creat ? "sFo" : "sF";
	case SYS_openat:
		return creat ? "fsFo" : "fsF";
	case SYS_fcntl:
		switch ((int)a[1]) {
		case F_GETFD:
		case F_GETFL:
		case F_GETOWN:
		case F_GETSIG:
		case F_GETLEASE:
		case F_GETPIPE_SZ:
			return "dC";
		case F_SETFD:
			return "dCX";
		case F_SETFL:
			return "dCF";
		case F_DUPFD:
		case F_DUPFD_CLOEXEC:
		case F_SETPIPE_SZ:
			return "dCd";
		}
		return "dCx";
	case SYS_prctl:
		switch ((int)a[0]) {
		case PR_GET_NAME:
			return "nZ";
		case PR_SET_NAME:
			return "ns";
		case PR_GET_DUMPABLE:
		case PR_GET_NO_NEW_PRIVS:
		case PR_GET_CHILD_SUBREAPER:
			return "n";
		case PR_SET_DUMPABLE:
		case PR_SET_CHILD_SUBREAPER:
		case PR_SET_PDEATHSIG:
			return "nd";
		}
		return "nxxxx";
	case SYS_futex:
		switch (a[1] & 127) {
		case 0: /* FUTEX_WAIT */
			return "pUdt";
		case 1: /* FUTEX_WAKE */
		case 7: /* FUTEX_UNLOCK_PI */
			return "pUd";
		case 3: /* FUTEX_REQUEUE */
			return "pUddp";
		case 4:	 /* FUTEX_CMP_REQUEUE */
		case 12: /* FUTEX_CMP_REQUEUE_PI */
			return "pUddpd";
		case 5: /* FUTEX_WAKE_OP */
			return "pUddpx";
		case 6:	 /* FUTEX_LOCK_PI */
		case 13: /* FUTEX_LOCK_PI2 */
			return "pUt";
		case 8: /* FUTEX_TRYLOCK_PI */
			return "pU";
		case 9:	 /* FUTEX_WAIT_BITSET */
		case 10: /* FUTEX_WAKE_BITSET */
			return "pUdth";
		case 11: /* FUTEX_WAIT_REQUEUE_PI */
			return "pUdtp";
		}
		return "pUdpph";
	case SYS_ioctl:
		switch ((unsigned)a[1]) {
		case 0x5413: /* TIOCGWINSZ */
		case 0x5401: /* TCGETS */
			return "dIY";
		case 0x5402: /* TCSETS */
		case 0x5403: /* TCSETSW */
		case 0x5404: /* TCSETSF */
		case 0x5414: /* TIOCSWINSZ */
			return "dI?";
		case 0x540f:	 /* TIOCGPGRP */
		case 0x5429:	 /* TIOCGSID */
		case 0x541b:	 /* FIONREAD */
		case 0x5411:	 /* TIOCOUTQ */
		case 0x80045430: /* TIOCGPTN */
			return "dIj";
		case 0x5410:	 /* TIOCSPGRP */
		case 0x5421:	 /* FIONBIO */
		case 0x5452:	 /* FIOASYNC */
		case 0x40045431: /* TIOCSPTLCK */
			return "dIJ";
		case 0x540b: /* TCFLSH */
			return "dI-";
		case 0x540e: /* TIOCSCTTY */
			return "dId";
		case 0x5422: /* TIOCNOTTY */
		case 0x5450: /* FIONCLEX */
		case 0x5451: /* FIOCLEX */
		case 0x540c: /* TIOCEXCL */
		case 0x540d: /* TIOCNXCL */
			return "dI";
		}
		return "dIx";
	case SYS_mount:
		return mount_format(a[3]);
	}
	return def->args;
}

static void print_arch_prctl_code(FILE *out, unsigned long c)
{
	static const struct flag_name names[] = {
	    {0x1001, "ARCH_SET_GS"},	   {0x1002, "ARCH_SET_FS"},
	    {0x1003, "ARCH_GET_FS"},	   {0x1004, "ARCH_GET_GS"},
	    {0x1011, "ARCH_GET_CPUID"},	   {0x1012, "ARCH_SET_CPUID"},
	    {0x2001, "ARCH_MAP_VDSO_X32"}, {0x2002, "ARCH_MAP_VDSO_32"},
	    {0x2003, "ARCH_MAP_VDSO_64"}};
	print_const(out, c, names, NFLAGS(names), "%#lx /* ARCH_??? */");
}

static void print_prctl_option(FILE *out, unsigned long o)
{
	static const struct flag_name names[] = {{1, "PR_SET_PDEATHSIG"},
						 {2, "PR_GET_PDEATHSIG"},
						 {3, "PR_GET_DUMPABLE"},
						 {4, "PR_SET_DUMPABLE"},
						 {8, "PR_SET_KEEPCAPS"},
						 {7, "PR_GET_KEEPCAPS"},
						 {15, "PR_SET_NAME"},
						 {16, "PR_GET_NAME"},
						 {22, "PR_SET_SECCOMP"},
						 {21, "PR_GET_SECCOMP"},
						 {23, "PR_CAPBSET_READ"},
						 {24, "PR_CAPBSET_DROP"},
						 {36, "PR_SET_CHILD_SUBREAPER"},
						 {37, "PR_GET_CHILD_SUBREAPER"},
						 {38, "PR_SET_NO_NEW_PRIVS"},
						 {39, "PR_GET_NO_NEW_PRIVS"},
						 {47, "PR_CAP_AMBIENT"},
						 {0x59616d61, "PR_SET_PTRACER"}};
	print_const(out, o, names, NFLAGS(names), "%#lx /* PR_??? */");
}

static void print_fcntl_cmd(FILE *out, unsigned long c)
{
	static const struct flag_name names[] = {
	    FLAG(F_DUPFD),	FLAG(F_GETFD),	   FLAG(F_SETFD),	  FLAG(F_GETFL),
	    FLAG(F_SETFL),	FLAG(F_GETLK),	   FLAG(F_SETLK),	  FLAG(F_SETLKW),
	    FLAG(F_SETOWN),	FLAG(F_GETOWN),	   FLAG(F_SETSIG),	  FLAG(F_GETSIG),
	    FLAG(F_SETLEASE),	FLAG(F_GETLEASE),  FLAG(F_DUPFD_CLOEXEC), FLAG(F_SETPIPE_SZ),
	    FLAG(F_GETPIPE_SZ), FLAG(F_OFD_GETLK), FLAG(F_OFD_SETLK),	  FLAG(F_OFD_SETLKW)};
	/* F_DUPFD is 0: print_const matches it by value. */
	print_const(out, (unsigned)c, names, NFLAGS(names), "%#lx /* F_??? */");
}

static void print_ioctl_request(FILE *out, unsigned long r)
{
	static const struct flag_name names[] = {
	    {0x5401, "TCGETS"},
	    /* strace names the three by both of their meanings */
	    {0x5402, "SNDCTL_TMR_START or TCSETS"},
	    {0x5403, "SNDCTL_TMR_STOP or TCSETSW"},
	    {0x5404, "SNDCTL_TMR_CONTINUE or TCSETSF"},
	    {0x5409, "TCSBRK"},
	    {0x540a, "TCXONC"},
	    {0x540c, "TIOCEXCL"},
	    {0x540d, "TIOCNXCL"},
	    {0x5411, "TIOCOUTQ"},
	    {0x5412, "TIOCSTI"},
	    {0x540b, "TCFLSH"},
	    {0x540e, "TIOCSCTTY"},
	    {0x540f, "TIOCGPGRP"},
	    {0x5410, "TIOCSPGRP"},
	    {0x5413, "TIOCGWINSZ"},
	    {0x5414, "TIOCSWINSZ"},
	    {0x541b, "FIONREAD"},
	    {0x5421, "FIONBIO"},
	    {0x5422, "TIOCNOTTY"},
	    {0x5429, "TIOCGSID"},
	    {0x5450, "FIONCLEX"},
	    {0x5451, "FIOCLEX"},
	    {0x5452, "FIOASYNC"},
	    {0x80045430, "TIOCGPTN"},
	    {0x40045431, "TIOCSPTLCK"}};
	print_const(out, (unsigned)r, names, NFLAGS(names), "%#lx");
}

static void print_access_mode(FILE *out, unsigned long m)
{
	static const struct flag_name bits[] = {FLAG(R_OK), FLAG(W_OK), FLAG(X_OK)};
	print_flags(out, m, bits, NFLAGS(bits), "F_OK");
}

/* AT_ flags; AT_EACCESS and AT_REMOVEDIR share a bit, which one it is depends on NR. */
static void print_at_flags(FILE *out, unsigned long f, long nr)
{
	static const struct flag_name bits[] = {FLAG(AT_SYMLINK_NOFOLLOW), FLAG(AT_REMOVEDIR),
						FLAG(AT_SYMLINK_FOLLOW), FLAG(AT_NO_AUTOMOUNT),
						FLAG(AT_EMPTY_PATH)};
	static const struct flag_name eaccess[] = {FLAG(AT_SYMLINK_NOFOLLOW), FLAG(AT_EACCESS),
						   FLAG(AT_SYMLINK_FOLLOW), FLAG(AT_NO_AUTOMOUNT),
						   FLAG(AT_EMPTY_PATH)};

	if (nr == SYS_faccessat2)
		print_flags(out, f, eaccess, NFLAGS(eaccess), "0");
	else
		print_flags(out, f, bits, NFLAGS(bits), "0");
}

/* statx's flags: its sync mode, always named, then the AT_ flags. */
static void print_statx_flags(FILE *out, unsigned long f)
{
	unsigned long sync = f & 0x6000;

	fputs(sync == 0x2000   ? "AT_STATX_FORCE_SYNC"
	      : sync == 0x4000 ? "AT_STATX_DONT_SYNC"
	      : sync	       ? "AT_STATX_FORCE_SYNC|AT_STATX_DONT_SYNC"
			       : "AT_STATX_SYNC_AS_STAT",
	      out);
	if (f & ~0x6000UL) {
		fputc('|', out);
		print_at_flags(out, f & ~0x6000UL, SYS_statx);
	}
}

static const struct flag_name statx_mask[] = {
    {0xfff, "STATX_ALL"},      {0x7ff, "STATX_BASIC_STATS"}, {0x1, "STATX_TYPE"},
    {0x2, "STATX_MODE"},       {0x4, "STATX_NLINK"},	     {0x8, "STATX_UID"},
    {0x10, "STATX_GID"},       {0x20, "STATX_ATIME"},	     {0x40, "STATX_MTIME"},
    {0x80, "STATX_CTIME"},     {0x100, "STATX_INO"},	     {0x200, "STATX_SIZE"},
    {0x400, "STATX_BLOCKS"},   {0x800, "STATX_BTIME"},	     {0x1000, "STATX_MNT_ID"},
    {0x2000, "STATX_DIOALIGN"}};

static void print_statx(FILE *out, struct task *t, unsigned long addr)
{
	static const struct flag_name attrs[] = {
	    {0x4, "STATX_ATTR_COMPRESSED"},    {0x10, "STATX_ATTR_IMMUTABLE"},
	    {0x20, "STATX_ATTR_APPEND"},       {0x40, "STATX_ATTR_NODUMP"},
	    {0x800, "STATX_ATTR_ENCRYPTED"},   {0x1000, "STATX_ATTR_AUTOMOUNT"},
	    {0x2000, "STATX_ATTR_MOUNT_ROOT"}, {0x100000, "STATX_ATTR_VERITY"},
	    {0x200000, "STATX_ATTR_DAX"}};
	struct {
		uint32_t mask, blksize;
		uint64_t attributes;
		uint32_t nlink, uid, gid;
		uint16_t mode, pad;
		uint64_t ino, size;
	} x;

	if (!addr || copy_in(t->mm, &x, addr, sizeof(x))) {
		print_addr(out, addr);
		return;
	}
	fputs("{stx_mask=", out);
	print_flags(out, x.mask, statx_mask, NFLAGS(statx_mask), "0");
	fputs(", stx_attributes=", out);
	print_flags(out, x.attributes, attrs, NFLAGS(attrs), "0");
	fputs(", stx_mode=", out);
	print_mode_t(out, x.mode);
	fprintf(out, ", stx_size=%lu, ...}", (unsigned long)x.size);
}

static void print_whence(FILE *out, unsigned long w)
{
	static const struct flag_name names[] = {FLAG(SEEK_SET), FLAG(SEEK_CUR), FLAG(SEEK_END),
						 FLAG(SEEK_DATA), FLAG(SEEK_HOLE)};
	print_const(out, (unsigned)w, names, NFLAGS(names), "%#lx /* SEEK_??? */");
}

static void print_getrandom_flags(FILE *out, unsigned long f)
{
	static const struct flag_name bits[] = {
	    {1, "GRND_NONBLOCK"}, {2, "GRND_RANDOM"}, {4, "GRND_INSECURE"}};
	print_flags(out, f, bits, NFLAGS(bits), "0");
}

static void print_speed(FILE *out, unsigned sp)
{
	static const char *const low[] = {"B0",	   "B50",   "B75",    "B110",  "B134",	"B150",
					  "B200",  "B300",  "B600",   "B1200", "B1800", "B2400",
					  "B4800", "B9600", "B19200", "B38400"};
	static const char *const high[] = {"B57600",   "B115200",  "B230400",  "B460800",
					   "B500000",  "B576000",  "B921600",  "B1000000",
					   "B1152000", "B1500000", "B2000000", "B2500000",
					   "B3000000", "B3500000", "B4000000"};

	if (!(sp & 010000))
		fputs(low[sp & 017], out);
	else if ((sp & 017) >= 1)
		fputs(high[(sp & 017) - 1], out);
	else
		fprintf(out, "%#o", sp);
}

/* The head of the kernel's struct termios, as strace 6 spells it. */
static void print_termios(FILE *out, const uint32_t *tio)
{
	static const struct flag_name iflags[] = {
	    {01, "IGNBRK"},    {02, "BRKINT"},	    {04, "IGNPAR"},   {010, "PARMRK"},
	    {020, "INPCK"},    {040, "ISTRIP"},	    {0100, "INLCR"},  {0200, "IGNCR"},
	    {0400, "ICRNL"},   {01000, "IUCLC"},    {02000, "IXON"},  {04000, "IXANY"},
	    {010000, "IXOFF"}, {020000, "IMAXBEL"}, {040000, "IUTF8"}};
	static const struct flag_name oflags[] = {{01, "OPOST"},   {02, "OLCUC"},  {04, "ONLCR"},
						  {010, "OCRNL"},  {020, "ONOCR"}, {040, "ONLRET"},
						  {0100, "OFILL"}, {0200, "OFDEL"}};
	static const struct flag_name cflags[] = {
	    {0100, "CSTOPB"},	      {0200, "CREAD"},		{0400, "PARENB"},
	    {01000, "PARODD"},	      {02000, "HUPCL"},		{04000, "CLOCAL"},
	    {010000000000, "CMSPAR"}, {020000000000, "CRTSCTS"}};
	static const struct flag_name lflags[] = {
	    {01, "ISIG"},	 {02, "ICANON"},     {04, "XCASE"},	 {010, "ECHO"},
	    {020, "ECHOE"},	 {040, "ECHOK"},     {0100, "ECHONL"},	 {0200, "NOFLSH"},
	    {0100000, "IEXTEN"}, {01000, "ECHOCTL"}, {02000, "ECHOPRT"}, {04000, "ECHOKE"},
	    {010000, "FLUSHO"},	 {040000, "PENDIN"}, {0400, "TOSTOP"},	 {0200000, "EXTPROC"}};
	uint32_t o = tio[1], c = tio[2];

	fputs("{c_iflag=", out);
	print_flags(out, tio[0], iflags, NFLAGS(iflags), "0");
	/* The delay fields by value first, then the flags. */
	fprintf(out, ", c_oflag=NL%u|CR%u|TAB%u|BS%u|VT%u|FF%u", (o >> 8) & 1, (o >> 9) & 3,
		(o >> 11) & 3, (o >> 13) & 1, (o >> 14) & 1, (o >> 15) & 1);
	o &= ~0177400u;
	if (o) {
		fputc('|', out);
		print_flags(out, o, oflags, NFLAGS(oflags), "");
	}
	fputs(", c_cflag=", out);
	print_speed(out, c & 010017);
	if ((c >> 16) & 010017) {
		fputc('|', out);
		print_speed(out, (c >> 16) & 010017);
		fputs("<<IBSHIFT", out);
	}
	/* strace puts the '|' after the character size whether or not flags follow. */
	fprintf(out, "|CS%u|", 5 + ((c >> 4) & 3));
	c &= ~(010017u | (010017u << 16) | 060u);
	print_flags(out, c, cflags, NFLAGS(cflags), "");
	fputs(", c_lflag=", out);
	print_flags(out, tio[3], lflags, NFLAGS(lflags), "0");
	fputs(", ...}", out);
}

/* The kernel's struct winsize and the head of its struct termios (libc's differs). */
static void print_ioctl_arg(FILE *out, struct task *t, unsigned long req, unsigned long addr)
{
	if (req == 0x5413 || req == 0x5414) {
		uint16_t w[4];
		if (copy_in(t->mm, w, addr, sizeof(w))) {
			print_addr(out, addr);
			return;
		}
		fprintf(out, "{ws_row=%u, ws_col=%u, ws_xpixel=%u, ws_ypixel=%u}", w[0], w[1], w[2],
			w[3]);
	} else if (req >= 0x5401 && req <= 0x5404) {
		uint32_t tio[4]; /* c_iflag, c_oflag, c_cflag, c_lflag */
		if (copy_in(t->mm, tio, addr, sizeof(tio))) {
			print_addr(out, addr);
			return;
		}
		print_termios(out, tio);
	} else {
		print_addr(out, addr);
	}
}

/* Argument I of T's call in format CODES[I] (N of them), given the call's result RET. */
static void print_arg(FILE *out, struct task *t, const int *codes, int n, int i, long ret)
{
	const unsigned long *a = t->sc.args;
	bool ok = ret >= 0 && ret != -ESENTRY_BLOCK;

	if (codes[i] == EXT('l')) { /* an in/out length, shown even when the call failed */
		print_inout_len(out, t, a[i], ok);
		return;
	}
	if (is_out(codes[i]) && !ok && codes[i] != 'z') {
		print_addr(out, a[i]);
		return;
	}
	switch (codes[i]) {
	case EXT('o'): {
		static const struct flag_name ops[] = {{0, "SECCOMP_SET_MODE_STRICT"},
						       {1, "SECCOMP_SET_MODE_FILTER"},
						       {2, "SECCOMP_GET_ACTION_AVAIL"},
						       {3, "SECCOMP_GET_NOTIF_SIZES"}};
		print_const(out, (unsigned)a[i], ops, NFLAGS(ops), "%#lx /* SECCOMP_??? */");
		break;
	}
	case EXT('f'): {
		static const struct flag_name bits[] = {
		    {1, "SECCOMP_FILTER_FLAG_TSYNC"},
		    {2, "SECCOMP_FILTER_FLAG_LOG"},
		    {4, "SECCOMP_FILTER_FLAG_SPEC_ALLOW"},
		    {8, "SECCOMP_FILTER_FLAG_NEW_LISTENER"},
		    {16, "SECCOMP_FILTER_FLAG_TSYNC_ESRCH"},
		    {32, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"}};
		print_flags(out, (unsigned)a[i], bits, NFLAGS(bits), "0");
		break;
	}
	case EXT('w'): {
		static const struct flag_name which[] = {
		    {0, "PRIO_PROCESS"}, {1, "PRIO_PGRP"}, {2, "PRIO_USER"}};
		print_const(out, (unsigned)a[i], which, NFLAGS(which), "%#lx /* PRIO_??? */");
		break;
	}
	case EXT('T'):
		print_tms(out, t, a[i]);
		break;
	case EXT('g'): /* setgroups' list, as many as its first argument */
		print_gid_list(out, t, a[i], (long)(int)a[0]);
		break;
	case EXT('G'): /* getgroups' list: as many as it returned, if it was asked for them */
		if ((int)a[0] == 0)
			print_addr(out, a[i]);
		else
			print_gid_list(out, t, a[i], ret);
		break;
	case EXT('i'):
		print_sysinfo(out, t, a[i]);
		break;
	case EXT('s'):
		print_statfs(out, t, a[i]);
		break;
	case EXT('a'): /* a CPU set, as many bytes as the call returned */
		print_cpu_set(out, t, a[i], ret);
		break;
	case 'd':
		fprintf(out, "%d", (int)a[i]);
		break;
	case 'u':
		fprintf(out, "%lu", a[i]);
		break;
	case 'o':
		fprintf(out, "%#03lo", a[i]);
		break;
	case 'f':
		if ((int)a[i] == AT_FDCWD)
			fputs("AT_FDCWD", out);
		else
			fprintf(out, "%d", (int)a[i]);
		break;
	case 's':
		print_path(out, t, a[i]);
		break;
	case '#': {
		static const struct flag_name advice[] = {
		    {0, "POSIX_FADV_NORMAL"},	  {1, "POSIX_FADV_RANDOM"},
		    {2, "POSIX_FADV_SEQUENTIAL"}, {3, "POSIX_FADV_WILLNEED"},
		    {4, "POSIX_FADV_DONTNEED"},	  {5, "POSIX_FADV_NOREUSE"}};
		print_const(out, (unsigned)a[i], advice, NFLAGS(advice),
			    "%#lx /* POSIX_FADV_??? */");
		break;
	}
	case 'b':
		if ((long)a[i + 1] < 0)
			print_addr(out, a[i]);
		else
			print_string(out, t, a[i], (long)a[i + 1]);
		break;
	case 'B': /* what a read wrote: RET bytes */
		print_string(out, t, a[i], ret);
		break;
	case 'g': /* random bytes, in hex as strace shows them */
		print_string_ex(out, t, a[i], ret, true);
		break;
	case 'Z': /* a string the call wrote */
		print_string(out, t, a[i], -1);
		break;
	case 'F':
		strace_print_open_flags(out, a[i]);
		break;
	case 'K':
		print_fd_flags(out, a[i]);
		break;
	case 'P':
		print_prot(out, a[i]);
		break;
	case 'M':
		print_map_flags(out, a[i]);
		break;
	case 'S':
		strace_print_signal(out, (int)a[i]);
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
		print_addr(out, a[i]);
		break;
	case 'R':
		print_arch_prctl_code(out, a[i]);
		break;
	case 'n':
		print_prctl_option(out, a[i]);
		break;
	case 'L':
		print_rlimit_resource(out, a[i]);
		break;
	case 'l':
	case 'r':
		print_rlimit(out, t, a[i]);
		break;
	case 'W':
		print_wait_options(out, a[i]);
		break;
	case 'w':
		if (ret > 0)
			print_wait_status(out, t, a[i]);
		else
			print_addr(out, a[i]);
		break;
	case 'G':
		print_getrandom_flags(out, a[i]);
		break;
	case 'a':
	case 'q':
		print_sigaction(out, t, a[i]);
		break;
	case 'k':
	case 'm':
		print_sigset(out, t, a[i], a[n - 1]); /* sigsetsize: the last one */
		break;
	case 't':
	case 'V':
		print_timespec(out, t, a[i]);
		break;
	case 'z': /* what is left of a sleep: written when a signal ended it */
		if (ret < 0 && ret != -ESENTRY_BLOCK)
			print_timespec(out, t, a[i]);
		else
			print_addr(out, a[i]);
		break;
	case 'c':
		print_clockid(out, (int)a[i]);
		break;
	case 'T':
		print_at_flags(out, a[i], t->sc.nr);
		break;
	case '%':
		print_statx_flags(out, a[i]);
		break;
	case '*':
		print_sockaddr(out, t, a[i], (long)a[i + 1]);
		break;
	case '$': {
		static const struct flag_name bits[] = {{0x1, "MSG_OOB"},
							{0x2, "MSG_PEEK"},
							{0x4, "MSG_DONTROUTE"},
							{0x8, "MSG_CTRUNC"},
							{0x10, "MSG_PROXY"},
							{0x20, "MSG_TRUNC"},
							{0x40, "MSG_DONTWAIT"},
							{0x80, "MSG_EOR"},
							{0x100, "MSG_WAITALL"},
							{0x200, "MSG_FIN"},
							{0x400, "MSG_SYN"},
							{0x800, "MSG_CONFIRM"},
							{0x1000, "MSG_RST"},
							{0x2000, "MSG_ERRQUEUE"},
							{0x4000, "MSG_NOSIGNAL"},
							{0x8000, "MSG_MORE"},
							{0x10000, "MSG_WAITFORONE"},
							{0x40000000, "MSG_CMSG_CLOEXEC"}};
		print_flags(out, a[i], bits, NFLAGS(bits), "0");
		break;
	}
	case '~': {
		static const struct flag_name how[] = {
		    {0, "SHUT_RD"}, {1, "SHUT_WR"}, {2, "SHUT_RDWR"}};
		print_const(out, (unsigned)a[i], how, NFLAGS(how), "%#lx /* SHUT_??? */");
		break;
	}
	case '&':
		print_flags(out, a[i], statx_mask, NFLAGS(statx_mask), "0");
		break;
	case '@':
		print_statx(out, t, a[i]);
		break;
	case 'O':
		print_access_mode(out, a[i]);
		break;
	case 'C':
		print_fcntl_cmd(out, a[i]);
		break;
	case 'X':
		if (a[i] == FD_CLOEXEC)
			fputs("FD_CLOEXEC", out);
		else
			fprintf(out, "%#lx", a[i]);
		break;
	case 'Y':
	case '?': /* what an ioctl reads */
		print_ioctl_arg(out, t, a[1], a[i]);
		break;
	case '-': {
		static const struct flag_name queues[] = {
		    {0, "TCIFLUSH"}, {1, "TCOFLUSH"}, {2, "TCIOFLUSH"}};
		print_const(out, (unsigned)a[i], queues, NFLAGS(queues), "%lu");
		break;
	}
	case '[':
		print_fdset(out, t, a[i], (long)(int)a[0], NULL, NULL);
		break;
	case '(':
		print_timeval(out, t, a[i]);
		break;
	case ']':
		print_pselect_sigmask(out, t, a[i]);
		break;
	case '^':
	case '_':
		print_stack_t(out, t, a[i]);
		break;
	case '!': {
		static const struct flag_name which[] = {
		    {0, "ITIMER_REAL"}, {1, "ITIMER_VIRTUAL"}, {2, "ITIMER_PROF"}};
		print_const(out, (unsigned)a[i], which, NFLAGS(which), "%#lx /* ITIMER_??? */");
		break;
	}
	case '{':
	case '}':
		print_itimerval(out, t, a[i]);
		break;
	case '.':
		print_rusage(out, t, a[i]);
		break;
	case ')': {
		static const struct flag_name who[] = {
		    {0, "RUSAGE_SELF"}, {-1UL, "RUSAGE_CHILDREN"}, {1, "RUSAGE_THREAD"}};
		print_const(out, (unsigned long)(long)(int)a[i], who, NFLAGS(who), "%ld");
		break;
	}
	case '<':
		print_const(out, (unsigned)a[i], sol_levels, NFLAGS(sol_levels), "%lu");
		break;
	case '>':
		print_sockopt_name(out, a[1], a[i]);
		break;
	case '+': /* setsockopt's value, its length next */
		print_sockopt_value(out, t, a[i], (long)(int)a[i + 1]);
		break;
	case '=':
		print_getsockopt_value(out, t, a[i]);
		break;
	case ':':
		print_int_array(out, t, a[i], 1);
		break;
	case '|':
		print_mount_flags(out, a[i]);
		break;
	case '/':
		print_umount_flags(out, a[i]);
		break;
	case '"': /* a string the call reads */
		print_string(out, t, a[i], -1);
		break;
	case '\'': /* a socket address the call wrote, its length at the next argument */ {
		uint32_t len;
		if (!a[i] || !a[i + 1] || copy_in(t->mm, &len, a[i + 1], sizeof(len)))
			print_addr(out, a[i]);
		else
			print_sockaddr(out, t, a[i], len);
		break;
	}
	case ';':
		print_msghdr(out, t, a[i], ret, false);
		break;
	case '`':
		print_msghdr(out, t, a[i], ret, true);
		break;
	case 'I':
		print_ioctl_request(out, a[i]);
		break;
	case 'j':
		print_int_array(out, t, a[i], t->sc.nr == SYS_ioctl ? 1 : 2);
		break;
	case 'J':
		print_int_array(out, t, a[i], 1);
		break;
	case 'y':
		print_stat(out, t, a[i]);
		break;
	case 'N':
		print_uname(out, t, a[i]);
		break;
	case 'D':
		print_dirents(out, t, a[i], ret);
		break;
	case 'e':
		print_whence(out, a[i]);
		break;
	case 'Q':
		strace_print_pollfds(out, t, a[i], a[i + 1], false);
		break;
	case 'U':
		print_futex_op(out, a[i]);
		break;
	case '0': /* utimensat's two times */
		print_utimes(out, t, a[i]);
		break;
	case 'h': /* futex's val3, its sixth argument (strace leaves out the unused uaddr2) */
		if ((uint32_t)a[5] == 0xffffffff)
			fputs("FUTEX_BITSET_MATCH_ANY", out);
		else
			fprintf(out, "%#x", (unsigned)a[5]);
		break;
	case 'v': /* iovecs read from: their data, as many bytes as the call was given */
		print_iovecs(out, t, a[i], (long)a[i + 1], -1);
		break;
	case 'i': /* iovecs written to: the RET bytes the call put there */
		print_iovecs(out, t, a[i], (long)a[i + 1], ret);
		break;
	case '1':
		print_const(out, (unsigned)a[i], families, NFLAGS(families), "%#lx /* AF_??? */");
		break;
	case '2':
		print_socket_type(out, a[i]);
		break;
	case ',': {
		static const struct flag_name bits[] = {{O_CLOEXEC, "SOCK_CLOEXEC"},
							{O_NONBLOCK, "SOCK_NONBLOCK"}};
		print_flags(out, a[i], bits, NFLAGS(bits), "0");
		break;
	}
	case '3':
		if ((int)a[0] == AF_INET || (int)a[0] == AF_INET6)
			print_const(out, (unsigned)a[i], protocols, NFLAGS(protocols), "%lu");
		else
			fprintf(out, "%d", (int)a[i]);
		break;
	case '4': {
		static const struct flag_name bits[] = {
		    {1, "EFD_SEMAPHORE"}, {O_CLOEXEC, "EFD_CLOEXEC"}, {O_NONBLOCK, "EFD_NONBLOCK"}};
		print_flags(out, a[i], bits, NFLAGS(bits), "0");
		break;
	}
	case '5': {
		static const struct flag_name bits[] = {{O_CLOEXEC, "EPOLL_CLOEXEC"}};
		print_flags(out, a[i], bits, NFLAGS(bits), "0");
		break;
	}
	case '6': {
		static const struct flag_name ops[] = {
		    {1, "EPOLL_CTL_ADD"}, {2, "EPOLL_CTL_DEL"}, {3, "EPOLL_CTL_MOD"}};
		print_const(out, (unsigned)a[i], ops, NFLAGS(ops), "%#lx /* EPOLL_CTL_??? */");
		break;
	}
	case '7':
		print_epoll_events(out, t, a[i], 1);
		break;
	case '8':
		print_epoll_events(out, t, a[i], ret);
		break;
	case '9':
		print_const(out, (unsigned)a[i], advice, NFLAGS(advice), "%#lx /* MADV_??? */");
		break;
	default:
		fprintf(out, "%#lx", a[i]);
	}
}

/* clone's arguments by name, as strace shows them (x86_64 order: flags, stack, parent_tid,
 * child_tid, tls). */
static const struct flag_name clone_flags[] = {{0x100, "CLONE_VM"},
					       {0x200, "CLONE_FS"},
					       {0x400, "CLONE_FILES"},
					       {0x800, "CLONE_SIGHAND"},
					       {0x1000, "CLONE_PIDFD"},
					       {0x2000, "CLONE_PTRACE"},
					       {0x4000, "CLONE_VFORK"},
					       {0x8000, "CLONE_PARENT"},
					       {0x10000, "CLONE_THREAD"},
					       {0x20000, "CLONE_NEWNS"},
					       {0x40000, "CLONE_SYSVSEM"},
					       {0x80000, "CLONE_SETTLS"},
					       {0x100000, "CLONE_PARENT_SETTID"},
					       {0x200000, "CLONE_CHILD_CLEARTID"},
					       {0x400000, "CLONE_DETACHED"},
					       {0x800000, "CLONE_UNTRACED"},
					       {0x1000000, "CLONE_CHILD_SETTID"},
					       {0x2000000, "CLONE_NEWCGROUP"},
					       {0x4000000, "CLONE_NEWUTS"},
					       {0x8000000, "CLONE_NEWIPC"},
					       {0x10000000, "CLONE_NEWUSER"},
					       {0x20000000, "CLONE_NEWPID"},
					       {0x40000000, "CLONE_NEWNET"},
					       {0x80000000, "CLONE_IO"}};

static void print_clone(FILE *out, struct task *t, long ret)
{
	const unsigned long *a = t->sc.args;
	unsigned long flags = a[0] & ~0xffUL, sig = a[0] & 0xff;

	fputs("child_stack=", out);
	print_addr(out, a[1]);
	fputs(", flags=", out);
	if (flags)
		print_flags(out, flags, clone_flags, NFLAGS(clone_flags), "0");
	if (sig) {
		if (flags)
			fputc('|', out);
		strace_print_signal(out, (long)sig);
	} else if (!flags) {
		fputc('0', out);
	}
	if (a[0] & CLONE_PARENT_SETTID) {
		fputs(", parent_tid=", out);
		if (ret > 0)
			print_int_array(out, t, a[2], 1);
		else
			print_addr(out, a[2]);
	}
	if (a[0] & CLONE_SETTLS)
		fprintf(out, ", tls=%#lx", a[4]);
	if (a[0] & (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID))
		fprintf(out, ", child_tidptr=%#lx", a[3]);
}

/* clone3's struct clone_args, as strace shows it; after the call, the parent_tid it wrote. */
static void print_clone3(FILE *out, struct task *t, long ret)
{
	struct {
		uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	} c;
	unsigned long addr = t->sc.args[0];

	if (t->sc.args[1] < sizeof(c) || copy_in(t->mm, &c, addr, sizeof(c))) {
		print_addr(out, addr);
		fprintf(out, ", %lu", t->sc.args[1]);
		return;
	}
	fputs("{flags=", out);
	print_flags(out, c.flags, clone_flags, NFLAGS(clone_flags), "0");
	if (c.flags & CLONE_PIDFD)
		fprintf(out, ", pidfd=%#lx", (unsigned long)c.pidfd);
	if (c.flags & (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID))
		fprintf(out, ", child_tid=%#lx", (unsigned long)c.child_tid);
	if (c.flags & CLONE_PARENT_SETTID)
		fprintf(out, ", parent_tid=%#lx", (unsigned long)c.parent_tid);
	fputs(", exit_signal=", out);
	if (c.exit_signal)
		strace_print_signal(out, (long)c.exit_signal);
	else
		fputc('0', out);
	fputs(", stack=", out);
	print_addr(out, c.stack);
	fprintf(out, ", stack_size=%#lx", (unsigned long)c.stack_size);
	if (c.flags & CLONE_SETTLS)
		fprintf(out, ", tls=%#lx", (unsigned long)c.tls);
	fputc('}', out);
	if ((c.flags & CLONE_PARENT_SETTID) && ret > 0) {
		fputs(" => {parent_tid=", out);
		print_int_array(out, t, c.parent_tid, 1);
		fputc('}', out);
	}
	fprintf(out, ", %lu", t->sc.args[1]);
}

bool strace_print_detail(FILE *out, struct task *t, long ret)
{
	if ((t->sc.nr == SYS_select || t->sc.nr == SYS_pselect6) && ret >= 0) {
		fprintf(out, "%ld", ret);
		print_select_result(out, t, ret);
		return true;
	}
	return false;
}

/* The part PART of T's call NAME(ARGS): on STRACE_ENTRY its name and the arguments it reads (each
 * followed by ", " when more follow); on STRACE_EXIT those it writes, then the ")". */
void strace_print_call(FILE *out, struct task *t, long ret, enum strace_part part)
{
	const struct syscall_def *def = syscall_def(t->sc.nr);
	const char *name = syscall_name(t->sc.nr);
	const unsigned long *a = t->sc.args;
	int codes[6];
	int n, k;

	if (!def) {
		if (part & STRACE_ENTRY)
			fprintf(out, "%s(%#lx, %#lx, %#lx, ...", name ? name : "syscall", a[0],
				a[1], a[2]);
		if (part & STRACE_EXIT)
			fputc(')', out);
		return;
	}
	if (part & STRACE_ENTRY)
		fprintf(out, "%s(", def->name);
	if (t->sc.nr == SYS_clone || t->sc.nr == SYS_clone3 || t->sc.nr == SYS_rt_sigreturn) {
		if (part & STRACE_EXIT) {
			if (t->sc.nr == SYS_clone) {
				print_clone(out, t, ret);
			} else if (t->sc.nr == SYS_clone3) {
				print_clone3(out, t, ret);
			} else {
				/* The mask the frame restored, which is now the task's. */
				uint64_t mask = t->sigmask;
				fputs("{mask=", out);
				print_sigset_value(out, &mask, sizeof(mask));
				fputc('}', out);
			}
			fputc(')', out);
		}
		return;
	}
	n = format_codes(call_format(t, def), codes);
	for (k = 0; k < n && !is_out(codes[k]); k++)
		;
	if (part == STRACE_ENTRY)
		for (int i = 0; i < n; i++)
			if (codes[i] == EXT('l'))
				stash_entry_len(t, a[i]);
	for (int i = 0; i < n; i++) {
		if (!(part & (i < k ? STRACE_ENTRY : STRACE_EXIT)))
			continue;
		if (i && (i != k || part == STRACE_WHOLE))
			fputs(", ", out);
		print_arg(out, t, codes, n, i, ret);
		if (part == STRACE_ENTRY && i == k - 1 && k < n)
			fputs(", ", out);
	}
	if (part & STRACE_EXIT)
		fputc(')', out);
}
