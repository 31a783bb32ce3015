/* Unit tests for the image MAC: SHA-256 against FIPS 180-2's examples, HMAC-SHA-256 against
 * every RFC 4231 test case, and the mac section: a signed image verifies with its key and is
 * refused when the key is wrong, the MAC is missing, or any section is changed, added, removed
 * or reordered. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state/mac.h"

static void hex(const char *h, uint8_t *out, size_t *len)
{
	size_t n = 0;
	for (; h[0] && h[1]; h += 2) {
		unsigned v;
		sscanf(h, "%2x", &v);
		out[n++] = (uint8_t)v;
	}
	*len = n;
}

static void assert_digest(const uint8_t *got, const char *want_hex, size_t n)
{
	uint8_t want[64];
	size_t len;
	hex(want_hex, want, &len);
	assert_true(len >= n);
	assert_memory_equal(got, want, n);
}

static void test_sha256_matches_fips_180_examples(void **state)
{
	uint8_t d[SHA256_LEN];
	(void)state;

	sha256("abc", 3, d);
	assert_digest(d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", 32);
	sha256("", 0, d);
	assert_digest(d, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", 32);
	const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	sha256(m, strlen(m), d);
	assert_digest(d, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", 32);
	/* A million 'a's, fed in uneven pieces so that every buffering path is taken. */
	struct sha256 c;
	char a[1000];
	memset(a, 'a', sizeof(a));
	sha256_init(&c);
	for (size_t done = 0, step = 1; done < 1000000; step = step % 997 + 1) {
		size_t n = 1000000 - done < step ? 1000000 - done : step;
		sha256_update(&c, a, n);
		done += n;
	}
	sha256_final(&c, d);
	assert_digest(d, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0", 32);
}

struct rfc4231_case {
	const char *key, *data, *mac;
	size_t maclen;
};

/* RFC 4231 §4.2-4.8; keys and data in hex. Case 5's output is truncated to 128 bits. */
static const struct rfc4231_case rfc4231[] = {
    {"0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
     "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7", 32},
    {"4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
     "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", 32},
    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     "ddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
     "ddddddd",
     "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe", 32},
    {"0102030405060708090a0b0c0d0e0f10111213141516171819",
     "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdc"
     "dcdcdcd",
     "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b", 32},
    {"0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c", "546573742057697468205472756e636174696f6e",
     "a3b6167473100ee06e0c796c2955552b", 16},
    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368"
     "204b6579204669727374",
     "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54", 32},
    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     "5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d73697a"
     "65206b657920616e642061206c6172676572207468616e20626c6f636b2d73697a6520646174612e20546865"
     "206b6579206e6565647320746f20626520686173686564206265666f7265206265696e672075736564206279"
     "2074686520484d414320616c676f726974686d2e",
     "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2", 32},
};

static void test_hmac_sha256_matches_every_rfc_4231_case(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rfc4231) / sizeof(rfc4231[0]); i++) {
		uint8_t key[256], data[256], mac[SHA256_LEN];
		size_t klen, dlen;
		hex(rfc4231[i].key, key, &klen);
		hex(rfc4231[i].data, data, &dlen);
		hmac_sha256(key, klen, data, dlen, mac);
		assert_digest(mac, rfc4231[i].mac, rfc4231[i].maclen);
	}
}

static const char key[] = "0123456789abcdef-image-key";

static void make_image(struct image *img, char bufs[3][32])
{
	static const char *names[] = {"kernel", "memory", "tasks"};
	memset(img, 0, sizeof(*img));
	img->version = 1;
	img->nsections = 3;
	for (int i = 0; i < 3; i++) {
		snprintf(bufs[i], 32, "section %d holds this", i);
		snprintf(img->sec[i].name, IMAGE_NAME_MAX, "%s", names[i]);
		img->sec[i].data = (uint8_t *)bufs[i];
		img->sec[i].len = strlen(bufs[i]);
		img->sec[i].count = i + 1;
	}
}

