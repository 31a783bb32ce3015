/* Attributes of a resolved dentry: stat and its statx form, readlink, and access(2). These
 * are the calls that look at an inode without opening it; access is also where the
 * read-only cut answers W_OK. */
#include "vfs/internal.h"

#include <errno.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

int vfs_stat(struct vfs_dentry *d, struct stat *st)
{
	if (!d->inode)
		return -ENOENT;
	return d->inode->ops->getattr(d->inode, st);
}

/* Everything struct stat carries is filled whatever MASK asks for, as Linux may return more
 * than was requested; the birth time is unknown and left out of stx_mask. */
int vfs_statx_fill(const struct stat *st, unsigned int mask, struct statx *stx)
{
	(void)mask;
	memset(stx, 0, sizeof(*stx));
	stx->stx_mask = STATX_BASIC_STATS;
	stx->stx_blksize = (uint32_t)st->st_blksize;
	stx->stx_nlink = (uint32_t)st->st_nlink;
	stx->stx_uid = st->st_uid;
	stx->stx_gid = st->st_gid;
	stx->stx_mode = (uint16_t)st->st_mode;
	stx->stx_ino = st->st_ino;
	stx->stx_size = (uint64_t)st->st_size;
	stx->stx_blocks = (uint64_t)st->st_blocks;
	stx->stx_atime.tv_sec = st->st_atim.tv_sec;
	stx->stx_atime.tv_nsec = (uint32_t)st->st_atim.tv_nsec;
	stx->stx_mtime.tv_sec = st->st_mtim.tv_sec;
	stx->stx_mtime.tv_nsec = (uint32_t)st->st_mtim.tv_nsec;
	stx->stx_ctime.tv_sec = st->st_ctim.tv_sec;
	stx->stx_ctime.tv_nsec = (uint32_t)st->st_ctim.tv_nsec;
	stx->stx_rdev_major = major(st->st_rdev);
	stx->stx_rdev_minor = minor(st->st_rdev);
	stx->stx_dev_major = major(st->st_dev);
	stx->stx_dev_minor = minor(st->st_dev);
	return 0;
}

ssize_t vfs_readlink(struct vfs_dentry *d, char *buf, size_t size)
{
	if (!d->inode)
		return -ENOENT;
	if (!S_ISLNK(d->inode->mode) || !d->inode->ops->readlink)
		return -EINVAL;
	return d->inode->ops->readlink(d->inode, buf, size);
}

/* The caller is treated as root: reading always succeeds, executing needs some x bit on a
 * non-directory, and writing fails on the read-only tree (Linux checks that first). */
int vfs_access(struct vfs_dentry *d, int mode)
{
	struct stat st;
	int err;

	if (mode & ~(F_OK | R_OK | W_OK | X_OK))
		return -EINVAL;
	err = vfs_stat(d, &st);
	if (err)
		return err;
	if ((mode & W_OK) && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)))
		return -EROFS;
	if ((mode & X_OK) && !S_ISDIR(st.st_mode) && !(st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
		return -EACCES;
	return 0;
}
