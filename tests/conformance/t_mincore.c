/*
 * t_mincore: mincore reports a touched anonymous page resident and an untouched one not, also
 * across a checkpoint; a dropped page (MADV_DONTNEED) is no longer resident. An unaligned start
 * is EINVAL, an unmapped page ENOMEM (the vector is written up to it), a bad vector EFAULT, and
 * the length is rounded up to whole pages.
 */
#include "check.h"
#include <sys/mman.h>

#define PAGE 4096UL

int main(void)
{
	unsigned char vec[8];
	unsigned char *a =
	    mmap(NULL, 6 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(a != MAP_FAILED);
	a[0] = 1;
	a[2 * PAGE] = 2;
	memset(vec, 0xff, sizeof(vec));
	CHECK_EQ(mincore(a, 4 * PAGE, vec), 0);
	CHECK_EQ(vec[0] & 1, 1);
	CHECK_EQ(vec[1] & 1, 0);
	CHECK_EQ(vec[2] & 1, 1);
	CHECK_EQ(vec[3] & 1, 0);
	CHECK_EQ(vec[4], 0xff); /* no more bytes than pages */

	maybe_save();
	memset(vec, 0xff, sizeof(vec));
	CHECK_EQ(mincore(a, 3 * PAGE, vec), 0);
	CHECK_EQ(vec[0] & 1, 1);
	CHECK_EQ(vec[2] & 1, 1);
	CHECK_EQ(a[2 * PAGE], 2);

	/* The length is rounded up: one byte asks for the page. */
	memset(vec, 0xff, sizeof(vec));
	CHECK_EQ(mincore(a + 2 * PAGE, 1, vec), 0);
	CHECK_EQ(vec[0] & 1, 1);
	CHECK_EQ(vec[1], 0xff);
	CHECK_EQ(mincore(a, 0, vec), 0);

	/* A page given back is not resident. */
	CHECK_EQ(madvise(a + 2 * PAGE, PAGE, MADV_DONTNEED), 0);
	CHECK_EQ(mincore(a + 2 * PAGE, PAGE, vec), 0);
	CHECK_EQ(vec[0] & 1, 0);

	/* Read-only and inaccessible mappings are reported too. */
	CHECK_EQ(mprotect(a, PAGE, PROT_NONE), 0);
	CHECK_EQ(mincore(a, PAGE, vec), 0);
	CHECK_EQ(vec[0] & 1, 1);
	CHECK_EQ(mprotect(a, PAGE, PROT_READ | PROT_WRITE), 0);

	/* Errors. */
	CHECK_ERR(mincore(a + 1, PAGE, vec), EINVAL);
	CHECK_ERR(mincore(a, PAGE, BAD_PTR), EFAULT);
	CHECK_EQ(munmap(a + 4 * PAGE, PAGE), 0);
	memset(vec, 0xff, sizeof(vec));
	CHECK_ERR(mincore(a, 6 * PAGE, vec), ENOMEM);
	CHECK_EQ(vec[0] & 1, 1); /* the pages before the hole were written */
	CHECK_EQ(vec[3] & 1, 0);
	CHECK_ERR(mincore(a + 4 * PAGE, PAGE, vec), ENOMEM);
	CHECK_ERR(mincore((void *)0x7ffffffff000UL, 2 * PAGE, vec), ENOMEM);
	CHECK_ERR(mincore((void *)(~0UL & ~(PAGE - 1)), PAGE, vec), ENOMEM);

	CHECK_EQ(munmap(a, 6 * PAGE), 0);
	return check_done();
}
