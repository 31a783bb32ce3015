/* Synthetic filesystems (vfs/synth.h): inodes that live only in the Sentry, built from tables
 * of nodes. A directory holds a reference on each entry's inode, so the tree lives as long as
 * its root inode, which the root dentry holds; every inode holds its filesystem (the st_dev
 * and the inode counter). Directory listings are generated from the entry arrays, with
 * stable cookies: the position of the entry. */
#include "vfs/synth.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "vfs/internal.h"
#include "vfs/dirent.h"
#include "vfs/save.h"

/* What Linux's tmpfs counts per directory entry in a directory's st_size. */
#define SYNTH_DIRENT_SIZE 20

struct synth_fs {
	int refs; /* one per inode */
	char *type;
	dev_t dev;
	ino_t next_ino;
	struct timespec built;
};

struct synth_entry {
	char *name;
	struct synth_inode *ino; /* a reference */
};

struct synth_inode {
	struct vfs_inode vfs;
	struct synth_fs *fs;
	ino_t ino;
	ino_t parent_ino; /* for a directory's ".." record; the root's is its own */
	dev_t rdev;
	char *target;
	const struct vfs_file_ops *fops;
	int (*open)(struct vfs_inode *ino, struct vfs_file *f, int flags);
	void *priv;
	uid_t uid;
	gid_t gid;
	const struct vfs_synth_dynamic *dynamic;
	struct synth_entry *entries; /* directories */
	size_t nentries, nsubdirs;
};

static const struct vfs_inode_ops synth_inode_ops;

static struct synth_inode *synth_i(struct vfs_inode *ino)
{
	return ino->priv;
}

static struct synth_fs *synth_fs_get(struct synth_fs *fs)
{
	fs->refs++;
	return fs;
}

static void synth_fs_put(struct synth_fs *fs)
{
	if (--fs->refs > 0)
		return;
	free(fs->type);
	free(fs);
}

static bool synth_name_ok(const char *name)
{
	return name && name[0] && !strchr(name, '/') && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0 && strlen(name) <= NAME_MAX;
}

static int synth_inode_new(struct synth_fs *fs, const struct vfs_synth_node *node, ino_t parent_ino,
			   struct synth_inode **out)
{
	struct synth_inode *si;
	int err;

