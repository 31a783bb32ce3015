/* compress — the image's codecs, for whole buffers: sections and memory chunks are compressed
 * with the image's codec (zlib always; zstd where minisentry was built with libzstd), memory
 * that would not shrink is detected from a sample and stored raw, and stored bytes carry a
 * CRC-32C (the SSE 4.2 instruction where the CPU has it). One struct compressor per thread:
 * it holds the codec's state and a scratch buffer, so a thread pool compresses in parallel. */
#ifndef STATE_COMPRESS_H
#define STATE_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The codec field of the image header (docs/image-format.md). */
#define IMAGE_CODEC_ZLIB 1
#define IMAGE_CODEC_ZSTD 2

/* "zlib", "zstd", or NULL for an unknown number. */
const char *codec_name(uint32_t codec);
/* The codec named NAME, or 0. */
uint32_t codec_by_name(const char *name);
/* Whether this build can write and read CODEC. */
bool codec_available(uint32_t codec);

struct compressor;

/* A compressor for CODEC, at the codec's fast level; NULL if out of memory or unavailable. */
struct compressor *compressor_new(uint32_t codec);
void compressor_free(struct compressor *c);

/* The most bytes compressing LEN bytes can give. */
size_t compress_bound(uint32_t codec, size_t len);
/* Compresses IN (LEN bytes) into OUT (room for *OUTLEN, at least compress_bound); *OUTLEN is
 * set to the compressed length. 0, or -1 on failure. */
int compress_buf(struct compressor *c, const void *in, size_t len, void *out, size_t *outlen);
/* Decompresses IN into exactly OUTLEN bytes at OUT: 0, or -1 if IN is corrupt, does not fill
 * OUT exactly or would overflow it. */
int decompress_buf(struct compressor *c, const void *in, size_t inlen, void *out, size_t outlen);

/* True when LEN bytes at P look like they would not compress (a few samples' byte histogram
 * is flat: random, encrypted or already compressed data), so storing them raw costs nothing
 * in size and saves the compressor's time, which on such data is 20-50 MB/s for zlib. */
bool compress_looks_incompressible(const void *p, size_t len);

/* CRC-32C (Castagnoli) of LEN bytes, continuing from CRC (0 to start). */
uint32_t crc32c(uint32_t crc, const void *p, size_t len);

#endif
