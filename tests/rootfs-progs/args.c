/* args: prints what execve handed the guest, one item per line, so e2e scenarios can check
 * argv and the environment (including minisentry's --env) with plain grep. */
#include <stdio.h>
#include <stdlib.h>

static const char *const shown_env[] = {"FOO", "HOME", "PATH", "PWD", "TERM"};

int main(int argc, char **argv)
{
	printf("argc=%d\n", argc);
	for (int i = 0; i < argc; i++)
		printf("argv[%d]=%s\n", i, argv[i]);
	for (size_t i = 0; i < sizeof(shown_env) / sizeof(shown_env[0]); i++) {
		const char *v = getenv(shown_env[i]);
		if (v)
			printf("%s=%s\n", shown_env[i], v);
		else
			printf("%s unset\n", shown_env[i]);
	}
	return 0;
}
