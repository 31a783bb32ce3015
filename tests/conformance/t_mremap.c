/*
 * t_mremap: growing with MREMAP_MAYMOVE keeps the contents and zero-fills the new tail,
 * shrinking stays in place, MREMAP_FIXED moves to a chosen address and unmaps the source;
 * growing in place into a neighbour is ENOMEM, bad arguments EINVAL, an unmapped source EFAULT.
 */
#include "check.h"
#include <stdint.h>
#include <sys/mman.h>

#define PAGE 4096UL

static void *remap(void *old, size_t old_len, size_t new_len, int flags, void *new_addr)
{
	return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
}

static void fill(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 7 + 3);
}

static int filled(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)(i * 7 + 3))
			return 0;
	return 1;
}

static int all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

int main(void)
{
	int rw = PROT_READ | PROT_WRITE, anon = MAP_PRIVATE | MAP_ANONYMOUS;
	unsigned char *a = mmap(NULL, 4 * PAGE, rw, anon, -1, 0);

	CHECK(a != MAP_FAILED);
	fill(a, 4 * PAGE);

	/* Grow to 64 pages, moving if needed. */
	unsigned char *g = remap(a, 4 * PAGE, 64 * PAGE, MREMAP_MAYMOVE, NULL);
	CHECK(g != MAP_FAILED);
	CHECK_EQ((uintptr_t)g % PAGE, 0);
	CHECK(filled(g, 4 * PAGE));
	CHECK(all_zero(g + 4 * PAGE, 60 * PAGE));
	g[64 * PAGE - 1] = 9;

	maybe_save();
	CHECK(filled(g, 4 * PAGE));
	CHECK_EQ(g[64 * PAGE - 1], 9);

	/* Shrink in place. */
	unsigned char *s = remap(g, 64 * PAGE, 2 * PAGE, 0, NULL);
	CHECK_EQ(s, g);
	CHECK(filled(s, 2 * PAGE));
	/* Same size is a no-op that returns the address. */
	CHECK_EQ(remap(s, 2 * PAGE, 2 * PAGE, 0, NULL), s);

	/* Growing in place into a mapped neighbour fails without MAYMOVE. */
	unsigned char *n = mmap(s + 2 * PAGE, PAGE, rw, anon | MAP_FIXED, -1, 0);
	CHECK_EQ(n, s + 2 * PAGE);
	CHECK_ERR(remap(s, 2 * PAGE, 3 * PAGE, 0, NULL), ENOMEM);
	CHECK(filled(s, 2 * PAGE));

	/* MREMAP_FIXED moves to a reserved destination; the source range is gone. */
	unsigned char *dst = mmap(NULL, 8 * PAGE, PROT_NONE, anon, -1, 0);
	CHECK(dst != MAP_FAILED);
	unsigned char *m = remap(s, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, dst + PAGE);
	CHECK_EQ(m, dst + PAGE);
	CHECK(filled(m, 2 * PAGE));
	CHECK_ERR(remap(s, PAGE, PAGE, 0, NULL), EFAULT);
	CHECK_ERR(mprotect(s, PAGE, PROT_READ), ENOMEM);

	CHECK_ERR(remap(m + 1, PAGE, 2 * PAGE, MREMAP_MAYMOVE, NULL), EINVAL);
	CHECK_ERR(remap(m, PAGE, 0, MREMAP_MAYMOVE, NULL), EINVAL);
	CHECK_ERR(remap(m, PAGE, 2 * PAGE, 0x100, NULL), EINVAL);
	CHECK_ERR(remap(m, PAGE, 2 * PAGE, MREMAP_FIXED, dst + 4 * PAGE), EINVAL);
	CHECK_ERR(remap(m, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, dst + 4 * PAGE + 1), EINVAL);
	/* Overlapping source and destination. */
	CHECK_ERR(remap(m, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, m + PAGE), EINVAL);
	CHECK(filled(m, 2 * PAGE));

	CHECK_EQ(munmap(dst, 8 * PAGE), 0);
	CHECK_EQ(munmap(n, PAGE), 0);
	return check_done();
}
