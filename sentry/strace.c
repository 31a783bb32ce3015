/* --strace: prints each finished guest syscall on stderr the way strace(1) does, driven by the
 * argument formats in the syscall table, and marks a call that met a part this kernel does not
 * implement. Strings are read from guest memory with the same checked accessors the handlers
 * use. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "sentry/mm.h"
#include "sentry/syscall.h"
#include "sentry/task.h"
#include "sentry/kernel.h"

static void print_string(FILE *out, struct task *t, unsigned long addr, long len)
{
	char buf[40];
	int n = len < 0 || len > 32 ? 32 : (int)len;

	if (len < 0) { /* NUL-terminated */
		long l = copy_string_in(t->mm, buf, addr, sizeof(buf));
		if (l == -EFAULT) {
			fprintf(out, "%#lx", addr);
			return;
		}
		n = l < 0 ? 32 : (int)l;
	} else if (copy_in(t->mm, buf, addr, n)) {
		fprintf(out, "%#lx", addr);
		return;
	}
	fputc('"', out);
	for (int i = 0; i < n; i++) {
		unsigned char c = buf[i];
		if (c == '\n')
			fputs("\\n", out);
		else if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 32 || c >= 127)
			fprintf(out, "\\%o", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
	if ((len < 0 && n == 32) || len > 32)
		fputs("...", out);
}

static void print_open_flags(FILE *out, unsigned long f)
{
	static const struct {
		int bit;
		const char *name;
	} bits[] = {
	    {O_CREAT, "O_CREAT"},	  {O_EXCL, "O_EXCL"},	       {O_NOCTTY, "O_NOCTTY"},
	    {O_TRUNC, "O_TRUNC"},	  {O_APPEND, "O_APPEND"},      {O_NONBLOCK, "O_NONBLOCK"},
	    {O_DIRECTORY, "O_DIRECTORY"}, {O_NOFOLLOW, "O_NOFOLLOW"},  {O_CLOEXEC, "O_CLOEXEC"},
	    {O_PATH, "O_PATH"},		  {O_LARGEFILE, "O_LARGEFILE"}};
	const char *acc[] = {"O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE"};

	fputs(acc[f & O_ACCMODE], out);
	f &= ~(unsigned long)O_ACCMODE;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (f & bits[i].bit) {
			fprintf(out, "|%s", bits[i].name);
			f &= ~(unsigned long)bits[i].bit;
		}
	if (f)
		fprintf(out, "|%#lx", f);
}

void strace_print(struct task *t, long ret)
{
	const struct syscall_def *def = syscall_def(t->sc.nr);
	const char *name = syscall_name(t->sc.nr);
	const unsigned long *a = t->sc.args;
	FILE *out = stderr;

	fprintf(out, "[pid %d] ", t->tid);
	if (!def) {
		fprintf(out, "%s(%#lx, %#lx, %#lx, ...)", name ? name : "syscall", a[0], a[1],
			a[2]);
	} else {
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
	if (ret == -ESENTRY_BLOCK)
		fputs(" <blocks>", out);
	else if (t->exited)
		fputs(" = ?", out);
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
}
