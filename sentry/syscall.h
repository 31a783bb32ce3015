/* The syscall table: one row per x86_64 syscall number with its name, handler and argument
 * formats (which drive --strace). The table is the index of the kernel: a syscall without a
 * handler returns -ENOSYS and is named once on stderr. */
#ifndef SENTRY_SYSCALL_H
#define SENTRY_SYSCALL_H

struct task;

typedef long (*syscall_fn)(struct task *t, const unsigned long *a);

/* Argument format letters: d int, u unsigned, x hex, p pointer, s string, b buffer whose
 * length is the next argument, f fd (AT_FDCWD), o octal mode, F open flags. */
struct syscall_def {
	const char *name;
	syscall_fn fn;
	const char *args;
	char ret; /* 'd' (default) or 'x' for addresses */
};

#define SYSCALL_MAX 512

const struct syscall_def *syscall_def(long nr);
const char *syscall_name(long nr);

/* Serves T's current syscall (t->sc). Returns the guest-visible result, or -ESENTRY_BLOCK. */
long syscall_dispatch(struct task *t);

/* --strace: prints one finished syscall. */
void strace_print(struct task *t, long ret);

#endif
