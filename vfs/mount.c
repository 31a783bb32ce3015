/* Mounts: the table of trees mounted on directories of other trees, and the crossing from a
 * mountpoint into what is mounted on it. The table is a list in mount order, each entry an
 * object (struct vfs_mount) so that umount, /proc/mounts and the checkpoint can walk and
 * name them; the dentries only point at their mount, for the walk's O(1) crossings. */
#include "vfs/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

/* Anonymous device minors start here: Linux hands out its own (overlay layers, tmpfs, proc)
 * from 0 upwards, so a host root on one of those never shares st_dev with ours. */
#define VFS_ANON_DEV_FIRST_MINOR 0x8000

static struct vfs_mount *mounts, **mounts_tail = &mounts;
static int next_mount_id = 1;
static unsigned int next_anon_minor = VFS_ANON_DEV_FIRST_MINOR;

dev_t vfs_anon_dev_new(void)
{
	return makedev(0, next_anon_minor++);
}

void vfs_follow_mounts(struct vfs_dentry **d)
{
	while ((*d)->mounted) {
		struct vfs_dentry *root = vfs_dentry_get((*d)->mounted->root);

		vfs_dentry_put(*d);
		*d = root;
	}
}

/* True if D lies in the tree whose root is ROOT, directly or under mounts on that tree. */
static bool is_under(struct vfs_dentry *d, struct vfs_dentry *root)
{
	for (;;) {
		while (d->parent != d)
			d = d->parent;
		if (d == root)
			return true;
		if (!d->mount)
			return false;
		d = d->mount->mountpoint;
	}
}

static const char *fs_type_of(struct vfs_dentry *d)
{
	const char *type = NULL;

	if (d->inode->ops->fs_type)
		type = d->inode->ops->fs_type(d->inode);
	return type ? type : "none";
}

int vfs_mount_fs(struct vfs_dentry *mountpoint, struct vfs_dentry *mounted_root,
		 const char *fs_type, const char *source, unsigned long flags,
		 struct vfs_mount **out)
{
	struct vfs_mount *m;

	/* A directory on a directory, or (a bind mount of one file) a non-directory on a
	 * non-directory, as Linux requires. */
	if (vfs_is_dir(mountpoint) != vfs_is_dir(mounted_root))
		return -ENOTDIR;
	if (mountpoint->mounted || mounted_root->mount)
		return -EBUSY;
	if (mounted_root->parent != mounted_root || is_under(mountpoint, mounted_root))
		return -EINVAL;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->fs_type = strdup(fs_type);
	m->source = strdup(source);
	if (!m->fs_type || !m->source) {
		free(m->fs_type);
		free(m->source);
		free(m);
		return -ENOMEM;
	}
	m->id = next_mount_id++;
	m->flags = flags;
	m->mountpoint = vfs_dentry_get(mountpoint);
	m->root = vfs_dentry_get(mounted_root);
	mountpoint->mounted = m;
	mounted_root->mount = m;
	*mounts_tail = m;
	mounts_tail = &m->next;
	if (out)
		*out = m;
	return 0;
}

int vfs_mount(struct vfs_dentry *mountpoint, struct vfs_dentry *mounted_root)
{
	const char *type = vfs_is_dir(mounted_root) ? fs_type_of(mounted_root) : "none";

	return vfs_mount_fs(mountpoint, mounted_root, type, type, 0, NULL);
}

/* The mount D lies in: its tree's root records it (NULL: the sandbox's root mount). */
static const struct vfs_mount *mount_of(const struct vfs_dentry *d)
{
	while (d->parent != d)
		d = d->parent;
	return d->mount;
}

int vfs_mount_id(const struct vfs_dentry *d)
{
	if (!d)
		return VFS_INTERNAL_MOUNT_ID;
	const struct vfs_mount *m = mount_of(d);
	return m ? m->id + 1 : VFS_ROOT_MOUNT_ID;
}

unsigned long vfs_mount_flags(const struct vfs_dentry *d)
{
	const struct vfs_mount *m = mount_of(d);

	return m ? m->flags : 0;
}

int vfs_mounts_foreach(int (*fn)(struct vfs_mount *m, void *arg), void *arg)
{
	struct vfs_mount *m;
	int r;

	for (m = mounts; m; m = m->next) {
		r = fn(m, arg);
		if (r)
			return r;
	}
	return 0;
}

/* Newest first, as a mount on top of another is normally newer; the references make any
 * order safe, since a mountpoint pins the tree it lies in. */
void vfs_umount_all(void)
{
	while (mounts) {
		struct vfs_mount *m = mounts, **pp = &mounts;

		while (m->next) {
			pp = &m->next;
			m = m->next;
		}
		*pp = NULL;
		mounts_tail = pp;
		m->mountpoint->mounted = NULL;
		m->root->mount = NULL;
		vfs_dentry_put(m->root);
		vfs_dentry_put(m->mountpoint);
		free(m->fs_type);
		free(m->source);
		free(m);
	}
}

int vfs_umount_at(struct vfs_dentry *root, bool detach)
{
	struct vfs_mount *m = root->mount, **pp;

	if (!m || m->root != root)
		return -EINVAL;
	/* Busy: anything besides the mount and the caller holds the tree (open files, a cwd,
	 * a mount inside it). A lazy unmount detaches it anyway; holders keep what they hold. */
	if (!detach && root->refs > 2)
		return -EBUSY;
	for (pp = &mounts; *pp != m; pp = &(*pp)->next)
		;
	*pp = m->next;
	if (mounts_tail == &m->next)
		mounts_tail = pp;
	m->mountpoint->mounted = NULL;
	root->mount = NULL;
	vfs_dentry_put(m->root);
	vfs_dentry_put(m->mountpoint);
	free(m->fs_type);
	free(m->source);
	free(m);
	return 0;
}

unsigned int vfs_anon_dev_next(void)
{
	return next_anon_minor;
}

void vfs_anon_dev_set_next(unsigned int minor)
{
	next_anon_minor = minor;
}

int vfs_mount_next_id(void)
{
	return next_mount_id;
}

void vfs_mount_set_next_id(int id)
{
	next_mount_id = id;
}

struct vfs_mount *vfs_mount_by_id(int id)
{
	for (struct vfs_mount *m = mounts; m; m = m->next)
		if (m->id == id)
			return m;
	return NULL;
}
