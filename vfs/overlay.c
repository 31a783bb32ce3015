/* The overlay root (DESIGN.md §5): a read-only lower layer (the host directory, hostfs) under
 * a memfs upper layer. An overlay inode pairs the two objects found at one path; lookups see
 * the upper one first, a whiteout in the upper layer hides a lower name, and an opaque upper
 * directory hides the whole lower one. The first change to a lower object copies it up, with
 * its parent directories, so the host tree is never written. Each overlay inode remembers its
 * parent and name for that: the dentry cache keeps one overlay inode per path alive. */
#include "vfs/internal.h"
#include "vfs/dirent.h"
#include "vfs/save.h"
#include "state/codec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>

/* Upper-layer inode numbers start here, far above what host filesystems hand out in
 * practice, so an upper-only object does not share st_ino with a lower one. */
#define OVL_UPPER_INO_BASE (1ULL << 48)
#define OVL_COPY_CHUNK (64 * 1024)

struct ovl_fs {
	int refs; /* one per inode */
	dev_t dev;
	bool rdonly; /* vfs_overlay_set_rdonly */
};

struct ovl_inode {
	struct vfs_inode vfs;
	struct ovl_fs *ofs;
	struct ovl_inode *parent; /* a reference; NULL for the root */
	char *name;
	struct vfs_inode *upper, *lower; /* references; at least one is set */
};

static const struct vfs_inode_ops ovl_inode_ops;
static const struct vfs_file_ops ovl_dir_ops;

/* The root inode of the overlay (there is one root filesystem), for a checkpoint to find the
 * upper layer; borrowed, cleared when it goes. */
static struct ovl_inode *ovl_root;

static struct ovl_fs *ofs_get(struct ovl_fs *ofs)
{
	ofs->refs++;
	return ofs;
}

static void ofs_put(struct ovl_fs *ofs)
{
	if (--ofs->refs == 0)
		free(ofs);
}

static struct ovl_inode *ovl_i(struct vfs_inode *ino)
{
	return ino->priv;
}

static struct vfs_inode *ovl_real(struct ovl_inode *o)
{
	return o->upper ? o->upper : o->lower;
}

/* True if the lower directory of O shows through. */
static bool lower_visible(struct ovl_inode *o)
{
	return o->lower && S_ISDIR(o->lower->mode) && !(o->upper && memfs_is_opaque(o->upper));
}

static int ovl_inode_new(struct ovl_fs *ofs, struct ovl_inode *parent, const char *name,
			 struct vfs_inode *upper, struct vfs_inode *lower, struct vfs_inode **out)
{
	struct ovl_inode *o = calloc(1, sizeof(*o));

	if (!o || !(o->name = strdup(name))) {
		free(o);
		return -ENOMEM;
	}
	o->vfs.ops = &ovl_inode_ops;
	o->vfs.refs = 1;
	o->vfs.mode = (upper ? upper : lower)->mode;
	o->vfs.priv = o;
	o->ofs = ofs_get(ofs);
	o->parent = parent ? ovl_i(vfs_inode_get(&parent->vfs)) : NULL;
	o->upper = upper;
	o->lower = lower;
	*out = &o->vfs;
	return 0;
}

static void ovl_release(struct vfs_inode *ino)
{
	struct ovl_inode *o = ovl_i(ino);

	if (o == ovl_root)
		ovl_root = NULL;
	vfs_inode_put(o->upper);
	vfs_inode_put(o->lower);
	if (o->parent)
		vfs_inode_put(&o->parent->vfs);
	ofs_put(o->ofs);
	free(o->name);
	free(o);
}

static int ovl_lookup(struct vfs_inode *dir, const char *name, struct vfs_inode **out)
{
	struct ovl_inode *od = ovl_i(dir);
	struct vfs_inode *up = NULL, *lo = NULL;
	bool whiteout = false;
	int err;

	if (od->upper) {
		err = memfs_lookup_entry(od->upper, name, &whiteout, &up);
		if (err && err != -ENOENT)
			return err;
		if (whiteout)
			return -ENOENT;
	}
	if (lower_visible(od) && (!up || S_ISDIR(up->mode))) {
		err = od->lower->ops->lookup(od->lower, name, &lo);
		if (err && err != -ENOENT) {
			vfs_inode_put(up);
			return err;
		}
		if (err)
			lo = NULL;
		if (up && lo && !S_ISDIR(lo->mode)) {
			vfs_inode_put(
			    lo); /* an upper directory over a lower file: only the first */
			lo = NULL;
		}
	}
	if (!up && !lo)
		return -ENOENT;
	err = ovl_inode_new(od->ofs, od, name, up, lo, out);
	if (err) {
		vfs_inode_put(up);
		vfs_inode_put(lo);
	}
	return err;
}

