/* Reading and writing the image directory: the header file and one compressed file per
 * section, with a CRC-32 per section and one over the header, so a truncated, corrupt or
 * foreign image is refused before any of it is decoded; and the data files that a section
 * describes (the memory's pages), created and opened here so that every file of an image is
 * made and checked in one place.
 *
 * The files are not fsync'd: the rename into place is what makes a checkpoint all-or-nothing
 * for a process that dies half-way, and a host crash that leaves torn files behind is caught
 * by the lengths and checksums at restore. Syncing costs 1-2 ms per file here, more than the
 * whole checkpoint of an idle sandbox otherwise. */
#include "state/image.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "state/compress.h"

#define HEADER_FILE "header"
#define SECTION_SUFFIX ".z"
#define SEC_ENTRY_LEN (IMAGE_NAME_MAX + 8 + 8 + 8 + 4 + 4)
#define HEADER_FIXED (8 + 4 + 4 + 4 + 4)
#define HEADER_MAX (HEADER_FIXED + IMAGE_MAX_SECTIONS * SEC_ENTRY_LEN + 4)
/* No section is larger than this uncompressed, whatever a header says (the memory section of a
 * version 1 image holds every page; version 2 keeps pages in data files). */
#define SECTION_MAX (1ULL << 36)

struct image_out {
	char dir[4096], tmp[4096], tag[64];
	int at;	   /* the directory DIR and TMP are names beneath (or AT_FDCWD) */
	int dirfd; /* the temporary directory */
};

static int fail(char **err, int ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char **err, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
	return ret;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static int write_file(int dirfd, const char *name, const void *buf, size_t len)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	const char *p = buf;

	if (fd < 0)
		return -errno;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? -errno : -EIO;
			close(fd);
			return e;
		}
		p += n;
		len -= n;
	}
	return close(fd) ? -errno : 0;
}

/* Opens NAME in DIRFD for reading if it is a regular file: not through a symlink, and never
 * blocking on a FIFO (O_NONBLOCK, then fstat refuses it). Its size goes in *SIZE. */
static int open_regular(int dirfd, const char *name, uint64_t *size)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return errno == ELOOP ? -EINVAL : -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < 0) {
		close(fd);
		return -EINVAL;
	}
	*size = st.st_size;
	return fd;
}

/* The whole of file NAME in DIRFD, malloc'd, if it is a regular file of at most MAX bytes
 * (-EFBIG when larger: nothing is allocated from a size the image merely claims). */
