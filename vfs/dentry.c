/* The dentry cache: names bound to inodes, each cached under its parent, and the reference
 * counting that keeps a dentry alive while it or a descendant is in use (children pin their
 * parent). Also the inode get/put pair and vfs_path, which walks the parent links (and the
 * mounts) back up.
 * The Sentry's VFS is used from one thread, so none of this takes locks. */
#include "vfs/internal.h"
#include "vfs/inotify.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct vfs_inode *vfs_inode_get(struct vfs_inode *ino)
{
	ino->refs++;
	return ino;
}

void vfs_inode_put(struct vfs_inode *ino)
{
	if (!ino || --ino->refs > 0)
		return;
	ino->ops->release(ino);
}

struct vfs_dentry *vfs_dentry_get(struct vfs_dentry *d)
{
	d->refs++;
	return d;
}

static void dentry_unlink(struct vfs_dentry *d)
{
	struct vfs_dentry **pp = &d->parent->children;

	while (*pp != d)
		pp = &(*pp)->next_sibling;
	*pp = d->next_sibling;
}

/* Freeing a dentry drops the reference it held on its parent, which may free the parent in
 * turn: a loop rather than recursion, since paths can be thousands of components deep. */
void vfs_dentry_put(struct vfs_dentry *d)
{
	while (d) {
		/* inotify: a removed name losing a holder besides its watches (vfs/inotify.h). */
		if (d->unhashed)
			vfs_notify_dentry_put(d);
		if (--d->refs > 0)
			break;
		struct vfs_dentry *parent = d->parent == d ? NULL : d->parent;

		if (parent && !d->unhashed)
			dentry_unlink(d);
		vfs_inode_put(d->inode);
		free(d->name);
		free(d);
		d = parent;
	}
}

bool vfs_is_dir(struct vfs_dentry *d)
{
	return d && d->inode && S_ISDIR(d->inode->mode);
}

static struct vfs_dentry *dentry_alloc(const char *name, struct vfs_inode *ino)
{
	struct vfs_dentry *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->name = strdup(name);
	if (!d->name) {
		free(d);
		return NULL;
	}
	d->inode = ino;
	d->refs = 1;
	return d;
}

int vfs_dentry_new_root(struct vfs_inode *ino, struct vfs_dentry **out)
{
	struct vfs_dentry *d = dentry_alloc("/", ino);

	if (!d)
		return -ENOMEM;
	d->parent = d;
	*out = d;
	return 0;
}

int vfs_dentry_child(struct vfs_dentry *dir, const char *name, struct vfs_dentry **out)
{
	struct vfs_inode *ino;
	struct vfs_dentry *d;
	int err;

	d = vfs_dentry_cached(dir, name);
	if (d) {
		if (!d->inode)
			return -ENOENT;
		*out = vfs_dentry_get(d);
		return 0;
	}

	err = dir->inode->ops->lookup(dir->inode, name, &ino);
	if (err)
		return err;
	d = dentry_alloc(name, ino);
	if (!d) {
		vfs_inode_put(ino);
		return -ENOMEM;
	}
	d->parent = vfs_dentry_get(dir);
	d->next_sibling = dir->children;
	dir->children = d;
	*out = d;
	return 0;
}

int vfs_dentry_new_detached(struct vfs_dentry *parent, const char *name, struct vfs_inode *ino,
			    struct vfs_dentry **out)
{
	struct vfs_dentry *d = dentry_alloc(name, ino);

	if (!d)
		return -ENOMEM;
	d->parent = vfs_dentry_get(parent);
	d->unhashed = true;
	*out = d;
	return 0;
}

struct vfs_dentry *vfs_dentry_cached(struct vfs_dentry *dir, const char *name)
{
	struct vfs_dentry *d;

	for (d = dir->children; d; d = d->next_sibling)
		if (strcmp(d->name, name) == 0)
			return d;
	return NULL;
}

void vfs_dentry_unhash(struct vfs_dentry *d)
{
	if (d->unhashed || d->parent == d)
		return;
	dentry_unlink(d);
	d->next_sibling = NULL;
	d->unhashed = true;
}

/* The dentry keeps its place in the tree (its parent reference moves with it), so open
 * files, working directories and ".." follow the rename as on Linux. */
int vfs_dentry_move(struct vfs_dentry *d, struct vfs_dentry *newdir, const char *newname)
{
	struct vfs_dentry *old_parent = d->parent;
	char *name = strdup(newname);

	vfs_dentry_unhash(d);
	if (!name)
		return -ENOMEM;
	free(d->name);
	d->name = name;
	d->parent = vfs_dentry_get(newdir);
	d->next_sibling = newdir->children;
	newdir->children = d;
	d->unhashed = false;
	vfs_dentry_put(old_parent);
	return 0;
}

/* One step of vfs_path from D towards ROOT: D's parent, with D's name in *NAME; from the root
 * of a mounted tree, its mountpoint, with no name; NULL at ROOT or at the top of the first
 * tree. */
static struct vfs_dentry *path_up(struct vfs_dentry *root, struct vfs_dentry *d, const char **name)
{
	*name = NULL;
	if (d == root)
		return NULL;
	if (d->parent != d) {
		*name = d->name;
		return d->parent;
	}
	return d->mount ? d->mount->mountpoint : NULL;
}

/* The path is built right to left; a dentry that is not below ROOT (a task whose cwd is
 * outside its chroot) gets its path from the top of the first tree. */
int vfs_path(struct vfs_dentry *root, struct vfs_dentry *d, char *buf, size_t size)
{
	struct vfs_dentry *p, *up;
	const char *name;
	size_t len = 0, at;

	for (p = d; (up = path_up(root, p, &name)); p = up)
		if (name)
			len += 1 + strlen(name);
	if (len == 0)
		len = 1; /* "/" */
	if (len + 1 > size)
		return -ERANGE;

	at = len;
	buf[at] = '\0';
	buf[0] = '/';
	for (p = d; (up = path_up(root, p, &name)); p = up) {
		size_t n;

		if (!name)
			continue;
		n = strlen(name);
		at -= n;
		memcpy(buf + at, name, n);
		buf[--at] = '/';
	}
	return (int)len + 1;
}
