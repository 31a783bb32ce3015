/* Unit tests for kernfs's buffer appends (vfs/kernfs.h): the printf-free number and CPU-mask
 * writers that /proc/all's hundreds of thousands of fields go through must print exactly what
 * printf and Linux's "%*pb" / "%*pbl" print. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vfs/kernfs.h"

/* "%*pb" the slow way: printf of each 32-bit group. */
static void bitmap_by_printf(char *out, size_t size, const uint64_t *bits, int nbits)
{
	int chunk = nbits % 32 ? nbits % 32 : 32;
	size_t at = 0;

	out[0] = 0;
	for (int i = ((nbits + 31) / 32 - 1) * 32; i >= 0; i -= 32) {
		uint32_t val = (uint32_t)(bits[i / 64] >> (i % 64));

		if (chunk < 32)
			val &= (1U << chunk) - 1;
		at += (size_t)snprintf(out + at, size - at, "%s%0*x",
				       chunk == 32 && i + 32 < nbits ? "," : "", (chunk + 3) / 4,
				       val);
		chunk = 32;
	}
}

/* "%*pbl" the slow way: a bit-by-bit scan. */
static void bitmap_list_by_printf(char *out, size_t size, const uint64_t *bits, int nbits)
{
	size_t at = 0;

	out[0] = 0;
	for (int i = 0; i < nbits; i++) {
		if (!(bits[i / 64] >> (i % 64) & 1))
			continue;
		int j = i;
		while (j + 1 < nbits && (bits[(j + 1) / 64] >> ((j + 1) % 64) & 1))
			j++;
		if (at)
			out[at++] = ',';
		at += (size_t)(j > i ? snprintf(out + at, size - at, "%d-%d", i, j)
				     : snprintf(out + at, size - at, "%d", i));
		i = j;
	}
}

static void test_numbers_print_as_printf_does(void **state)
{
	const int64_t v[] = {0, 1, -1, 9, 10, 4194304, INT64_MAX, INT64_MIN, -42};
	struct kernfs_buf b = {0};
	char want[512];
	size_t at = 0;

	(void)state;
	kernfs_buf_u64(&b, UINT64_MAX);
	at +=
	    (size_t)snprintf(want + at, sizeof(want) - at, "%llu", (unsigned long long)UINT64_MAX);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		kernfs_buf_i64(&b, v[i]);
		at += (size_t)snprintf(want + at, sizeof(want) - at, "%lld", (long long)v[i]);
	}
	kernfs_buf_nums(&b, v, sizeof(v) / sizeof(v[0]));
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		at += (size_t)snprintf(want + at, sizeof(want) - at, " %lld", (long long)v[i]);
	kernfs_buf_putc(&b, '\n');
	want[at++] = '\n';
	want[at] = 0;
	assert_false(b.oom);
	assert_int_equal(b.len, at);
	assert_string_equal(b.data, want);
	kernfs_buf_free(&b);
}

static void test_bitmaps_print_as_linux_does(void **state)
{
	static char want[4096];
	uint64_t bits[16];
	const int sizes[] = {1, 2, 4, 5, 31, 32, 33, 40, 63, 64, 65, 96, 100, 128, 200, 1024};

	(void)state;
	srand(17);
	for (int pattern = 0; pattern < 6; pattern++) {
		for (int w = 0; w < 16; w++)
			bits[w] = pattern == 0	 ? 0
				  : pattern == 1 ? ~0ULL
				  : pattern == 2 ? (w == 0)
				  : pattern == 3 ? 0xf0f0f0f00ff00001ULL
						 : ((uint64_t)rand() << 33 ^ (uint64_t)rand() << 7 ^
						    (uint64_t)rand());
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			struct kernfs_buf b = {0};

			kernfs_buf_puts(&b, "x:");
			kernfs_buf_bitmap(&b, bits, sizes[k]);
			kernfs_buf_putc(&b, '|');
			kernfs_buf_bitmap_list(&b, bits, sizes[k]);
			strcpy(want, "x:");
			bitmap_by_printf(want + 2, sizeof(want) - 2, bits, sizes[k]);
			strcat(want, "|");
			bitmap_list_by_printf(want + strlen(want), sizeof(want) - strlen(want),
					      bits, sizes[k]);
			assert_false(b.oom);
			assert_int_equal(b.len, strlen(want));
			assert_string_equal(b.data, want);
			kernfs_buf_free(&b);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_numbers_print_as_printf_does),
	    cmocka_unit_test(test_bitmaps_print_as_linux_does),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
