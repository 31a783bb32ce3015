/* Fuzz target: the image directory as restore and inspect read it (state/image.c's header and
 * section files: magic, version, codec, lengths, checksums, decompression) before any section
 * is decoded. The input is a directory:
 *   u8 flags     bit 0: recompute the header's CRC; bit 1: set each section entry's stored
 *                length and CRC from the file written for it (so inputs get past the checks
 *                to the decompression)
 *   entries      u8 kind, u8 name, u32 length, bytes: kind 0 a regular file of those bytes,
 *                1 a FIFO, 2 a symlink to one of a few targets (the first byte picks it),
 *                3 a directory; name 0xff is "header", below 14 a section's file, else a
 *                stray file
 * Seeds: tests/fuzz/corpus/image, real images by `seedtool image`. */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "sentry/checkpoint.h"
#include "state/image.h"
#include "tests/fuzz/sandbox.h"

static const char *const sections[] = {
    "kernel",	   "memory",   "mobjs", "vfs",	   "dentries", "files", "file-links", "fdtables",
    "fs-contexts", "sighands", "mms",	"seccomp", "tasks",    "locks", "evicted",
};
#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))
#define HEADER_FIXED 24
#define SEC_ENTRY_LEN 48

static const char *const link_targets[] = {
    "/dev/null", "/dev/zero", "/etc/hostname", "header", "fifo", "/nonexistent", ".",
};

static char dir[256];
static FILE *devnull;

static void clear_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    unlinkat(dirfd(d), de->d_name, 0))
			unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	closedir(d);
}

static void remove_dir(void)
{
	clear_dir();
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	snprintf(dir, sizeof(dir), "/dev/shm/minisentry-fuzz-image.%d", (int)getpid());
	remove_dir();
	if (mkdir(dir, 0700) || !(devnull = fopen("/dev/null", "w"))) {
		perror(dir);
		exit(2);
	}
	atexit(remove_dir);
	return 0;
}

static void file_name(uint8_t index, char *name, size_t size)
{
	if (index == 0xff)
		snprintf(name, size, "header");
	else if (index < NSECTIONS)
		snprintf(name, size, "%s.z", sections[index]);
	else
		snprintf(name, size, "stray%u", index);
}

/* Writes entry after entry into the directory; returns the header's bytes (or NULL). */
static uint8_t *make_dir(struct fuzz_in *in, size_t *hlen)
{
	uint8_t *header = NULL;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	*hlen = 0;
	while (in->off < in->len && dfd >= 0) {
		uint8_t kind = fuzz_u8(in) % 4, index = fuzz_u8(in);
		size_t len = fuzz_u32(in), got;
		const uint8_t *p = fuzz_bytes(in, len, &got);
		char name[32];
		file_name(index, name, sizeof(name));
		unlinkat(dfd, name, 0);
		unlinkat(dfd, name, AT_REMOVEDIR);
		if (index == 0xff && kind != 0) { /* no header to fix up any more */
			free(header);
			header = NULL;
			*hlen = 0;
		}
		if (kind == 1) {
			mkfifoat(dfd, name, 0600);
		} else if (kind == 2) {
			symlinkat(link_targets[(got ? p[0] : 0) % 7], dfd, name);
		} else if (kind == 3) {
			mkdirat(dfd, name, 0700);
		} else {
			int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
			if (fd >= 0) {
				if (got && write(fd, p, got) != (ssize_t)got)
					abort();
				close(fd);
			}
			if (index == 0xff) {
				free(header);
				header = malloc(got ? got : 1);
				if (header)
					memcpy(header, p, got);
				*hlen = got;
			}
		}
	}
	if (dfd >= 0)
		close(dfd);
	return header;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Sets what FLAGS asks for in the header file and writes it again. */
static void fix_header(uint8_t flags, uint8_t *h, size_t len)
{
	char path[512];

	if (len < HEADER_FIXED + 4)
		return;
	if (flags & 2) {
		uint32_t n = get32(h + 20);
		for (uint32_t i = 0; i < n && HEADER_FIXED + (i + 1) * SEC_ENTRY_LEN <= len; i++) {
			uint8_t *e = h + HEADER_FIXED + i * SEC_ENTRY_LEN;
			char name[IMAGE_NAME_MAX + 1] = {0};
			uint8_t buf[65536];
			memcpy(name, e, IMAGE_NAME_MAX);
			snprintf(path, sizeof(path), "%s/%s.z", dir, name);
			int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			struct stat st;
			if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
				if (fd >= 0)
					close(fd);
				continue;
			}
			uLong crc = crc32(0, NULL, 0), total = 0;
			ssize_t n;
			while ((n = read(fd, buf, sizeof(buf))) > 0) {
				crc = crc32(crc, buf, (uInt)n);
				total += (uLong)n;
			}
			close(fd);
			for (int b = 0; b < 8; b++)
				e[IMAGE_NAME_MAX + 8 + b] = (uint8_t)((uint64_t)total >> (8 * b));
			put32(e + IMAGE_NAME_MAX + 24, (uint32_t)crc);
		}
	}
	if (flags & 1)
		put32(h + len - 4, (uint32_t)crc32(0, h, (uInt)(len - 4)));
	snprintf(path, sizeof(path), "%s/header", dir);
	int fd = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, h, len) != (ssize_t)len)
			abort();
		close(fd);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size, 0};
	struct image img;
	size_t hlen;
	char *err = NULL;

	clear_dir();
	uint8_t flags = fuzz_u8(&in);
	uint8_t *header = make_dir(&in, &hlen);
	if (header && (flags & 3))
		fix_header(flags, header, hlen);
	free(header);
	if (!image_read_header(dir, &img, &err))
		image_free(&img);
	free(err);
	err = NULL;
	checkpoint_inspect(dir, devnull, &err);
	free(err);
	return 0;
}