/* Everything stats on the overlay's device; an object keeps its lower inode number after
 * copy-up, so st_ino is stable per path. */
static int cmp_name(const void *a, const void *b);
static int lower_foreach(struct vfs_inode *lower,
			 int (*fn)(const char *name, uint64_t ino, unsigned char type, void *arg),
			 void *arg);

/* 2 + the subdirectories of merged directory O: the upper layer's, and the lower layer's that
 * no upper entry or whiteout hides (unless the upper directory is opaque). */
struct nlink_count {
	char **names; /* the upper layer's, sorted, for the lower pass */
	size_t n;
	nlink_t dirs;
};

static int count_upper_name(const char *name, struct vfs_inode *ino, void *arg)
{
	struct nlink_count *c = arg;
	struct stat st;

	if (c->names)
		c->names[c->n] = (char *)name;
	c->n++;
	if (ino && ino->ops->getattr(ino, &st) == 0 && S_ISDIR(st.st_mode))
		c->dirs++;
	return 0;
}

static int count_lower_dir(const char *name, uint64_t ino, unsigned char type, void *arg)
{
	struct nlink_count *c = arg;
	const char *key = name;

	(void)ino;
	if (type != DT_DIR || !strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	if (c->n && bsearch(&key, c->names, c->n, sizeof(char *), cmp_name))
		return 0;
	c->dirs++;
	return 0;
}

static nlink_t merged_nlink(struct ovl_inode *o)
{
	struct nlink_count c = {0};

	memfs_foreach(o->upper, count_upper_name, &c); /* how many names */
	if (!(c.names = calloc(c.n ? c.n : 1, sizeof(char *))))
		return 2;
	c.n = 0;
	c.dirs = 0;
	memfs_foreach(o->upper, count_upper_name, &c);
	qsort(c.names, c.n, sizeof(char *), cmp_name);
	if (lower_visible(o))
		lower_foreach(o->lower, count_lower_dir, &c);
	free(c.names);
	return 2 + c.dirs;
}

static int ovl_getattr(struct vfs_inode *ino, struct stat *st)
{
	struct ovl_inode *o = ovl_i(ino);
	struct stat lst;
	int err = ovl_real(o)->ops->getattr(ovl_real(o), st);

	if (err)
		return err;
	st->st_dev = o->ofs->dev;
	if (o->upper && o->lower && o->lower->ops->getattr(o->lower, &lst) == 0) {
		st->st_ino = lst.st_ino;
		/* A merged directory counts its subdirectories in both layers, as a plain
		 * filesystem would (Linux's overlayfs gives up and says 1). */
		if (S_ISDIR(st->st_mode))
			st->st_nlink = merged_nlink(o);
	} else if (o->upper && memfs_origin_ino(o->upper))
		st->st_ino = memfs_origin_ino(o->upper);
	return 0;
}

static ssize_t ovl_readlink(struct vfs_inode *ino, char *buf, size_t size)
{
	struct vfs_inode *real = ovl_real(ovl_i(ino));

	return real->ops->readlink(real, buf, size);
}

static bool ovl_rdonly(struct vfs_inode *ino)
{
	return ovl_i(ino)->ofs->rdonly;
}

void vfs_overlay_set_rdonly(bool rdonly)
{
	if (ovl_root)
		ovl_root->ofs->rdonly = rdonly;
}

bool vfs_overlay_is_rdonly(void)
{
	return ovl_root && ovl_root->ofs->rdonly;
}

static const char *ovl_fs_type(struct vfs_inode *ino)
{
	(void)ino;
	return "overlay";
}

/* Opens REAL, a lower object, read-only on a file of the Sentry's own (no dentry). */
static int open_lower(struct vfs_inode *real, int flags, struct vfs_file **out)
{
	struct vfs_file *f = calloc(1, sizeof(*f));
	int err;

	if (!f)
		return -ENOMEM;
	f->refs = 1;
	f->flags = flags;
	f->seekable = true;
	err = real->ops->open(real, f, flags);
	if (err) {
		vfs_file_put(f);
		return err;
	}
	*out = f;
	return 0;
}

static bool all_zero(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* The data of lower regular file LOWER into memfs file UP; zero chunks stay holes. */
static int copy_data(struct vfs_inode *lower, struct vfs_inode *up, off_t size)
{
	struct vfs_setattr attr = {.valid = VFS_ATTR_SIZE, .size = size};
	struct vfs_file *f;
	char *buf;
	off_t off = 0;
	int err;

	err = open_lower(lower, O_RDONLY, &f);
	if (err)
		return err;
	buf = malloc(OVL_COPY_CHUNK);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t n = f->ops->pread_kernel(f, buf, OVL_COPY_CHUNK, off);

		if (n < 0) {
			err = (int)n;
			goto out;
		}
		if (n == 0)
			break;
		if (!all_zero(buf, (size_t)n) &&
		    (err = memfs_write_kernel(up, buf, (size_t)n, off)))
			goto out;
		off += n;
	}
	err = up->ops->setattr(up, &attr);
out:
	free(buf);
	vfs_file_put(f);
	return err;
}

/* Gives O an upper object: its parents first, then a copy of the lower one (type, data,
 * owner, mode, times). */
static int copy_up(struct ovl_inode *o)
{
	struct vfs_node_attr attr = {0};
	struct vfs_setattr times = {.valid = VFS_ATTR_ATIME | VFS_ATTR_MTIME | VFS_ATTR_CTIME};
	char target[PATH_MAX];
	struct vfs_inode *up;
	struct stat st;
	int err;

	if (o->upper)
		return 0;
	if (!o->parent)
		return -EIO;
	err = copy_up(o->parent);
	if (err)
		return err;
	err = o->lower->ops->getattr(o->lower, &st);
	if (err)
		return err;
	attr.mode = st.st_mode;
	attr.uid = st.st_uid;
	attr.gid = st.st_gid;
	attr.rdev = st.st_rdev;
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = o->lower->ops->readlink(o->lower, target, sizeof(target) - 1);

		if (n < 0)
			return (int)n;
		target[n] = '\0';
		attr.target = target;
	}
	err = memfs_mknod_get(o->parent->upper, o->name, &attr, &up);
	if (err)
		return err;
	if (S_ISREG(st.st_mode) && (err = copy_data(o->lower, up, st.st_size))) {
		vfs_inode_put(up);
		up = NULL;
		/* Take the half-made copy out again; the lower file still shows. */
		o->parent->upper->ops->unlink(o->parent->upper, o->name, NULL);
		return err;
	}
	times.atime = st.st_atim;
	times.mtime = st.st_mtim;
	times.ctime = st.st_ctim;
	up->ops->setattr(up, &times);
	memfs_set_origin_ino(up, st.st_ino);
	o->upper = up;
	return 0;
}

