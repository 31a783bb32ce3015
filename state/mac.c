/* SHA-256 as FIPS 180-4 §6.2 specifies it, HMAC as RFC 2104 does, and the image's "mac"
 * section built from them (state/mac.h). Written from the standards; the unit tests hold it to
 * their published vectors (FIPS 180-2 appendix B, RFC 4231). */
#include "state/mac.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static void block(uint32_t h[8], const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, k;

	for (int t = 0; t < 16; t++)
		w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
		       (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
	for (int t = 16; t < 64; t++) {
		uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
		uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
		w[t] = w[t - 16] + s0 + w[t - 7] + s1;
	}
	a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
	for (int t = 0; t < 64; t++) {
		uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) +
			      K[t] + w[t];
		uint32_t t2 =
		    (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

void sha256_init(struct sha256 *c)
{
	static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
				       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	memcpy(c->h, h0, sizeof(h0));
	c->bytes = 0;
	c->fill = 0;
}

void sha256_update(struct sha256 *c, const void *data, size_t len)
{
	const uint8_t *p = data;

	c->bytes += len;
	if (c->fill) {
		size_t n = SHA256_BLOCK - c->fill < len ? SHA256_BLOCK - c->fill : len;
		memcpy(c->buf + c->fill, p, n);
		c->fill += n, p += n, len -= n;
		if (c->fill < SHA256_BLOCK)
			return;
		block(c->h, c->buf);
		c->fill = 0;
	}
	for (; len >= SHA256_BLOCK; p += SHA256_BLOCK, len -= SHA256_BLOCK)
		block(c->h, p);
	memcpy(c->buf, p, len);
	c->fill = len;
}

void sha256_final(struct sha256 *c, uint8_t out[SHA256_LEN])
{
	uint64_t bits = c->bytes * 8;
	uint8_t pad[SHA256_BLOCK + 8] = {0x80};
	/* A 1 bit, zeros, then the length in bits: the message fills a whole number of blocks. */
	size_t padlen = (c->fill < 56 ? 56 : 120) - c->fill;

	for (int i = 0; i < 8; i++)
		pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_update(c, pad, padlen + 8);
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 4; j++)
			out[4 * i + j] = (uint8_t)(c->h[i] >> (24 - 8 * j));
	memset(c, 0, sizeof(*c));
}

void sha256(const void *data, size_t len, uint8_t out[SHA256_LEN])
{
	struct sha256 c;

	sha256_init(&c);
	sha256_update(&c, data, len);
	sha256_final(&c, out);
}

void hmac_sha256_init(struct hmac_sha256 *c, const void *key, size_t klen)
{
	uint8_t k[SHA256_BLOCK] = {0}, ikey[SHA256_BLOCK];

	/* RFC 2104 §2: a key longer than a block is hashed first; shorter ones are zero-padded. */
	if (klen > SHA256_BLOCK)
		sha256(key, klen, k);
	else
		memcpy(k, key, klen);
	for (int i = 0; i < SHA256_BLOCK; i++) {
		ikey[i] = k[i] ^ 0x36;
		c->okey[i] = k[i] ^ 0x5c;
	}
	sha256_init(&c->inner);
	sha256_update(&c->inner, ikey, sizeof(ikey));
	memset(k, 0, sizeof(k));
	memset(ikey, 0, sizeof(ikey));
}

void hmac_sha256_update(struct hmac_sha256 *c, const void *data, size_t len)
{
	sha256_update(&c->inner, data, len);
}

void hmac_sha256_final(struct hmac_sha256 *c, uint8_t out[SHA256_LEN])
{
	uint8_t ih[SHA256_LEN];
	struct sha256 o;

	sha256_final(&c->inner, ih);
	sha256_init(&o);
	sha256_update(&o, c->okey, sizeof(c->okey));
	sha256_update(&o, ih, sizeof(ih));
	sha256_final(&o, out);
	memset(c, 0, sizeof(*c));
}

void hmac_sha256(const void *key, size_t klen, const void *data, size_t len,
		 uint8_t out[SHA256_LEN])
{
	struct hmac_sha256 c;

	hmac_sha256_init(&c, key, klen);
	hmac_sha256_update(&c, data, len);
	hmac_sha256_final(&c, out);
}

/* The mac section: MAC_TAG, the image's flags and section count (u32 each, little-endian),
 * one entry per other section (name, length, count, SHA-256 of the data), then the HMAC of
 * everything before it. */
#define MAC_TAG "MSNTYMAC1"
#define MAC_TAG_LEN 9
#define MAC_ENTRY (IMAGE_NAME_MAX + 8 + 8 + SHA256_LEN)

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static size_t manifest_len(int n)
{
	return MAC_TAG_LEN + 8 + (size_t)n * MAC_ENTRY;
}

/* The manifest of IMG's sections other than the mac section, into OUT (manifest_len bytes). */
static int manifest(const struct image *img, uint8_t *out, int *count)
{
	uint8_t *p = out + MAC_TAG_LEN + 8;
	int n = 0;

	memcpy(out, MAC_TAG, MAC_TAG_LEN);
	for (int i = 0; i < img->nsections; i++) {
		const struct image_section *s = &img->sec[i];
		if (!strcmp(s->name, IMAGE_MAC_SECTION))
			continue;
		memset(p, 0, IMAGE_NAME_MAX);
		memcpy(p, s->name, strnlen(s->name, IMAGE_NAME_MAX - 1));
		put_le(p + IMAGE_NAME_MAX, s->len, 8);
		put_le(p + IMAGE_NAME_MAX + 8, s->count, 8);
		sha256(s->len ? s->data : (const uint8_t *)"", s->len, p + IMAGE_NAME_MAX + 16);
		p += MAC_ENTRY;
		n++;
	}
	put_le(out + MAC_TAG_LEN, img->flags, 4);
	put_le(out + MAC_TAG_LEN + 4, (uint64_t)n, 4);
	*count = n;
	return 0;
}

int image_mac_sign(struct image *img, const void *key, size_t klen)
{
	int n;

	if (img->nsections >= IMAGE_MAX_SECTIONS)
		return -EINVAL;
	size_t mlen = manifest_len(img->nsections);
	uint8_t *buf = malloc(mlen + SHA256_LEN);
	if (!buf)
		return -ENOMEM;
	manifest(img, buf, &n);
	mlen = manifest_len(n);
	hmac_sha256(key, klen, buf, mlen, buf + mlen);
	struct image_section *s = &img->sec[img->nsections++];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", IMAGE_MAC_SECTION);
	s->data = buf;
	s->len = mlen + SHA256_LEN;
	s->count = 1;
	return 0;
}

void image_mac_free(struct image *img)
{
	if (img->nsections && !strcmp(img->sec[img->nsections - 1].name, IMAGE_MAC_SECTION)) {
		free(img->sec[img->nsections - 1].data);
		img->nsections--;
	}
}

static int refuse(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(char **err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
	return -EBADMSG;
}

/* Equal without a timing signal of where they differ. */
static int differ(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint8_t d = 0;
	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d != 0;
}

int image_mac_verify(const struct image *img, const void *key, size_t klen, const char *dir,
		     char **err)
{
	const struct image_section *m = NULL;
	uint8_t mac[SHA256_LEN];
	int n, macs = 0;

	*err = NULL;
	for (int i = 0; i < img->nsections; i++)
		if (!strcmp(img->sec[i].name, IMAGE_MAC_SECTION))
			m = &img->sec[i], macs++;
	if (!m)
		return refuse(err, "image '%s' is not signed (no MAC; --image-key requires one)",
			      dir);
	size_t mlen = manifest_len(img->nsections - 1);
	if (macs != 1 || m->len != mlen + SHA256_LEN)
		return refuse(err, "image '%s' has a malformed MAC section", dir);
	/* The HMAC first: nothing in an unauthenticated manifest is looked at. */
	hmac_sha256(key, klen, m->data, mlen, mac);
	if (differ(mac, m->data + mlen, SHA256_LEN))
		return refuse(err, "image '%s': MAC mismatch (wrong key, or the image was altered)",
			      dir);
	uint8_t *want = malloc(mlen);
	if (!want)
		return -ENOMEM;
	manifest(img, want, &n);
	int bad =
	    get_le(m->data + MAC_TAG_LEN + 4, 4) != (uint64_t)n || differ(want, m->data, mlen);
	free(want);
	if (bad)
		return refuse(err,
			      "image '%s': a section does not match its signed digest (the image "
			      "was altered after signing)",
			      dir);
	return 0;
}

int image_key_read(const char *path, uint8_t key[IMAGE_KEY_MAX], char **err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	ssize_t got = 0;

	*err = NULL;
	if (fd < 0) {
		refuse(err, "key file '%s': %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		refuse(err, "key file '%s' is not a regular file", path);
		return -1;
	}
	while (got < IMAGE_KEY_MAX) {
		ssize_t r = read(fd, key + got, IMAGE_KEY_MAX - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += r;
	}
	char extra;
	bool more = got == IMAGE_KEY_MAX && read(fd, &extra, 1) == 1;
	close(fd);
	if (got < IMAGE_KEY_MIN || more) {
		refuse(err, "key file '%s' must hold %d to %d bytes", path, IMAGE_KEY_MIN,
		       IMAGE_KEY_MAX);
		return -1;
	}
	return (int)got;
}
