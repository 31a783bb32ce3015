/* Reading and writing the image directory: the header file and one zlib file per section,
 * with a CRC-32 per section and one over the header, so a truncated, corrupt or foreign image
 * is refused before any of it is decoded.
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

#define HEADER_FILE "header"
#define SECTION_SUFFIX ".z"
#define SEC_ENTRY_LEN (IMAGE_NAME_MAX + 8 + 8 + 8 + 4 + 4)
#define HEADER_FIXED (8 + 4 + 4 + 4 + 4)
#define HEADER_MAX (HEADER_FIXED + IMAGE_MAX_SECTIONS * SEC_ENTRY_LEN + 4)
/* deflate's best case: about 1032 bytes out for one in (runs of one byte). */
#define ZLIB_MAX_RATIO 1032

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

/* The whole of file NAME in DIRFD, malloc'd, if it is a regular file of at most MAX bytes
 * (-EFBIG). An image is not trusted: a symlink (ELOOP) could name any host file and a FIFO
 * would block the open forever, so neither is followed or waited for. */
static int read_file(int dirfd, const char *name, size_t max, uint8_t **out, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		int e = fstat(fd, &st) ? -errno : S_ISREG(st.st_mode) ? -EFBIG : -EINVAL;
		close(fd);
		return e;
	}
	uint8_t *buf = malloc(st.st_size ? st.st_size : 1);
	size_t got = 0;
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, st.st_size - got);
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

/* Compresses IN (LEN bytes) into OUT (room for *OUTLEN) with ZS, one stream reused for every
 * section: zlib's state (some 300 KiB) is then set up once per image, not once per section,
 * which for a small image cost more in fresh pages than the compression. */
static int deflate_section(z_stream *zs, const uint8_t *in, size_t len, uint8_t *out,
			   uLongf *outlen)
{
	const size_t step = 1u << 30; /* avail_in and avail_out are 32-bit */
	size_t in_left = len, out_left = *outlen;
	int r;

	if (deflateReset(zs) != Z_OK)
		return -1;
	zs->next_in = (Bytef *)in;
	zs->next_out = out;
	do {
		zs->avail_in = in_left < step ? (uInt)in_left : (uInt)step;
		zs->avail_out = out_left < step ? (uInt)out_left : (uInt)step;
		uInt in0 = zs->avail_in, out0 = zs->avail_out;
		r = deflate(zs, in_left <= step ? Z_FINISH : Z_NO_FLUSH);
		in_left -= in0 - zs->avail_in;
		out_left -= out0 - zs->avail_out;
	} while (r == Z_OK || (r == Z_BUF_ERROR && out_left > 0));
	if (r != Z_STREAM_END)
		return -1;
	*outlen = *outlen - out_left;
	return 0;
}

