/*
 * t_mprotect: changing protection keeps contents and splits mappings where asked; unaligned
 * addresses and unknown bits give EINVAL, a range with unmapped pages gives ENOMEM, a zero
 * length is a no-op.
 */
#include "check.h"
#include <sys/mman.h>

#define PAGE 4096UL

int main(void)
{
	unsigned char *a =
	    mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(a != MAP_FAILED);
	memset(a, 0x33, 4 * PAGE);

	/* Read-only then back: contents survive, writes work again. */
	CHECK_EQ(syscall(SYS_mprotect, a + PAGE, PAGE, PROT_READ), 0);
	CHECK_EQ(a[PAGE], 0x33);
	CHECK_EQ(syscall(SYS_mprotect, a + PAGE, PAGE, PROT_NONE), 0);
	maybe_save();
	CHECK_EQ(syscall(SYS_mprotect, a + PAGE, PAGE, PROT_READ | PROT_WRITE), 0);
	CHECK_EQ(a[PAGE], 0x33);
	a[PAGE] = 0x44;
	CHECK_EQ(a[PAGE], 0x44);
	CHECK_EQ(a[0], 0x33);
	CHECK_EQ(a[2 * PAGE], 0x33);

	/* A length that is not a page multiple is rounded up. */
	CHECK_EQ(syscall(SYS_mprotect, a, PAGE + 1, PROT_READ), 0);
	CHECK_EQ(syscall(SYS_mprotect, a, 2 * PAGE, PROT_READ | PROT_WRITE), 0);
	a[PAGE + 1] = 1;
	CHECK_EQ(syscall(SYS_mprotect, a, 0, PROT_READ), 0);
	a[0] = 2;
	CHECK_EQ(a[0], 2);

	CHECK_ERR(syscall(SYS_mprotect, a + 1, PAGE, PROT_READ), EINVAL);
	CHECK_ERR(syscall(SYS_mprotect, a, PAGE, 0x40), EINVAL);
	/* (Not through libc: musl's mprotect rounds the start down to a page.) */

	/* A hole anywhere in the range is ENOMEM. */
	CHECK_EQ(munmap(a + 3 * PAGE, PAGE), 0);
	CHECK_ERR(syscall(SYS_mprotect, a + 3 * PAGE, PAGE, PROT_READ), ENOMEM);
	CHECK_ERR(syscall(SYS_mprotect, a + 2 * PAGE, 2 * PAGE, PROT_READ), ENOMEM);
	CHECK_ERR(syscall(SYS_mprotect, a, 4 * PAGE, PROT_READ | PROT_WRITE), ENOMEM);
	CHECK_EQ(a[2 * PAGE], 0x33);

	CHECK_EQ(munmap(a, 3 * PAGE), 0);
	CHECK_ERR(syscall(SYS_mprotect, a, PAGE, PROT_READ), ENOMEM);
	return check_done();
}
