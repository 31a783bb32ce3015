/* The write side of the tree: creating, linking, removing and renaming names, and changing
 * attributes. Each call resolves the parent with the walker, looks at the last component the
 * way Linux's namei.c does (so the errno for each odd path matches), checks permissions
 * against the caller's credentials, then asks the filesystem through its inode operations and
 * brings the dentry cache up to date. */
#include "vfs/internal.h"
#include "vfs/inotify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/units.h"

static bool is_root_cred(const struct vfs_cred *cred)
{
	return !cred || cred->uid == 0;
}

static int walk_parent(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred,
		       struct vfs_dentry *start, const char *path, struct vfs_dentry **dir,
		       struct vfs_last *last)
{
	int nlinks = 0;

	return vfs_walk_cred(fs, cred, start, path, VFS_LOOKUP_FOLLOW, &nlinks, dir, last);
}

/* The top of the tree D lies in: two names are on one filesystem when their tops match. */
static struct vfs_dentry *tree_top(struct vfs_dentry *d)
{
	while (d->parent != d)
		d = d->parent;
	return d;
}

static bool can_create(struct vfs_dentry *dir)
{
	return !vfs_inode_rdonly(dir->inode) && dir->inode->ops->mknod;
}

/* Linux's may_create: write and search permission on DIR. */
static int may_create(struct vfs_dentry *dir, const struct vfs_cred *cred)
{
	return vfs_inode_permission(dir->inode, cred, W_OK | X_OK);
}

/* Linux's may_delete for VICTIM in DIR: permission on DIR, the sticky bit, then the type. */
static int may_delete(struct vfs_dentry *dir, struct vfs_dentry *victim,
		      const struct vfs_cred *cred, bool isdir)
{
	struct stat dst, vst;
	int err;

	err = may_create(dir, cred);
	if (err)
		return err;
	if (!is_root_cred(cred)) {
		err = vfs_stat(dir, &dst);
		if (!err)
			err = vfs_stat(victim, &vst);
		if (err)
			return err;
		if ((dst.st_mode & S_ISVTX) && cred->uid != vst.st_uid && cred->uid != dst.st_uid)
			return -EPERM;
	}
	if (isdir) {
		if (!vfs_is_dir(victim))
			return -ENOTDIR;
		if (victim->parent == victim)
			return -EBUSY;
	} else if (vfs_is_dir(victim)) {
		return -EISDIR;
	}
	if (victim->mounted)
		return -EBUSY;
	return 0;
}

/* The owner of a new node: the caller, with the group of a setgid directory. */
static void new_owner(struct vfs_dentry *dir, const struct vfs_cred *cred,
		      struct vfs_node_attr *attr)
{
	struct stat st;

	attr->uid = cred ? cred->uid : 0;
	attr->gid = cred ? cred->gid : 0;
	if (vfs_stat(dir, &st) == 0 && (st.st_mode & S_ISGID)) {
		attr->gid = st.st_gid;
		if (S_ISDIR(attr->mode))
			attr->mode |= S_ISGID;
	}
}

static int make_node(struct vfs_dentry *dir, const struct vfs_cred *cred, const char *name,
		     struct vfs_node_attr *attr)
{
	int err = may_create(dir, cred);

	if (err)
		return err;
	new_owner(dir, cred, attr);
	err = dir->inode->ops->mknod(dir->inode, name, attr);
	if (!err)
		vfs_notify_create(dir, name, S_ISDIR(attr->mode));
	return err;
}

int vfs_create_in(struct vfs_dentry *dir, const struct vfs_cred *cred, const char *name,
		  mode_t mode)
{
	struct vfs_node_attr attr = {.mode = S_IFREG | (mode & 07777)};

	if (!can_create(dir))
		return -EROFS;
	return make_node(dir, cred, name, &attr);
}

/* Linux's filename_create: the parent of PATH, returned referenced in *DIRP with the last name
 * in *LAST, once that name is checked to be free (EEXIST first, then ENOENT for a trailing
 * slash on what is not to be a directory, then EROFS). */
static int create_parent(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred,
			 struct vfs_dentry *start, const char *path, bool is_dir,
			 struct vfs_dentry **dirp, struct vfs_last *last)
{
	struct vfs_dentry *dir, *d;
	int err;

