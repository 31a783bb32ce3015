/*
 * t_argv_env: the runner starts every test as
 *     /opt/conformance/NAME one "two words" three
 * with exactly the environment PATH=/usr/sbin:/usr/bin:/sbin:/bin, HOME=/root,
 * CONF_TEST=hello conformance and CONF_MODE=native, sandbox or save-restore (minisentry's
 * defaults are PATH and HOME, which --env overrides). argv and envp are NULL-terminated,
 * environ is envp, and as on Linux the argument and environment strings are packed one after
 * another on the stack, where a checkpoint and restore leave them.
 */
#include "check.h"

extern char **environ;

int main(int argc, char **argv, char **envp)
{
	maybe_save(); /* the initial stack as the loader left it */
	CHECK_EQ(argc, 4);
	if (argc != 4)
		return check_done();
	CHECK(strncmp(argv[0], "/opt/conformance/t_argv_env.", 28) == 0);
	CHECK_STREQ(argv[1], "one");
	CHECK_STREQ(argv[2], "two words");
	CHECK_STREQ(argv[3], "three");
	CHECK(argv[argc] == NULL);

	CHECK(envp == environ);
	CHECK(envp == argv + argc + 1);
	int n = 0;
	while (envp[n])
		n++;
	CHECK_EQ(n, 4);
	CHECK_STREQ(getenv("PATH"), "/usr/sbin:/usr/bin:/sbin:/bin");
	CHECK_STREQ(getenv("CONF_TEST"), "hello conformance");
	CHECK_STREQ(getenv("HOME"), "/root");
	/* The mode in_sandbox() and maybe_save() go by: without it, they could not fail. */
	CHECK(conf_mode_is("native") || conf_mode_is("sandbox") || conf_mode_is("save-restore"));
	CHECK(getenv("TERM") == NULL);

	/* Strings back to back: argv[0] NUL argv[1] NUL ... envp[0] NUL ... */
	char *next = argv[0];
	for (int i = 0; i < argc; i++) {
		CHECK(argv[i] == next);
		next = argv[i] + strlen(argv[i]) + 1;
	}
	for (int i = 0; i < n; i++) {
		CHECK(envp[i] == next);
		next = envp[i] + strlen(envp[i]) + 1;
	}
	CHECK((char *)argv < argv[0]);
	return check_done();
}
