/* Calls an unimplemented syscall number three times and prints what it got: the sandbox must
 * answer ENOSYS every time and name the syscall on stderr only once. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	for (int i = 0; i < 3; i++) {
		long r = syscall(1000);
		printf("%ld %s\n", r, r == -1 && errno == ENOSYS ? "ENOSYS" : "other");
	}
	return 0;
}
