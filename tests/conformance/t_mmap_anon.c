/*
 * t_mmap_anon: anonymous private mappings: page-aligned, zero-filled, writable, disjoint;
 * MAP_FIXED over part of a mapping replaces just that part with zeros; munmap of a hole is
 * fine; zero length, unaligned addresses and missing MAP_PRIVATE/MAP_SHARED give EINVAL.
 */
#include "check.h"
#include <stdint.h>
#include <sys/mman.h>

#define PAGE 4096UL

static void *map(void *addr, size_t len, int prot, int flags)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, (long)-1, 0L);
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
	size_t len = 16 * PAGE;
	unsigned char *a = map(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);

	CHECK(a != MAP_FAILED);
	CHECK_EQ((uintptr_t)a % PAGE, 0);
	CHECK(all_zero(a, len));
	memset(a, 0x5a, len);
	CHECK_EQ(a[0], 0x5a);
	CHECK_EQ(a[len - 1], 0x5a);

	/* An odd length is rounded up to whole pages: the tail of the last page is usable. */
	unsigned char *b = map(NULL, PAGE + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	CHECK(b != MAP_FAILED);
	CHECK(b + 2 * PAGE <= a || b >= a + len);
	b[2 * PAGE - 1] = 7;
	CHECK_EQ(b[2 * PAGE - 1], 7);
	CHECK(all_zero(b, 2 * PAGE - 1));

	/* MAP_FIXED over pages 4..5 of a gives fresh zero pages there and leaves the rest. */
	unsigned char *f = map(a + 4 * PAGE, 2 * PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
	CHECK_EQ(f, a + 4 * PAGE);
	CHECK(all_zero(a + 4 * PAGE, 2 * PAGE));
	CHECK_EQ(a[4 * PAGE - 1], 0x5a);
	CHECK_EQ(a[6 * PAGE], 0x5a);
	f[0] = 1;

	maybe_save();
	CHECK_EQ(a[0], 0x5a);
	CHECK_EQ(a[4 * PAGE], 1);
	CHECK(all_zero(a + 4 * PAGE + 1, 2 * PAGE - 1));
	CHECK_EQ(a[len - 1], 0x5a);
	CHECK_EQ(b[2 * PAGE - 1], 7);

	/* Unmapping the middle, then unmapping the same hole again, both succeed. */
	CHECK_EQ(syscall(SYS_munmap, a + 8 * PAGE, 2 * PAGE), 0);
	CHECK_EQ(syscall(SYS_munmap, a + 8 * PAGE, 2 * PAGE), 0);
	/* A MAP_FIXED mapping into the hole is zero-filled again. */
	unsigned char *h = map(a + 8 * PAGE, 2 * PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
	CHECK_EQ(h, a + 8 * PAGE);
	CHECK(all_zero(h, 2 * PAGE));
	/* MAP_FIXED_NOREPLACE refuses to clobber an existing mapping. */
	CHECK_ERR(map(a, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE),
		  EEXIST);
	CHECK_EQ(a[0], 0x5a);

	CHECK_ERR(map(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS), EINVAL);
	CHECK_ERR(map(a + 1, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED), EINVAL);
	CHECK_ERR(map(NULL, PAGE, PROT_READ, MAP_ANONYMOUS), EINVAL);
	CHECK_ERR(syscall(SYS_munmap, a + 1, PAGE), EINVAL);
	CHECK_ERR(syscall(SYS_munmap, a, 0), EINVAL);
	CHECK_ERR(munmap(a + 1, PAGE), EINVAL);
	/* A mapping with no access at all is still a mapping. */
	void *none = map(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS);
	CHECK(none != MAP_FAILED);
	CHECK_EQ(syscall(SYS_munmap, none, PAGE), 0);

	CHECK_EQ(munmap(a, len), 0);
	CHECK_EQ(munmap(b, 2 * PAGE), 0);
	return check_done();
}