/* True if lower directory of DIR has NAME (so removing it from view needs a whiteout). */
static bool lower_has(struct ovl_inode *dir, const char *name)
{
	struct vfs_inode *lo;

	if (!lower_visible(dir) || dir->lower->ops->lookup(dir->lower, name, &lo))
		return false;
	vfs_inode_put(lo);
	return true;
}

/* Lists lower directory LOWER: FN for each name but "." and "..", until it returns non-zero. */
static int lower_foreach(struct vfs_inode *lower,
			 int (*fn)(const char *name, uint64_t ino, unsigned char type, void *arg),
			 void *arg)
{
	struct vfs_file *f;
	char *buf;
	off_t pos = 0;
	int err;

	err = open_lower(lower, O_RDONLY | O_DIRECTORY, &f);
	if (err)
		return err;
	buf = malloc(OVL_COPY_CHUNK);
	if (!buf) {
		vfs_file_put(f);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n = f->ops->getdents64(f, buf, OVL_COPY_CHUNK, &pos);

		if (n <= 0) {
			err = (int)n;
			break;
		}
		for (ssize_t off = 0; off < n;) {
			struct vfs_dirent64 *de = (struct vfs_dirent64 *)(buf + off);

			off += de->d_reclen;
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			err = fn(de->d_name, de->d_ino, de->d_type, arg);
			if (err)
				goto out;
		}
	}
out:
	free(buf);
	vfs_file_put(f);
	return err;
}

