/*
 * t_madvise: MADV_DONTNEED on private anonymous memory drops the pages, which read back as
 * zero, leaving the neighbours alone; harmless advice succeeds; bad advice or alignment is
 * EINVAL, advice on unmapped memory ENOMEM.
 */
#include "check.h"
#include <sys/mman.h>

#define PAGE 4096UL

static int all_equal(const unsigned char *p, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

int main(void)
{
	unsigned char *a =
	    mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(a != MAP_FAILED);
	memset(a, 0x77, 8 * PAGE);

	CHECK_EQ(syscall(SYS_madvise, a + 2 * PAGE, 3 * PAGE, MADV_DONTNEED), 0);
	CHECK(all_equal(a, 2 * PAGE, 0x77));
	CHECK(all_equal(a + 2 * PAGE, 3 * PAGE, 0));
	CHECK(all_equal(a + 5 * PAGE, 3 * PAGE, 0x77));

	/* The dropped pages are ordinary memory again. */
	a[3 * PAGE] = 1;
	maybe_save();
	CHECK_EQ(a[3 * PAGE], 1);
	CHECK(all_equal(a + 3 * PAGE + 1, 2 * PAGE - 1, 0));
	CHECK(all_equal(a + 5 * PAGE, 3 * PAGE, 0x77));

	/* The length is rounded up to a whole page. */
	memset(a, 0x11, 2 * PAGE);
	CHECK_EQ(madvise(a, 1, MADV_DONTNEED), 0);
	CHECK(all_equal(a, PAGE, 0));
	CHECK(all_equal(a + PAGE, PAGE, 0x11));

	CHECK_EQ(syscall(SYS_madvise, a, 8 * PAGE, MADV_NORMAL), 0);
	CHECK_EQ(syscall(SYS_madvise, a, 8 * PAGE, MADV_WILLNEED), 0);
	CHECK_EQ(syscall(SYS_madvise, a, 8 * PAGE, MADV_SEQUENTIAL), 0);
	CHECK_EQ(syscall(SYS_madvise, a, 8 * PAGE, MADV_RANDOM), 0);
	CHECK_EQ(syscall(SYS_madvise, a, 0, MADV_DONTNEED), 0);
	CHECK(all_equal(a + PAGE, PAGE, 0x11));

	CHECK_ERR(syscall(SYS_madvise, a + 1, PAGE, MADV_DONTNEED), EINVAL);
	CHECK_ERR(syscall(SYS_madvise, a, PAGE, 999), EINVAL);
	CHECK_EQ(munmap(a + 6 * PAGE, 2 * PAGE), 0);
	CHECK_ERR(syscall(SYS_madvise, a + 6 * PAGE, PAGE, MADV_DONTNEED), ENOMEM);
	CHECK_ERR(syscall(SYS_madvise, a + 4 * PAGE, 4 * PAGE, MADV_NORMAL), ENOMEM);
	CHECK(all_equal(a + 5 * PAGE, PAGE, 0x77));

	CHECK_EQ(munmap(a, 6 * PAGE), 0);
	return check_done();
}