	err = walk_parent(fs, cred, start, path, &dir, last);
	if (err)
		return err;
	if (last->type != VFS_LAST_NORM) {
		err = -EEXIST;
		goto fail;
	}
	err = vfs_may_lookup_cred(dir, cred);
	if (err)
		goto fail;
	err = vfs_dentry_child(dir, last->name, &d);
	if (err == 0) {
		vfs_dentry_put(d);
		err = -EEXIST;
		goto fail;
	}
	if (err != -ENOENT)
		goto fail;
	if (last->trailing_slash && !is_dir) {
		err = -ENOENT;
		goto fail;
	}
	if (!can_create(dir)) {
		err = -EROFS;
		goto fail;
	}
	*dirp = dir;
	return 0;
fail:
	vfs_dentry_put(dir);
	return err;
}

/* mkdir, mknod and symlink: the free name, then the node made. */
static int create_at(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred,
		     struct vfs_dentry *start, const char *path, struct vfs_node_attr *attr)
{
	struct vfs_dentry *dir;
	struct vfs_last last;
	int err;

	err = create_parent(fs, cred, start, path, S_ISDIR(attr->mode), &dir, &last);
	if (err)
		return err;
	err = make_node(dir, cred, last.name, attr);
	vfs_dentry_put(dir);
	return err;
}

int vfs_mkdir(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred, struct vfs_dentry *start,
	      const char *path, mode_t mode)
{
	struct vfs_node_attr attr = {.mode = S_IFDIR | (mode & 07777)};

	return create_at(fs, cred, start, path, &attr);
}

int vfs_mknod(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred, struct vfs_dentry *start,
	      const char *path, mode_t mode, dev_t dev)
{
	struct vfs_node_attr attr = {.mode = mode};

	switch (mode & S_IFMT) {
	case 0:
		attr.mode |= S_IFREG;
		break;
	case S_IFREG:
	case S_IFIFO:
	case S_IFSOCK:
		break;
	case S_IFCHR:
	case S_IFBLK:
		return -EPERM; /* devices come from devfs */
	default:
		return -EINVAL;
	}
	(void)dev;
	return create_at(fs, cred, start, path, &attr);
}

int vfs_symlink(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred, const char *target,
		struct vfs_dentry *start, const char *path)
{
	struct vfs_node_attr attr = {.mode = S_IFLNK | 0777, .target = target};
	size_t len = strnlen(target, PATH_MAX);

	if (len == 0)
		return -ENOENT;
	if (len == PATH_MAX)
		return -ENAMETOOLONG;
	return create_at(fs, cred, start, path, &attr);
}

int vfs_link(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred, struct vfs_dentry *old,
	     struct vfs_dentry *start, const char *path)
{
	struct vfs_dentry *dir;
	struct vfs_last last;
	int err;

	err = create_parent(fs, cred, start, path, false, &dir, &last);
	if (err)
		return err;
	if (tree_top(old) != tree_top(dir)) {
		err = -EXDEV;
		goto out;
	}
	err = may_create(dir, cred);
	if (err)
		goto out;
	if (!old->inode) {
		err = -ENOENT;
		goto out;
	}
	if (vfs_is_dir(old) || !dir->inode->ops->link) {
		err = -EPERM;
		goto out;
	}
	err = dir->inode->ops->link(dir->inode, last.name, old->inode);
	if (!err)
		vfs_notify_link(old, dir, last.name);
out:
	vfs_dentry_put(dir);
	return err;
}

/* do_unlinkat and do_rmdir: the parent, the kind of the last name, EROFS, then the victim. */
static int remove_at(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred,
		     struct vfs_dentry *start, const char *path, bool isdir)
{
	struct vfs_dentry *dir, *victim;
	struct vfs_last last;
	int err;

	err = walk_parent(fs, cred, start, path, &dir, &last);
	if (err)
		return err;
	switch (last.type) {
	case VFS_LAST_NORM:
		break;
	case VFS_LAST_DOT:
		err = isdir ? -EINVAL : -EISDIR;
		goto out;
	case VFS_LAST_DOTDOT:
		err = isdir ? -ENOTEMPTY : -EISDIR;
		goto out;
	default:
		err = isdir ? -EBUSY : -EISDIR;
		goto out;
	}
	if (vfs_inode_rdonly(dir->inode)) {
		err = -EROFS;
		goto out;
	}
	err = vfs_may_lookup_cred(dir, cred);
	if (err)
		goto out;
	err = vfs_dentry_child(dir, last.name, &victim);
	if (err)
		goto out;
	if (!isdir && last.trailing_slash) {
		err = vfs_is_dir(victim) ? -EISDIR : -ENOTDIR;
		goto out_victim;
	}
	err = may_delete(dir, victim, cred, isdir);
	if (err)
		goto out_victim;
	if (isdir)
		err = dir->inode->ops->rmdir
			  ? dir->inode->ops->rmdir(dir->inode, last.name, victim->inode)
			  : -EROFS;
	else
		err = dir->inode->ops->unlink
			  ? dir->inode->ops->unlink(dir->inode, last.name, victim->inode)
			  : -EROFS;
	if (!err) {
		vfs_dentry_unhash(victim);
		vfs_notify_remove(dir, victim, last.name, isdir);
	}
out_victim:
	vfs_dentry_put(victim);
out:
	vfs_dentry_put(dir);
	return err;
}