static int read_file(int dirfd, const char *name, uint64_t max, uint8_t **out, size_t *len)
{
	uint64_t size;
	int fd = open_regular(dirfd, name, &size);

	if (fd < 0)
		return fd;
	if (size > max) {
		close(fd);
		return -EFBIG;
	}
	uint8_t *buf = malloc(size ? size : 1);
	size_t got = 0;
	while (buf && got < size) {
		ssize_t n = read(fd, buf + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	if (!buf)
		return -ENOMEM;
	*out = buf;
	*len = got;
	return 0;
}

/* Removes NAME beneath DIRFD with all it holds, never through a symbolic link: a link is
 * removed itself, and a directory is entered only by a descriptor opened with O_NOFOLLOW, so
 * a name swapped for a link meanwhile is left alone. */
static void remove_tree_at(int at, const char *name, int depth)
{
	struct dirent *de;
	DIR *d;
	int fd;

	if (unlinkat(at, name, 0) == 0 || errno == ENOENT || depth > 64)
		return;
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			remove_tree_at(dirfd(d), de->d_name, depth + 1);
	closedir(d);
	unlinkat(at, name, AT_REMOVEDIR);
}

/* 1 if DIR (beneath AT) exists and has entries, 0 if it is missing or empty, negative if
 * unusable: a symbolic link is never followed. */
static int dir_state(int at, const char *dir)
{
	struct stat st;
	struct dirent *de;
	int full = 0, fd;
	DIR *d;

	if (fstatat(at, dir, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if ((fd = openat(at, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -errno;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			full = 1;
	closedir(d);
	return full;
}

/* A new directory beside DIR, named DIR.KIND.RANDOM into NAME: made with mkdirat, which never
 * follows a link, so nothing anyone else put there is used or removed. */
static int make_temp_dir(int at, const char *dir, const char *kind, const char *tag, char *name,
			 size_t size)
{
	if (tag) {
		if (snprintf(name, size, "%s.%s.%s", dir, kind, tag) >= (int)size)
			return -ENAMETOOLONG;
		return mkdirat(at, name, 0755) ? -errno : 0;
	}
	for (int tries = 0; tries < 16; tries++) {
		unsigned int rnd = 0;
		if (getrandom(&rnd, sizeof(rnd), 0) < 0)
			rnd = (unsigned int)getpid() * 2654435761u + tries;
		if (snprintf(name, size, "%s.%s.%08x", dir, kind, rnd) >= (int)size)
			return -ENAMETOOLONG;
		if (mkdirat(at, name, 0755) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static bool valid_name(const char *name)
{
	size_t n = strnlen(name, IMAGE_NAME_MAX);

	if (n == 0 || n == IMAGE_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || name[i] == '-' ||
		      (name[i] >= '0' && name[i] <= '9')))
			return false;
	return true;
}

int image_begin_tagged(int at, const char *dir, bool force, const char *tag, struct image_out **out,
		       char **err)
{
	int st = dir_state(at, dir), ret;
	struct image_out *o;

	*err = NULL;
	*out = NULL;
	if (st == -ELOOP)
		return fail(err, st, "image directory '%s' is a symbolic link", dir);
	if (st < 0)
		return fail(err, st, "image directory '%s': %s", dir, strerror(-st));
	if (st > 0 && !force)
		return fail(err, -EEXIST,
			    "image directory '%s' exists and is not empty (--force replaces it)",
			    dir);
	if (!(o = calloc(1, sizeof(*o))))
		return fail(err, -ENOMEM, "out of memory");
	o->at = at;
	if (snprintf(o->dir, sizeof(o->dir), "%s", dir) >= (int)sizeof(o->dir) ||
	    snprintf(o->tag, sizeof(o->tag), "%s", tag ? tag : "") >= (int)sizeof(o->tag)) {
		free(o);
		return fail(err, -ENAMETOOLONG, "image directory name too long");
	}
	if ((ret = make_temp_dir(at, dir, "tmp", tag, o->tmp, sizeof(o->tmp)))) {
		free(o);
		return fail(err, ret, "cannot create a directory beside '%s': %s", dir,
			    strerror(-ret));
	}
	o->dirfd = openat(at, o->tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (o->dirfd < 0) {
		int e = fail(err, -errno, "cannot open '%s': %s", o->tmp, strerror(errno));
		remove_tree_at(at, o->tmp, 0);
		free(o);
		return e;
	}
	*out = o;
	return 0;
}

/* A data file's name: like a section's, plus dots, and none a section file could have. */
static bool valid_file_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n >= IMAGE_NAME_MAX + 4 || !strcmp(name, HEADER_FILE) ||
	    (n > 2 && !strcmp(name + n - 2, SECTION_SUFFIX)) || name[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || name[i] == '-' || name[i] == '.' ||
		      (name[i] >= '0' && name[i] <= '9')))
			return false;
	return true;
}

int image_create_file(struct image_out *o, const char *name, char **err)
{
	*err = NULL;
	if (!valid_file_name(name))
		return fail(err, -EINVAL, "bad image file name '%s'", name);
	int fd = openat(o->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return fail(err, -errno, "cannot create '%s' in the image: %s", name,
			    strerror(errno));
	return fd;
}

void image_abort(struct image_out *o)
{
	if (!o)
		return;
	close(o->dirfd);
	remove_tree_at(o->at, o->tmp, 0);
	free(o);
}

int image_commit(struct image_out *o, struct image *img, char **err)
{
	char old[4096];
	uint8_t hdr[HEADER_MAX];
	uint32_t codec = img->codec ? img->codec : IMAGE_CODEC_ZLIB;
	struct compressor *c = compressor_new(codec);
	uint8_t *z = NULL; /* the compressed section, reused */
	size_t zcap = 0;
	int ret = 0, st;

	*err = NULL;
	if (!c) {
		ret = fail(err, -EINVAL, "cannot compress with %s",
			   codec_name(codec) ? codec_name(codec) : "an unknown codec");
		goto out;
	}
	if (img->nsections > IMAGE_MAX_SECTIONS) {
		ret = fail(err, -EINVAL, "too many sections");
		goto out;
	}
	memcpy(hdr, IMAGE_MAGIC, 8);
	put32(hdr + 8, IMAGE_VERSION);
	put32(hdr + 12, codec);
	put32(hdr + 16, img->flags);
	put32(hdr + 20, img->nsections);
	for (int i = 0; i < img->nsections; i++) {
		struct image_section *s = &img->sec[i];
		char file[IMAGE_NAME_MAX + 4];
		size_t zlen = compress_bound(codec, s->len);

		if (!valid_name(s->name)) {
			ret = fail(err, -EINVAL, "bad section name");
			goto out;
		}
		if (s->len == 0) {
			/* An empty section has no file: stored length 0 says so. */
			s->stored = 0;
			s->crc = 0;
			goto entry;
		}
		if (zlen > zcap) {
			uint8_t *nz = realloc(z, zlen);
			if (!nz) {
				ret = fail(err, -ENOMEM, "cannot compress section %s", s->name);
				goto out;
			}
			z = nz;
			zcap = zlen;
		}
		if (compress_buf(c, s->data, s->len, z, &zlen)) {
			ret = fail(err, -ENOMEM, "cannot compress section %s", s->name);
			goto out;
		}
		s->stored = zlen;
		s->crc = crc32(0, z, zlen);
		snprintf(file, sizeof(file), "%s%s", s->name, SECTION_SUFFIX);
		int e = write_file(o->dirfd, file, z, zlen);
		if (e) {
			ret = fail(err, e, "cannot write section %s: %s", s->name, strerror(-e));
			goto out;
		}
	entry:;
		uint8_t *p = hdr + HEADER_FIXED + i * SEC_ENTRY_LEN;
		memset(p, 0, SEC_ENTRY_LEN);
		memcpy(p, s->name, strlen(s->name));
		put64(p + IMAGE_NAME_MAX, s->len);
		put64(p + IMAGE_NAME_MAX + 8, s->stored);
		put64(p + IMAGE_NAME_MAX + 16, s->count);
		put32(p + IMAGE_NAME_MAX + 24, s->crc);
	}
	size_t hlen = HEADER_FIXED + img->nsections * SEC_ENTRY_LEN;
	put32(hdr + hlen, crc32(0, hdr, hlen));
	int e = write_file(o->dirfd, HEADER_FILE, hdr, hlen + 4);
	if (e) {
		ret = fail(err, e, "cannot write the image header: %s", strerror(-e));
		goto out;
	}
	/* Into place: an empty target is replaced directly; a full one (--force) is moved aside
	 * first and removed only once the new image is in. */
	st = dir_state(o->at, o->dir);
	if (st < 0) {
		ret = fail(err, st, "image directory '%s': %s", o->dir, strerror(-st));
		goto out;
	}
	if (st > 0) {
		if ((ret = make_temp_dir(o->at, o->dir, "old", o->tag[0] ? o->tag : NULL, old,
					 sizeof(old)))) {
			ret = fail(err, ret, "cannot replace '%s': %s", o->dir, strerror(-ret));
			goto out;
		}
		if (renameat(o->at, o->dir, o->at, old)) {
			ret = fail(err, -errno, "cannot replace '%s': %s", o->dir, strerror(errno));
			unlinkat(o->at, old, AT_REMOVEDIR);
			goto out;
		}
	} else if (st == 0) {
		unlinkat(o->at, o->dir, AT_REMOVEDIR);
	}
	if (renameat(o->at, o->tmp, o->at, o->dir)) {
		ret = fail(err, -errno, "cannot create '%s': %s", o->dir, strerror(errno));
		if (st > 0)
			renameat(o->at, old, o->at, o->dir);
		goto out;
	}
	if (st > 0)
		remove_tree_at(o->at, old, 0);
out:
	compressor_free(c);
	free(z);
	if (ret) {
		image_abort(o);
	} else {
		close(o->dirfd);
		free(o);
	}
	return ret;
}

int image_begin(int at, const char *dir, bool force, struct image_out **out, char **err)
{
	return image_begin_tagged(at, dir, force, NULL, out, err);
}

int image_write(int at, const char *dir, struct image *img, bool force, char **err)
{
	struct image_out *o;
	int ret = image_begin_tagged(at, dir, force, img->tag, &o, err);

	return ret ? ret : image_commit(o, img, err);
}

bool image_write_cleanup(int at, const char *dir, const char *tag)
{
	char tmp[4096], old[4096];
	struct stat st;
	bool any = false;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%s", dir, tag) >= (int)sizeof(tmp) ||
	    snprintf(old, sizeof(old), "%s.old.%s", dir, tag) >= (int)sizeof(old))
		return false;
	if (fstatat(at, tmp, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		remove_tree_at(at, tmp, 0);
		any = true;
	}
	if (fstatat(at, old, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		/* Killed between moving the old image aside and removing it. */
		if (fstatat(at, dir, &st, AT_SYMLINK_NOFOLLOW) == 0 || renameat(at, old, at, dir))
			remove_tree_at(at, old, 0);
		any = true;
	}
	return any;
}

static int parse_header(int dirfd, const char *dir, struct image *img, char **err)
{
	uint8_t *hdr;
	size_t len;
	int e = read_file(dirfd, HEADER_FILE, HEADER_MAX, &hdr, &len);

	if (e == -ENOENT)
		return fail(err, e, "'%s' is not a minisentry image (no header)", dir);
	if (e == -EFBIG || e == -EINVAL)
		return fail(err, -EINVAL, "'%s' is not a minisentry image (%s)", dir,
			    e == -EFBIG ? "header too large" : "header not a regular file");
	if (e)
		return fail(err, e, "cannot read the header of '%s': %s", dir, strerror(-e));
	int ret = 0;
	if (len < 8 || memcmp(hdr, IMAGE_MAGIC, 8)) {
		ret = fail(err, -EINVAL, "'%s' is not a minisentry image (bad magic)", dir);
		goto out;
	}
	if (len < HEADER_FIXED + 4) {
		ret = fail(err, -EINVAL, "image '%s' is truncated (header)", dir);
		goto out;
	}
	img->version = get32(hdr + 8);
	img->codec = get32(hdr + 12);
	img->flags = get32(hdr + 16);
	uint32_t n = get32(hdr + 20);
	if (n > IMAGE_MAX_SECTIONS || len != HEADER_FIXED + n * SEC_ENTRY_LEN + 4) {
		ret = fail(err, -EINVAL, "image '%s' has a corrupt header", dir);
		goto out;
	}
	if (get32(hdr + len - 4) != crc32(0, hdr, len - 4)) {
		ret =
		    fail(err, -EINVAL, "image '%s' has a corrupt header (checksum mismatch)", dir);
		goto out;
	}
	if (img->version < IMAGE_VERSION_OLDEST || img->version > IMAGE_VERSION) {
		ret = fail(err, -EINVAL,
			   "image '%s' has format version %u; this minisentry reads versions %u to "
			   "%u",
			   dir, img->version, IMAGE_VERSION_OLDEST, IMAGE_VERSION);
		goto out;
	}
	if (!codec_name(img->codec) || (img->version == 1 && img->codec != IMAGE_CODEC_ZLIB)) {
		ret = fail(err, -EINVAL, "image '%s' uses unknown codec %u", dir, img->codec);
		goto out;
	}
	if (!codec_available(img->codec)) {
		ret = fail(err, -EINVAL,
			   "image '%s' is compressed with %s, which this minisentry was built "
			   "without",
			   dir, codec_name(img->codec));
		goto out;
	}
	img->nsections = n;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *p = hdr + HEADER_FIXED + i * SEC_ENTRY_LEN;
		struct image_section *s = &img->sec[i];
		memcpy(s->name, p, IMAGE_NAME_MAX);
		s->name[IMAGE_NAME_MAX - 1] = 0;
		s->len = get64(p + IMAGE_NAME_MAX);
		s->stored = get64(p + IMAGE_NAME_MAX + 8);
		s->count = get64(p + IMAGE_NAME_MAX + 16);
		s->crc = get32(p + IMAGE_NAME_MAX + 24);
		if (!valid_name(s->name)) {
			ret = fail(err, -EINVAL, "image '%s' has a corrupt header (section name)",
				   dir);
			goto out;
		}
	}
out:
	free(hdr);
	return ret;
}

int image_read_header(const char *dir, struct image *img, char **err)
{
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	*err = NULL;
	memset(img, 0, sizeof(*img));
	img->dirfd = -1;
	if (dirfd < 0)
		return fail(err, -errno, "image '%s': %s", dir, strerror(errno));
	int ret = parse_header(dirfd, dir, img, err);
	close(dirfd);
	return ret;
}

/* The largest a section of STORED bytes can inflate to: deflate cannot do better than 1032:1;
 * a zstd frame states its size, which decompress_buf holds it to. */
static uint64_t max_section_len(uint32_t codec, uint64_t stored)
{
	uint64_t max = codec == IMAGE_CODEC_ZLIB ? stored * 1032 + 64 : SECTION_MAX;

	return max < SECTION_MAX ? max : SECTION_MAX;
}

int image_read(const char *dir, struct image *img, char **err)
{
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dirfd < 0) {
		*err = NULL;
		memset(img, 0, sizeof(*img));
		img->dirfd = -1;
		return fail(err, -errno, "image '%s': %s", dir, strerror(errno));
	}
	return image_read_fd(dirfd, dir, img, err);
}

int image_read_fd(int dirfd, const char *dir, struct image *img, char **err)
{
	struct compressor *c = NULL;
	int ret;

	*err = NULL;
	memset(img, 0, sizeof(*img));
	img->dirfd = -1;
	if ((ret = parse_header(dirfd, dir, img, err)))
		goto out;
	if (!(c = compressor_new(img->codec))) {
		ret = fail(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < img->nsections; i++) {
		struct image_section *s = &img->sec[i];
		char file[IMAGE_NAME_MAX + 4];
		uint8_t *z;
		size_t zlen;

		if (s->stored == 0) {
			if (s->len != 0 || s->crc != 0) {
				ret = fail(err, -EINVAL,
					   "image '%s' has a corrupt header (section %s)", dir,
					   s->name);
				goto out;
			}
			if (!(s->data = malloc(1))) {
				ret = fail(err, -ENOMEM, "out of memory");
				goto out;
			}
			continue;
		}
		/* Bounds before anything is allocated: the header is checksummed, but a checksum
		 * is no defence against a header made to pass it. */
		if (s->len == 0 || s->len > max_section_len(img->codec, s->stored)) {
			ret = fail(err, -EINVAL, "image '%s' is corrupt (section %s: size)", dir,
				   s->name);
			goto out;
		}
		snprintf(file, sizeof(file), "%s%s", s->name, SECTION_SUFFIX);
		/* A file longer than its stored length is as wrong as a shorter one. */
		if ((ret = read_file(dirfd, file, s->stored, &z, &zlen))) {
			const char *why = ret == -ENOENT   ? "missing"
					  : ret == -EFBIG  ? "longer than its header says"
					  : ret == -EINVAL ? "not a regular file"
							   : strerror(-ret);
			ret = fail(err, ret == -EFBIG ? -EINVAL : ret, "image '%s': section %s: %s",
				   dir, s->name, why);
			goto out;
		}
		if (zlen != s->stored) {
			free(z);
			ret = fail(err, -EINVAL, "image '%s' is truncated (section %s)", dir,
				   s->name);
			goto out;
		}
		if (crc32(0, z, zlen) != s->crc) {
			free(z);
			ret = fail(err, -EINVAL,
				   "image '%s' is corrupt (section %s: checksum mismatch)", dir,
				   s->name);
			goto out;
		}
		s->data = malloc(s->len);
		int zr = s->data ? decompress_buf(c, z, zlen, s->data, s->len) : -2;
		free(z);
		if (zr) {
			ret = fail(err, zr == -2 ? -ENOMEM : -EINVAL,
				   "image '%s' is corrupt (section %s does not decompress)", dir,
				   s->name);
			goto out;
		}
	}
	img->dirfd = dirfd;
	dirfd = -1;
out:
	compressor_free(c);
	if (dirfd >= 0)
		close(dirfd);
	if (ret)
		image_free(img);
	return ret;
}

int image_open_file(const struct image *img, const char *dir, const char *name, uint64_t *size,
		    char **err)
{
	*err = NULL;
	if (!valid_file_name(name))
		return fail(err, -EINVAL, "image '%s' is corrupt (bad file name)", dir);
	int fd = open_regular(img->dirfd, name, size);
	if (fd == -ENOENT)
		return fail(err, fd, "image '%s': %s is missing", dir, name);
	if (fd == -EINVAL)
		return fail(err, fd, "image '%s': %s is not a regular file", dir, name);
	if (fd < 0)
		return fail(err, fd, "image '%s': %s: %s", dir, name, strerror(-fd));
	return fd;
}

void image_free(struct image *img)
{
	for (int i = 0; i < img->nsections; i++) {
		free(img->sec[i].data);
		img->sec[i].data = NULL;
	}
	if (img->dirfd >= 0)
		close(img->dirfd);
	img->dirfd = -1;
}

struct image_section *image_find(struct image *img, const char *name)
{
	for (int i = 0; i < img->nsections; i++)
		if (!strcmp(img->sec[i].name, name))
			return &img->sec[i];
	return NULL;
}
