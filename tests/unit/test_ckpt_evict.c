/* Unit tests for the report of eviction before save (sentry/evict.c): the image's `evicted`
 * record, the control reply's words and the one wording the checkpoint line and inspect share;
 * and inspect of images with that section, with a bad one, and without one (images written
 * before it existed). */
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
#include <unistd.h>

#include "sentry/checkpoint.h"
#include "sentry/evict.h"
#include "state/codec.h"
#include "state/image.h"

static const struct evict_report walked = {
    .nodes = 224,
    .heap_bytes = 44448,
    .nkinds = 2,
    .kind = {{"proc", 155}, {"sysfs", 69}},
};

static void test_report_keeps_its_figures_through_the_image_and_the_reply(void **state)
{
	(void)state;
	struct evict_report r;
	struct enc e;
	struct dec d;
	char text[256], words[256];

	enc_init(&e, NULL);
	evict_report_save(&e, &walked);
	assert_true(enc_ok(&e));
	dec_init(&d, e.buf, e.len, NULL);
	assert_int_equal(evict_report_load(&d, &r), 0);
	assert_true(dec_at_end(&d));
	dec_free(&d);
	enc_free(&e);
	assert_memory_equal(&r, &walked, sizeof(r));

	evict_report_format(&r, text, sizeof(text));
	assert_string_equal(text, "224 unused /proc and /sys nodes evicted (proc 155, sysfs 69; "
				  "44448 bytes of heap)");
	evict_report_words(&r, words, sizeof(words));
	assert_string_equal(words, "224 44448 proc:155,sysfs:69");
	strcat(words, " a note");
	assert_true(evict_report_parse(words, &r));
	assert_memory_equal(&r, &walked, sizeof(r));

	struct evict_report none = {0};
	evict_report_words(&none, words, sizeof(words));
	assert_string_equal(words, "0 0 -");
	assert_true(evict_report_parse(words, &r));
	assert_int_equal(r.nkinds, 0);
	evict_report_format(&none, text, sizeof(text));
	assert_string_equal(text, "0 unused /proc and /sys nodes evicted (0 bytes of heap)");
	assert_false(evict_report_parse("224", &r)); /* an older Sentry's single word */
}

/* A record of NODES and HEAP with N kinds named NAMES[i] of COUNTS[i] nodes. */
static int load_made(uint64_t nodes, uint32_t n, const char *const *names, const uint64_t *counts,
		     char **why)
{
	struct evict_report r;
	struct enc e;
	struct dec d;

	enc_init(&e, NULL);
	enc_u64(&e, nodes);
	enc_u64(&e, 1);
	enc_u32(&e, n);
	for (uint32_t i = 0; i < n; i++) {
		enc_str(&e, names[i]);
		enc_u64(&e, counts[i]);
	}
	dec_init(&d, e.buf, e.len, NULL);
	int ret = evict_report_load(&d, &r);
	*why = d.error ? strdup(d.error) : NULL;
	dec_free(&d);
	enc_free(&e);
	return ret;
}

static void test_load_refuses_a_bad_record(void **state)
{
	(void)state;
	const char *names[9] = {"proc", "sysfs", "a", "b", "c", "d", "e", "f", "g"};
	const uint64_t counts[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
	const char *const bad_name[] = {"Proc\n"}, *const twice[] = {"proc", "proc"};
	char *why;

	assert_int_equal(load_made(9, 2, names, counts, &why), 0);
	free(why);
	assert_int_equal(load_made(9, 9, names, counts, &why), -EINVAL);
	assert_non_null(strstr(why, "mount kinds"));
	free(why);
	assert_int_equal(load_made(9, 1, bad_name, counts, &why), -EINVAL);
	assert_string_equal(why, "bad mount kind");
	free(why);
	assert_int_equal(load_made(9, 2, twice, counts, &why), -EINVAL);
	assert_non_null(strstr(why, "twice"));
	free(why);
	assert_int_equal(load_made(1, 2, names, counts, &why), -EINVAL);
	assert_non_null(strstr(why, "more nodes"));
	free(why);
	assert_int_equal(load_made(9, 3, names, counts, &why), 0);
	free(why);
}

/* Writes an image of one kernel section (and an evicted section of DATA, LEN when DATA) to a
 * new directory under TMP; returns what inspect printed, or NULL with *ERR. */
static char *inspect_made(const char *tmp, const char *name, const void *data, size_t len,
			  char **err)
{
	static uint8_t kernel[1];
	struct image img = {.codec = IMAGE_CODEC_ZLIB, .dirfd = -1};
	char dir[4096], *text = NULL;
	size_t size = 0;

	snprintf(dir, sizeof(dir), "%s/%s", tmp, name);
	snprintf(img.sec[0].name, IMAGE_NAME_MAX, "kernel");
	img.sec[0].data = kernel, img.sec[0].len = 1, img.sec[0].count = 1;
	img.nsections = 1;
	if (data) {
		snprintf(img.sec[1].name, IMAGE_NAME_MAX, "evicted");
		img.sec[1].data = (uint8_t *)data, img.sec[1].len = len, img.sec[1].count = 1;
		img.nsections = 2;
	}
	assert_int_equal(image_write(AT_FDCWD, dir, &img, false, err), 0);
	FILE *out = open_memstream(&text, &size);
	assert_non_null(out);
	int ret = checkpoint_inspect(dir, out, err);
	fclose(out);
	if (ret) {
		free(text);
		return NULL;
	}
	return text;
}

static void test_inspect_prints_the_record_and_reads_images_without_one(void **state)
{
	(void)state;
	char tmp[] = "/tmp/test_ckpt_evict.XXXXXX", *err = NULL, *text;
	struct enc e;

	assert_non_null(mkdtemp(tmp));
	enc_init(&e, NULL);
	evict_report_save(&e, &walked);

	text = inspect_made(tmp, "new", e.buf, e.len, &err);
	assert_non_null(text);
	assert_non_null(strstr(text, "\neviction before save: 224 unused /proc and /sys nodes "
				     "evicted (proc 155, sysfs 69; 44448 bytes of heap)\n"));
	free(text);

	text = inspect_made(tmp, "old", NULL, 0, &err);
	assert_non_null(text);
	assert_non_null(strstr(text, "\neviction before save: not recorded"));
	free(text);

	enc_u8(&e, 0);
	assert_null(inspect_made(tmp, "trailing", e.buf, e.len, &err));
	assert_non_null(strstr(err, "is corrupt (section evicted: trailing bytes)"));
	assert_null(strchr(err, '\n'));
	free(err);
	err = NULL;
	assert_null(inspect_made(tmp, "cut", e.buf, 12, &err));
	assert_non_null(strstr(err, "is corrupt (section evicted: "));
	free(err);
	enc_free(&e);

	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_report_keeps_its_figures_through_the_image_and_the_reply),
	    cmocka_unit_test(test_load_refuses_a_bad_record),
	    cmocka_unit_test(test_inspect_prints_the_record_and_reads_images_without_one),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
