/* Unit tests for the checkpoint codec and the image directory: records round-trip, a decoder
 * never reads past its record, references resolve by id, and a truncated, corrupt or foreign
 * image is refused with a message while a failed write leaves nothing behind. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "state/codec.h"
#include "state/compress.h"
#include "state/image.h"

static void test_records_round_trip(void **state)
{
	struct enc e;
	struct dec d;
	char buf[16];
	(void)state;

	enc_init(&e, NULL);
	enc_u8(&e, 7);
	enc_u32(&e, 0xdeadbeef);
	enc_u64(&e, UINT64_MAX - 1);
	enc_i64(&e, -5);
	enc_bool(&e, true);
	enc_str(&e, "hello");
	enc_str(&e, NULL);
	enc_bytes(&e, "\0\1\2", 3);
	assert_true(enc_ok(&e));
	dec_init(&d, e.buf, e.len, NULL);
	assert_int_equal(dec_u8(&d), 7);
	assert_int_equal(dec_u32(&d), 0xdeadbeef);
	assert_true(dec_u64(&d) == UINT64_MAX - 1);
	assert_int_equal(dec_i64(&d), -5);
	assert_true(dec_bool(&d));
	assert_string_equal(dec_str_buf(&d, buf, sizeof(buf)), "hello");
	assert_null(dec_str(&d));
	size_t n;
	const char *b = dec_bytes(&d, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(b, "\0\1\2", 3);
	assert_true(dec_ok(&d));
	assert_true(dec_at_end(&d));
	dec_free(&d);
	enc_free(&e);
}

static void test_a_truncated_record_fails_without_reading_past_it(void **state)
{
	struct enc e;
	struct dec d;
	(void)state;

	enc_init(&e, NULL);
	enc_u64(&e, 1);
	enc_str(&e, "a long string");
	for (size_t cut = 0; cut < e.len; cut++) {
		dec_init(&d, e.buf, cut, NULL);
		dec_u64(&d);
		char *s = dec_str(&d);
		assert_null(s);
		assert_false(dec_ok(&d));
		dec_free(&d);
	}
	enc_free(&e);
}

static void test_a_string_longer_than_its_buffer_or_with_a_nul_fails(void **state)
{
	struct enc e;
	struct dec d;
	char small[4];
	(void)state;

	enc_init(&e, NULL);
	enc_str(&e, "abcdef");
	enc_bytes(&e, "a\0b", 3);
	dec_init(&d, e.buf, e.len, NULL);
	assert_null(dec_str_buf(&d, small, sizeof(small)));
	assert_false(dec_ok(&d));
	dec_free(&d);
	enc_free(&e);
}

/* A forged time cannot make later arithmetic overflow: times past ±146 years are refused. */
static void test_times_out_of_range_are_refused(void **state)
{
	static const struct {
		int64_t sec, nsec;
		bool ok;
	} cases[] = {
	    {0, 0, true},
	    {DEC_TIME_MAX_SEC, 999999999, true},
	    {-DEC_TIME_MAX_SEC, 0, true},
	    {DEC_TIME_MAX_SEC + 1, 0, false},
	    {INT64_MAX, 0, false},
	    {INT64_MIN, 0, false},
	    {5, 1000000000, false},
	    {5, -1, false},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct enc e;
		struct dec d;

		enc_init(&e, NULL);
		enc_i64(&e, cases[i].sec);
		enc_i64(&e, cases[i].nsec);
		dec_init(&d, e.buf, e.len, NULL);
		struct timespec ts = dec_timespec(&d);
		assert_int_equal(dec_ok(&d), cases[i].ok);
		if (cases[i].ok)
			assert_int_equal(ts.tv_sec, cases[i].sec);
		dec_free(&d);
		enc_free(&e);
	}
}

