/* Packing getdents64 records, and their rewriting for the old getdents. */
#include "vfs/dirent.h"

#include <string.h>

bool vfs_dirent_put(void *buf, size_t size, size_t *done, uint64_t ino, int64_t next, uint8_t type,
		    const char *name)
{
	size_t nlen = strlen(name);
	/* The name is NUL-terminated and the record padded to 8 bytes, as Linux does. */
	size_t reclen = (offsetof(struct vfs_dirent64, d_name) + nlen + 1 + 7) & ~(size_t)7;
	struct vfs_dirent64 *de;

	if (*done + reclen > size)
		return false;
	de = (struct vfs_dirent64 *)((char *)buf + *done);
	memset(de, 0, reclen);
	de->d_ino = ino;
	de->d_off = next;
	de->d_reclen = (uint16_t)reclen;
	de->d_type = type;
	memcpy(de->d_name, name, nlen);
	*done += reclen;
	return true;
}

void vfs_dirent_to_old(void *buf, size_t n)
{
	for (size_t at = 0; at < n;) {
		struct vfs_dirent64 *de = (struct vfs_dirent64 *)((char *)buf + at);
		size_t reclen = de->d_reclen;
		uint8_t type = de->d_type;
		char *rec = (char *)de, *name = de->d_name;
		/* linux_dirent's name starts where d_type was; it ends, with its NUL, at least one
		 * byte before the record's last, which takes d_type (reclen >= 20 + strlen). */
		size_t nlen = strlen(name);
		memmove(rec + offsetof(struct vfs_dirent64, d_type), name, nlen + 1);
		rec[reclen - 1] = (char)type;
		at += reclen;
	}
}
