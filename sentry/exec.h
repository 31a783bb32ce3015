/* exec: loading an ELF executable (static, static-pie, or dynamic through its PT_INTERP) into a
 * fresh address space with the initial stack Linux builds: argv, envp, auxv. */
#ifndef SENTRY_EXEC_H
#define SENTRY_EXEC_H

#include <stddef.h>

struct task;

/* Replaces T's address space with PATH run with ARGV and ENVP (NULL-terminated). On failure
 * T is unchanged and the result is the errno Linux's execve gives (ENOENT, EACCES, ENOEXEC,
 * E2BIG, ...). On success T is stopped at the new program's entry point. */
int exec_load(struct task *t, const char *path, char *const argv[], char *const envp[]);

/* Finds CMD (no slash) in the colon-separated directories of PATH_ENV inside T's root; writes
 * the full path into OUT. Returns 0 or -ENOENT. */
int exec_find_in_path(struct task *t, const char *cmd, const char *path_env, char *out,
		      size_t size);

#endif