static int upper_entry_counts(const char *name, struct vfs_inode *ino, void *arg)
{
	(void)name, (void)arg;
	return ino ? -ENOTEMPTY : 0;
}

static int lower_entry_counts(const char *name, uint64_t ino, unsigned char type, void *arg)
{
	struct ovl_inode *o = arg;
	struct vfs_inode *up;
	bool whiteout;

	(void)ino, (void)type;
	if (o->upper && memfs_lookup_entry(o->upper, name, &whiteout, &up) == 0) {
		vfs_inode_put(up);
		return 0; /* a whiteout, or an upper entry already counted */
	}
	return -ENOTEMPTY;
}

/* -ENOTEMPTY unless the merged directory O lists nothing. */
static int ovl_check_empty(struct ovl_inode *o)
{
	int err = 0;

	if (o->upper)
		err = memfs_foreach(o->upper, upper_entry_counts, NULL);
	if (!err && lower_visible(o))
		err = lower_foreach(o->lower, lower_entry_counts, o);
	return err;
}

static int ovl_mknod(struct vfs_inode *dir, const char *name, const struct vfs_node_attr *attr)
{
	struct ovl_inode *od = ovl_i(dir);
	struct vfs_inode *up, *old;
	bool whiteout = false;
	int err;

	err = copy_up(od);
	if (err)
		return err;
	if (memfs_lookup_entry(od->upper, name, &whiteout, &old) == 0)
		vfs_inode_put(old);
	err = memfs_mknod_get(od->upper, name, attr, &up);
	if (err)
		return err;
	/* A directory made where a lower one was removed must not show the old contents. */
	if (S_ISDIR(attr->mode) && (whiteout || lower_has(od, name)))
		memfs_set_opaque(up, true);
	vfs_inode_put(up);
	return 0;
}

static int ovl_link(struct vfs_inode *dir, const char *name, struct vfs_inode *target)
{
	struct ovl_inode *od = ovl_i(dir), *ot;
	int err;

	if (target->ops != &ovl_inode_ops)
		return -EXDEV;
	ot = ovl_i(target);
	if ((err = (ot->upper ? 0 : copy_up(ot))) || (err = copy_up(od)))
		return err;
	return od->upper->ops->link(od->upper, name, ot->upper);
}

struct vfs_inode *vfs_memfs_inode(struct vfs_inode *ino)
{
	if (ino && ino->ops == &ovl_inode_ops)
		return ovl_i(ino)->upper;
	return memfs_is(ino) ? ino : NULL;
}

/* Takes NAME out of view in DIR (copied up): a whiteout where a lower NAME would show
 * through, else the upper entry is simply removed. */
static int remove_name(struct ovl_inode *od, const char *name, struct ovl_inode *victim)
{
	if (victim->lower || lower_has(od, name))
		return memfs_whiteout(od->upper, name);
	if (S_ISDIR(victim->vfs.mode))
		return od->upper->ops->rmdir(od->upper, name, victim->upper);
	return od->upper->ops->unlink(od->upper, name, victim->upper);
}

static int ovl_unlink(struct vfs_inode *dir, const char *name, struct vfs_inode *victim)
{
	struct ovl_inode *od = ovl_i(dir);
	int err = copy_up(od);

	if (err)
		return err;
	return remove_name(od, name, ovl_i(victim));
}

static int ovl_rmdir(struct vfs_inode *dir, const char *name, struct vfs_inode *victim)
{
	struct ovl_inode *od = ovl_i(dir), *ov = ovl_i(victim);
	int err;

	if ((err = ovl_check_empty(ov)) || (err = copy_up(od)))
		return err;
	if (ov->upper)
		memfs_clear_whiteouts(ov->upper);
	return remove_name(od, name, ov);
}

static int set_name(struct ovl_inode *o, struct ovl_inode *parent, const char *name)
{
	char *copy = strdup(name);

	if (!copy)
		return -ENOMEM;
	free(o->name);
	o->name = copy;
	vfs_inode_get(&parent->vfs);
	vfs_inode_put(&o->parent->vfs);
	o->parent = parent;
	return 0;
}

