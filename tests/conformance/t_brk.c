/*
 * t_brk: the program break through the raw syscall (musl's sbrk refuses to move it): brk(0)
 * reports it, growing gives zeroed writable memory, shrinking releases it so regrowing is
 * zeroed again, and a request below the start is refused by returning the unchanged break.
 * No malloc may run between the calls, so only dprintf output is used.
 */
#include "check.h"
#include <stdint.h>

#define PAGE 4096UL

static uintptr_t brk_raw(uintptr_t addr)
{
	return (uintptr_t)syscall(SYS_brk, addr);
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
	uintptr_t start = brk_raw(0);

	CHECK(start != 0);
	CHECK_EQ(brk_raw(0), start);

	/* Grow by 64 KiB plus a bit: the break lands exactly where asked. */
	uintptr_t want = start + 16 * PAGE + 100;
	CHECK_EQ(brk_raw(want), want);
	CHECK_EQ(brk_raw(0), want);
	unsigned char *p = (unsigned char *)start;
	CHECK(all_zero(p, want - start));
	memset(p, 0xab, want - start);
	CHECK_EQ(p[want - start - 1], 0xab);

	maybe_save();
	CHECK_EQ(brk_raw(0), want);
	CHECK_EQ(p[0], 0xab);
	CHECK_EQ(p[want - start - 1], 0xab);

	/* Shrink to 4 pages, then grow again: the released pages come back zeroed. */
	uintptr_t small = start + 4 * PAGE;
	if (small % PAGE)
		small += PAGE - small % PAGE;
	CHECK_EQ(brk_raw(small), small);
	CHECK_EQ(brk_raw(0), small);
	CHECK_EQ(p[0], 0xab);
	CHECK_EQ(brk_raw(want), want);
	CHECK(all_zero((unsigned char *)small, want - small));
	CHECK_EQ(p[small - start - 1], 0xab);

	/* Below the start of the heap, or an absurd address: refused, break unchanged. */
	CHECK_EQ(brk_raw(start - 64 * PAGE), want);
	CHECK_EQ(brk_raw(1), want);
	CHECK_EQ(brk_raw(0xffff800000000000UL), want);
	CHECK_EQ(brk_raw(0), want);

	CHECK_EQ(brk_raw(start), start);
	CHECK_EQ(brk_raw(0), start);
	return check_done();
}
