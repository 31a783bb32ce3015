/* Unit tests for the memory file in an image (mem/memsave.c): pages come back at their offsets
 * whether stored raw, compressed or inline, zero pages and holes stay holes, and a hostile
 * index (counts, offsets and lengths that lie, references to images that are not there) is
 * refused with a message, never followed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mem/internal.h"
#include "mem/memfile.h"
#include "state/codec.h"
#include "state/compress.h"
#include "state/image.h"

static char base[256];

static int setup(void **state)
{
	(void)state;
	snprintf(base, sizeof(base), "/tmp/minisentry-unit-memsave.%d", (int)getpid());
	mkdir(base, 0755);
	return 0;
}

static int teardown(void **state)
{
	char cmd[512];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

static void fill_random(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ULL | 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		p[i] = (uint8_t)x;
	}
}

/* Writes the memory file as image DIR (a memory section and its data files); returns the
 * section's bytes in *SEC (malloc'd). */
static void save_image(const char *dir, uint32_t codec, bool no_inline, uint8_t **sec, size_t *len,
		       struct memfile_save_stats *st)
{
	struct image_out *out;
	struct image img = {.codec = codec, .nsections = 1, .dirfd = -1};
	struct enc e;
	char *err = NULL;

	assert_int_equal(image_begin(AT_FDCWD, dir, false, &out, &err), 0);
	enc_init(&e, NULL);
	struct memfile_save_opts o = {.out = out, .codec = codec, .no_inline = no_inline};
	assert_int_equal(memfile_save(&e, &o, st, &err), 0);
	strcpy(img.sec[0].name, "memory");
	img.sec[0].data = e.buf;
	img.sec[0].len = e.len;
	assert_int_equal(image_commit(out, &img, &err), 0);
	*sec = malloc(e.len);
	memcpy(*sec, e.buf, e.len);
	*len = e.len;
	enc_free(&e);
}

/* Loads image DIR into a fresh memory file (bounded by LIMIT, if not 0, as --memory makes
 * it): 0, or the error with *ERR. */
static int load_image_into(const char *dir, uint64_t limit, char **err)
{
	struct image img;
	int r = image_read(dir, &img, err);

	if (r)
		return r;
	assert_int_equal(limit ? memfile_init_bounded(limit) : memfile_init(), 0);
	struct image_section *s = image_find(&img, "memory");
	struct dec d;
	dec_init(&d, s->data, s->len, NULL);
	struct memfile_load_opts o = {.img = &img, .dir = dir};
	r = memfile_load(&d, &o, err);
	if (!r && !dec_at_end(&d))
		r = -EINVAL;
	if (r && !*err && d.error)
		*err = strdup(d.error);
	dec_free(&d);
	image_free(&img);
	return r;
}

static int load_image(const char *dir, char **err)
{
	return load_image_into(dir, 0, err);
}

/* The data of the memory file in a range: where it starts and where the first hole after it
 * is, never past the range's end (however much data follows), pages of data written through
 * the Sentry's view or with pwrite alike. */