/* Directories with lower contents are not moved (Linux's overlay without redirect_dir does
 * the same): -EXDEV, and mv copies instead. A moved directory is made opaque, so no lower
 * directory at its new name shows through it. */
static int ovl_rename(struct vfs_inode *odir, const char *oname, struct vfs_inode *src,
		      struct vfs_inode *ndir, const char *nname, struct vfs_inode *tgt,
		      unsigned int flags)
{
	struct ovl_inode *oo = ovl_i(odir), *on = ovl_i(ndir), *os = ovl_i(src);
	struct ovl_inode *ot = tgt ? ovl_i(tgt) : NULL;
	bool exchange = flags & RENAME_EXCHANGE, whiteout;
	int err;

	if (S_ISDIR(src->mode) && lower_visible(os))
		return -EXDEV;
	if (exchange && S_ISDIR(tgt->mode) && lower_visible(ot))
		return -EXDEV;
	if (ot && !exchange && S_ISDIR(tgt->mode) && (err = ovl_check_empty(ot)))
		return err;
	if ((err = copy_up(oo)) || (err = copy_up(on)) || (err = copy_up(os)))
		return err;
	if (exchange && (err = copy_up(ot)))
		return err;
	if (ot && !exchange && ot->upper && S_ISDIR(tgt->mode))
		memfs_clear_whiteouts(ot->upper);
	whiteout = !exchange && (os->lower || lower_has(oo, oname));
	err = oo->upper->ops->rename(oo->upper, oname, os->upper, on->upper, nname,
				     ot ? ot->upper : NULL, flags);
	if (err)
		return err;
	if (S_ISDIR(src->mode))
		memfs_set_opaque(os->upper, true);
	if (exchange && S_ISDIR(tgt->mode))
		memfs_set_opaque(ot->upper, true);
	if (whiteout)
		memfs_whiteout(oo->upper, oname);
	set_name(os, on, nname);
	if (exchange)
		set_name(ot, oo, oname);
	return 0;
}

static int ovl_setattr(struct vfs_inode *ino, const struct vfs_setattr *attr)
{
	struct ovl_inode *o = ovl_i(ino);
	int err = copy_up(o);

	if (err)
		return err;
	err = o->upper->ops->setattr(o->upper, attr);
	if (!err)
		ino->mode = o->upper->mode;
	return err;
}

static int ovl_statfs(struct vfs_inode *ino, struct statfs *buf)
{
	struct vfs_inode *real = ovl_real(ovl_i(ino));
	int err = real->ops->statfs ? real->ops->statfs(real, buf) : 0;

	buf->f_type = OVERLAYFS_SUPER_MAGIC;
	return err;
}

/* Merged directory listings: built when the listing starts (offset 0), then served from the
 * list with the index as the cookie. Upper names come first; lower names follow unless the
 * upper layer has the name (an entry or a whiteout). */

struct ovl_dirent {
	char *name;
	uint64_t ino;
	unsigned char type;
};

struct ovl_dir {
	struct ovl_inode *o; /* a reference */
	struct ovl_dirent *ents;
	size_t n, cap;
	char **upper_names; /* sorted, for the lower pass */
	size_t nupper;
};

static int dir_add(struct ovl_dir *d, const char *name, uint64_t ino, unsigned char type)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 32;
		struct ovl_dirent *e = realloc(d->ents, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		d->ents = e;
		d->cap = cap;
	}
	d->ents[d->n].name = strdup(name);
	if (!d->ents[d->n].name)
		return -ENOMEM;
	d->ents[d->n].ino = ino;
	d->ents[d->n].type = type;
	d->n++;
	return 0;
}

static void dir_clear(struct ovl_dir *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->ents[i].name);
	free(d->ents);
	free(d->upper_names);
	d->ents = NULL;
	d->upper_names = NULL;
	d->n = d->cap = d->nupper = 0;
}