	switch (node->mode & S_IFMT) {
	case S_IFDIR:
	case S_IFREG:
	case S_IFCHR:
	case S_IFBLK:
	case S_IFIFO:
	case S_IFSOCK:
		break;
	case S_IFLNK:
		if (!node->target)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	si = calloc(1, sizeof(*si));
	if (!si)
		return -ENOMEM;
	si->vfs.ops = &synth_inode_ops;
	si->vfs.refs = 1;
	si->vfs.mode = node->mode;
	si->vfs.priv = si;
	si->fs = synth_fs_get(fs);
	si->ino = fs->next_ino++;
	si->parent_ino = S_ISDIR(node->mode) ? parent_ino : 0;
	si->rdev = makedev(node->dev_major, node->dev_minor);
	si->fops = node->fops;
	si->open = node->open;
	si->priv = node->priv;
	si->uid = node->uid;
	si->gid = node->gid;
	si->dynamic = S_ISDIR(node->mode) ? node->dynamic : NULL;
	if (node->target && !(si->target = strdup(node->target))) {
		err = -ENOMEM;
		goto out_put;
	}
	if (S_ISDIR(node->mode) && node->nchildren) {
		err = vfs_synth_add(&si->vfs, node->children, node->nchildren);
		if (err)
			goto out_put;
	}
	*out = si;
	return 0;

out_put:
	vfs_inode_put(&si->vfs);
	return err;
}

static struct synth_entry *synth_find(struct synth_inode *dir, const char *name)
{
	for (size_t i = 0; i < dir->nentries; i++)
		if (strcmp(dir->entries[i].name, name) == 0)
			return &dir->entries[i];
	return NULL;
}

int vfs_synth_add(struct vfs_inode *dir, const struct vfs_synth_node *nodes, size_t n)
{
	struct synth_inode *sd, *si;
	struct synth_entry *grown;
	char *name;
	int err;

	if (dir->ops != &synth_inode_ops || !S_ISDIR(dir->mode))
		return -ENOTDIR;
	sd = synth_i(dir);
	for (size_t i = 0; i < n; i++) {
		if (!synth_name_ok(nodes[i].name))
			return -EINVAL;
		if (synth_find(sd, nodes[i].name))
			return -EEXIST;
		grown = realloc(sd->entries, (sd->nentries + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		sd->entries = grown;
		name = strdup(nodes[i].name);
		if (!name)
			return -ENOMEM;
		err = synth_inode_new(sd->fs, &nodes[i], sd->ino, &si);
		if (err) {
			free(name);
			return err;
		}
		sd->entries[sd->nentries++] = (struct synth_entry){name, si};
		if (S_ISDIR(si->vfs.mode))
			sd->nsubdirs++;
	}
	return 0;
}

int vfs_synth_new(const char *fs_type, mode_t perm, const struct vfs_synth_node *nodes, size_t n,
		  struct vfs_dentry **root)
{
	struct vfs_synth_node root_node = {.name = "/", .mode = S_IFDIR | (perm & 07777)};
	struct synth_fs *fs = calloc(1, sizeof(*fs));
	struct synth_inode *si = NULL;
	int err;

	if (!fs)
		return -ENOMEM;
	fs->type = strdup(fs_type);
	if (!fs->type) {
		free(fs);
		return -ENOMEM;
	}
	fs->dev = vfs_anon_dev_new();
	fs->next_ino = 1;
	fs->built = vfs_now();

	fs->refs = 1; /* ours, while the root is built */
	err = synth_inode_new(fs, &root_node, 1, &si);
	if (!err)
		err = vfs_synth_add(&si->vfs, nodes, n);
	if (!err)
		err = vfs_dentry_new_root(&si->vfs, root);
	if (err && si)
		vfs_inode_put(&si->vfs);
	synth_fs_put(fs);
	return err;
}

void *vfs_synth_priv(struct vfs_inode *ino)
{
	return synth_i(ino)->priv;
}

/* A dynamic entry gets an inode of its own for each lookup that misses the dentry cache. */
static int synth_dynamic_lookup(struct synth_inode *sd, const char *name, struct vfs_inode **out)
{
	struct vfs_synth_node node;
	char namebuf[NAME_MAX + 1];
	struct synth_inode *si;
	ino_t ino;
	int err;

	if (!sd->dynamic || (err = sd->dynamic->lookup(name, &node, namebuf, &ino)))
		return -ENOENT;
	if (S_ISDIR(node.mode) || (err = synth_inode_new(sd->fs, &node, sd->ino, &si)))
		return S_ISDIR(node.mode) ? -EINVAL : err;
	sd->fs->next_ino--; /* the entry's number is its own */
	si->ino = ino;
	*out = &si->vfs;
	return 0;
}

static int synth_lookup(struct vfs_inode *dir, const char *name, struct vfs_inode **out)
{
	struct synth_entry *e = synth_find(synth_i(dir), name);

	if (!e)
		return synth_dynamic_lookup(synth_i(dir), name, out);
	*out = vfs_inode_get(&e->ino->vfs);
	return 0;
}

static int synth_getattr(struct vfs_inode *ino, struct stat *st)
{
	struct synth_inode *si = synth_i(ino);

	memset(st, 0, sizeof(*st));
	st->st_dev = si->fs->dev;
	st->st_ino = si->ino;
	st->st_mode = ino->mode;
	st->st_uid = si->uid;
	st->st_gid = si->gid;
	st->st_nlink = S_ISDIR(ino->mode) ? 2 + si->nsubdirs : 1;
	st->st_rdev = si->rdev;
	if (S_ISDIR(ino->mode))
		st->st_size = (off_t)(2 + si->nentries) * SYNTH_DIRENT_SIZE;
	else if (si->target)
		st->st_size = (off_t)strlen(si->target);
	st->st_blksize = 4096;
	st->st_atim = st->st_mtim = st->st_ctim = si->fs->built;
	return 0;
}

static ssize_t synth_readlink(struct vfs_inode *ino, char *buf, size_t size)
{
	struct synth_inode *si = synth_i(ino);
	size_t len;

	if (!si->target)
		return -EINVAL;
	len = strlen(si->target);
	if (len > size)
		len = size;
	memcpy(buf, si->target, len);
	return (ssize_t)len;
}

static const char *synth_fs_type(struct vfs_inode *ino)
{
	return synth_i(ino)->fs->type;
}

static void synth_release(struct vfs_inode *ino)
{
	struct synth_inode *si = synth_i(ino);

	for (size_t i = 0; i < si->nentries; i++) {
		free(si->entries[i].name);
		vfs_inode_put(&si->entries[i].ino->vfs);
	}
	free(si->entries);
	free(si->target);
	synth_fs_put(si->fs);
	free(si);
}

/* Directories opened for listing. F->priv is the directory's inode (the dentry holds it). */

/* Record *POS is "." at 0, ".." at 1, then entry *POS - 2; each record's d_off is the
 * position of the next. A root's ".." shows the root itself, as Linux's readdir of a mounted
 * root does. */
static ssize_t synth_dir_getdents64(struct vfs_file *f, void *buf, size_t size, off_t *pos)
{
	struct synth_inode *sd = f->priv;
	size_t done = 0;

	while (*pos >= 0 && (size_t)*pos < 2 + sd->nentries) {
		size_t at = (size_t)*pos;
		const char *name;
		uint64_t ino;
		mode_t mode;

		if (at < 2) {
			name = at == 0 ? "." : "..";
			ino = at == 0 ? sd->ino : sd->parent_ino;
			mode = S_IFDIR;
		} else {
			name = sd->entries[at - 2].name;
			ino = sd->entries[at - 2].ino->ino;
			mode = sd->entries[at - 2].ino->vfs.mode;
		}
		if (!vfs_dirent_put(buf, size, &done, ino, (int64_t)at + 1, IFTODT(mode), name))
			break;
		++*pos;
	}
	if (done == 0 && *pos >= 0 && (size_t)*pos < 2 + sd->nentries)
		return -EINVAL;
	/* Then the dynamic entries: cookie 2 + nentries + key. */
	while (sd->dynamic && *pos >= 0 && (size_t)*pos >= 2 + sd->nentries) {
		uint64_t key = (uint64_t)*pos - 2 - sd->nentries;
		struct vfs_synth_node node;
		char namebuf[NAME_MAX + 1];
		ino_t ino;

		if (!sd->dynamic->next(&key, &node, namebuf, &ino))
			break;
		off_t next = (off_t)(2 + sd->nentries + key + 1);
		if (!vfs_dirent_put(buf, size, &done, ino, next, IFTODT(node.mode), node.name)) {
			if (done == 0)
				return -EINVAL;
			*pos = next - 1; /* resume at this entry */
			break;
		}
		*pos = next;
	}
	return (ssize_t)done;
}

static long synth_dir_ioctl(struct vfs_file *f, unsigned int cmd, void *arg)
{
	(void)f, (void)cmd, (void)arg;
	return -ENOTTY;
}

int vfs_synth_file_getattr(struct vfs_file *f, struct stat *st)
{
	return vfs_stat(f->dentry, st);
}

static int synth_dir_host_fd(struct vfs_file *f)
{
	(void)f;
	return -1;
}

static const struct vfs_file_ops synth_dir_ops = {
    .read = vfs_dir_read,
    .write = vfs_dir_write,
    .getdents64 = synth_dir_getdents64,
    .ioctl = synth_dir_ioctl,
    .getattr = vfs_synth_file_getattr,
    .host_fd = synth_dir_host_fd,
    .pread_kernel = vfs_dir_pread_kernel,
};

static int synth_open(struct vfs_inode *ino, struct vfs_file *f, int flags)
{
	struct synth_inode *si = synth_i(ino);

	switch (ino->mode & S_IFMT) {
	case S_IFDIR:
		if ((flags & O_ACCMODE) != O_RDONLY)
			return -EISDIR;
		f->ops = &synth_dir_ops;
		f->priv = si;
		return 0;
	case S_IFLNK:
		return -ELOOP;
	}
	if (si->open)
		return si->open(ino, f, flags);
	if (!si->fops)
		return -ENXIO;
	f->ops = si->fops;
	f->priv = si->priv;
	return 0;
}

static const struct vfs_inode_ops synth_inode_ops = {
    .lookup = synth_lookup,
    .getattr = synth_getattr,
    .readlink = synth_readlink,
    .open = synth_open,
    .release = synth_release,
    .fs_type = synth_fs_type,
};

/* Checkpoint and restore: a synthetic tree is built again from its table, and only what the
 * build cannot know is carried over, its st_dev and the time its nodes are dated from. */

int vfs_synth_identity(struct vfs_inode *ino, dev_t *dev, struct timespec *built)
{
	if (ino->ops != &synth_inode_ops)
		return -EINVAL;
	*dev = synth_i(ino)->fs->dev;
	*built = synth_i(ino)->fs->built;
	return 0;
}

int vfs_synth_set_identity(struct vfs_inode *ino, dev_t dev, struct timespec built)
{
	if (ino->ops != &synth_inode_ops)
		return -EINVAL;
	synth_i(ino)->fs->dev = dev;
	synth_i(ino)->fs->built = built;
	return 0;
}

/* A listing's cookie is an entry's position in a table that does not change. */
const struct vfs_file_kind synth_dir_kind = {
    .name = "synth-dir",
    .ops = &synth_dir_ops,
    .save = vfs_file_save_none,
    .load = vfs_file_reopen,
};