static void test_references_are_saved_once_and_resolve_by_id(void **state)
{
	struct ckpt_refs *save = ckpt_refs_new(), *load = ckpt_refs_new();
	int a, b;
	uint64_t id;
	struct enc e;
	struct dec d;
	(void)state;

	enc_init(&e, save);
	enc_ref(&e, CK_FILE, &a);
	enc_ref(&e, CK_FILE, &b);
	enc_ref(&e, CK_FILE, &a);
	enc_ref(&e, CK_FILE, NULL);
	enc_ref(&e, CK_MM, &a); /* ids are per kind */
	assert_ptr_equal(ckpt_refs_next(save, CK_FILE, &id), &a);
	assert_int_equal(id, 1);
	assert_ptr_equal(ckpt_refs_next(save, CK_FILE, &id), &b);
	assert_int_equal(id, 2);
	assert_null(ckpt_refs_next(save, CK_FILE, &id));
	assert_ptr_equal(ckpt_refs_next(save, CK_MM, &id), &a);
	assert_int_equal(id, 1);

	int la, lb;
	assert_int_equal(ckpt_refs_put(load, CK_FILE, 2, &lb), -EINVAL); /* out of order */
	assert_int_equal(ckpt_refs_put(load, CK_FILE, 1, &la), 0);
	assert_int_equal(ckpt_refs_put(load, CK_FILE, 2, &lb), 0);
	assert_int_equal(ckpt_refs_put(load, CK_MM, 1, &la), 0);
	dec_init(&d, e.buf, e.len, load);
	assert_ptr_equal(dec_ref(&d, CK_FILE), &la);
	assert_ptr_equal(dec_ref(&d, CK_FILE), &lb);
	assert_ptr_equal(dec_ref(&d, CK_FILE), &la);
	assert_null(dec_ref(&d, CK_FILE));
	assert_ptr_equal(dec_ref(&d, CK_MM), &la);
	assert_true(dec_ok(&d));
	dec_free(&d);

	/* An id nothing was loaded under is an error, not a NULL. */
	struct enc bad;
	enc_init(&bad, NULL);
	enc_u64(&bad, 9);
	dec_init(&d, bad.buf, bad.len, load);
	assert_null(dec_ref(&d, CK_FILE));
	assert_false(dec_ok(&d));
	dec_free(&d);
	enc_free(&bad);
	enc_free(&e);
	ckpt_refs_free(save);
	ckpt_refs_free(load);
}

/* --- images -------------------------------------------------------------------------------- */

static char base[256];

static int setup_dir(void **state)
{
	(void)state;
	snprintf(base, sizeof(base), "/tmp/minisentry-unit-image.%d", (int)getpid());
	mkdir(base, 0755);
	return 0;
}

