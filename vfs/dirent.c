/* Packing getdents64 records. */
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
