/* Turns a checkpoint image directory into seeds for the fuzz targets (tests/fuzz/mkseeds.sh):
 *   seedtool restore DIR OUT   the sections uncompressed, in load order (fuzz_restore's input),
 *                              without the memory section's pages: opaque bytes the fuzzer
 *                              would spend its mutations on
 *   seedtool restore-full DIR OUT   the same with the pages
 *   seedtool image DIR OUT     the header and the section files as stored (fuzz_image's input)
 * The two formats are described in fuzz_restore.c and fuzz_image.c. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state/image.h"

/* sentry/checkpoint.c's sections, in load order (fuzz_restore.c has the same list). */
static const char *const sections[] = {
    "kernel",	   "memory",   "mobjs", "vfs",	   "dentries", "files", "file-links", "fdtables",
    "fs-contexts", "sighands", "mms",	"seccomp", "tasks",    "locks", "evicted",
};
#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

static void put32(FILE *out, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		fputc((v >> (8 * i)) & 0xff, out);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void set32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (v >> (8 * i)) & 0xff;
}

/* The memory section without its pages, rewritten in place; its new length. Version 1: the
 * allocator state (bump, free list) and the end of the runs. Version 2: the allocator state,
 * the memory id and grid, and no data files, other images or chunks (a restore seed is
 * written without the data files the chunks would name). */
static size_t strip_pages(uint8_t *p, size_t len, uint32_t version)
{
	static const uint8_t end[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	if (len < 16)
		return len;
	uint64_t nfree = get64(p + 8);
	if (nfree > (len - 16) / 16)
		return len;
	size_t keep = 16 + nfree * 16;
	if (version == 1) {
		memcpy(p + keep, end, sizeof(end));
		return keep + sizeof(end);
	}
	if (len < keep + 16 + 4 + 4 + 4 + 8)
		return len;
	keep += 16 + 4; /* id, grid */
	set32(p + keep, 0);
	set32(p + keep + 4, 0);
	memset(p + keep + 8, 0, 8);
	return keep + 16;
}

static int restore_seed(const char *dir, bool pages, FILE *out)
{
	struct image img;
	char *err = NULL;

	if (image_read(dir, &img, &err)) {
		fprintf(stderr, "seedtool: %s\n", err);
		return 1;
	}
	for (size_t i = 0; i < NSECTIONS; i++) {
		struct image_section *s = image_find(&img, sections[i]);
		size_t len = s ? s->len : 0;
		if (!pages && !strcmp(sections[i], "memory") && len)
			len = strip_pages(s->data, len, img.version);
		put32(out, (uint32_t)len);
		if (len)
			fwrite(s->data, 1, len, out);
	}
	image_free(&img);
	return 0;
}

/* Appends file NAME of DIR as fuzz_image's entry: kind (0: regular), name index, length,
 * bytes. INDEX 0xff is the header. */
static int put_file(const char *dir, const char *name, uint8_t index, FILE *out)
{
	char path[4096];
	FILE *f;
	long len;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "rb")))
		return 0; /* an empty section has no file */
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	uint8_t *buf = malloc(len ? (size_t)len : 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fclose(f);
		free(buf);
		return 1;
	}
	fclose(f);
	fputc(0, out);
	fputc(index, out);
	put32(out, (uint32_t)len);
	fwrite(buf, 1, (size_t)len, out);
	free(buf);
	return 0;
}

static int image_seed(const char *dir, FILE *out)
{
	int ret = 0;

	fputc(0, out); /* no fix-ups: the files as they are */
	ret |= put_file(dir, "header", 0xff, out);
	for (size_t i = 0; i < NSECTIONS; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%s.z", sections[i]);
		ret |= put_file(dir, name, (uint8_t)i, out);
	}
	return ret;
}

int main(int argc, char **argv)
{
	bool restore = !strcmp(argv[1], "restore"), full = !strcmp(argv[1], "restore-full");

	if (argc != 4 || (!restore && !full && strcmp(argv[1], "image"))) {
		fprintf(stderr, "usage: seedtool restore|restore-full|image IMAGE_DIR OUT\n");
		return 2;
	}
	FILE *out = fopen(argv[3], "wb");
	if (!out) {
		perror(argv[3]);
		return 1;
	}
	int ret = restore || full ? restore_seed(argv[2], full, out) : image_seed(argv[2], out);
	if (fclose(out))
		ret = 1;
	return ret;
}
