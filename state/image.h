/* The image on disk (docs/image-format.md): a directory with a header file and one compressed
 * file per section. Writing goes to a temporary directory beside the target that is renamed
 * into place only when complete; reading checks the magic, the version, the codec and every
 * section's length and checksum before anything is decoded. */
#ifndef STATE_IMAGE_H
#define STATE_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IMAGE_MAGIC "MSNTYIMG"
#define IMAGE_VERSION 1
#define IMAGE_CODEC_ZLIB 1
#define IMAGE_NAME_MAX 16 /* a section name with its NUL */
#define IMAGE_MAX_SECTIONS 32

struct image_section {
	char name[IMAGE_NAME_MAX];
	uint8_t *data; /* uncompressed */
	size_t len;
	uint64_t count;	 /* records (objects) in it */
	uint64_t stored; /* bytes on disk, compressed */
	uint32_t crc;	 /* of the stored bytes */
};

struct image {
	uint32_t version, codec, flags;
	int nsections;
	struct image_section sec[IMAGE_MAX_SECTIONS];
	/* image_write: when set, the temporary and set-aside directories are DIR.tmp.TAG and
	 * DIR.old.TAG (an existing name is an error) instead of random names, so that whoever
	 * chose TAG can clean up after a writer that was killed (image_write_cleanup). */
	const char *tag;
};

/* Writes IMG's sections (data, len, count, name set) to DIR, a name beneath directory
 * descriptor AT (or AT_FDCWD). DIR must not exist or be an empty directory, unless FORCE (an
 * existing image is then replaced, only once the new one is complete). Names are never
 * followed through a symbolic link, and the temporary directory is a new one of random name.
 * On failure nothing is left behind and *ERR (malloc'd) says why. */
int image_write(int at, const char *dir, struct image *img, bool force, char **err);

/* After an image_write with IMG.tag = TAG that did not finish (its writer died): removes
 * DIR.tmp.TAG, and puts DIR.old.TAG back as DIR (or removes it, if the new DIR is in place),
 * never following a link. Returns whether anything was there. */
bool image_write_cleanup(int at, const char *dir, const char *tag);

/* Reads and checks the image in DIR: every section decompressed into memory. On failure *ERR
 * (malloc'd) says what is wrong in one line. */
int image_read(const char *dir, struct image *img, char **err);

/* Reads only the header (sizes, counts), for inspect. */
int image_read_header(const char *dir, struct image *img, char **err);

void image_free(struct image *img);
struct image_section *image_find(struct image *img, const char *name);

#endif