static int teardown_dir(void **state)
{
	char cmd[512];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

static void make_image(struct image *img, uint8_t *a, size_t alen, uint8_t *b, size_t blen)
{
	memset(img, 0, sizeof(*img));
	img->nsections = 2;
	strcpy(img->sec[0].name, "alpha");
	img->sec[0].data = a;
	img->sec[0].len = alen;
	img->sec[0].count = 3;
	strcpy(img->sec[1].name, "beta");
	img->sec[1].data = b;
	img->sec[1].len = blen;
	img->sec[1].count = 1;
}

/* How many names in DIR begin with PREFIX. */
static int entries_starting(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static void test_an_image_round_trips(void **state)
{
	uint8_t a[10000], b[3] = {1, 2, 3};
	struct image img, back;
	char dir[300], *err;
	(void)state;

	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (uint8_t)(i * 7);
	snprintf(dir, sizeof(dir), "%s/round", base);
	make_image(&img, a, sizeof(a), b, sizeof(b));
	assert_int_equal(image_write(AT_FDCWD, dir, &img, false, &err), 0);
	assert_int_equal(image_read(dir, &back, &err), 0);
	assert_int_equal(back.nsections, 2);
	struct image_section *s = image_find(&back, "alpha");
	assert_non_null(s);
	assert_int_equal(s->len, sizeof(a));
	assert_int_equal(s->count, 3);
	assert_memory_equal(s->data, a, sizeof(a));
	assert_memory_equal(image_find(&back, "beta")->data, b, 3);
	image_free(&back);
	/* Only the image is left: no temporary directory beside it. */
	assert_int_equal(entries(base), 1);
}

/* image_read_fd: the image beneath a directory descriptor (a base image handed to a confined
 * Sentry), read as by its path; the descriptor is the image's from then on. */
static void test_an_image_is_read_by_its_directory_descriptor(void **state)
{
	uint8_t a[100] = {7}, b[3] = {1, 2, 3};
	struct image img, back;
	char dir[300], *err;
	(void)state;

	snprintf(dir, sizeof(dir), "%s/byfd", base);
	make_image(&img, a, sizeof(a), b, sizeof(b));
	assert_int_equal(image_write(AT_FDCWD, dir, &img, false, &err), 0);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(image_read_fd(fd, "the base", &back, &err), 0);
	assert_int_equal(back.dirfd, fd);
	assert_memory_equal(image_find(&back, "alpha")->data, a, sizeof(a));
	image_free(&back);
	/* Not an image: refused, naming it as told, and the descriptor is closed. */
	fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_not_equal(image_read_fd(fd, "the base", &back, &err), 0);
	assert_non_null(strstr(err, "the base"));
	free(err);
	assert_int_equal(fcntl(fd, F_GETFD), -1);
}

static void test_a_full_directory_is_refused_unless_forced(void **state)
{
	uint8_t a[1] = {1}, b[1] = {2}, c[1] = {3};
	struct image img, back;
	char dir[300], *err = NULL;
	(void)state;

	snprintf(dir, sizeof(dir), "%s/full", base);
	make_image(&img, a, 1, b, 1);
	assert_int_equal(image_write(AT_FDCWD, dir, &img, false, &err), 0);
	make_image(&img, c, 1, b, 1);
	assert_int_equal(image_write(AT_FDCWD, dir, &img, false, &err), -EEXIST);
	assert_non_null(strstr(err, "not empty"));
	free(err);
	assert_int_equal(image_read(dir, &back, &err), 0);
	assert_int_equal(back.sec[0].data[0], 1); /* the old image is untouched */
	image_free(&back);
	assert_int_equal(image_write(AT_FDCWD, dir, &img, true, &err), 0);
	assert_int_equal(image_read(dir, &back, &err), 0);
	assert_int_equal(back.sec[0].data[0], 3);
	image_free(&back);
	/* Neither the replaced image nor a temporary directory is left beside it. */
	assert_int_equal(entries_starting(base, "full."), 0);
}

/* What a writer killed mid-way leaves under a tag its client chose is cleaned by that client:
 * a temporary directory (with a link in it, not followed) is removed, an old image set aside
 * by --force comes back when no new one made it into place, and goes when one did; a name
 * with the tag that exists already is an error for the writer, never reused. */
static void test_a_tagged_write_is_cleaned_up_after_its_writer_died(void **state)
{
	uint8_t a[1] = {1}, b[1] = {2};
	struct image img, back;
	char path[320], *err = NULL;
	int at = open(base, O_RDONLY | O_DIRECTORY);
	(void)state;

	assert_true(at >= 0);
	/* Killed while writing: tagged.tmp.T with a file and a link to the outside. */
	snprintf(path, sizeof(path), "%s/tagged.tmp.0123456789abcdef", base);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/tagged.tmp.0123456789abcdef/header", base);
	close(open(path, O_WRONLY | O_CREAT, 0644));
	snprintf(path, sizeof(path), "%s/tagged.tmp.0123456789abcdef/out", base);
	assert_int_equal(symlink("..", path), 0);
	assert_true(image_write_cleanup(at, "tagged", "0123456789abcdef"));
	assert_int_equal(entries_starting(base, "tagged"), 0);
	assert_false(image_write_cleanup(at, "tagged", "0123456789abcdef"));
	/* Killed between setting the old image aside and renaming the new one in. */
	make_image(&img, a, 1, b, 1);
	assert_int_equal(image_write(at, "tagged", &img, false, &err), 0);
	snprintf(path, sizeof(path), "%s/tagged.old.00000000000000aa", base);
	char dir[320];
	snprintf(dir, sizeof(dir), "%s/tagged", base);
	assert_int_equal(rename(dir, path), 0);
	assert_true(image_write_cleanup(at, "tagged", "00000000000000aa"));
	assert_int_equal(image_read(dir, &back, &err), 0);
	image_free(&back);
	/* Killed after the new one was in: the old one goes. */
	assert_int_equal(mkdir(path, 0755), 0);
	assert_true(image_write_cleanup(at, "tagged", "00000000000000aa"));
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(image_read(dir, &back, &err), 0);
	image_free(&back);
	/* A tagged name that exists is not the writer's: it fails and leaves it. */
	img.tag = "00000000000000bb";
	snprintf(path, sizeof(path), "%s/tagged.tmp.00000000000000bb", base);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(image_write(at, "tagged", &img, true, &err), -EEXIST);
	free(err);
	assert_int_equal(access(path, F_OK), 0);
	rmdir(path);
	img.tag = NULL;
	close(at);
}

/* A forced write beneath a directory descriptor replaces an image that holds links without
 * following them, and refuses an image name that is itself a link. */
static void test_a_forced_write_never_follows_links(void **state)
{
	uint8_t a[1] = {1}, b[1] = {2};
	struct image img, back;
	char path[320], *err = NULL;
	int at;
	(void)state;

	snprintf(path, sizeof(path), "%s/victim", base);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/victim/precious", base);
	close(open(path, O_WRONLY | O_CREAT, 0644));
	snprintf(path, sizeof(path), "%s/linked", base);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/linked/link", base);
	assert_int_equal(symlink("../victim", path), 0);
	snprintf(path, sizeof(path), "%s/dirlink", base);
	assert_int_equal(symlink("victim", path), 0);
	at = open(base, O_RDONLY | O_DIRECTORY);
	assert_true(at >= 0);
	make_image(&img, a, 1, b, 1);
	assert_int_equal(image_write(at, "linked", &img, true, &err), 0);
	snprintf(path, sizeof(path), "%s/victim/precious", base);
	assert_int_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/linked", base);
	assert_int_equal(image_read(path, &back, &err), 0);
	image_free(&back);
	assert_int_equal(image_write(at, "dirlink", &img, true, &err), -ELOOP);
	assert_non_null(strstr(err, "symbolic link"));
	free(err);
	snprintf(path, sizeof(path), "%s/victim", base);
	assert_int_equal(entries(path), 1);
	assert_int_equal(entries_starting(base, "linked."), 0);
	assert_int_equal(entries_starting(base, "dirlink."), 0);
	close(at);
}

static void flip_byte(const char *path, off_t at)
{
	int fd = open(path, O_RDWR);
	unsigned char c;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &c, 1, at), 1);
	c ^= 0x40;
	assert_int_equal(pwrite(fd, &c, 1, at), 1);
	close(fd);
}