int vfs_unlink(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred, struct vfs_dentry *start,
	       const char *path)
{
	return remove_at(fs, cred, start, path, false);
}

int vfs_rmdir(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred, struct vfs_dentry *start,
	      const char *path)
{
	return remove_at(fs, cred, start, path, true);
}

/* True if D is ANCESTOR or below it, in one tree. */
static bool is_below(struct vfs_dentry *d, struct vfs_dentry *ancestor)
{
	for (;;) {
		if (d == ancestor)
			return true;
		if (d->parent == d)
			return false;
		d = d->parent;
	}
}

/* Linux's do_renameat2 and vfs_rename, in their order of checks. */
int vfs_rename(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred, struct vfs_dentry *ostart,
	       const char *opath, struct vfs_dentry *nstart, const char *npath, unsigned int flags)
{
	struct vfs_dentry *odir, *ndir, *src = NULL, *tgt = NULL;
	struct vfs_last olast, nlast;
	bool exchange = flags & RENAME_EXCHANGE;
	int err;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	if ((flags & RENAME_NOREPLACE) && exchange)
		return -EINVAL;
	err = walk_parent(fs, cred, ostart, opath, &odir, &olast);
	if (err)
		return err;
	err = walk_parent(fs, cred, nstart, npath, &ndir, &nlast);
	if (err)
		goto out_odir;
	if (tree_top(odir) != tree_top(ndir)) {
		err = -EXDEV;
		goto out;
	}
	if (olast.type != VFS_LAST_NORM) {
		err = -EBUSY;
		goto out;
	}
	if (nlast.type != VFS_LAST_NORM) {
		err = (flags & RENAME_NOREPLACE) ? -EEXIST : -EBUSY;
		goto out;
	}
	if (vfs_inode_rdonly(odir->inode)) {
		err = -EROFS;
		goto out;
	}
	if ((err = vfs_may_lookup_cred(odir, cred)) || (err = vfs_may_lookup_cred(ndir, cred)))
		goto out;
	err = vfs_dentry_child(odir, olast.name, &src);
	if (err)
		goto out;
	err = vfs_dentry_child(ndir, nlast.name, &tgt);
	if (err && err != -ENOENT)
		goto out;
	if (err == -ENOENT) {
		tgt = NULL;
		if (exchange)
			goto out; /* -ENOENT */
		err = 0;
	} else if (flags & RENAME_NOREPLACE) {
		err = -EEXIST;
		goto out;
	}
	if (!vfs_is_dir(src) && (olast.trailing_slash || (!exchange && nlast.trailing_slash))) {
		err = -ENOTDIR;
		goto out;
	}
	if (exchange && !vfs_is_dir(tgt) && nlast.trailing_slash) {
		err = -ENOTDIR;
		goto out;
	}
	/* The source must not be an ancestor of the new parent, nor the target of the old one. */
	if (is_below(ndir, src)) {
		err = -EINVAL;
		goto out;
	}
	if (tgt && is_below(odir, tgt)) {
		err = exchange ? -EINVAL : -ENOTEMPTY;
		goto out;
	}
	if (tgt && src->inode == tgt->inode)
		goto out; /* two names of one inode: nothing to do */
	err = may_delete(odir, src, cred, vfs_is_dir(src));
	if (err)
		goto out;
	if (tgt) {
		if (exchange)
			err = may_delete(ndir, tgt, cred, vfs_is_dir(tgt));
		else
			err = may_delete(ndir, tgt, cred, vfs_is_dir(src));
	} else {
		err = may_create(ndir, cred);
	}
	if (err)
		goto out;
	/* Moving a directory to a new parent rewrites its "..": write permission on it. */
	if (odir != ndir && vfs_is_dir(src) && (err = vfs_inode_permission(src->inode, cred, W_OK)))
		goto out;
	if (exchange && odir != ndir && vfs_is_dir(tgt) &&
	    (err = vfs_inode_permission(tgt->inode, cred, W_OK)))
		goto out;
	if (!odir->inode->ops->rename) {
		err = -EROFS;
		goto out;
	}
	err = odir->inode->ops->rename(odir->inode, olast.name, src->inode, ndir->inode, nlast.name,
				       tgt ? tgt->inode : NULL, exchange ? RENAME_EXCHANGE : 0);
	if (err)
		goto out;
	if (tgt)
		vfs_dentry_unhash(tgt);
	vfs_dentry_move(src, ndir, nlast.name);
	if (exchange)
		vfs_dentry_move(tgt, odir, olast.name);
	vfs_notify_rename(odir, olast.name, src, ndir, nlast.name, tgt, exchange);
out:
	if (tgt)
		vfs_dentry_put(tgt);
	if (src)
		vfs_dentry_put(src);
	vfs_dentry_put(ndir);
out_odir:
	vfs_dentry_put(odir);
	return err;
}