static bool valid_ovl_name(const char *name)
{
	return strcmp(name, ".") && strcmp(name, "..");
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int count_upper(const char *name, struct vfs_inode *ino, void *arg)
{
	(void)name, (void)ino;
	(*(size_t *)arg)++;
	return 0;
}

static int add_upper(const char *name, struct vfs_inode *ino, void *arg)
{
	struct ovl_dir *d = arg;
	struct stat st;

	/* The name is remembered even for a whiteout: the list holds the dirent's own copy. */
	if (!ino) {
		d->upper_names[d->nupper++] = (char *)name;
		return 0;
	}
	if (ino->ops->getattr(ino, &st))
		return 0;
	d->upper_names[d->nupper++] = (char *)name;
	return dir_add(d, name, memfs_origin_ino(ino) ? memfs_origin_ino(ino) : st.st_ino,
		       (unsigned char)IFTODT(st.st_mode));
}

static int add_lower(const char *name, uint64_t ino, unsigned char type, void *arg)
{
	struct ovl_dir *d = arg;
	const char *key = name;

	if (d->nupper && bsearch(&key, d->upper_names, d->nupper, sizeof(char *), cmp_name))
		return 0;
	return dir_add(d, name, ino, type);
}

static int dir_build(struct ovl_dir *d)
{
	struct ovl_inode *o = d->o;
	struct stat st;
	size_t nup = 0;
	int err;

	dir_clear(d);
	if ((err = ovl_getattr(&o->vfs, &st)) || (err = dir_add(d, ".", st.st_ino, DT_DIR)))
		return err;
	if (o->parent && (err = ovl_getattr(&o->parent->vfs, &st)))
		return err;
	if ((err = dir_add(d, "..", st.st_ino, DT_DIR)))
		return err;
	if (o->upper) {
		memfs_foreach(o->upper, count_upper, &nup);
		d->upper_names = calloc(nup ? nup : 1, sizeof(char *));
		if (!d->upper_names)
			return -ENOMEM;
		err = memfs_foreach(o->upper, add_upper, d);
		if (err)
			return err;
		qsort(d->upper_names, d->nupper, sizeof(char *), cmp_name);
	}
	if (lower_visible(o))
		err = lower_foreach(o->lower, add_lower, d);
	/* The upper names pointed into the memfs entries: do not keep them past this call. */
	free(d->upper_names);
	d->upper_names = NULL;
	d->nupper = 0;
	return err;
}

static ssize_t ovl_dir_getdents64(struct vfs_file *f, void *buf, size_t size, off_t *pos)
{
	struct ovl_dir *d = f->priv;
	size_t done = 0;
	int err;

	if (*pos == 0 && (err = dir_build(d)))
		return err;
	while ((size_t)*pos < d->n) {
		struct ovl_dirent *e = &d->ents[*pos];

		if (!vfs_dirent_put(buf, size, &done, e->ino, *pos + 1, e->type, e->name))
			return done ? (ssize_t)done : -EINVAL;
		(*pos)++;
	}
	return (ssize_t)done;
}

static long ovl_dir_ioctl(struct vfs_file *f, unsigned int cmd, void *arg)
{
	(void)f, (void)cmd, (void)arg;
	return -ENOTTY;
}

static int ovl_dir_getattr(struct vfs_file *f, struct stat *st)
{
	return ovl_getattr(&((struct ovl_dir *)f->priv)->o->vfs, st);
}

static int ovl_dir_host_fd(struct vfs_file *f)
{
	(void)f;
	return -1;
}

static void ovl_dir_release(struct vfs_file *f)
{
	struct ovl_dir *d = f->priv;

	dir_clear(d);
	vfs_inode_put(&d->o->vfs);
	free(d);
}

static const struct vfs_file_ops ovl_dir_ops = {
    .read = vfs_dir_read,
    .write = vfs_dir_write,
    .getdents64 = ovl_dir_getdents64,
    .ioctl = ovl_dir_ioctl,
    .getattr = ovl_dir_getattr,
    .host_fd = ovl_dir_host_fd,
    .pread_kernel = vfs_dir_pread_kernel,
    .release = ovl_dir_release,
};

/* Writing a regular file copies it up first; everything else opens the topmost object. */
static int ovl_open(struct vfs_inode *ino, struct vfs_file *f, int flags)
{
	struct ovl_inode *o = ovl_i(ino);
	struct vfs_inode *real;
	int err;

	if (S_ISDIR(ino->mode)) {
		struct ovl_dir *d = calloc(1, sizeof(*d));

		if (!d)
			return -ENOMEM;
		d->o = ovl_i(vfs_inode_get(ino));
		f->priv = d;
		f->ops = &ovl_dir_ops;
		return 0;
	}
	if (S_ISREG(ino->mode) && ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) &&
	    (err = copy_up(o)))
		return err;
	real = ovl_real(o);
	return real->ops->open(real, f, flags);
}

