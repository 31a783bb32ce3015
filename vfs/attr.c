/* Attributes of a resolved dentry: stat and its statx form, readlink, and access(2). These
 * are the calls that look at an inode without opening it; access is also where the
 * read-only cut answers W_OK. */
#include "vfs/internal.h"

#include <errno.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
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

static struct timespec (*clock_hook)(void);

void vfs_set_clock(struct timespec (*now)(void))
{
	clock_hook = now;
}

struct timespec vfs_now(void)
{
	struct timespec ts;

	if (clock_hook)
		return clock_hook();
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts;
}

bool vfs_inode_rdonly(struct vfs_inode *ino)
{
	return !ino->ops->setattr || (ino->ops->rdonly && ino->ops->rdonly(ino));
}

/* Linux's generic_permission without ACLs or supplementary groups: root may read and write
 * anything and execute what has some x bit (or is a directory); others get the owner, group
 * or other bits, the first class that matches. */
int vfs_inode_permission(struct vfs_inode *ino, const struct vfs_cred *cred, int mask)
{
	struct stat st;
	mode_t bits;
	int err;

	mask &= R_OK | W_OK | X_OK;
	err = ino->ops->getattr(ino, &st);
	if (err)
		return err;
	if (!cred || cred->uid == 0) {
		if ((mask & X_OK) && !S_ISDIR(st.st_mode) && !(st.st_mode & 0111))
			return -EACCES;
		return 0;
	}
	if (cred->uid == st.st_uid)
		bits = st.st_mode >> 6;
	else if (vfs_cred_in_group(cred, st.st_gid))
		bits = st.st_mode >> 3;
	else
		bits = st.st_mode;
	return (mask & ~bits & 7) ? -EACCES : 0;
}

bool vfs_cred_in_group(const struct vfs_cred *cred, gid_t gid)
{
	if (cred->gid == gid)
		return true;
	for (int i = 0; i < cred->ngroups; i++)
		if (cred->groups[i] == gid)
			return true;
	return false;
}

int vfs_permission(struct vfs_dentry *d, const struct vfs_cred *cred, int mask)
{
	if (!d->inode)
		return -ENOENT;
	return vfs_inode_permission(d->inode, cred, mask);
}

/* Writing is refused first on a read-only filesystem (Linux checks that before the mode),
 * except for devices, fifos and sockets, which live outside it. */
int vfs_access_cred(struct vfs_dentry *d, const struct vfs_cred *cred, int mode)
{
	if (mode & ~(F_OK | R_OK | W_OK | X_OK))
		return -EINVAL;
	if (!d->inode)
		return -ENOENT;
	if ((mode & W_OK) && vfs_inode_rdonly(d->inode) &&
	    (S_ISREG(d->inode->mode) || S_ISDIR(d->inode->mode) || S_ISLNK(d->inode->mode)))
		return -EROFS;
	return vfs_inode_permission(d->inode, cred, mode);
}

int vfs_access(struct vfs_dentry *d, int mode)
{
	return vfs_access_cred(d, NULL, mode);
}

int vfs_statfs(struct vfs_dentry *d, struct statfs *buf)
{
	if (!d->inode)
		return -ENOENT;
	memset(buf, 0, sizeof(*buf));
	if (!d->inode->ops->statfs) {
		/* Synthetic trees: what Linux's simple_statfs reports, with no magic known. */
		buf->f_bsize = 4096;
		buf->f_namelen = NAME_MAX;
		buf->f_frsize = 4096;
		return 0;
	}
	return d->inode->ops->statfs(d->inode, buf);
}
