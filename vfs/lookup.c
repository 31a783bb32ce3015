/* Path resolution: every guest path is walked here, one component at a time, through the
 * dentry cache and across mounts. Symlinks are read and expanded by the Sentry itself
 * (absolute targets restart at the task's root) and ".." stops at the task's root, so the
 * host is only ever asked to open a single name beneath a directory the Sentry already
 * holds. */
#include "vfs/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Callers without credentials (the Sentry itself, and syscalls not yet passing them) search
 * as root, which may always search a directory. */
int vfs_may_lookup(struct vfs_dentry *dir)
{
	return vfs_may_lookup_cred(dir, NULL);
}

int vfs_may_lookup_cred(struct vfs_dentry *dir, const struct vfs_cred *cred)
{
	if (!cred || cred->uid == 0)
		return 0;
	return vfs_inode_permission(dir->inode, cred, X_OK);
}

int vfs_read_link_target(struct vfs_dentry *d, char *buf)
{
	ssize_t n;

	if (!d->inode->ops->readlink)
		return -EINVAL;
	n = d->inode->ops->readlink(d->inode, buf, PATH_MAX);
	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ENOENT; /* Linux refuses to follow an empty symlink */
	if (n >= PATH_MAX)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}

/* Replaces the unwalked part of the path, REST (starting at the slash after the symlink's
 * name, or empty), with TARGET followed by REST. REST may live in *OWNED, which is freed
 * only after it has been copied. */
static int walk_expand(const char *target, const char **rest, char **owned)
{
	size_t tlen = strlen(target), rlen = strlen(*rest);
	char *p = malloc(tlen + rlen + 1);

	if (!p)
		return -ENOMEM;
	memcpy(p, target, tlen);
	memcpy(p + tlen, *rest, rlen + 1);
	free(*owned);
	*owned = p;
	*rest = p;
	return 0;
}

static void walk_step(struct vfs_dentry **cur, struct vfs_dentry *next)
{
	vfs_dentry_put(*cur);
	*cur = next;
}

/* ".." from CUR: stays at the task's root and at the top of the first tree; from the root of
 * a mounted tree climbs to the mountpoint first (through stacked mounts) and takes its parent.
 * Whatever is mounted on the parent is then entered, as Linux does. */
static void walk_dotdot(const struct vfs_fs_ctx *fs, struct vfs_dentry **cur)
{
	struct vfs_dentry *d = *cur;

	while (d != fs->root && d->parent == d && d->mount)
		d = d->mount->mountpoint;
	if (d != fs->root && d->parent != d)
		d = d->parent;
	else if (d != fs->root)
		d = *cur; /* the very top, outside the task's root: stay */
	walk_step(cur, vfs_dentry_get(d));
	vfs_follow_mounts(cur);
}

int vfs_walk(const struct vfs_fs_ctx *fs, struct vfs_dentry *start, const char *path,
	     int lookup_flags, int *nlinks, struct vfs_dentry **out, struct vfs_last *last)
{
	return vfs_walk_cred(fs, NULL, start, path, lookup_flags, nlinks, out, last);
}

int vfs_walk_cred(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred,
		  struct vfs_dentry *start, const char *path, int lookup_flags, int *nlinks,
		  struct vfs_dentry **out, struct vfs_last *last)
{
	char name[NAME_MAX + 1], target[PATH_MAX];
	struct vfs_dentry *cur, *child;
	char *owned = NULL; /* the path being walked, once a symlink has rewritten it */
	const char *p = path;
	size_t plen = strnlen(path, PATH_MAX);
	int err = 0;

	if (plen == 0)
		return -ENOENT;
	if (plen == PATH_MAX)
		return -ENAMETOOLONG;
	if (path[0] == '/') {
		cur = fs->root;
	} else {
		cur = start ? start : fs->cwd;
		if (!vfs_is_dir(cur))
			return -ENOTDIR;
	}
	vfs_dentry_get(cur);

	for (;;) {
		const char *comp, *after;
		bool is_last, trailing;
		size_t len;

		while (*p == '/')
			p++;
		if (*p == '\0') {
			/* Only slashes were left: the path named a directory already walked. */
			if (last) {
				last->type = VFS_LAST_ROOT;
				last->trailing_slash = false;
				last->name[0] = '\0';
			}
			break;
		}

		comp = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - comp);
		for (after = p; *after == '/'; after++)
			;
		is_last = *after == '\0';
		trailing = is_last && *p == '/';
		if (len > NAME_MAX) {
			err = -ENAMETOOLONG;
			goto out;
		}
		memcpy(name, comp, len);
		name[len] = '\0';

		if (last && is_last) {
			if (strcmp(name, ".") == 0)
				last->type = VFS_LAST_DOT;
			else if (strcmp(name, "..") == 0)
				last->type = VFS_LAST_DOTDOT;
			else
				last->type = VFS_LAST_NORM;
			last->trailing_slash = trailing;
			memcpy(last->name, name, len + 1);
			break;
		}

		err = vfs_may_lookup_cred(cur, cred);
		if (err)
			goto out;
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			walk_dotdot(fs, &cur);
			continue;
		}

		err = vfs_dentry_child(cur, name, &child);
		if (err)
			goto out;
		vfs_follow_mounts(&child);

		if (S_ISLNK(child->inode->mode) &&
		    (!is_last || trailing || (lookup_flags & VFS_LOOKUP_FOLLOW))) {
			if (++*nlinks > VFS_MAX_SYMLINKS)
				err = -ELOOP;
			else
				err = vfs_read_link_target(child, target);
			vfs_dentry_put(child);
			if (!err)
				err = walk_expand(target, &p, &owned);
			if (err)
				goto out;
			/* A relative target continues from the link's directory, CUR. */
			if (target[0] == '/')
				walk_step(&cur, vfs_dentry_get(fs->root));
			continue;
		}

		if (!vfs_is_dir(child) &&
		    (!is_last || trailing || (lookup_flags & VFS_LOOKUP_DIRECTORY))) {
			vfs_dentry_put(child);
			err = -ENOTDIR;
			goto out;
		}
		walk_step(&cur, child);
		if (is_last)
			break;
	}

out:
	free(owned);
	if (err) {
		vfs_dentry_put(cur);
		return err;
	}
	*out = cur;
	return 0;
}

int vfs_lookup(const struct vfs_fs_ctx *fs, struct vfs_dentry *start, const char *path,
	       int lookup_flags, struct vfs_dentry **out)
{
	int nlinks = 0;

	return vfs_walk(fs, start, path, lookup_flags, &nlinks, out, NULL);
}

int vfs_lookup_cred(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred,
		    struct vfs_dentry *start, const char *path, int lookup_flags,
		    struct vfs_dentry **out)
{
	int nlinks = 0;

	return vfs_walk_cred(fs, cred, start, path, lookup_flags, &nlinks, out, NULL);
}
