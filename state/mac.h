/* An image's keyed MAC (--image-key): SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), and a
 * "mac" section that binds every other section. CRC-32 catches accidents; only a keyed MAC
 * tells a forged or edited image from the one the key holder's Sentry wrote. */
#ifndef STATE_MAC_H
#define STATE_MAC_H

#include <stddef.h>
#include <stdint.h>

#include "state/image.h"

#define SHA256_LEN 32
#define SHA256_BLOCK 64
#define IMAGE_MAC_SECTION "mac"
#define IMAGE_KEY_MIN 16 /* bytes: a shorter key is refused as too easy to guess */
#define IMAGE_KEY_MAX 4096

struct sha256 {
	uint32_t h[8];
	uint64_t bytes;
	uint8_t buf[SHA256_BLOCK];
	size_t fill;
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t len);
void sha256_final(struct sha256 *c, uint8_t out[SHA256_LEN]);
void sha256(const void *data, size_t len, uint8_t out[SHA256_LEN]);

struct hmac_sha256 {
	struct sha256 inner;
	uint8_t okey[SHA256_BLOCK];
};

void hmac_sha256_init(struct hmac_sha256 *c, const void *key, size_t klen);
void hmac_sha256_update(struct hmac_sha256 *c, const void *data, size_t len);
void hmac_sha256_final(struct hmac_sha256 *c, uint8_t out[SHA256_LEN]);
void hmac_sha256(const void *key, size_t klen, const void *data, size_t len,
		 uint8_t out[SHA256_LEN]);

/* Appends to IMG a section IMAGE_MAC_SECTION holding the manifest (each section's name,
 * length, record count and SHA-256 of its data, in order) and the HMAC of the manifest with
 * KEY. The section's data is malloc'd into IMG (image_mac_free releases it). 0 or -errno. */
int image_mac_sign(struct image *img, const void *key, size_t klen);
void image_mac_free(struct image *img);

/* Checks a read image against KEY: the mac section must be there, its HMAC right, and the
 * manifest must name exactly the image's other sections with the digests of their data. On
 * failure *ERR (malloc'd) says why in one line naming DIR. */
int image_mac_verify(const struct image *img, const void *key, size_t klen, const char *dir,
		     char **err);

/* Reads a key file (IMAGE_KEY_MIN..IMAGE_KEY_MAX bytes, used as they are) into KEY; returns its
 * length, or -1 with *ERR (malloc'd) saying why. */
int image_key_read(const char *path, uint8_t key[IMAGE_KEY_MAX], char **err);

#endif
