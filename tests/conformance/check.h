/*
 * check.h: the conformance suite's assertion header. Each t_*.c test is one translation unit
 * that includes this, runs CHECK* assertions (a failure prints file:line, the expression and
 * the values, and is counted), and ends with `return check_done();`, which prints
 * `ok NAME` or `FAIL NAME (k failures)`. Output goes straight to fd 1 with dprintf, so
 * nothing is lost in a stdio buffer if a test crashes.
 */
#ifndef CONFORMANCE_CHECK_H
#define CONFORMANCE_CHECK_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* An address no test maps: raw syscalls given it must fail with EFAULT. */
#define BAD_PTR ((void *)1)

/*
 * The syscall number maybe_save() uses; never valid on Linux, so natively the kernel
 * rejects it with ENOSYS. `minisentry run --save-restore-test` recognises it and checkpoints,
 * tears down and restores the sandbox before returning.
 */
#define CHECK_SAVE_SYSCALL (-1 - 0x5a5)
/* Its argument at the early point below (any other save point passes 0). */
#define CHECK_SAVE_EARLY 0x5a5601d

static int check_failures;

#define CHECK_FAIL_(fmt, ...)                                                                      \
	(check_failures++, dprintf(1, "%s:%d: " fmt "\n", __FILE__, __LINE__, __VA_ARGS__))

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			CHECK_FAIL_("CHECK(%s) failed", #cond);                                    \
	} while (0)

#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		long long a_ = (long long)(a), b_ = (long long)(b);                                \
		if (a_ != b_)                                                                      \
			CHECK_FAIL_("CHECK_EQ(%s, %s) failed: %lld != %lld (%#llx != %#llx)", #a,  \
				    #b, a_, b_, a_, b_);                                           \
	} while (0)

#define CHECK_STREQ(a, b)                                                                          \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		if (!a_ || !b_ || strcmp(a_, b_) != 0)                                             \
			CHECK_FAIL_("CHECK_STREQ(%s, %s) failed: \"%s\" != \"%s\"", #a, #b,        \
				    a_ ? a_ : "(null)", b_ ? b_ : "(null)");                       \
	} while (0)

/* expr must return -1 (or MAP_FAILED) and set errno to err. */
#define CHECK_ERR(expr, err)                                                                       \
	do {                                                                                       \
		errno = 0;                                                                         \
		long r_ = (long)(expr);                                                            \
		int e_ = errno;                                                                    \
		if (r_ != -1 || e_ != (err))                                                       \
			CHECK_FAIL_("CHECK_ERR(%s, %s) failed: returned %ld, errno %d (%s)",       \
				    #expr, #err, r_, e_, strerror(e_));                            \
	} while (0)

/* How run.sh started us: CONF_MODE is "native", "sandbox" or "save-restore" (unset when a
 * test is run by hand). */
static inline int conf_mode_is(const char *mode)
{
	const char *m = getenv("CONF_MODE");

	return m && strcmp(m, mode) == 0;
}

/*
 * True under minisentry, with or without --save-restore-test. A subject that only minisentry
 * has (/proc/all) is absent natively and must be there in the sandbox: a test checks it
 * whenever in_sandbox(), never just where it happens to exist.
 */
static inline int in_sandbox(void)
{
	return conf_mode_is("sandbox") || conf_mode_is("save-restore");
}

/*
 * A save point: under --save-restore-test, checkpoints, tears down and restores the whole
 * sandbox, then returns 0; otherwise ENOSYS. Place it where the state the test is about is
 * live. In save-restore mode a call that took no checkpoint is a failure, reported with
 * "FAIL" so that run.sh sees it even from a child whose failures are not counted.
 */
#define maybe_save() maybe_save_(__FILE__, __LINE__)

static inline void maybe_save_(const char *file, int line)
{
	int saved = errno;
	long r = syscall(CHECK_SAVE_SYSCALL, 0L);

	if (r != 0 && conf_mode_is("save-restore")) {
		check_failures++;
		dprintf(1, "%s:%d: FAIL: maybe_save() took no checkpoint: %s\n", file, line,
			strerror(errno));
	}
	errno = saved;
}

/*
 * The early point, before main: `--save-restore-test=slots` takes its golden image here and
 * restores it through a slot, so that every maybe_save() after it is a delta against it with
 * what main has done since (restored through that slot too); the other variants do nothing
 * here.
 */
__attribute__((constructor)) static void check_early_point_(void)
{
	int saved = errno;

	if (conf_mode_is("save-restore"))
		syscall(CHECK_SAVE_SYSCALL, CHECK_SAVE_EARLY);
	errno = saved;
}

/* The test's name is its source file's, without directory and ".c". */
static inline int check_done_(const char *file)
{
	const char *name = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	int len = (int)strcspn(name, ".");

	if (check_failures == 0) {
		dprintf(1, "ok %.*s\n", len, name);
		return 0;
	}
	dprintf(1, "FAIL %.*s (%d failures)\n", len, name, check_failures);
	return 1;
}

#define check_done() check_done_(__FILE__)

#endif