static void test_next_data_ends_at_the_first_hole_or_the_end_asked(void **state)
{
	const uint64_t P = MEMFILE_PAGE;
	uint64_t data, stop;
	uint8_t page[MEMFILE_PAGE];

	(void)state;
	assert_int_equal(memfile_init(), 0);
	memset(page, 7, sizeof(page));
	/* Data in pages [2, 6) and [7, 3000), holes elsewhere. */
	memset(memfile_ptr(2 * P), 1, 4 * P);
	for (uint64_t p = 7; p < 3000; p++)
		assert_int_equal(mf_pio_all(memfile_fd(), page, P, p * P, true), 0);
	assert_true(mf_next_data(0, 5000 * P, &data, &stop));
	assert_int_equal(data, 2 * P);
	assert_int_equal(stop, 6 * P);
	assert_true(mf_next_data(6 * P, 5000 * P, &data, &stop));
	assert_int_equal(data, 7 * P);
	assert_int_equal(stop, 3000 * P);
	/* Bounded: the end asked, inside the data. */
	assert_true(mf_next_data(10 * P, 12 * P, &data, &stop));
	assert_int_equal(data, 10 * P);
	assert_int_equal(stop, 12 * P);
	assert_true(mf_next_data(3 * P, 4 * P + 100, &data, &stop));
	assert_int_equal(data, 3 * P);
	assert_int_equal(stop, 4 * P + 100);
	/* A hole up to the end: nothing. */
	assert_false(mf_next_data(3000 * P, 5000 * P, &data, &stop));
	assert_false(mf_next_data(0, 2 * P, &data, &stop));
	/* A page punched out in the middle of the data is a hole again. */
	fallocate(memfile_fd(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 100 * P, P);
	assert_true(mf_next_data(50 * P, 5000 * P, &data, &stop));
	assert_int_equal(data, 50 * P);
	assert_int_equal(stop, 100 * P);
	assert_true(mf_next_data(100 * P, 5000 * P, &data, &stop));
	assert_int_equal(data, 101 * P);
	assert_int_equal(stop, 3000 * P);
}

static void test_pages_come_back_at_their_offsets_raw_compressed_and_inline(void **state)
{
	const uint32_t codecs[] = {IMAGE_CODEC_ZLIB, IMAGE_CODEC_ZSTD};
	(void)state;

	for (int k = 0; k < 2; k++)
		for (int inl = 0; inl < 2; inl++) {
			if (!codec_available(codecs[k]))
				continue;
			assert_int_equal(memfile_init(), 0);
			int64_t a = memfile_alloc(4 << 20), b = memfile_alloc(64 << 10);
			assert_true(a >= 0 && b >= 0);
			uint8_t *pa = memfile_ptr(a), *pb = memfile_ptr(b);
			fill_random(pa, 1 << 20, k + 1);       /* raw */
			for (size_t i = 0; i < (1 << 20); i++) /* compressed */
				pa[(2 << 20) + i] = "page text "[i % 10];
			memset(pa + (3 << 20), 0, 4096); /* touched zeros: not saved */
			fill_random(pb, 8192, 7);	 /* small: inline when alone */
			uint8_t *copy = malloc(4 << 20), small[8192];
			memcpy(copy, pa, 4 << 20);
			memcpy(small, pb, sizeof(small));
			char dir[300], *err = NULL;
			snprintf(dir, sizeof(dir), "%s/round-%d-%d", base, k, inl);
			uint8_t *sec;
			size_t len;
			struct memfile_save_stats st;
			save_image(dir, codecs[k], inl, &sec, &len, &st);
			assert_int_equal(st.pages, (2 << 20) / 4096 + 2);
			free(sec);
			assert_int_equal(load_image(dir, &err), 0);
			/* The zero page and the untouched megabyte are holes again (looked at
			 * first: reading a hole through the mapping fills it). */
			assert_int_equal(memfile_data_bytes(a + (3 << 20), 1 << 20), 0);
			assert_memory_equal(memfile_ptr(a), copy, 4 << 20);
			assert_memory_equal(memfile_ptr(b), small, sizeof(small));
			free(copy);
		}
}

/* A memory section whose index says what the caller's FN writes after the allocator. */
static int load_crafted(void (*fn)(struct enc *e), char **err)
{
	static int n;
	char dir[300];
	struct image_out *out;
	struct image img = {.nsections = 1, .dirfd = -1};
	struct enc e;

	snprintf(dir, sizeof(dir), "%s/crafted-%d", base, n++);
	assert_int_equal(image_begin(AT_FDCWD, dir, false, &out, err), 0);
	int fd = image_create_file(out, "pages.0", err);
	assert_true(fd >= 0);
	uint8_t page[8192];
	fill_random(page, sizeof(page), 3);
	assert_int_equal(write(fd, page, sizeof(page)), (ssize_t)sizeof(page));
	close(fd);
	enc_init(&e, NULL);
	enc_u64(&e, 1 << 20); /* bump */
	enc_u64(&e, 0);	      /* no free list */
	uint8_t id[16] = {1};
	enc_raw(&e, id, 16);
	enc_u32(&e, 64); /* the grid */
	fn(&e);
	strcpy(img.sec[0].name, "memory");
	img.sec[0].data = e.buf;
	img.sec[0].len = e.len;
	assert_int_equal(image_commit(out, &img, err), 0);
	enc_free(&e);
	return load_image(dir, err);
}

static void chunk(struct enc *e, uint64_t off, uint32_t pages, uint8_t how, uint32_t where,
		  uint64_t file_off, uint64_t stored, uint32_t crc)
{
	enc_u64(e, off);
	enc_u32(e, pages);
	enc_u8(e, how);
	enc_u32(e, where);
	enc_u64(e, file_off);
	enc_u64(e, stored);
	enc_u32(e, crc);
}

static uint32_t good_crc;

static void index_good(struct enc *e)
{
	enc_u32(e, 1), enc_u64(e, 8192), enc_u32(e, 0), enc_u64(e, 1);
	chunk(e, 0, 2, HOW_RAW, 0, 0, 8192, good_crc);
}

static void index_huge_count(struct enc *e)
{
	enc_u32(e, 1), enc_u64(e, 8192), enc_u32(e, 0), enc_u64(e, 1ULL << 60);
}

static void index_past_the_file(struct enc *e)
{
	enc_u32(e, 1), enc_u64(e, 8192), enc_u32(e, 0), enc_u64(e, 1);
	chunk(e, 0, 2, HOW_RAW, 0, 4096, 8192, good_crc);
}

static void index_past_the_memory(struct enc *e)
{
	enc_u32(e, 1), enc_u64(e, 8192), enc_u32(e, 0), enc_u64(e, 1);
	chunk(e, (1 << 20) - 4096, 2, HOW_RAW, 0, 0, 8192, good_crc);
}

static void index_overlapping(struct enc *e)
{
	enc_u32(e, 1), enc_u64(e, 8192), enc_u32(e, 0), enc_u64(e, 2);
	chunk(e, 0, 2, HOW_RAW, 0, 0, 8192, good_crc);
	chunk(e, 4096, 1, HOW_RAW, 0, 0, 4096, good_crc);
}

static void index_file_size_lies(struct enc *e)
{
	enc_u32(e, 1), enc_u64(e, 1 << 30), enc_u32(e, 0), enc_u64(e, 0);
}

static void index_no_such_file(struct enc *e)
{
	enc_u32(e, 2), enc_u64(e, 8192), enc_u64(e, 8192), enc_u32(e, 0), enc_u64(e, 0);
}

static void index_reference_without_image(struct enc *e)
{
	enc_u32(e, 1), enc_u64(e, 8192), enc_u32(e, 0), enc_u64(e, 1);
	chunk(e, 0, 2, HOW_REF, 0, 0, 0, 0);
}

static void index_reference_to_a_missing_image(struct enc *e)
{
	uint8_t id[16] = {9};
	enc_u32(e, 1), enc_u64(e, 8192), enc_u32(e, 1);
	enc_raw(e, id, 16), enc_str(e, "/nonexistent/minisentry-image");
	enc_u64(e, 1);
	chunk(e, 0, 2, HOW_REF, 0, 0, 0, 0);
}

static void index_relative_image_path(struct enc *e)
{
	uint8_t id[16] = {9};
	enc_u32(e, 1), enc_u64(e, 8192), enc_u32(e, 1);
	enc_raw(e, id, 16), enc_str(e, "relative/path");
	enc_u64(e, 0);
}

static void index_bad_checksum(struct enc *e)
{
	enc_u32(e, 1), enc_u64(e, 8192), enc_u32(e, 0), enc_u64(e, 1);
	chunk(e, 0, 2, HOW_RAW, 0, 0, 8192, good_crc ^ 1);
}

static void test_an_index_that_lies_is_refused(void **state)
{
	struct {
		void (*fn)(struct enc *e);
		const char *says;
	} cases[] = {
	    {index_huge_count, "chunk count"},
	    {index_past_the_file, "chunk"},
	    {index_past_the_memory, "chunk"},
	    {index_overlapping, "chunk"},
	    {index_file_size_lies, "truncated"},
	    {index_no_such_file, "missing"},
	    {index_reference_without_image, "chunk"},
	    {index_reference_to_a_missing_image, "needs image"},
	    {index_relative_image_path, "reference"},
	    {index_bad_checksum, "checksum"},
	};
	uint8_t page[8192];
	char *err = NULL;
	(void)state;

	fill_random(page, sizeof(page), 3);
	good_crc = crc32c(0, page, sizeof(page));
	assert_int_equal(load_crafted(index_good, &err), 0);
	assert_memory_equal(memfile_ptr(0), page, sizeof(page));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err = NULL;
		assert_int_not_equal(load_crafted(cases[i].fn, &err), 0);
		if (!err || !strstr(err, cases[i].says))
			fail_msg("case %zu: '%s' does not say '%s'", i, err ? err : "(none)",
				 cases[i].says);
		free(err);
	}
}

