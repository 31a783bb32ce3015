/* The image's codecs over whole buffers (zlib, and zstd when built with it), the sample test
 * that sends incompressible memory around them, and the CRC-32C of stored bytes. Why these:
 * docs/checkpoint.md, "Moving memory". */
#include "state/compress.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef HAVE_ZSTD
#include <zstd.h>
#endif

struct compressor {
	uint32_t codec;
	z_stream def, inf;
	bool def_ready, inf_ready;
#ifdef HAVE_ZSTD
	ZSTD_CCtx *zc;
	ZSTD_DCtx *zd;
#endif
};

const char *codec_name(uint32_t codec)
{
	return codec == IMAGE_CODEC_ZLIB ? "zlib" : codec == IMAGE_CODEC_ZSTD ? "zstd" : NULL;
}

uint32_t codec_by_name(const char *name)
{
	if (!strcmp(name, "zlib"))
		return IMAGE_CODEC_ZLIB;
	if (!strcmp(name, "zstd"))
		return IMAGE_CODEC_ZSTD;
	return 0;
}

bool codec_available(uint32_t codec)
{
#ifdef HAVE_ZSTD
	if (codec == IMAGE_CODEC_ZSTD)
		return true;
#endif
	return codec == IMAGE_CODEC_ZLIB;
}

struct compressor *compressor_new(uint32_t codec)
{
	struct compressor *c;

	if (!codec_available(codec) || !(c = calloc(1, sizeof(*c))))
		return NULL;
	c->codec = codec;
	return c;
}

void compressor_free(struct compressor *c)
{
	if (!c)
		return;
	if (c->def_ready)
		deflateEnd(&c->def);
	if (c->inf_ready)
		inflateEnd(&c->inf);
#ifdef HAVE_ZSTD
	ZSTD_freeCCtx(c->zc);
	ZSTD_freeDCtx(c->zd);
#endif
	free(c);
}

size_t compress_bound(uint32_t codec, size_t len)
{
#ifdef HAVE_ZSTD
	if (codec == IMAGE_CODEC_ZSTD)
		return ZSTD_compressBound(len);
#endif
	(void)codec;
	/* zlib's compressBound, for lengths past its uLong on any platform: stored blocks cost 5
	 * bytes per 16 KiB, plus the stream's header and trailer. */
	return len + (len >> 12) + (len >> 14) + (len >> 25) + 13 + 64;
}

/* zlib's avail_in and avail_out are 32-bit: feed and drain in steps. */
#define ZSTEP (1u << 30)

static int zlib_compress(struct compressor *c, const uint8_t *in, size_t len, uint8_t *out,
			 size_t *outlen)
{
	size_t in_left = len, out_left = *outlen;
	int r;

	/* Level 1: a checkpoint is on the critical path; higher levels gain little on guest
	 * memory. One stream per thread, reset per buffer: zlib's state (some 300 KiB) is then set
	 * up once, not once per section, which for a small image cost more in fresh pages than
	 * the compression itself. */
	if (!c->def_ready) {
		if (deflateInit(&c->def, 1) != Z_OK)
			return -1;
		c->def_ready = true;
	} else if (deflateReset(&c->def) != Z_OK) {
		return -1;
	}
	c->def.next_in = (Bytef *)in;
	c->def.next_out = out;
	do {
		c->def.avail_in = in_left < ZSTEP ? (uInt)in_left : ZSTEP;
		c->def.avail_out = out_left < ZSTEP ? (uInt)out_left : ZSTEP;
		uInt in0 = c->def.avail_in, out0 = c->def.avail_out;
		r = deflate(&c->def, in_left <= ZSTEP ? Z_FINISH : Z_NO_FLUSH);
		in_left -= in0 - c->def.avail_in;
		out_left -= out0 - c->def.avail_out;
	} while (r == Z_OK || (r == Z_BUF_ERROR && out_left > 0));
	if (r != Z_STREAM_END)
		return -1;
	*outlen -= out_left;
	return 0;
}

static int zlib_decompress(struct compressor *c, const uint8_t *in, size_t inlen, uint8_t *out,
			   size_t outlen)
{
	size_t in_left = inlen, out_left = outlen;
	int r;

	if (!c->inf_ready) {
		if (inflateInit(&c->inf) != Z_OK)
			return -1;
		c->inf_ready = true;
	} else if (inflateReset(&c->inf) != Z_OK) {
		return -1;
	}
	c->inf.next_in = (Bytef *)in;
	c->inf.next_out = out;
	do {
		c->inf.avail_in = in_left < ZSTEP ? (uInt)in_left : ZSTEP;
		c->inf.avail_out = out_left < ZSTEP ? (uInt)out_left : ZSTEP;
		uInt in0 = c->inf.avail_in, out0 = c->inf.avail_out;
		r = inflate(&c->inf, Z_NO_FLUSH);
		in_left -= in0 - c->inf.avail_in;
		out_left -= out0 - c->inf.avail_out;
		/* No progress with room on both sides: the stream is cut short. */
		if (r == Z_BUF_ERROR && (in0 == c->inf.avail_in && out0 == c->inf.avail_out))
			return -1;
	} while (r == Z_OK || r == Z_BUF_ERROR);
	/* The stream must end exactly where both buffers do. */
	return r == Z_STREAM_END && in_left == 0 && out_left == 0 ? 0 : -1;
}