static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

static void test_every_flipped_byte_is_caught(void **state)
{
	uint8_t a[300], b[40];
	struct image img, back;
	char dir[300], path[400], *err = NULL;
	const char *files[] = {"header", "alpha.z", "beta.z"};
	(void)state;

	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (uint8_t)i;
	memset(b, 9, sizeof(b));
	snprintf(dir, sizeof(dir), "%s/flip", base);
	make_image(&img, a, sizeof(a), b, sizeof(b));
	assert_int_equal(image_write(AT_FDCWD, dir, &img, false, &err), 0);
	for (size_t f = 0; f < 3; f++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[f]);
		off_t size = file_size(path);
		for (off_t at = 0; at < size; at++) {
			flip_byte(path, at);
			assert_int_not_equal(image_read(dir, &back, &err), 0);
			assert_non_null(err);
			free(err);
			err = NULL;
			flip_byte(path, at);
		}
	}
	assert_int_equal(image_read(dir, &back, &err), 0);
	image_free(&back);
}

static void test_truncated_missing_and_foreign_images_are_refused(void **state)
{
	uint8_t a[300] = {1}, b[40] = {2};
	struct image img, back;
	char dir[300], path[400], *err = NULL;
	(void)state;

	snprintf(dir, sizeof(dir), "%s/trunc", base);
	make_image(&img, a, sizeof(a), b, sizeof(b));
	assert_int_equal(image_write(AT_FDCWD, dir, &img, false, &err), 0);
	snprintf(path, sizeof(path), "%s/alpha.z", dir);
	assert_int_equal(truncate(path, file_size(path) - 1), 0);
	assert_int_not_equal(image_read(dir, &back, &err), 0);
	assert_non_null(strstr(err, "truncated"));
	free(err);
	unlink(path);
	assert_int_not_equal(image_read(dir, &back, &err), 0);
	assert_non_null(strstr(err, "missing"));
	free(err);

	snprintf(path, sizeof(path), "%s/header", dir);
	int fd = open(path, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "#!/bin/sh\n", 10), 10);
	close(fd);
	assert_int_not_equal(image_read(dir, &back, &err), 0);
	assert_non_null(strstr(err, "not a minisentry image"));
	free(err);
	assert_int_not_equal(image_read(base, &back, &err), 0); /* no header at all */
	free(err);
}

