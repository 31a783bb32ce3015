/* Path resolution: every guest path is walked here, one component at a time, through the
 * dentry cache and across mounts. Symlinks are read and expanded by the Sentry itself
 * (absolute targets restart at the task's root) and ".." stops at the task's root, so the
 * host is only ever asked to open a single name beneath a directory the Sentry already
 * holds. openat2's RESOLVE_ restrictions are lookup flags of the walk (vfs.h), with the
 * errors Linux's fs/namei.c gives, so that the checks sit where the steps are taken. */
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

/* Mounts are identified by their trees (vfs.h): two dentries lie on one mount when the tops
 * of their trees are the same dentry. */
static bool same_mount(struct vfs_dentry *a, struct vfs_dentry *b)
{
	while (a->parent != a)
		a = a->parent;
	while (b->parent != b)
		b = b->parent;
	return a == b;
}

static bool is_magic_link(struct vfs_dentry *d)
{
	return d->inode->ops->is_magic_link && d->inode->ops->is_magic_link(d->inode);
}

void vfs_walk_begin(struct vfs_walk *w, const struct vfs_fs_ctx *fs, const struct vfs_cred *cred,
		    struct vfs_dentry *start, int flags)
{
	struct vfs_dentry *root = fs->root;

	if (flags & VFS_LOOKUP_SCOPED)
		root = start ? start : fs->cwd;
	w->fs = fs;
	w->cred = cred;
	w->root = vfs_dentry_get(root);
	w->flags = flags;
	w->nlinks = 0;
	w->root_set = (flags & VFS_LOOKUP_SCOPED) != 0;
}

void vfs_walk_end(struct vfs_walk *w)
{
	vfs_dentry_put(w->root);
}

int vfs_walk_enter(struct vfs_walk *w, struct vfs_dentry **d)
{
	if ((*d)->mounted && (w->flags & VFS_LOOKUP_NO_XDEV))
		return -EXDEV;
	vfs_follow_mounts(d);
	return 0;
}

/* ".." from *CUR: stays at the walk's root and at the top of the first tree; from the root of
 * a mounted tree climbs to the mountpoint first (through stacked mounts) and takes its
 * parent. Whatever is mounted on the parent is then entered, as Linux does. Linux's
 * follow_dotdot decides the errors: BENEATH refuses to stay at the root (EXDEV), NO_XDEV to
 * climb out of a mount or into one. */
static int walk_dotdot(struct vfs_walk *w, struct vfs_dentry **cur)
{
	struct vfs_dentry *d = *cur;
	bool climbed = false;

	w->root_set = true; /* Linux's handle_dots looks the root up */
	while (d != w->root && d->parent == d && d->mount) {
		d = d->mount->mountpoint;
		climbed = true;
	}
	if (d == w->root || d->parent == d) {
		/* At the root, or the very top outside it: stay. */
		if (w->flags & VFS_LOOKUP_BENEATH)
			return -EXDEV;
		d = *cur;
	} else {
		if (climbed && (w->flags & VFS_LOOKUP_NO_XDEV))
			return -EXDEV;
		d = d->parent;
	}
	walk_step(cur, vfs_dentry_get(d));
	return vfs_walk_enter(w, cur);
}

/* An absolute symlink restarts at the walk's root. Linux's nd_jump_root refuses that under
 * BENEATH, and under NO_XDEV when the link lies on another mount than the root, or when the
 * walk has not looked its root up yet (a relative path with no ".." before the link), which
 * Linux counts as another mount too: kept, so that the errors match. */
static int walk_jump_root(struct vfs_walk *w, struct vfs_dentry **cur)
{
	if (w->flags & VFS_LOOKUP_BENEATH)
		return -EXDEV;
	if ((w->flags & VFS_LOOKUP_NO_XDEV) && (!w->root_set || !same_mount(*cur, w->root)))
		return -EXDEV;
	w->root_set = true;
	walk_step(cur, vfs_dentry_get(w->root));
	return 0;
}

/* A magic link in DIR names an object, not a path: Linux's nd_jump_link moves the walk to
 * it, which here is the dentry the link's magic_dentry op gives (the object itself, even an
 * unlinked file or a pipe). A link without that op is found by walking the path its readlink
 * shows, TARGET, without the walk's restrictions (it was reached through procfs, not through
 * them; search permission is still checked). The restrictions judge the jump itself, in
 * Linux's order. */
static int walk_jump_link(struct vfs_walk *w, struct vfs_dentry *dir, struct vfs_dentry *link,
			  char *target, struct vfs_dentry **out)
{
	struct vfs_walk inner;
	struct vfs_dentry *d;
	int err;

	if (w->flags & VFS_LOOKUP_NO_MAGICLINKS)
		return -ELOOP;
	if (w->flags & VFS_LOOKUP_SCOPED)
		return -EXDEV; /* "not currently safe for scoped lookups" (Linux) */
	if (link->inode->ops->magic_dentry) {
		err = link->inode->ops->magic_dentry(link->inode, &d);
	} else {
		err = vfs_read_link_target(link, target);
		if (err)
			return err;
		vfs_walk_begin(&inner, w->fs, w->cred, dir, 0);
		inner.nlinks = w->nlinks;
		err = vfs_walk_path(&inner, dir, target, &d, NULL);
		w->nlinks = inner.nlinks;
		vfs_walk_end(&inner);
	}
	if (err)
		return err;
	if ((w->flags & VFS_LOOKUP_NO_XDEV) && !same_mount(d, dir)) {
		vfs_dentry_put(d);
		return -EXDEV;
	}
	*out = d;
	return 0;
}