int compress_buf(struct compressor *c, const void *in, size_t len, void *out, size_t *outlen)
{
#ifdef HAVE_ZSTD
	if (c->codec == IMAGE_CODEC_ZSTD) {
		if (!c->zc && !(c->zc = ZSTD_createCCtx()))
			return -1;
		size_t r = ZSTD_compressCCtx(c->zc, out, *outlen, in, len, 1);
		if (ZSTD_isError(r))
			return -1;
		*outlen = r;
		return 0;
	}
#endif
	return zlib_compress(c, in, len, out, outlen);
}

int decompress_buf(struct compressor *c, const void *in, size_t inlen, void *out, size_t outlen)
{
#ifdef HAVE_ZSTD
	if (c->codec == IMAGE_CODEC_ZSTD) {
		if (!c->zd && !(c->zd = ZSTD_createDCtx()))
			return -1;
		/* A frame that names its size must name this one; zstd never writes past OUTLEN. */
		unsigned long long want = ZSTD_getFrameContentSize(in, inlen);
		if (want != ZSTD_CONTENTSIZE_UNKNOWN && want != outlen)
			return -1;
		size_t r = ZSTD_decompressDCtx(c->zd, out, outlen, in, inlen);
		return !ZSTD_isError(r) && r == outlen ? 0 : -1;
	}
#endif
	return zlib_decompress(c, in, inlen, out, outlen);
}

bool compress_looks_incompressible(const void *p, size_t len)
{
	/* Four 1 KiB samples spread over the buffer, and how far their byte histogram is from
	 * flat (Pearson's chi-square over 256 values, 16 expected of each): random bytes give
	 * about 255 ± 23; text, code, pointers and tables give thousands. Above 400 a buffer is
	 * tried; at or below it, it is stored raw: random, encrypted or already compressed data,
	 * on which zlib runs at 20-50 MB/s for nothing. What this cannot see (a random block
	 * repeated within the window) is only stored larger than it could be, never wrong. */
	enum { SLICE = 1024, SLICES = 4, EXPECTED = SLICE * SLICES / 256 };
	uint32_t hist[256] = {0};
	const uint8_t *b = p;

	if (len < SLICE * SLICES)
		return false;
	for (int s = 0; s < SLICES; s++) {
		const uint8_t *q = b + (len - SLICE) / (SLICES - 1) * s;
		for (int i = 0; i < SLICE; i++)
			hist[q[i]]++;
	}
	uint64_t chi = 0;
	for (int i = 0; i < 256; i++) {
		int64_t d = (int64_t)hist[i] - EXPECTED;
		chi += (uint64_t)(d * d);
	}
	return chi / EXPECTED <= 400;
}

/* CRC-32C: the SSE 4.2 instruction takes 8 bytes a step; the table is the fallback. */
#define CRC_POLY 0x82F63B78u /* reflected: bit 31 is x^0 */
#define CRC_STRIPE 4096

static uint32_t crc_table[256];
static uint32_t crc_shift_stripe, crc_shift_2stripe; /* x^(8 STRIPE), x^(16 STRIPE) mod P */
static bool crc_hw;

/* A times B modulo the polynomial, both reflected. */
static uint32_t crc_gf_mul(uint32_t a, uint32_t b)
{
	uint32_t p = 0;

	for (int i = 0; i < 32; i++) {
		if (a & (1u << 31 >> i))
			p ^= b;
		b = b & 1 ? (b >> 1) ^ CRC_POLY : b >> 1;
	}
	return p;
}

/* x^(8N) mod P: what a CRC register is multiplied by when N zero bytes follow. */
static uint32_t crc_x_pow_8n(uint64_t n)
{
	uint32_t r = 1u << 31, sq = 1u << 23; /* x^0, x^8 */

	for (; n; n >>= 1, sq = crc_gf_mul(sq, sq))
		if (n & 1)
			r = crc_gf_mul(r, sq);
	return r;
}

static void crc_init(void)
{
	crc_hw = __builtin_cpu_supports("sse4.2");
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ CRC_POLY : c >> 1;
		crc_table[i] = c;
	}
	crc_shift_stripe = crc_x_pow_8n(CRC_STRIPE);
	crc_shift_2stripe = crc_x_pow_8n(2 * CRC_STRIPE);
}

static uint32_t crc32c_soft(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const uint8_t *p,
							    size_t len)
{
	uint64_t c = crc;

	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	/* Three stripes at once: the instruction has a latency of three cycles and issues one a
	 * cycle, so one stream uses a third of it (7 MB: 0.95 -> 0.45 ms). The register is linear
	 * in its input: the stripes' CRCs join as A x^(16 STRIPE) + B x^(8 STRIPE) + C. */
	while (len >= 3 * CRC_STRIPE) {
		uint64_t a = c, b = 0, d = 0;
		for (size_t i = 0; i < CRC_STRIPE; i += 8) {
			uint64_t u, v, w;
			memcpy(&u, p + i, 8);
			memcpy(&v, p + CRC_STRIPE + i, 8);
			memcpy(&w, p + 2 * CRC_STRIPE + i, 8);
			a = __builtin_ia32_crc32di(a, u);
			b = __builtin_ia32_crc32di(b, v);
			d = __builtin_ia32_crc32di(d, w);
		}
		c = crc_gf_mul((uint32_t)a, crc_shift_2stripe) ^
		    crc_gf_mul((uint32_t)b, crc_shift_stripe) ^ (uint32_t)d;
		p += 3 * CRC_STRIPE;
		len -= 3 * CRC_STRIPE;
	}
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}

uint32_t crc32c(uint32_t crc, const void *p, size_t len)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, crc_init);
	crc = ~crc;
	crc = crc_hw ? crc32c_hw(crc, p, len) : crc32c_soft(crc, p, len);
	return ~crc;
}