static const struct vfs_inode_ops ovl_inode_ops = {
    .lookup = ovl_lookup,
    .getattr = ovl_getattr,
    .readlink = ovl_readlink,
    .open = ovl_open,
    .release = ovl_release,
    .fs_type = ovl_fs_type,
    .rdonly = ovl_rdonly,
    .mknod = ovl_mknod,
    .link = ovl_link,
    .unlink = ovl_unlink,
    .rmdir = ovl_rmdir,
    .rename = ovl_rename,
    .setattr = ovl_setattr,
    .statfs = ovl_statfs,
};

/* The root of an overlay of LOWER (a host root) and UPPER (a memfs root) on device DEV; the
 * references to both are taken over, also on failure. */
static int ovl_root_new(struct vfs_inode *lower, struct vfs_inode *upper, dev_t dev,
			struct vfs_dentry **root)
{
	struct vfs_inode *ino;
	struct ovl_fs *ofs = calloc(1, sizeof(*ofs));
	int err;

	if (!ofs) {
		vfs_inode_put(upper);
		vfs_inode_put(lower);
		return -ENOMEM;
	}
	ofs->dev = dev;
	ofs->refs = 1; /* dropped below, once the root inode holds its own */
	err = ovl_inode_new(ofs, NULL, "/", upper, lower, &ino);
	ofs_put(ofs); /* frees it if the root inode could not be made */
	if (err) {
		vfs_inode_put(upper);
		vfs_inode_put(lower);
		return err;
	}
	err = vfs_dentry_new_root(ino, root);
	if (err) {
		vfs_inode_put(ino);
		return err;
	}
	ovl_root = ovl_i(ino);
	return 0;
}

int vfs_mount_overlay_root(const char *host_dir, struct vfs_dentry **root)
{
	struct vfs_setattr attr = {.valid = VFS_ATTR_MODE | VFS_ATTR_UID | VFS_ATTR_GID |
					    VFS_ATTR_ATIME | VFS_ATTR_MTIME | VFS_ATTR_CTIME};
	struct vfs_inode *lower, *upper;
	struct vfs_dentry *host;
	struct stat st;
	int err;

	err = vfs_mount_host_root(host_dir, &host);
	if (err)
		return err;
	lower = vfs_inode_get(host->inode);
	vfs_dentry_put(host);
	err = lower->ops->getattr(lower, &st);
	if (err)
		goto out_lower;
	err = memfs_new("tmpfs", st.st_mode, OVL_UPPER_INO_BASE, &upper);
	if (err)
		goto out_lower;
	attr.mode = st.st_mode & 07777;
	attr.uid = st.st_uid;
	attr.gid = st.st_gid;
	attr.atime = st.st_atim;
	attr.mtime = st.st_mtim;
	attr.ctime = st.st_ctim;
	upper->ops->setattr(upper, &attr);
	return ovl_root_new(lower, upper, vfs_anon_dev_new(), root);

out_lower:
	vfs_inode_put(lower);
	return err;
}

/* Checkpoint and restore (docs/image-format.md, "vfs"). The lower layer is the host directory
 * the restore is given; the upper layer is saved whole. Overlay inodes below the root are
 * rebuilt by lookups, as they are made in the first place. */

struct vfs_inode *ovl_root_inode(void)
{
	return ovl_root ? &ovl_root->vfs : NULL;
}

bool ovl_is(struct vfs_inode *ino)
{
	return ino && ino->ops == &ovl_inode_ops;
}

struct vfs_inode *ovl_upper(struct vfs_inode *ino)
{
	return ovl_i(ino)->upper;
}

struct vfs_inode *ovl_lower(struct vfs_inode *ino)
{
	return ovl_i(ino)->lower;
}

int ovl_save(struct enc *e, struct vfs_inode *root)
{
	struct ovl_inode *o = ovl_i(root);

	if (!o->upper || !o->lower)
		return enc_fail(e, "an overlay root without both layers");
	enc_u64(e, (uint64_t)o->ofs->dev);
	return memfs_save_tree(e, o->upper);
}