int vfs_walk_follow(struct vfs_walk *w, struct vfs_dentry *dir, struct vfs_dentry *link,
		    char *target, struct vfs_dentry **out, const char **rest)
{
	int err;

	if (++w->nlinks > VFS_MAX_SYMLINKS || (w->flags & VFS_LOOKUP_NO_SYMLINKS))
		return -ELOOP;
	if (is_magic_link(link)) {
		*rest = NULL;
		return walk_jump_link(w, dir, link, target, out);
	}
	err = vfs_read_link_target(link, target);
	if (err)
		return err;
	*out = vfs_dentry_get(dir);
	*rest = target;
	if (target[0] != '/')
		return 0; /* a relative target continues from the link's directory */
	err = walk_jump_root(w, out);
	if (err) {
		vfs_dentry_put(*out);
		*out = NULL;
	}
	return err;
}

/* Where PATH starts: an absolute one at the walk's root (Linux's path_init checks no mount
 * for it, only BENEATH refuses it), a relative one at START (NULL: the cwd). */
static int walk_start(struct vfs_walk *w, struct vfs_dentry *start, const char *path,
		      struct vfs_dentry **cur)
{
	if (path[0] == '/') {
		if (w->flags & VFS_LOOKUP_BENEATH)
			return -EXDEV;
		w->root_set = true;
		*cur = vfs_dentry_get(w->root);
		return 0;
	}
	*cur = start ? start : w->fs->cwd;
	if (!vfs_is_dir(*cur))
		return -ENOTDIR;
	vfs_dentry_get(*cur);
	return 0;
}

/* Follows symlink LINK met in *CUR, with *P the rest of the path (which may live in *OWNED):
 * the walk goes on from the link's target. */
static int walk_link(struct vfs_walk *w, struct vfs_dentry **cur, struct vfs_dentry *link,
		     const char **p, char **owned)
{
	char target[PATH_MAX];
	struct vfs_dentry *next;
	const char *rest;
	int err = vfs_walk_follow(w, *cur, link, target, &next, &rest);

	if (err)
		return err;
	walk_step(cur, next);
	if (rest)
		return walk_expand(rest, p, owned);
	/* A jump to a non-directory must be the end of the path, without a trailing slash. */
	if (!vfs_is_dir(*cur) && (**p || (w->flags & VFS_LOOKUP_DIRECTORY)))
		return -ENOTDIR;
	return 0;
}

static void last_set(struct vfs_last *last, const char *name, size_t len, bool trailing)
{
	if (strcmp(name, ".") == 0)
		last->type = VFS_LAST_DOT;
	else if (strcmp(name, "..") == 0)
		last->type = VFS_LAST_DOTDOT;
	else
		last->type = VFS_LAST_NORM;
	last->trailing_slash = trailing;
	memcpy(last->name, name, len + 1);
}

int vfs_walk_path(struct vfs_walk *w, struct vfs_dentry *start, const char *path,
		  struct vfs_dentry **out, struct vfs_last *last)
{
	char name[NAME_MAX + 1];
	struct vfs_dentry *cur, *child;
	char *owned = NULL; /* the path being walked, once a symlink has rewritten it */
	const char *p = path;
	size_t plen = strnlen(path, PATH_MAX);
	int err = 0;

	if (plen == 0)
		return -ENOENT;
	if (plen == PATH_MAX)
		return -ENAMETOOLONG;
	err = walk_start(w, start, path, &cur);
	if (err)
		return err;

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
			last_set(last, name, len, trailing);
			break;
		}

		err = vfs_may_lookup_cred(cur, w->cred);
		if (err)
			goto out;
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			err = walk_dotdot(w, &cur);
			if (err)
				goto out;
			continue;
		}

		err = vfs_dentry_child(cur, name, &child);
		if (err)
			goto out;
		err = vfs_walk_enter(w, &child);
		if (err) {
			vfs_dentry_put(child);
			goto out;
		}

		if (is_last && !trailing && (w->flags & VFS_LOOKUP_MAGIC_LAST) &&
		    S_ISLNK(child->inode->mode) && is_magic_link(child) &&
		    child->inode->ops->magic_dentry &&
		    !(w->flags & (VFS_LOOKUP_NO_SYMLINKS | VFS_LOOKUP_NO_MAGICLINKS |
				  VFS_LOOKUP_NO_XDEV | VFS_LOOKUP_SCOPED))) {
			walk_step(&cur, child);
			break;
		}
		if (S_ISLNK(child->inode->mode) &&
		    (!is_last || trailing || (w->flags & VFS_LOOKUP_FOLLOW))) {
			err = walk_link(w, &cur, child, &p, &owned);
			vfs_dentry_put(child);
			if (err)
				goto out;
			continue;
		}

		if (!vfs_is_dir(child) &&
		    (!is_last || trailing || (w->flags & VFS_LOOKUP_DIRECTORY))) {
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

int vfs_walk(const struct vfs_fs_ctx *fs, struct vfs_dentry *start, const char *path,
	     int lookup_flags, int *nlinks, struct vfs_dentry **out, struct vfs_last *last)
{
	return vfs_walk_cred(fs, NULL, start, path, lookup_flags, nlinks, out, last);
}

int vfs_walk_cred(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred,
		  struct vfs_dentry *start, const char *path, int lookup_flags, int *nlinks,
		  struct vfs_dentry **out, struct vfs_last *last)
{
	struct vfs_walk w;
	int err;

	vfs_walk_begin(&w, fs, cred, start, lookup_flags);
	w.nlinks = *nlinks;
	err = vfs_walk_path(&w, start, path, out, last);
	*nlinks = w.nlinks;
	vfs_walk_end(&w);
	return err;
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