/* Attributes. */

int vfs_setattr_dentry(struct vfs_dentry *d, struct vfs_setattr *attr)
{
	int err;

	if (!d->inode)
		return -ENOENT;
	if (!d->inode->ops->setattr)
		return -EROFS;
	err = d->inode->ops->setattr(d->inode, attr);
	if (!err)
		vfs_notify_setattr(d, attr->valid);
	return err;
}

static int attr_begin(struct vfs_dentry *d, struct stat *st)
{
	if (!d->inode)
		return -ENOENT;
	if (vfs_inode_rdonly(d->inode))
		return -EROFS;
	return vfs_stat(d, st);
}

int vfs_chmod_attr(const struct stat *st, const struct vfs_cred *cred, mode_t mode,
		   struct vfs_setattr *attr)
{
	*attr = (struct vfs_setattr){.valid = VFS_ATTR_MODE | VFS_ATTR_CTIME};
	if (S_ISLNK(st->st_mode))
		return -EOPNOTSUPP;
	if (!is_root_cred(cred)) {
		if (cred->uid != st->st_uid)
			return -EPERM;
		if (!vfs_cred_in_group(cred, st->st_gid))
			mode &= ~(mode_t)S_ISGID;
	}
	attr->mode = mode & 07777;
	attr->ctime = vfs_now();
	return 0;
}

int vfs_chmod(struct vfs_dentry *d, const struct vfs_cred *cred, mode_t mode)
{
	struct vfs_setattr attr;
	struct stat st;
	int err = attr_begin(d, &st);

	if (err || (err = vfs_chmod_attr(&st, cred, mode, &attr)))
		return err;
	return vfs_setattr_dentry(d, &attr);
}

int vfs_chown(struct vfs_dentry *d, const struct vfs_cred *cred, uid_t uid, gid_t gid)
{
	struct vfs_setattr attr;
	struct stat st;
	int err = attr_begin(d, &st);

	if (err || (err = vfs_chown_attr(&st, cred, uid, gid, &attr)))
		return err;
	return vfs_setattr_dentry(d, &attr);
}

int vfs_chown_attr(const struct stat *st_, const struct vfs_cred *cred, uid_t uid, gid_t gid,
		   struct vfs_setattr *attr_)
{
	struct vfs_setattr attr = {.valid = VFS_ATTR_CTIME};
	struct stat st = *st_;

	if (uid != (uid_t)-1) {
		if (!is_root_cred(cred) && !(cred->uid == st.st_uid && uid == st.st_uid))
			return -EPERM;
		attr.valid |= VFS_ATTR_UID;
		attr.uid = uid;
	}
	if (gid != (gid_t)-1) {
		if (!is_root_cred(cred) &&
		    !(cred->uid == st.st_uid && (gid == st.st_gid || vfs_cred_in_group(cred, gid))))
			return -EPERM;
		attr.valid |= VFS_ATTR_GID;
		attr.gid = gid;
	}
	/* A changed owner may not inherit the old one's privileges. */
	if (!S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode) &&
	    (st.st_mode & (S_ISUID | ((st.st_mode & S_IXGRP) ? S_ISGID : 0)))) {
		attr.valid |= VFS_ATTR_MODE;
		attr.mode = st.st_mode & 07777 & ~(mode_t)S_ISUID;
		if (st.st_mode & S_IXGRP)
			attr.mode &= ~(mode_t)S_ISGID;
	}
	attr.ctime = vfs_now();
	*attr_ = attr;
	return 0;
}