static void test_another_format_version_is_named(void **state)
{
	uint8_t a[1] = {1}, b[1] = {2};
	struct image img, back;
	char dir[300], path[400], *err = NULL;
	(void)state;

	snprintf(dir, sizeof(dir), "%s/version", base);
	make_image(&img, a, 1, b, 1);
	assert_int_equal(image_write(AT_FDCWD, dir, &img, false, &err), 0);
	snprintf(path, sizeof(path), "%s/header", dir);
	/* Rewrite the version and fix the header checksum, as a newer minisentry would write. */
	int fd = open(path, O_RDWR);
	uint8_t hdr[512];
	ssize_t n = read(fd, hdr, sizeof(hdr));
	assert_true(n > 12);
	hdr[8] = 99;
	uint32_t crc = crc32(0, hdr, n - 4);
	for (int i = 0; i < 4; i++)
		hdr[n - 4 + i] = crc >> (8 * i);
	assert_int_equal(pwrite(fd, hdr, n, 0), n);
	close(fd);
	assert_int_not_equal(image_read(dir, &back, &err), 0);
	assert_non_null(strstr(err, "version 99"));
	free(err);
}

/* Rewrites the header in DIR with FN applied, fixing its checksum as a hand-made header would. */
static void patch_header(const char *dir, void (*fn)(uint8_t *hdr, ssize_t n))
{
	char path[400];
	uint8_t hdr[2048];

	snprintf(path, sizeof(path), "%s/header", dir);
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	ssize_t n = read(fd, hdr, sizeof(hdr));
	assert_true(n > 24);
	fn(hdr, n);
	uint32_t crc = crc32(0, hdr, n - 4);
	for (int i = 0; i < 4; i++)
		hdr[n - 4 + i] = crc >> (8 * i);
	assert_int_equal(pwrite(fd, hdr, n, 0), n);
	close(fd);
}

static void set_version_1(uint8_t *hdr, ssize_t n)
{
	(void)n;
	hdr[8] = 1;
}

static void test_version_one_images_are_still_read(void **state)
{
	uint8_t a[100] = {5}, b[1] = {2};
	struct image img, back;
	char dir[300], *err = NULL;
	(void)state;

	snprintf(dir, sizeof(dir), "%s/v1", base);
	make_image(&img, a, sizeof(a), b, 1);
	assert_int_equal(image_write(AT_FDCWD, dir, &img, false, &err), 0);
	patch_header(dir, set_version_1);
	assert_int_equal(image_read(dir, &back, &err), 0);
	assert_int_equal(back.version, 1);
	assert_memory_equal(image_find(&back, "alpha")->data, a, sizeof(a));
	image_free(&back);
}

/* The first section entry's uncompressed length (after the 24-byte fixed part and the name). */
static void claim_huge_section(uint8_t *hdr, ssize_t n)
{
	(void)n;
	hdr[24 + IMAGE_NAME_MAX + 6] = 0x40; /* 2^54 */
}

static void test_sizes_a_header_claims_are_bounded_by_the_files(void **state)
{
	uint8_t a[300] = {1}, b[40] = {2};
	struct image img, back;
	char dir[300], path[400], *err = NULL;
	(void)state;

	snprintf(dir, sizeof(dir), "%s/bounds", base);
	make_image(&img, a, sizeof(a), b, sizeof(b));
	assert_int_equal(image_write(AT_FDCWD, dir, &img, false, &err), 0);
	/* A section file longer than its entry says. */
	snprintf(path, sizeof(path), "%s/alpha.z", dir);
	int fd = open(path, O_WRONLY | O_APPEND);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	assert_int_not_equal(image_read(dir, &back, &err), 0);
	assert_non_null(strstr(err, "longer"));
	free(err);
	assert_int_equal(truncate(path, file_size(path) - 1), 0);
	assert_int_equal(image_read(dir, &back, &err), 0);
	image_free(&back);
	/* A section that would inflate past what its bytes can hold: refused before any
	 * allocation. */
	patch_header(dir, claim_huge_section);
	assert_int_not_equal(image_read(dir, &back, &err), 0);
	assert_non_null(strstr(err, "size"));
	free(err);
}

