/* vfs/anon.c — dentries for open files that have none (a pipe, a socket pair, an eventfd, a
 * host descriptor handed in as stdio), so that a walk through a magic link to such a file
 * has somewhere to land, as Linux's pipefs and anon_inodefs give every file a dentry: stat
 * -L /proc/self/fd/0 on a pipe answers the pipe's attributes. The dentry is detached (its own
 * root, reachable from no directory) and holds the file while it lives. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vfs/internal.h"

struct anon_inode {
	struct vfs_inode vfs;
	struct vfs_file *file; /* the inode's reference */
};

static struct vfs_file *file_of(struct vfs_inode *ino)
{
	return ((struct anon_inode *)ino->priv)->file;
}

int vfs_anon_getattr(struct vfs_file *f, struct stat *st)
{
	(void)f;
	memset(st, 0, sizeof(*st));
	st->st_dev = VFS_ANON_INODE_DEV;
	st->st_ino = VFS_ANON_INODE_INO;
	st->st_mode = S_IRUSR | S_IWUSR;
	st->st_nlink = 1;
	st->st_blksize = 4096;
	return 0;
}

/* Linux's anon_inodefs files stat as mode 0600 with no file type, owned by root. */
static int anon_getattr(struct vfs_inode *ino, struct stat *st)
{
	struct vfs_file *f = file_of(ino);

	if (f->ops->getattr)
		return f->ops->getattr(f, st);
	memset(st, 0, sizeof(*st));
	st->st_mode = 0600;
	st->st_nlink = 1;
	st->st_blksize = 4096;
	return 0;
}

/* vfs_open reopens the file rather than opening an anonymous dentry; this is the open of
 * one reached otherwise (openat on an O_PATH descriptor of it). */
static int anon_open(struct vfs_inode *ino, struct vfs_file *f, int flags)
{
	(void)ino;
	(void)f;
	(void)flags;
	return -ENXIO;
}

static void anon_release(struct vfs_inode *ino)
{
	struct anon_inode *ai = ino->priv;

	vfs_file_put(ai->file);
	free(ai);
}

static const struct vfs_inode_ops anon_inode_ops = {
    .getattr = anon_getattr,
    .open = anon_open,
    .release = anon_release,
};

int vfs_anon_dentry(struct vfs_file *f, struct vfs_dentry **out)
{
	struct anon_inode *ai = calloc(1, sizeof(*ai));
	struct stat st;
	int err;

	if (!ai)
		return -ENOMEM;
	ai->vfs.ops = &anon_inode_ops;
	ai->vfs.refs = 1;
	ai->vfs.priv = ai;
	ai->file = vfs_file_get(f);
	if (anon_getattr(&ai->vfs, &st) == 0)
		ai->vfs.mode = st.st_mode & S_IFMT;
	err = vfs_dentry_new_root(&ai->vfs, out);
	if (err)
		anon_release(&ai->vfs);
	return err;
}

struct vfs_file *vfs_anon_file(struct vfs_dentry *d)
{
	return d->inode && d->inode->ops == &anon_inode_ops ? file_of(d->inode) : NULL;
}