static int do_truncate(struct vfs_dentry *d, off_t size)
{
	struct vfs_setattr attr = {.valid = VFS_ATTR_SIZE | VFS_ATTR_MTIME | VFS_ATTR_CTIME,
				   .size = size};

	attr.mtime = attr.ctime = vfs_now();
	return vfs_setattr_dentry(d, &attr);
}

int vfs_truncate(struct vfs_dentry *d, const struct vfs_cred *cred, off_t size)
{
	int err;

	if (!d->inode)
		return -ENOENT;
	if (size < 0)
		return -EINVAL;
	if (vfs_is_dir(d))
		return -EISDIR;
	if (!S_ISREG(d->inode->mode))
		return -EINVAL;
	if (vfs_inode_rdonly(d->inode))
		return -EROFS;
	err = vfs_inode_permission(d->inode, cred, W_OK);
	if (err)
		return err;
	return do_truncate(d, size);
}

int vfs_ftruncate(struct vfs_file *f, off_t size)
{
	if (f->flags & O_PATH)
		return -EBADF;
	if (size < 0)
		return -EINVAL;
	if (!f->dentry || !f->dentry->inode || !S_ISREG(f->dentry->inode->mode) ||
	    (f->flags & O_ACCMODE) == O_RDONLY)
		return -EINVAL;
	return do_truncate(f->dentry, size);
}

static bool nsec_ok(long nsec)
{
	return (nsec >= 0 && nsec < NSEC_PER_SEC) || nsec == UTIME_NOW || nsec == UTIME_OMIT;
}

int vfs_utimens(struct vfs_dentry *d, const struct vfs_cred *cred, const struct timespec *times)
{
	struct vfs_setattr attr = {.valid = VFS_ATTR_ATIME | VFS_ATTR_MTIME | VFS_ATTR_CTIME};
	struct timespec now = vfs_now();
	bool explicit = false;
	struct stat st;
	int err;

	if (times) {
		if (!nsec_ok(times[0].tv_nsec) || !nsec_ok(times[1].tv_nsec))
			return -EINVAL;
		if (times[0].tv_nsec == UTIME_OMIT && times[1].tv_nsec == UTIME_OMIT)
			return 0;
	}
	err = attr_begin(d, &st);
	if (err)
		return err;
	attr.atime = attr.mtime = attr.ctime = now;
	if (times) {
		for (int i = 0; i < 2; i++) {
			struct timespec *t = i ? &attr.mtime : &attr.atime;

			if (times[i].tv_nsec == UTIME_OMIT) {
				attr.valid &= ~(unsigned int)(i ? VFS_ATTR_MTIME : VFS_ATTR_ATIME);
			} else if (times[i].tv_nsec != UTIME_NOW) {
				*t = times[i];
				explicit = true;
			}
		}
	}
	if (!is_root_cred(cred) && cred->uid != st.st_uid) {
		if (explicit)
			return -EPERM;
		err = vfs_inode_permission(d->inode, cred, W_OK);
		if (err)
			return err;
	}
	return vfs_setattr_dentry(d, &attr);
}

int vfs_fallocate(struct vfs_file *f, int mode, off_t off, off_t len)
{
	if (f->flags & O_PATH)
		return -EBADF;
	/* In vfs_fallocate's order: arguments, then access, then the kind of file. */
	if (off < 0 || len <= 0)
		return -EINVAL;
	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE))
		return -EOPNOTSUPP;
	if ((mode & FALLOC_FL_PUNCH_HOLE) && !(mode & FALLOC_FL_KEEP_SIZE))
		return -EOPNOTSUPP;
	if ((f->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	if (vfs_is_pipe(f))
		return -ESPIPE;
	if (!f->dentry || !f->dentry->inode)
		return -ENODEV;
	if (vfs_is_dir(f->dentry))
		return -EISDIR;
	if (!S_ISREG(f->dentry->inode->mode))
		return -ENODEV;
	if (!f->ops->fallocate)
		return -EOPNOTSUPP;
	int err = f->ops->fallocate(f, mode, off, len);
	if (!err)
		vfs_notify_modify(f);
	return err;
}

int vfs_file_mmap_range(struct vfs_file *f, off_t off, size_t len, struct mobj **mobj,
			uint64_t *mf_off)
{
	if (!f->ops->mmap_range)
		return -ENODEV;
	return f->ops->mmap_range(f, off, len, mobj, mf_off);
}
