/* hello: the smallest musl-dynamic guest. Its one line proves that minisentry loaded the
 * musl interpreter, relocated libc and served write and exit_group. */
#include <stdio.h>

int main(void)
{
	puts("hello from musl");
	return 0;
}