static void test_a_fifo_or_symlink_in_place_of_a_file_is_refused_without_blocking(void **state)
{
	uint8_t a[300] = {1}, b[40] = {2};
	struct image img, back;
	char dir[300], path[400], target[400], *err = NULL;
	(void)state;

	snprintf(dir, sizeof(dir), "%s/fifo", base);
	make_image(&img, a, sizeof(a), b, sizeof(b));
	assert_int_equal(image_write(AT_FDCWD, dir, &img, false, &err), 0);
	snprintf(path, sizeof(path), "%s/alpha.z", dir);
	snprintf(target, sizeof(target), "%s/alpha.saved", base);
	assert_int_equal(rename(path, target), 0);
	assert_int_equal(mkfifo(path, 0644), 0);
	/* No writer ever comes: a blocking open would hang here. */
	assert_int_not_equal(image_read(dir, &back, &err), 0);
	assert_non_null(strstr(err, "not a regular file"));
	free(err);
	unlink(path);
	assert_int_equal(symlink(target, path), 0);
	assert_int_not_equal(image_read(dir, &back, &err), 0);
	assert_non_null(strstr(err, "not a regular file"));
	free(err);
	unlink(path);
	snprintf(path, sizeof(path), "%s/header", dir);
	unlink(path);
	assert_int_equal(mkfifo(path, 0644), 0);
	assert_int_not_equal(image_read(dir, &back, &err), 0);
	free(err);
	assert_int_not_equal(image_read_header(dir, &back, &err), 0);
	free(err);
}

static void test_data_files_are_made_beside_the_sections_and_opened_with_care(void **state)
{
	uint8_t a[10] = {1}, b[1] = {2};
	struct image img, back;
	struct image_out *o;
	char dir[300], path[400], *err = NULL;
	uint64_t size;
	(void)state;

	snprintf(dir, sizeof(dir), "%s/data", base);
	assert_int_equal(image_begin(AT_FDCWD, dir, false, &o, &err), 0);
	int fd = image_create_file(o, "pages.0", &err);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0123456789", 10), 10);
	close(fd);
	/* Names that would clash with the header or a section, or leave the image. */
	const char *bad[] = {"header", "alpha.z", "../x", "a/b", ".hidden", ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_true(image_create_file(o, bad[i], &err) < 0);
		free(err);
	}
	/* Nothing is in place before the commit. */
	assert_int_not_equal(access(dir, F_OK), 0);
	make_image(&img, a, sizeof(a), b, 1);
	assert_int_equal(image_commit(o, &img, &err), 0);
	assert_int_equal(image_read(dir, &back, &err), 0);
	fd = image_open_file(&back, dir, "pages.0", &size, &err);
	assert_true(fd >= 0);
	assert_int_equal(size, 10);
	close(fd);
	assert_true(image_open_file(&back, dir, "pages.1", &size, &err) < 0);
	assert_non_null(strstr(err, "missing"));
	free(err);
	assert_true(image_open_file(&back, dir, "../data/pages.0", &size, &err) < 0);
	free(err);
	snprintf(path, sizeof(path), "%s/pages.1", dir);
	assert_int_equal(mkfifo(path, 0644), 0);
	assert_true(image_open_file(&back, dir, "pages.1", &size, &err) < 0);
	assert_non_null(strstr(err, "not a regular file"));
	free(err);
	image_free(&back);
	/* An abandoned image leaves nothing behind. */
	snprintf(dir, sizeof(dir), "%s/abandoned", base);
	assert_int_equal(image_begin(AT_FDCWD, dir, false, &o, &err), 0);
	close(image_create_file(o, "pages.0", &err));
	image_abort(o);
	assert_int_not_equal(access(dir, F_OK), 0);
	snprintf(path, sizeof(path), "%s/abandoned.tmp.%d", base, (int)getpid());
	assert_int_not_equal(access(path, F_OK), 0);
}