int image_write(int at, const char *dir, struct image *img, bool force, char **err)
{
	char tmp[4096], old[4096];
	uint8_t hdr[HEADER_FIXED + IMAGE_MAX_SECTIONS * SEC_ENTRY_LEN + 4];
	int st = dir_state(at, dir), ret = 0, dirfd = -1;
	z_stream zs = {0};
	bool zs_ready = false;
	uint8_t *z = NULL; /* the compressed section, reused */
	size_t zcap = 0;

	*err = NULL;
	if (st == -ELOOP)
		return fail(err, st, "image directory '%s' is a symbolic link", dir);
	if (st < 0)
		return fail(err, st, "image directory '%s': %s", dir, strerror(-st));
	if (st > 0 && !force)
		return fail(err, -EEXIST,
			    "image directory '%s' exists and is not empty (--force replaces it)",
			    dir);
	if (img->nsections > IMAGE_MAX_SECTIONS)
		return fail(err, -EINVAL, "too many sections");
	if ((ret = make_temp_dir(at, dir, "tmp", img->tag, tmp, sizeof(tmp))))
		return fail(err, ret, "cannot create a directory beside '%s': %s", dir,
			    strerror(-ret));
	dirfd = openat(at, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0) {
		ret = fail(err, -errno, "cannot open '%s': %s", tmp, strerror(errno));
		goto out_remove;
	}
	/* Level 1: a checkpoint is on the critical path; the size gain of higher levels on guest
	 * memory is small. */
	if (deflateInit(&zs, 1) != Z_OK) {
		ret = fail(err, -ENOMEM, "cannot set up compression");
		goto out_close;
	}
	zs_ready = true;
	memcpy(hdr, IMAGE_MAGIC, 8);
	put32(hdr + 8, IMAGE_VERSION);
	put32(hdr + 12, IMAGE_CODEC_ZLIB);
	put32(hdr + 16, img->flags);
	put32(hdr + 20, img->nsections);
	for (int i = 0; i < img->nsections; i++) {
		struct image_section *s = &img->sec[i];
		char file[IMAGE_NAME_MAX + 4];
		uLongf zlen = compressBound(s->len);

		if (!valid_name(s->name)) {
			ret = fail(err, -EINVAL, "bad section name");
			goto out_close;
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
				goto out_close;
			}
			z = nz;
			zcap = zlen;
		}
		if (deflate_section(&zs, s->data, s->len, z, &zlen)) {
			ret = fail(err, -ENOMEM, "cannot compress section %s", s->name);
			goto out_close;
		}
		s->stored = zlen;
		s->crc = crc32(0, z, zlen);
		snprintf(file, sizeof(file), "%s%s", s->name, SECTION_SUFFIX);
		int e = write_file(dirfd, file, z, zlen);
		if (e) {
			ret = fail(err, e, "cannot write section %s: %s", s->name, strerror(-e));
			goto out_close;
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
	int e = write_file(dirfd, HEADER_FILE, hdr, hlen + 4);
	if (e) {
		ret = fail(err, e, "cannot write the image header: %s", strerror(-e));
		goto out_close;
	}
	/* Into place: an empty target is replaced directly; a full one (--force) is moved aside
	 * first and removed only once the new image is in. */
	st = dir_state(at, dir);
	if (st < 0) {
		ret = fail(err, st, "image directory '%s': %s", dir, strerror(-st));
		goto out_close;
	}
	if (st > 0) {
		if ((ret = make_temp_dir(at, dir, "old", img->tag, old, sizeof(old)))) {
			ret = fail(err, ret, "cannot replace '%s': %s", dir, strerror(-ret));
			goto out_close;
		}
		if (renameat(at, dir, at, old)) {
			ret = fail(err, -errno, "cannot replace '%s': %s", dir, strerror(errno));
			unlinkat(at, old, AT_REMOVEDIR);
			goto out_close;
		}
	} else if (st == 0) {
		unlinkat(at, dir, AT_REMOVEDIR);
	}
	if (renameat(at, tmp, at, dir)) {
		ret = fail(err, -errno, "cannot create '%s': %s", dir, strerror(errno));
		if (st > 0)
			renameat(at, old, at, dir);
		goto out_close;
	}
	if (st > 0)
		remove_tree_at(at, old, 0);
out_close:
	if (zs_ready)
		deflateEnd(&zs);
	free(z);
	close(dirfd);
	if (!ret)
		return 0;
out_remove:
	remove_tree_at(at, tmp, 0);
	return ret;
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
	if (e == -EINVAL || e == -ELOOP)
		return fail(err, e, "image '%s': the header is not a regular file", dir);
	if (e == -EFBIG)
		return fail(err, -EINVAL, "image '%s' has a corrupt header (size)", dir);
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
	if (img->version != IMAGE_VERSION) {
		ret = fail(err, -EINVAL,
			   "image '%s' has format version %u; this minisentry reads version %u",
			   dir, img->version, IMAGE_VERSION);
		goto out;
	}
	if (img->codec != IMAGE_CODEC_ZLIB) {
		ret = fail(err, -EINVAL, "image '%s' uses unknown codec %u", dir, img->codec);
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
	if (dirfd < 0)
		return fail(err, -errno, "image '%s': %s", dir, strerror(errno));
	int ret = parse_header(dirfd, dir, img, err);
	close(dirfd);
	return ret;
}

int image_read(const char *dir, struct image *img, char **err)
{
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret;

	*err = NULL;
	memset(img, 0, sizeof(*img));
	if (dirfd < 0)
		return fail(err, -errno, "image '%s': %s", dir, strerror(errno));
	if ((ret = parse_header(dirfd, dir, img, err)))
		goto out;
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
		snprintf(file, sizeof(file), "%s%s", s->name, SECTION_SUFFIX);
		/* A file longer than the header says is not even read. */
		if ((ret = read_file(dirfd, file, s->stored, &z, &zlen))) {
			ret = fail(err, ret == -EFBIG ? -EINVAL : ret, "image '%s': section %s: %s",
				   dir, s->name,
				   ret == -ENOENT		     ? "missing"
				   : ret == -EFBIG		     ? "longer than its header says"
				   : ret == -EINVAL || ret == -ELOOP ? "not a regular file"
								     : strerror(-ret));
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
		/* The length comes from a header anyone can write: no more than zlib can make of
		 * the bytes stored, so what is allocated is bounded by the file's real size. */
		if (s->len > (1ULL << 40) || s->len > zlen * ZLIB_MAX_RATIO + 64) {
			free(z);
			ret = fail(err, -EINVAL, "image '%s' is corrupt (section %s: size)", dir,
				   s->name);
			goto out;
		}
		s->data = malloc(s->len ? s->len : 1);
		uLongf out_len = s->len;
		int zr = s->data ? uncompress(s->data, &out_len, z, zlen) : Z_MEM_ERROR;
		free(z);
		if (zr != Z_OK || out_len != s->len) {
			ret = fail(err, zr == Z_MEM_ERROR ? -ENOMEM : -EINVAL,
				   "image '%s' is corrupt (section %s does not decompress)", dir,
				   s->name);
			goto out;
		}
	}
out:
	close(dirfd);
	if (ret)
		image_free(img);
	return ret;
}

void image_free(struct image *img)
{
	for (int i = 0; i < img->nsections; i++) {
		free(img->sec[i].data);
		img->sec[i].data = NULL;
	}
}

struct image_section *image_find(struct image *img, const char *name)
{
	for (int i = 0; i < img->nsections; i++)
		if (!strcmp(img->sec[i].name, name))
			return &img->sec[i];
	return NULL;
}