static int verify(const struct image *img, const char *k)
{
	char *err = NULL;
	int r = image_mac_verify(img, k, strlen(k), "img", &err);
	if (r)
		assert_non_null(err);
	free(err);
	return r;
}

static void test_a_signed_image_verifies_with_its_key_only(void **state)
{
	struct image img;
	char bufs[3][32];
	(void)state;

	make_image(&img, bufs);
	assert_int_equal(verify(&img, key), -EBADMSG); /* not signed yet */
	assert_int_equal(image_mac_sign(&img, key, strlen(key)), 0);
	assert_int_equal(img.nsections, 4);
	assert_int_equal(verify(&img, key), 0);
	assert_int_equal(verify(&img, "0123456789abcdef-image-kez"), -EBADMSG);
	image_mac_free(&img);
	assert_int_equal(img.nsections, 3);
}

static void test_any_change_to_a_signed_image_is_refused(void **state)
{
	struct image img, saved;
	char bufs[3][32];
	(void)state;

	make_image(&img, bufs);
	assert_int_equal(image_mac_sign(&img, key, strlen(key)), 0);
	saved = img;
	/* A byte of a section's data. */
	bufs[1][3] ^= 1;
	assert_int_equal(verify(&img, key), -EBADMSG);
	bufs[1][3] ^= 1;
	assert_int_equal(verify(&img, key), 0);
	/* A record count, a length. */
	img.sec[2].count++;
	assert_int_equal(verify(&img, key), -EBADMSG);
	img = saved;
	img.sec[0].len--;
	assert_int_equal(verify(&img, key), -EBADMSG);
	/* Sections reordered, one removed, one added. */
	img = saved;
	struct image_section t = img.sec[0];
	img.sec[0] = img.sec[1];
	img.sec[1] = t;
	assert_int_equal(verify(&img, key), -EBADMSG);
	img = saved;
	img.sec[1] = img.sec[2];
	img.sec[2] = img.sec[3];
	img.nsections--;
	assert_int_equal(verify(&img, key), -EBADMSG);
	img = saved;
	img.sec[4] = img.sec[3];
	img.sec[3] = img.sec[2];
	snprintf(img.sec[3].name, IMAGE_NAME_MAX, "extra");
	img.nsections++;
	assert_int_equal(verify(&img, key), -EBADMSG);
	/* The image's flags. */
	img = saved;
	img.flags = 1;
	assert_int_equal(verify(&img, key), -EBADMSG);
	/* The MAC itself. */
	img = saved;
	img.sec[3].data[img.sec[3].len - 1] ^= 0x80;
	assert_int_equal(verify(&img, key), -EBADMSG);
	img.sec[3].data[img.sec[3].len - 1] ^= 0x80;
	img.sec[3].len--;
	assert_int_equal(verify(&img, key), -EBADMSG);
	img = saved;
	assert_int_equal(verify(&img, key), 0);
	image_mac_free(&img);
}

static void test_a_key_file_must_be_long_enough(void **state)
{
	char path[] = "/tmp/minisentry-keyXXXXXX";
	uint8_t k[IMAGE_KEY_MAX];
	char *err = NULL;
	int fd = mkstemp(path);
	(void)state;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "short", 5), 5);
	assert_int_equal(image_key_read(path, k, &err), -1);
	assert_non_null(strstr(err, "must hold"));
	free(err);
	assert_int_equal(write(fd, "-but-now-long-enough", 20), 20);
	assert_int_equal(image_key_read(path, k, &err), 25);
	assert_memory_equal(k, "short-but-now-long-enough", 25);
	close(fd);
	unlink(path);
	assert_int_equal(image_key_read(path, k, &err), -1);
	free(err);
	assert_int_equal(image_key_read("/tmp", k, &err), -1);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sha256_matches_fips_180_examples),
	    cmocka_unit_test(test_hmac_sha256_matches_every_rfc_4231_case),
	    cmocka_unit_test(test_a_signed_image_verifies_with_its_key_only),
	    cmocka_unit_test(test_any_change_to_a_signed_image_is_refused),
	    cmocka_unit_test(test_a_key_file_must_be_long_enough),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