/* The memory file's mappings in this process: lines of /proc/self/maps in [OFF, OFF+LEN) of its
 * view. */
static int view_mappings(uint64_t off, uint64_t len)
{
	uintptr_t lo = (uintptr_t)memfile_ptr(off), hi = lo + len, a, b;
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &a, &b) == 2 && a < hi && b > lo)
			n++;
	fclose(f);
	return n;
}

/* A bounded file (--memory) may get 2 MiB folios where a restore fills whole blocks
 * (mem/dense.c): the pages come back all the same, a block holding one page still costs one
 * page, a page freed out of a whole block is given back, and the Sentry's view is one mapping
 * again afterwards. Needs the privilege to make a tmpfs; skipped otherwise. */
static void
test_whole_blocks_of_a_bounded_file_come_back_and_sparse_ones_cost_their_pages(void **state)
{
	const uint64_t mib = 1 << 20, limit = 64 * mib;
	char dir[300], *err = NULL;
	uint8_t *sec;
	size_t len;
	struct memfile_save_stats st;
	(void)state;

	if (memfile_init_bounded(limit))
		skip();
	int64_t a = memfile_alloc(18 * mib);
	assert_true(a >= 0);
	a = (a + 2 * mib - 1) / (2 * mib) * (2 * mib); /* the allocator may be in use already */
	uint8_t *p = memfile_ptr(a), *copy = malloc(16 * mib);
	fill_random(p, 6 * mib, 11);			      /* three whole blocks */
	fill_random(p + 8 * mib + 40960, 4096, 12);	      /* one page of a block */
	fill_random(p + 10 * mib + 4096, 2 * mib - 4096, 13); /* all of a block but a page */
	memcpy(copy, p, 16 * mib);
	snprintf(dir, sizeof(dir), "%s/dense", base);
	save_image(dir, IMAGE_CODEC_ZLIB, true, &sec, &len, &st);
	free(sec);
	assert_int_equal(load_image_into(dir, limit, &err), 0);
	uint64_t data = 8 * mib;
	assert_int_equal(memfile_used(), data);
	assert_true(memfile_load_huge() <= 6 * mib);
	assert_int_equal(view_mappings(0, 1ULL << 40), 1);
	memfile_zero(a + 2 * mib + 8192, 4096);
	assert_int_equal(memfile_used(), data - 4096);
	assert_int_equal(memfile_data_bytes(a + 2 * mib + 8192, 4096), 0);
	/* Last: reading a hole through the view fills it. */
	memset(copy + 2 * mib + 8192, 0, 4096);
	assert_memory_equal(memfile_ptr(a), copy, 16 * mib);
	free(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_next_data_ends_at_the_first_hole_or_the_end_asked),
	    cmocka_unit_test(test_pages_come_back_at_their_offsets_raw_compressed_and_inline),
	    cmocka_unit_test(test_an_index_that_lies_is_refused),
	    cmocka_unit_test(
		test_whole_blocks_of_a_bounded_file_come_back_and_sparse_ones_cost_their_pages),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
