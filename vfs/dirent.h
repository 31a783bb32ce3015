/*
 * The record getdents64 returns (and, rewritten, the old getdents's), and the one function every
 * filesystem fills it with, so all of them lay out, align and terminate names alike.
 */
#ifndef VFS_DIRENT_H
#define VFS_DIRENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* linux_dirent64; the host's and the guest's layouts are the same (both x86_64 Linux).
 * Packed because records sit back to back in guest memory, which has no alignment. */
struct vfs_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	uint16_t d_reclen;
	uint8_t d_type;
	char d_name[];
} __attribute__((packed));

/*
 * Appends the record for NAME (inode INO, DT_* type TYPE, NEXT the directory position after
 * it) to BUF, which holds SIZE bytes of which *DONE are used, and advances *DONE. Returns
 * false, writing nothing, when the record does not fit.
 */
bool vfs_dirent_put(void *buf, size_t size, size_t *done, uint64_t ino, int64_t next, uint8_t type,
		    const char *name);

/*
 * Rewrites the N bytes of getdents64 records in BUF, in place, as the old getdents's struct
 * linux_dirent (d_ino, d_off, d_reclen, the name, then d_type in the record's last byte).
 * Both records of a name have the same length, so the old call gets exactly the entries the
 * new one would.
 */
void vfs_dirent_to_old(void *buf, size_t n);

#endif