int ovl_load(struct dec *d, const char *rootfs, struct vfs_dentry **root)
{
	struct vfs_inode *lower, *upper;
	struct vfs_dentry *host;
	dev_t dev = dec_u64(d);
	int err;

	if (!dec_ok(d))
		return -EINVAL;
	err = vfs_mount_host_root(rootfs, &host);
	if (err)
		return dec_fail(d, "rootfs '%s': %s", rootfs, strerror(-err));
	lower = vfs_inode_get(host->inode);
	vfs_dentry_put(host);
	err = memfs_load_tree(d, &upper);
	if (err) {
		vfs_inode_put(lower);
		return err;
	}
	err = ovl_root_new(lower, upper, dev, root);
	return err ? dec_fail(d, "out of memory") : 0;
}

int ovl_inode_detached(struct vfs_inode *parent, const char *name, struct vfs_inode *upper,
		       struct vfs_inode *lower, struct vfs_inode **out)
{
	int err = -EINVAL;

	if (ovl_is(parent) && (upper || lower) && (!upper || memfs_is(upper)))
		err = ovl_inode_new(ovl_i(parent)->ofs, ovl_i(parent), name, upper, lower, out);
	if (err) {
		vfs_inode_put(upper);
		vfs_inode_put(lower);
	}
	return err;
}

/* A merged listing is a snapshot taken when it started, with the index as the cookie: the
 * snapshot is saved, so a listing goes on where it was, as if nothing had happened. */
#define OVL_SAVE_MAX_DIRENTS (1u << 24)

static int ovl_dir_save(struct enc *e, struct vfs_file *f)
{
	struct ovl_dir *d = f->priv;

	if (!f->dentry || f->dentry->inode != &d->o->vfs)
		return enc_fail(e, "an overlay directory open on an inode its name does not show");
	enc_u64(e, d->n);
	for (size_t i = 0; i < d->n; i++) {
		enc_str(e, d->ents[i].name);
		enc_u64(e, d->ents[i].ino);
		enc_u8(e, d->ents[i].type);
	}
	return 0;
}

static int ovl_dir_load(struct dec *dec, struct vfs_file *f)
{
	uint64_t n = dec_max(dec, OVL_SAVE_MAX_DIRENTS, "overlay listing size");
	char name[NAME_MAX + 1];
	struct ovl_dir *d;
	int err;

	if (!dec_ok(dec) || !f->dentry || !ovl_is(f->dentry->inode) ||
	    !S_ISDIR(f->dentry->inode->mode))
		return dec_fail(dec, "bad overlay directory file");
	err = ovl_open(f->dentry->inode, f, O_RDONLY | O_DIRECTORY);
	if (err)
		return dec_fail(dec, "cannot open an overlay directory again: %s", strerror(-err));
	d = f->priv;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t ino;
		uint8_t type;

		/* "." and ".." lead the snapshot: only those two may be dot names. */
		bool ok = dec_str_buf(dec, name, sizeof(name)) && name[0] && !strchr(name, '/') &&
			  (i < 2 ? !strcmp(name, i ? ".." : ".") : valid_ovl_name(name));
		ino = dec_u64(dec);
		type = dec_u8(dec);
		if (!ok || !dec_ok(dec) || dir_add(d, name, ino, type)) {
			ovl_dir_release(f);
			f->priv = NULL;
			return dec_fail(dec, "bad overlay directory listing");
		}
	}
	return 0;
}

const struct vfs_file_kind ovl_dir_kind = {
    .name = "overlay-dir",
    .ops = &ovl_dir_ops,
    .save = ovl_dir_save,
    .load = ovl_dir_load,
};

/* The host inode behind D when its content cannot change, else NULL. */
static struct vfs_inode *immutable_host_inode(struct vfs_dentry *d)
{
	struct vfs_inode *ino = d->inode;

	if (!ino)
		return NULL;
	if (ino->ops == &ovl_inode_ops)
		return !ovl_i(ino)->upper ? ovl_i(ino)->lower : NULL;
	return hostfs_is_inode(ino) ? ino : NULL;
}

bool vfs_dentry_immutable(struct vfs_dentry *d)
{
	return immutable_host_inode(d) != NULL;
}

int vfs_dentry_host_stat(struct vfs_dentry *d, struct stat *st)
{
	struct vfs_inode *host = immutable_host_inode(d);

	return host ? host->ops->getattr(host, st) : -EINVAL;
}