static void test_codecs_round_trip_and_refuse_damage(void **state)
{
	const uint32_t codecs[] = {IMAGE_CODEC_ZLIB, IMAGE_CODEC_ZSTD};
	static uint8_t in[100000], out[100000], z[120000];
	(void)state;

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = "minisentry"[i % 10] + (i / 1000);
	for (size_t k = 0; k < 2; k++) {
		if (!codec_available(codecs[k]))
			continue;
		struct compressor *c = compressor_new(codecs[k]);
		size_t zlen = sizeof(z);
		assert_non_null(c);
		assert_true(compress_bound(codecs[k], sizeof(in)) <= sizeof(z));
		assert_int_equal(compress_buf(c, in, sizeof(in), z, &zlen), 0);
		assert_true(zlen < sizeof(in) / 4);
		assert_int_equal(decompress_buf(c, z, zlen, out, sizeof(out)), 0);
		assert_memory_equal(in, out, sizeof(in));
		/* Twice through one compressor, as a worker does. */
		assert_int_equal(decompress_buf(c, z, zlen, out, sizeof(out)), 0);
		/* The wrong size, a cut stream and a damaged one all fail. */
		assert_int_not_equal(decompress_buf(c, z, zlen, out, sizeof(out) - 1), 0);
		assert_int_not_equal(decompress_buf(c, z, zlen - 1, out, sizeof(out)), 0);
		z[zlen / 2] ^= 0x55;
		int r = decompress_buf(c, z, zlen, out, sizeof(out));
		assert_true(r != 0 || memcmp(in, out, sizeof(in)) != 0);
		compressor_free(c);
	}
	assert_string_equal(codec_name(IMAGE_CODEC_ZLIB), "zlib");
	assert_int_equal(codec_by_name("zstd"), IMAGE_CODEC_ZSTD);
	assert_int_equal(codec_by_name("lzma"), 0);
}

/* CRC-32C from its definition, one bit at a time. */
static uint32_t crc32c_bitwise(const uint8_t *p, size_t len)
{
	uint32_t c = ~0u;

	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
	}
	return ~c;
}

static void test_crc32c_and_the_incompressibility_sample(void **state)
{
	static uint8_t rnd[262144], text[262144];
	uint64_t x = 88172645463325252ULL;
	(void)state;

	/* The check value of CRC-32C. */
	assert_int_equal(crc32c(0, "123456789", 9), 0xE3069283);
	/* In pieces, as a stream. */
	assert_int_equal(crc32c(crc32c(0, "1234", 4), "56789", 5), 0xE3069283);
	for (size_t i = 0; i < sizeof(rnd); i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		rnd[i] = (uint8_t)x;
		text[i] = "the quick brown fox jumps over the lazy dog\n"[i % 44];
	}
	/* Long runs take three stripes at once: the same CRC as bit by bit, whatever the length
	 * and alignment, whole or in pieces. */
	const size_t lens[] = {12287, 12288, 12289, 3 * 12288 + 5, sizeof(rnd) - 3};
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		for (size_t off = 0; off < 3; off++) {
			uint32_t want = crc32c_bitwise(rnd + off, lens[i]);
			assert_int_equal(crc32c(0, rnd + off, lens[i]), want);
			assert_int_equal(
			    crc32c(crc32c(0, rnd + off, 5000), rnd + off + 5000, lens[i] - 5000),
			    want);
		}
	assert_true(compress_looks_incompressible(rnd, sizeof(rnd)));
	assert_false(compress_looks_incompressible(text, sizeof(text)));
	memset(text, 0, sizeof(text));
	assert_false(compress_looks_incompressible(text, sizeof(text)));
}

/* Rewrites byte range [AT, AT+N) of the header at DIR to P and fixes its checksum, as a forger
 * would. */
static void forge_header(const char *dir, size_t at, const void *p, size_t n)
{
	char path[400];
	uint8_t hdr[2048];

	snprintf(path, sizeof(path), "%s/header", dir);
	int fd = open(path, O_RDWR);
	ssize_t len = read(fd, hdr, sizeof(hdr));
	assert_true(len > (ssize_t)(at + n + 4));
	memcpy(hdr + at, p, n);
	uint32_t crc = crc32(0, hdr, len - 4);
	for (int i = 0; i < 4; i++)
		hdr[len - 4 + i] = crc >> (8 * i);
	assert_int_equal(pwrite(fd, hdr, len, 0), len);
	close(fd);
}

