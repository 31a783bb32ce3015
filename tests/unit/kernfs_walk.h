/* Helpers shared by the procfs and sysfs unit tests: reading a file, listing a directory and
 * dumping a whole tree (names, modes, link counts, sizes, contents) through the VFS, the way a
 * guest would see it. */
#ifndef TESTS_UNIT_KERNFS_WALK_H
#define TESTS_UNIT_KERNFS_WALK_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vfs/kernfs.h"
#include "vfs/vfs.h"

struct walk_dirent {
	uint64_t d_ino;
	int64_t d_off;
	uint16_t d_reclen;
	uint8_t d_type;
	char d_name[];
} __attribute__((packed));

/* Reads PATH (under FS's root) whole into a malloc'd NUL-terminated string; *LEN its length.
 * Returns NULL and sets *ERR on failure. */
static char *walk_read(struct vfs_fs_ctx *fs, const char *path, size_t *len, int *err)
{
	struct vfs_file *f;
	size_t cap = 256, n = 0;
	char *buf;
	int e = vfs_open(fs, NULL, path, O_RDONLY, 0, &f);

	if (e) {
		if (err)
			*err = e;
		return NULL;
	}
	buf = malloc(cap);
	for (;;) {
		struct iovec iov;
		ssize_t r;

		if (cap - n < 64)
			buf = realloc(buf, cap *= 2);
		iov.iov_base = buf + n;
		iov.iov_len = cap - n - 1;
		r = f->ops->read(f, &iov, 1, &f->pos);
		if (r < 0) {
			free(buf);
			vfs_file_put(f);
			if (err)
				*err = (int)r;
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	vfs_file_put(f);
	return buf;
}

/* The names PATH lists (without "." and ".."), newline-separated, in listing order; the
 * getdents64 buffer is small so listings take several calls. */
static char *walk_list(struct vfs_fs_ctx *fs, const char *path)
{
	char buf[200], *out = calloc(1, 1);
	size_t outlen = 0;
	struct vfs_file *f;

	if (vfs_open(fs, NULL, path, O_RDONLY | O_DIRECTORY, 0, &f))
		return NULL;
	for (;;) {
		ssize_t n = f->ops->getdents64(f, buf, sizeof(buf), &f->pos);

		if (n <= 0)
			break;
		for (ssize_t at = 0; at < n;) {
			struct walk_dirent *d = (struct walk_dirent *)(buf + at);

			if (strcmp(d->d_name, ".") && strcmp(d->d_name, "..")) {
				size_t l = strlen(d->d_name);

				out = realloc(out, outlen + l + 2);
				memcpy(out + outlen, d->d_name, l);
				outlen += l;
				out[outlen++] = '\n';
				out[outlen] = '\0';
			}
			at += d->d_reclen;
		}
	}
	vfs_file_put(f);
	return out;
}

struct walk_out {
	char *data;
	size_t len;
};

static void walk_append(struct walk_out *o, const char *s, size_t n)
{
	o->data = realloc(o->data, o->len + n + 1);
	memcpy(o->data + o->len, s, n);
	o->len += n;
	o->data[o->len] = '\0';
}

/* Appends a line per node under PATH: its path, mode, link count and size, then a file's
 * contents or a link's target; SKIP (may be NULL) names volatile files whose contents are
 * left out. Directories are walked before their stat is taken, so a lazy directory's stat
 * is compared after whatever the walk populated, and before too (the caller stats first). */
static void walk_tree(struct vfs_fs_ctx *fs, const char *path, const char *const *skip,
		      struct walk_out *o)
{
	struct vfs_dentry *d;
	struct stat st;
	char line[8192];
	int n;

	if (vfs_lookup(fs, NULL, path, 0, &d))
		return;
	vfs_stat(d, &st);
	n = snprintf(line, sizeof(line), "%s %o %lu %lld\n", path, st.st_mode,
		     (unsigned long)st.st_nlink, (long long)st.st_size);
	walk_append(o, line, (size_t)n);
	if (S_ISLNK(st.st_mode)) {
		ssize_t l = vfs_readlink(d, line, sizeof(line) - 1);

		if (l >= 0) {
			walk_append(o, " -> ", 4);
			walk_append(o, line, (size_t)l);
			walk_append(o, "\n", 1);
		}
	} else if (S_ISREG(st.st_mode) && (st.st_mode & 0444)) {
		bool skipped = false;

		for (int i = 0; skip && skip[i]; i++)
			skipped |= strcmp(skip[i], path) == 0;
		if (!skipped) {
			size_t len = 0;
			int err = 0;
			char *c = walk_read(fs, path, &len, &err);

			if (c) {
				walk_append(o, c, len);
				free(c);
			} else {
				n = snprintf(line, sizeof(line), "error %d\n", err);
				walk_append(o, line, (size_t)n);
			}
		}
	} else if (S_ISDIR(st.st_mode)) {
		char *names = walk_list(fs, path), *p, *nl;

		for (p = names; p && (nl = strchr(p, '\n')); p = nl + 1) {
			char child[4096];

			*nl = '\0';
			snprintf(child, sizeof(child), "%s/%s", strcmp(path, "/") ? path : "", p);
			walk_tree(fs, child, skip, o);
		}
		free(names);
		vfs_stat(d, &st);
		n = snprintf(line, sizeof(line), "after %s %lu\n", path,
			     (unsigned long)st.st_nlink);
		walk_append(o, line, (size_t)n);
	}
	vfs_dentry_put(d);
}

#endif
