/* The image on disk (docs/image-format.md): a directory with a header file, one compressed
 * file per section, and data files (the memory's pages) whose layout is the business of the
 * section that names them. Writing goes to a temporary directory beside the target that is
 * renamed into place only when complete; reading checks the magic, the version, the codec and
 * every section's length and checksum before anything is decoded, and opens only regular
 * files, never following a symlink. An image is hostile input: every length in it is bounded
 * by the size of the file it describes before it is used. */
#ifndef STATE_IMAGE_H
#define STATE_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "state/compress.h"

#define IMAGE_MAGIC "MSNTYIMG"
#define IMAGE_VERSION 2	       /* what is written */
#define IMAGE_VERSION_OLDEST 1 /* the oldest still read: only its memory section differs */
#define IMAGE_NAME_MAX 16      /* a section name with its NUL */
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
	uint32_t version, codec, flags; /* codec: IMAGE_CODEC_*, 0 on write for zlib */
	int nsections;
	struct image_section sec[IMAGE_MAX_SECTIONS];
	int dirfd; /* image_read: the image directory, for image_open_file; -1 otherwise */
	/* image_write: when set, the temporary and set-aside directories are DIR.tmp.TAG and
	 * DIR.old.TAG (an existing name is an error) instead of random names, so that whoever
	 * chose TAG can clean up after a writer that was killed (image_write_cleanup). */
	const char *tag;
};

/* An image being written: a temporary directory beside its target. */
struct image_out;

/* Starts writing an image to DIR, a name beneath directory descriptor AT (or AT_FDCWD). DIR
 * must not exist or be an empty directory, unless FORCE (an existing image is then replaced,
 * only once the new one is complete). Names are never followed through a symbolic link, and
 * the temporary directory is a new one of random name. On failure *ERR (malloc'd) says why. */
int image_begin(int at, const char *dir, bool force, struct image_out **out, char **err);
/* The same, with the temporary and set-aside directories named DIR.tmp.TAG and DIR.old.TAG
 * when TAG is set (struct image's tag). */
int image_begin_tagged(int at, const char *dir, bool force, const char *tag, struct image_out **out,
		       char **err);
/* Creates data file NAME ([a-z0-9.-], not "header" nor a section's) in the image being
 * written: a descriptor open for writing, or a negative errno with *ERR set. */
int image_create_file(struct image_out *o, const char *name, char **err);
/* Writes IMG's sections (data, len, count, name set) and the header, and renames the image
 * into place; frees O either way. On failure nothing is left behind. */
int image_commit(struct image_out *o, struct image *img, char **err);
/* Abandons the image: its temporary directory goes. Frees O. */
void image_abort(struct image_out *o);
/* image_begin and image_commit: an image of sections only. */
int image_write(int at, const char *dir, struct image *img, bool force, char **err);

/* After an image_write with IMG.tag = TAG (or image_begin_tagged) that did not finish (its writer
 * died): removes DIR.tmp.TAG, and puts DIR.old.TAG back as DIR (or removes it, if the new DIR is in
 * place), never following a link. Returns whether anything was there. */
bool image_write_cleanup(int at, const char *dir, const char *tag);

/* Reads and checks the image in DIR: every section decompressed into memory; the directory
 * stays open for image_open_file until image_free. On failure *ERR (malloc'd) says what is
 * wrong in one line. */
int image_read(const char *dir, struct image *img, char **err);
/* image_read of the image directory DIRFD (taken over: closed by image_free, or on failure),
 * named DIR in messages: for a Sentry that reaches no path, given the directory's descriptor. */
int image_read_fd(int dirfd, const char *dir, struct image *img, char **err);
/* Opens data file NAME of an image read by image_read: a regular file (a symlink, FIFO or
 * device in its place is refused, and never blocks), its size in *SIZE. A descriptor, or a
 * negative errno with *ERR saying what is wrong in one line. */
int image_open_file(const struct image *img, const char *dir, const char *name, uint64_t *size,
		    char **err);

/* Reads only the header (sizes, counts), for inspect. */
int image_read_header(const char *dir, struct image *img, char **err);

void image_free(struct image *img);
struct image_section *image_find(struct image *img, const char *name);

#endif