static void test_a_fifo_or_a_symlink_for_a_file_is_refused_without_blocking(void **state)
{
	uint8_t a[300] = {1}, b[40] = {2};
	struct image img, back;
	char dir[300], path[400], moved[400], *err = NULL;
	(void)state;

	snprintf(dir, sizeof(dir), "%s/special", base);
	make_image(&img, a, sizeof(a), b, sizeof(b));
	assert_int_equal(image_write(AT_FDCWD, dir, &img, false, &err), 0);
	/* A link to the very bytes the header expects is refused all the same: it could name
	 * any file of the host. */
	snprintf(path, sizeof(path), "%s/alpha.z", dir);
	snprintf(moved, sizeof(moved), "%s/alpha.real", base);
	assert_int_equal(rename(path, moved), 0);
	assert_int_equal(symlink(moved, path), 0);
	assert_int_not_equal(image_read(dir, &back, &err), 0);
	assert_non_null(strstr(err, "not a regular file"));
	free(err);
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_not_equal(image_read(dir, &back, &err), 0);
	assert_non_null(strstr(err, "not a regular file"));
	free(err);
	snprintf(path, sizeof(path), "%s/header", dir);
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_not_equal(image_read_header(dir, &back, &err), 0);
	assert_non_null(strstr(err, "not a regular file"));
	free(err);
	unlink(moved);
}

static void test_a_section_longer_than_its_bytes_can_hold_is_refused(void **state)
{
	uint8_t a[300] = {1}, b[40] = {2}, len[8];
	struct image img, back;
	char dir[300], *err = NULL;
	uint64_t huge = 1ULL << 32;
	(void)state;

	snprintf(dir, sizeof(dir), "%s/bomb", base);
	make_image(&img, a, sizeof(a), b, sizeof(b));
	assert_int_equal(image_write(AT_FDCWD, dir, &img, false, &err), 0);
	/* 4 GiB claimed for a few stored bytes: refused before anything is allocated. */
	for (int i = 0; i < 8; i++)
		len[i] = huge >> (8 * i);
	forge_header(dir, 24 + IMAGE_NAME_MAX, len, sizeof(len));
	assert_int_not_equal(image_read(dir, &back, &err), 0);
	assert_non_null(strstr(err, "size"));
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_records_round_trip),
	    cmocka_unit_test(test_a_truncated_record_fails_without_reading_past_it),
	    cmocka_unit_test(test_a_string_longer_than_its_buffer_or_with_a_nul_fails),
	    cmocka_unit_test(test_times_out_of_range_are_refused),
	    cmocka_unit_test(test_references_are_saved_once_and_resolve_by_id),
	    cmocka_unit_test(test_an_image_round_trips),
	    cmocka_unit_test(test_an_image_is_read_by_its_directory_descriptor),
	    cmocka_unit_test(test_a_full_directory_is_refused_unless_forced),
	    cmocka_unit_test(test_a_forced_write_never_follows_links),
	    cmocka_unit_test(test_every_flipped_byte_is_caught),
	    cmocka_unit_test(test_truncated_missing_and_foreign_images_are_refused),
	    cmocka_unit_test(test_another_format_version_is_named),
	    cmocka_unit_test(test_version_one_images_are_still_read),
	    cmocka_unit_test(test_sizes_a_header_claims_are_bounded_by_the_files),
	    cmocka_unit_test(test_a_fifo_or_symlink_in_place_of_a_file_is_refused_without_blocking),
	    cmocka_unit_test(test_data_files_are_made_beside_the_sections_and_opened_with_care),
	    cmocka_unit_test(test_codecs_round_trip_and_refuse_damage),
	    cmocka_unit_test(test_crc32c_and_the_incompressibility_sample),
	    cmocka_unit_test(test_a_fifo_or_a_symlink_for_a_file_is_refused_without_blocking),
	    cmocka_unit_test(test_a_section_longer_than_its_bytes_can_hold_is_refused),
	    cmocka_unit_test(test_a_tagged_write_is_cleaned_up_after_its_writer_died),
	};
	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
