/* The inodes of pipes and sockets outside the tree, as Linux's pipefs and sockfs have them:
 * attributes that fchmod and fchown change and fstat shows, the filesystem fstatfs names, the
 * object advisory locks are kept on, and their checkpoint (a trailing part of the file record,
 * present only once fchmod or fchown changed them). Anonymous files (eventfd, epoll, ...) share
 * one inode and are answered for fstatfs only. */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/vfs.h>

#include "state/codec.h"
#include "vfs/internal.h"
#include "vfs/save.h"
#include "vfs/vfs.h"

#define ANON_INODE_FS_MAGIC 0x09041934

void vfs_pseudo_init(struct vfs_pseudo_inode *pi, unsigned long magic, dev_t dev, mode_t perm,
		     uid_t uid, gid_t gid, struct timespec ctime)
{
	*pi = (struct vfs_pseudo_inode){magic, dev, perm & 07777, uid, gid, ctime, false};
}

void vfs_pseudo_stat(const struct vfs_pseudo_inode *pi, struct stat *st)
{
	st->st_mode = (st->st_mode & S_IFMT) | pi->perm;
	st->st_uid = pi->uid;
	st->st_gid = pi->gid;
	st->st_ctim = pi->ctime;
}

struct vfs_pseudo_inode *vfs_file_pseudo(struct vfs_file *f)
{
	return !f->dentry && f->ops->pseudo_inode ? f->ops->pseudo_inode(f) : NULL;
}

static void apply(struct vfs_pseudo_inode *pi, const struct vfs_setattr *a)
{
	if (a->valid & VFS_ATTR_MODE)
		pi->perm = a->mode & 07777;
	if (a->valid & VFS_ATTR_UID)
		pi->uid = a->uid;
	if (a->valid & VFS_ATTR_GID)
		pi->gid = a->gid;
	if (a->valid & VFS_ATTR_CTIME)
		pi->ctime = a->ctime;
	pi->changed = true;
}

/* The attributes the permission rules look at. */
static int pseudo_stat(struct vfs_file *f, struct stat *st)
{
	int err = f->ops->getattr ? f->ops->getattr(f, st) : -EINVAL;

	if (!err)
		vfs_pseudo_stat(vfs_file_pseudo(f), st);
	return err;
}

int vfs_file_chmod(struct vfs_file *f, const struct vfs_cred *cred, mode_t mode)
{
	struct vfs_pseudo_inode *pi = vfs_file_pseudo(f);
	struct vfs_setattr attr;
	struct stat st;
	int err;

	if (f->dentry)
		return vfs_chmod(f->dentry, cred, mode);
	if (!pi)
		return -EINVAL; /* host stdio has no inode here */
	if ((err = pseudo_stat(f, &st)) || (err = vfs_chmod_attr(&st, cred, mode, &attr)))
		return err;
	apply(pi, &attr);
	return 0;
}

int vfs_file_chown(struct vfs_file *f, const struct vfs_cred *cred, uid_t uid, gid_t gid)
{
	struct vfs_pseudo_inode *pi = vfs_file_pseudo(f);
	struct vfs_setattr attr;
	struct stat st;
	int err;

	if (f->dentry)
		return vfs_chown(f->dentry, cred, uid, gid);
	if (!pi)
		return -EINVAL;
	if ((err = pseudo_stat(f, &st)) || (err = vfs_chown_attr(&st, cred, uid, gid, &attr)))
		return err;
	apply(pi, &attr);
	return 0;
}

/* What Linux's simple_statfs reports for a pseudo filesystem. */
int vfs_file_statfs_pseudo(struct vfs_file *f, struct statfs *out)
{
	struct vfs_pseudo_inode *pi = vfs_file_pseudo(f);
	struct stat st;

	memset(out, 0, sizeof(*out));
	if (pi) {
		out->f_type = (__fsword_t)pi->magic;
		out->f_fsid.__val[0] = (int)pi->dev;
	} else if (!f->dentry && f->ops->getattr && f->ops->getattr(f, &st) == 0 &&
		   st.st_dev == VFS_ANON_INODE_DEV) {
		out->f_type = ANON_INODE_FS_MAGIC;
		out->f_fsid.__val[0] = VFS_ANON_INODE_DEV;
	} else {
		return -ENOSYS;
	}
	out->f_bsize = 4096;
	out->f_frsize = 4096;
	out->f_namelen = NAME_MAX;
	return 0;
}

const void *vfs_file_lock_key(struct vfs_file *f)
{
	if (f->dentry)
		return f->dentry->inode;
	return vfs_file_pseudo(f);
}

/* --- checkpoint: after the kind's part of a file record, `u32 perm, u32 uid, u32 gid,
 * ts ctime` when fchmod or fchown changed the inode (every end of a pipe carries it). */

void vfs_pseudo_save(struct enc *e, struct vfs_file *f)
{
	const struct vfs_pseudo_inode *pi = vfs_file_pseudo(f);

	if (!pi || !pi->changed)
		return;
	enc_u32(e, pi->perm);
	enc_u32(e, pi->uid);
	enc_u32(e, pi->gid);
	enc_i64(e, pi->ctime.tv_sec);
	enc_i64(e, pi->ctime.tv_nsec);
}

int vfs_pseudo_load(struct dec *d, struct vfs_file *f)
{
	struct vfs_pseudo_inode *pi = vfs_file_pseudo(f);

	if (dec_at_end(d))
		return 0;
	if (!pi)
		return dec_fail(d, "inode attributes on a file that has no pseudo inode");
	mode_t perm = dec_u32(d);
	uid_t uid = dec_u32(d);
	gid_t gid = dec_u32(d);
	int64_t sec = dec_i64(d), nsec = dec_i64(d);
	if (!dec_ok(d))
		return -EINVAL;
	if ((perm & ~07777u) || nsec < 0 || nsec >= 1000000000)
		return dec_fail(d, "bad pseudo inode attributes");
	pi->perm = perm;
	pi->uid = uid;
	pi->gid = gid;
	pi->ctime = (struct timespec){sec, nsec};
	pi->changed = true;
	return 0;
}
