/* The VFS's part of a checkpoint (vfs/save.h): the mount table and the trees mounted on it,
 * dentries referred to from outside the VFS (by tree and path, or rebuilt detached when their
 * name is gone), and open files of every kind, dispatched by their ops table. Each filesystem
 * saves its own objects (memfs.c, overlay.c, kernfs.c, ...); this file ties them together.
 * The record layouts are in docs/image-format.md, section "vfs". Whatever cannot be saved
 * refuses with a message, so a checkpoint fails rather than writing a wrong image. */
#include "vfs/save.h"
#include "vfs/inotify.h"

#include "vfs/internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/units.h"
#include "vfs/internal.h"
#include "vfs/pty.h"

/* Trees are named by the id of the mount that holds them; the overlay root has none. */
#define VFS_TREE_ROOT 0

/* Dentry record forms. */
#define DENT_PATH 1	 /* a name in a mounted tree (or the root filesystem) */
#define DENT_DETACHED 2	 /* an unlinked name still held: parent dentry, inode */
#define DENT_ANON_ROOT 3 /* the root of an unmounted tmpfs (memfd's), as a parent only */

/* Inodes of detached dentries. */
#define DETACHED_MEMFS 1
#define DETACHED_OVERLAY 2
#define MEMFS_LINKED 1 /* still linked in a saved tree: found by path there */
#define MEMFS_INLINE 2 /* nowhere else: the inode itself */

/* Kinds of mounted filesystems. */
#define FS_TMPFS 1
#define FS_DEVFS 2
#define FS_KERNFS 3
#define FS_BIND 4	/* a host tree: the source is its host path, opened again on restore */
#define FS_DEVFS_PTYS 5 /* devfs, then every pseudo-terminal pair (vfs/pty.c) */

#define VFS_SAVE_MAX_MOUNTS 65536
#define VFS_SAVE_MAX_DETACHED_DEPTH 2048
#define VFS_SAVE_FS_TYPE_MAX 64
#define VFS_SAVE_SOURCE_MAX 4096

/* The root filesystem while a restore loads dentries (CK_DENTRY paths in tree 0): a
 * reference taken by vfs_load and dropped by vfs_load_finish. */
static struct vfs_dentry *load_root;

int vfs_path_next(const char **p, char name[NAME_MAX + 1])
{
	const char *s = *p, *end;
	size_t n;

	while (*s == '/')
		s++;
	*p = s;
	if (!*s)
		return 0;
	end = strchrnul(s, '/');
	n = (size_t)(end - s);
	if (n > NAME_MAX)
		return -EINVAL;
	memcpy(name, s, n);
	name[n] = '\0';
	*p = end;
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	return 1;
}

/* Trees and paths */

/* The root of the tree D lies in (not crossing mounts); *HASHED says whether every name on
 * the way is still in place. */
static struct vfs_dentry *top_of(struct vfs_dentry *d, bool *hashed)
{
	*hashed = true;
	for (; d->parent != d; d = d->parent)
		if (d->unhashed)
			*hashed = false;
	return d;
}

/* The saved tree whose root is TOP: its id, or -1 if it is not saved (unmounted). */
static long tree_id(struct vfs_dentry *top)
{
	if (top->mount && top->mount->root == top)
		return top->mount->id;
	if (!top->mount && top->inode && top->inode == ovl_root_inode())
		return VFS_TREE_ROOT;
	return -1;
}

static struct vfs_dentry *tree_root(uint32_t id)
{
	struct vfs_mount *m;

	if (id == VFS_TREE_ROOT)
		return load_root;
	m = id <= INT_MAX ? vfs_mount_by_id((int)id) : NULL;
	return m ? m->root : NULL;
}

/* "/a/b": the names from the top of D's tree down to D ("/" for the top). */
static char *path_in_tree(struct vfs_dentry *d)
{
	struct vfs_dentry *p;
	size_t len = 0, at;
	char *s;

	for (p = d; p->parent != p; p = p->parent)
		len += strlen(p->name) + 1;
	s = malloc(len + 2);
	if (!s)
		return NULL;
	strcpy(s, "/");
	at = len;
	if (len)
		s[at] = '\0';
	for (p = d; p->parent != p; p = p->parent) {
		size_t n = strlen(p->name);

		at -= n;
		memcpy(s + at, p->name, n);
		s[--at] = '/';
	}
	return s;
}

static int save_tree_path(struct enc *e, uint32_t tree, struct vfs_dentry *d)
{
	char *path = path_in_tree(d);

	if (!path)
		return enc_fail(e, "out of memory");
	enc_u32(e, tree);
	enc_str(e, path);
	free(path);
	return 0;
}

/* PATH under ROOT, one name at a time, neither crossing mounts nor following symlinks: what
 * path_in_tree wrote. Returns a referenced dentry. */
static int walk_tree(struct vfs_dentry *root, const char *path, struct vfs_dentry **out)
{
	struct vfs_dentry *cur = vfs_dentry_get(root), *next;
	char name[NAME_MAX + 1];
	int r;

	while ((r = vfs_path_next(&path, name)) > 0) {
		r = vfs_is_dir(cur) ? vfs_dentry_child(cur, name, &next) : -ENOTDIR;
		vfs_dentry_put(cur);
		if (r)
			return r;
		cur = next;
	}
	if (r < 0) {
		vfs_dentry_put(cur);
		return r;
	}
	*out = cur;
	return 0;
}

/* Loads a (tree, path) pair into a referenced dentry. */
static int load_tree_path(struct dec *d, struct vfs_dentry **out)
{
	uint32_t tree = dec_u32(d);
	char *path = dec_str(d);
	struct vfs_dentry *root;
	int err;

	if (!dec_ok(d) || !path) {
		free(path);
		return dec_fail(d, "bad path record");
	}
	root = tree_root(tree);
	err = root ? walk_tree(root, path, out) : -ENOENT;
	if (err)
		dec_fail(d, "'%s' in %s %u: %s", path, tree ? "mount" : "the root filesystem", tree,
			 root ? strerror(-err) : "no such tree");
	free(path);
	return err ? -EINVAL : 0;
}

/* The mount table */

static bool ptys_saved; /* this vfs_save has written the pty table */

static int save_mount(struct vfs_mount *m, void *arg)
{
	struct enc *e = arg;
	struct vfs_inode *ri = m->root->inode;
	struct vfs_dentry *top;
	struct timespec built;
	const char *type;
	bool hashed;
	long tree;
	dev_t dev;
	int err;

	top = top_of(m->mountpoint, &hashed);
	tree = tree_id(top);
	if (!hashed || tree < 0)
		return enc_fail(e, "the %s mount %d is on a directory no longer in the tree",
				m->fs_type, m->id);
	enc_u32(e, (uint32_t)m->id);
	enc_str(e, m->fs_type);
	enc_str(e, m->source);
	enc_u64(e, m->flags);
	if ((err = save_tree_path(e, (uint32_t)tree, m->mountpoint)))
		return err;
	if (memfs_is(ri)) {
		enc_u8(e, FS_TMPFS);
		return memfs_save_tree(e, ri);
	}
	if (vfs_synth_identity(ri, &dev, &built) == 0 && ri->ops->fs_type &&
	    !strcmp(ri->ops->fs_type(ri), "devtmpfs")) {
		/* The pairs go with the first devfs (their /dev/pts/N must resolve before
		 * the dentries load); the pty table is one for every devfs. */
		bool ptys = !ptys_saved;
		enc_u8(e, ptys ? FS_DEVFS_PTYS : FS_DEVFS);
		enc_u64(e, (uint64_t)dev);
		enc_i64(e, built.tv_sec);
		enc_i64(e, built.tv_nsec);
		ptys_saved = true;
		return ptys ? vfs_pty_save_all(e) : 0;
	}
	if (hostfs_is_inode(ri)) {
		enc_u8(e, FS_BIND);
		return 0;
	}
	if (kernfs_identity(ri, &type, &dev, &built) == 0) {
		enc_u8(e, FS_KERNFS);
		enc_str(e, type);
		enc_u64(e, (uint64_t)dev);
		enc_i64(e, built.tv_sec);
		enc_i64(e, built.tv_nsec);
		return 0;
	}
	return enc_fail(e, "a mount of a filesystem that cannot be saved (%s)", m->fs_type);
}

static int count_mount(struct vfs_mount *m, void *arg)
{
	(void)m;
	++*(uint32_t *)arg;
	return 0;
}

int vfs_save(struct enc *e)
{
	struct vfs_inode *root = ovl_root_inode();
	uint32_t n = 0;
	int err;

	if (!root)
		return enc_fail(e, "there is no root filesystem");
	ptys_saved = false;
	enc_u32(e, vfs_anon_dev_next());
	enc_u32(e, (uint32_t)vfs_mount_next_id());
	if ((err = ovl_save(e, root)))
		return err;
	vfs_mounts_foreach(count_mount, &n);
	enc_u32(e, n);
	if ((err = vfs_mounts_foreach(save_mount, e)))
		return err;
	if (!ptys_saved && vfs_pty_any())
		return enc_fail(e, "pseudo-terminals, but no devfs mount to save them with");
	return enc_ok(e) ? 0 : -ENOMEM;
}

static bool load_time(struct dec *d, struct timespec *t)
{
	t->tv_sec = dec_i64(d);
	t->tv_nsec = dec_i64(d);
	return dec_ok(d) && t->tv_nsec >= 0 && t->tv_nsec < NSEC_PER_SEC;
}

static vfs_open_bind_fn open_bind;

void vfs_load_set_bind_opener(vfs_open_bind_fn fn)
{
	open_bind = fn;
}

/* The filesystem of a mount record, as a new tree: *OUT is its root (a reference). SOURCE and
 * FLAGS are the mount's. */
static int load_fs(struct dec *d, vfs_make_fs_fn make_fs, const char *source, unsigned long flags,
		   struct vfs_dentry *mp, struct vfs_dentry **out)
{
	char type[VFS_SAVE_FS_TYPE_MAX];
	struct vfs_inode *ino;
	struct timespec built;
	uint8_t kind = dec_u8(d);
	dev_t dev;
	int err;

	switch (dec_ok(d) ? kind : 0) {
	case FS_TMPFS:
		if ((err = memfs_load_tree(d, &ino)))
			return err;
		if ((err = vfs_dentry_new_root(ino, out))) {
			vfs_inode_put(ino);
			return dec_fail(d, "out of memory");
		}
		return 0;
	case FS_DEVFS:
	case FS_DEVFS_PTYS:
		dev = dec_u64(d);
		if (!load_time(d, &built))
			return dec_fail(d, "bad devfs record");
		if (kind == FS_DEVFS_PTYS && vfs_pty_load_all(d))
			return -EINVAL;
		if ((err = vfs_devfs_new(out)))
			return dec_fail(d, "devfs: %s", strerror(-err));
		vfs_synth_set_identity((*out)->inode, dev, built);
		return 0;
	case FS_KERNFS:
		if (!dec_str_buf(d, type, sizeof(type)))
			return dec_fail(d, "bad kernfs record");
		dev = dec_u64(d);
		if (!load_time(d, &built))
			return dec_fail(d, "bad kernfs record");
		if (!make_fs)
			return dec_fail(d, "no way to make a %s filesystem", type);
		if ((err = make_fs(type, out)))
			return dec_fail(d, "%s: %s", type, strerror(-err));
		if (kernfs_set_identity((*out)->inode, dev, built)) {
			vfs_dentry_put(*out);
			return dec_fail(d, "make_fs(\"%s\") made something else", type);
		}
		return 0;
	case FS_BIND: {
		char guest[PATH_MAX];
		if (!open_bind)
			return dec_fail(d, "no way to open bind mount '%s'", source);
		if (vfs_path(load_root, mp, guest, sizeof(guest)) < 0)
			return dec_fail(d, "bind mount '%s': its mountpoint is too deep", source);
		if ((err = open_bind(source, guest, flags, out)))
			return dec_fail(d, "bind mount '%s': %s", source, strerror(-err));
		return 0;
	}
	default:
		return dec_fail(d, "bad mount record");
	}
}

static int load_mount(struct dec *d, vfs_make_fs_fn make_fs, int *last_id, int next_id)
{
	char fs_type[VFS_SAVE_FS_TYPE_MAX], source[VFS_SAVE_SOURCE_MAX];
	struct vfs_dentry *mp, *root;
	uint32_t id = dec_u32(d);
	bool strs =
	    dec_str_buf(d, fs_type, sizeof(fs_type)) && dec_str_buf(d, source, sizeof(source));
	unsigned long flags = dec_u64(d);
	int err;

	if (!dec_ok(d) || !strs || id <= (uint32_t)*last_id || id >= (uint32_t)next_id)
		return dec_fail(d, "bad mount record");
	if ((err = load_tree_path(d, &mp)))
		return err;
	if ((err = load_fs(d, make_fs, source, flags, mp, &root))) {
		vfs_dentry_put(mp);
		return err;
	}
	vfs_mount_set_next_id((int)id);
	err = vfs_mount_fs(mp, root, fs_type, source, flags, NULL);
	vfs_dentry_put(root);
	vfs_dentry_put(mp);
	if (err)
		return dec_fail(d, "mount %u (%s): %s", id, fs_type, strerror(-err));
	*last_id = (int)id;
	return 0;
}

static int any_mount(struct vfs_mount *m, void *arg)
{
	(void)m, (void)arg;
	return 1;
}

int vfs_load(struct dec *d, const char *rootfs, vfs_make_fs_fn make_fs, struct vfs_dentry **root)
{
	unsigned int old_anon = vfs_anon_dev_next(), anon_next;
	int old_id = vfs_mount_next_id(), last_id = 0, err;
	struct vfs_dentry *r;
	uint32_t next_id, n;

	if (vfs_mounts_foreach(any_mount, NULL))
		return dec_fail(d, "the file system is loaded into a VFS that has mounts");
	anon_next = dec_u32(d);
	next_id = dec_u32(d);
	if (!dec_ok(d) || next_id < 1 || next_id > INT_MAX)
		return dec_fail(d, "bad file system record");
	vfs_load_finish();
	if ((err = ovl_load(d, rootfs, &r)))
		return err;
	load_root = vfs_dentry_get(r);
	n = dec_u32(d);
	if (n > VFS_SAVE_MAX_MOUNTS)
		dec_fail(d, "bad mount count");
	for (uint32_t i = 0; !err && i < n && dec_ok(d); i++)
		err = load_mount(d, make_fs, &last_id, (int)next_id);
	if (err || !dec_ok(d)) {
		vfs_umount_all();
		vfs_load_finish();
		vfs_dentry_put(r);
		vfs_anon_dev_set_next(old_anon);
		vfs_mount_set_next_id(old_id);
		return err ? err : -EINVAL;
	}
	vfs_anon_dev_set_next(anon_next);
	vfs_mount_set_next_id((int)next_id);
	*root = r;
	return 0;
}

void vfs_load_finish(void)
{
	vfs_pty_drop_unused(); /* pairs of a failed load, or of an image without their files */
	if (load_root)
		vfs_dentry_put(load_root);
	load_root = NULL;
}

/* Dentries */

static int save_dentry(struct enc *e, struct vfs_dentry *d, unsigned int depth,
		       bool parent_of_file);

/* A memfs inode of a detached dentry: by path in the saved tree where it is still linked, else
 * whole. */
static int save_memfs_detached(struct enc *e, struct vfs_inode *ino)
{
	struct vfs_inode *upper = ovl_root_inode() ? ovl_upper(ovl_root_inode()) : NULL;
	struct find {
		struct vfs_inode *ino, *found_root;
		long tree;
	} c = {.ino = ino, .tree = -1};
	char *path = NULL;

	if (!S_ISDIR(ino->mode) && memfs_nlink(ino) > 0) {
		if (upper && memfs_same_fs(upper, ino) && !memfs_path_of(upper, ino, &path)) {
			c.tree = VFS_TREE_ROOT;
		} else {
			for (int id = 1; id < vfs_mount_next_id() && c.tree < 0; id++) {
				struct vfs_mount *m = vfs_mount_by_id(id);

				if (m && memfs_same_fs(m->root->inode, ino) &&
				    !memfs_path_of(m->root->inode, ino, &path))
					c.tree = id;
			}
		}
	}
	if (c.tree >= 0) {
		enc_u8(e, MEMFS_LINKED);
		enc_u32(e, (uint32_t)c.tree);
		enc_str(e, path);
		free(path);
		return 0;
	}
	enc_u8(e, MEMFS_INLINE);
	return memfs_save_inline(e, ino, false);
}

static int load_memfs_detached(struct dec *d, struct vfs_inode *sb_of, struct vfs_inode **out)
{
	uint8_t how = dec_u8(d);
	struct vfs_dentry *root;
	struct vfs_inode *mroot;
	uint32_t tree;
	char *path;
	int err;

	switch (dec_ok(d) ? how : 0) {
	case MEMFS_LINKED:
		tree = dec_u32(d);
		path = dec_str(d);
		root = tree_root(tree);
		mroot = root ? vfs_memfs_inode(root->inode) : NULL;
		err = !dec_ok(d) || !path || !mroot ? -ENOENT : memfs_walk(mroot, path, out);
		free(path);
		if (!err && S_ISDIR((*out)->mode)) {
			vfs_inode_put(*out);
			err = -EISDIR;
		}
		return err ? dec_fail(d, "an unlinked tmpfs file's other link is gone") : 0;
	case MEMFS_INLINE:
		return memfs_load_inline(d, vfs_memfs_inode(sb_of), out);
	default:
		return dec_fail(d, "bad unlinked tmpfs inode");
	}
}

static int save_detached_inode(struct enc *e, struct vfs_inode *ino)
{
	struct vfs_inode *upper, *lower;
	char *path;
	int err;

	if (memfs_is(ino)) {
		enc_u8(e, DETACHED_MEMFS);
		return save_memfs_detached(e, ino);
	}
	if (!ovl_is(ino))
		return enc_fail(e, "an unlinked file of a filesystem that cannot be saved");
	upper = ovl_upper(ino);
	lower = ovl_lower(ino);
	enc_u8(e, DETACHED_OVERLAY);
	enc_bool(e, upper);
	if (upper && (err = save_memfs_detached(e, upper)))
		return err;
	enc_bool(e, lower);
	if (lower) {
		if ((err = hostfs_path_of(lower, &path)))
			return enc_fail(e, "the host path of an unlinked file: %s", strerror(-err));
		enc_str(e, path);
		free(path);
	}
	return 0;
}

static int load_detached_inode(struct dec *d, struct vfs_dentry *parent, const char *name,
			       struct vfs_inode **out)
{
	struct vfs_inode *upper = NULL, *lower = NULL, *lroot;
	uint8_t kind = dec_u8(d);
	char *path;
	int err;

	switch (dec_ok(d) ? kind : 0) {
	case DETACHED_MEMFS:
		if (!memfs_is(parent->inode))
			return dec_fail(d,
					"an unlinked tmpfs file under a directory of another kind");
		return load_memfs_detached(d, parent->inode, out);
	case DETACHED_OVERLAY:
		if (!ovl_is(parent->inode) || !load_root)
			return dec_fail(d, "an unlinked overlay file outside the overlay");
		if (dec_bool(d) && (err = load_memfs_detached(d, parent->inode, &upper)))
			return err;
		if (dec_bool(d)) {
			path = dec_str(d);
			lroot = ovl_lower(load_root->inode);
			err = !dec_ok(d) || !path ? -EINVAL : hostfs_walk(lroot, path, &lower);
			if (err)
				dec_fail(d, "the host file '%s' of an unlinked file: %s",
					 path ? path : "", strerror(-err));
			free(path);
			if (err) {
				vfs_inode_put(upper);
				return -EINVAL;
			}
		}
		if (!dec_ok(d) || (!upper && !lower)) {
			vfs_inode_put(upper);
			vfs_inode_put(lower);
			return dec_fail(d, "bad unlinked overlay file");
		}
		if ((err = ovl_inode_detached(parent->inode, name, upper, lower, out)))
			return dec_fail(d, "an unlinked overlay file: %s", strerror(-err));
		return 0;
	default:
		return dec_fail(d, "bad unlinked file");
	}
}

/* PARENT_OF_FILE: D is the parent of an unlinked non-directory, which is all an unmounted
 * tmpfs root may be (memfd's): nothing can climb from a file to its parent. */
static int save_dentry(struct enc *e, struct vfs_dentry *d, unsigned int depth, bool parent_of_file)
{
	bool hashed;
	struct vfs_dentry *top = top_of(d, &hashed);
	long tree = tree_id(top);
	int err;

	if (!d->inode)
		return enc_fail(e, "a dentry without an inode");
	if (depth > VFS_SAVE_MAX_DETACHED_DEPTH)
		return enc_fail(e, "unlinked directories nested too deep");
	if (hashed && tree >= 0) {
		enc_u8(e, DENT_PATH);
		return save_tree_path(e, (uint32_t)tree, d);
	}
	if (hashed && d == top && parent_of_file && memfs_is(d->inode)) {
		enc_u8(e, DENT_ANON_ROOT);
		return memfs_save_inline(e, d->inode, true);
	}
	if (hashed)
		return enc_fail(e, "'%s' is in a filesystem that is no longer mounted", d->name);
	if (!d->unhashed)
		return enc_fail(e, "'%s' is inside a removed directory", d->name);
	enc_u8(e, DENT_DETACHED);
	enc_str(e, d->name);
	if ((err = save_dentry(e, d->parent, depth + 1, !S_ISDIR(d->inode->mode))))
		return err;
	return save_detached_inode(e, d->inode);
}

static int load_dentry(struct dec *d, unsigned int depth, struct vfs_dentry **out)
{
	uint8_t form = dec_u8(d);
	char name[NAME_MAX + 1];
	struct vfs_dentry *parent;
	struct vfs_inode *ino;
	int err;

	if (depth > VFS_SAVE_MAX_DETACHED_DEPTH)
		return dec_fail(d, "unlinked directories nested too deep");
	switch (dec_ok(d) ? form : 0) {
	case DENT_PATH:
		return load_tree_path(d, out);
	case DENT_ANON_ROOT:
		if ((err = memfs_load_inline(d, NULL, &ino)))
			return err;
		if (!S_ISDIR(ino->mode) || vfs_dentry_new_root(ino, out)) {
			vfs_inode_put(ino);
			return dec_fail(d, "bad unmounted tmpfs root");
		}
		return 0;
	case DENT_DETACHED:
		if (!dec_str_buf(d, name, sizeof(name)) || !name[0] || strchr(name, '/'))
			return dec_fail(d, "bad unlinked name");
		if ((err = load_dentry(d, depth + 1, &parent)))
			return err;
		if (!vfs_is_dir(parent)) {
			vfs_dentry_put(parent);
			return dec_fail(d, "an unlinked name under a non-directory");
		}
		err = load_detached_inode(d, parent, name, &ino);
		if (!err && (err = vfs_dentry_new_detached(parent, name, ino, out))) {
			vfs_inode_put(ino);
			err = dec_fail(d, "out of memory");
		}
		vfs_dentry_put(parent);
		return err;
	default:
		return dec_fail(d, "bad dentry record");
	}
}

int vfs_dentry_save(struct enc *e, const void *dentry)
{
	return save_dentry(e, (struct vfs_dentry *)dentry, 0, false);
}

void *vfs_dentry_load(struct dec *d)
{
	struct vfs_dentry *out;

	return load_dentry(d, 0, &out) ? NULL : out;
}

void vfs_dentry_drop(void *dentry)
{
	vfs_dentry_put(dentry);
}

int vfs_dentry_lower_file(const void *dentry, char **path, struct stat *st)
{
	struct vfs_inode *ino = ((const struct vfs_dentry *)dentry)->inode, *lower;
	int err;

	/* A copied-up file is whole in the upper layer, which the image holds. */
	if (!ovl_is(ino) || ovl_upper(ino) || !(lower = ovl_lower(ino)))
		return 0;
	if ((err = lower->ops->getattr(lower, st)) || (err = hostfs_path_of(lower, path)))
		return err;
	if (!**path) { /* the rootfs's own directory */
		free(*path);
		*path = strdup("/");
	}
	return *path ? 1 : -ENOMEM;
}

/* Open files */

int vfs_file_save_none(struct enc *e, struct vfs_file *f)
{
	if (!f->dentry)
		return enc_fail(e, "an open file without a name");
	return 0;
}

int vfs_file_load_none(struct dec *d, struct vfs_file *f)
{
	return f->dentry ? 0 : dec_fail(d, "an open file without a name");
}

/* The kinds of open files. vfs/'s own are listed here (each defined beside its ops), one to a
 * line; the Sentry registers its own. */
/* clang-format off */
static const struct vfs_file_kind *builtin_kinds[] = {
    &vfs_path_file_kind,
    &memfs_reg_kind,
    &memfs_dir_kind,
    &ovl_dir_kind,
    &hostfs_reg_kind,
    &hostfs_dir_kind,
    &devfs_null_kind,
    &devfs_zero_kind,
    &devfs_full_kind,
    &devfs_random_kind,
    &devfs_urandom_kind,
    &synth_dir_kind,
    &kernfs_file_kind,
    &kernfs_dir_kind,
    /* Files outside the tree (or FIFOs on it): pipe.c, eventfd.c, epoll.c, unix.c, hostfd.c. */
    &vfs_pipe_kind,
    &vfs_eventfd_kind,
    &vfs_inotify_kind, /* inotify.c */
    &vfs_epoll_kind,
    &vfs_unix_kind,
    &vfs_inet_kind,
    &vfs_netlink_kind,
    &vfs_hostnet_kind,
    &vfs_hostfd_kind,
    &vfs_pty_master_kind, /* pty.c */
    &vfs_pty_slave_kind,
    NULL, /* the list ends at the first NULL */
};
/* clang-format on */

static const struct vfs_file_kind **kinds;
static size_t nkinds;

static const struct vfs_file_kind *kind_by_ops(const struct vfs_file_ops *ops)
{
	for (size_t i = 0; builtin_kinds[i]; i++)
		if (builtin_kinds[i]->ops == ops)
			return builtin_kinds[i];
	for (size_t i = 0; i < nkinds; i++)
		if (kinds[i]->ops == ops)
			return kinds[i];
	return NULL;
}

static const struct vfs_file_kind *kind_by_name(const char *name)
{
	for (size_t i = 0; builtin_kinds[i]; i++)
		if (!strcmp(builtin_kinds[i]->name, name))
			return builtin_kinds[i];
	for (size_t i = 0; i < nkinds; i++)
		if (!strcmp(kinds[i]->name, name))
			return kinds[i];
	return NULL;
}

int vfs_file_kind_register(const struct vfs_file_kind *kind)
{
	if (kind_by_ops(kind->ops) || kind_by_name(kind->name))
		return -EEXIST;
	const struct vfs_file_kind **k = realloc(kinds, (nkinds + 1) * sizeof(*k));
	if (!k)
		return -ENOMEM;
	kinds = k;
	kinds[nkinds++] = kind;
	return 0;
}

int vfs_file_save(struct enc *e, const void *file)
{
	struct vfs_file *f = (struct vfs_file *)file;
	const struct vfs_file_kind *kind = kind_by_ops(f->ops);

	if (!kind)
		return enc_fail(e, "an open file of a kind that cannot be saved yet");
	enc_str(e, kind->name);
	enc_u32(e, (uint32_t)f->flags);
	enc_i64(e, f->pos);
	enc_bool(e, f->seekable);
	enc_ref(e, CK_DENTRY, f->dentry);
	/* The owner of its I/O signals (the kernel watches its queue again after the load). */
	enc_bool(e, f->fasync != NULL);
	if (f->fasync) {
		enc_u32(e, (uint32_t)f->fasync->owner_type);
		enc_u32(e, (uint32_t)f->fasync->owner);
		enc_u32(e, (uint32_t)f->fasync->sig);
		enc_u32(e, (uint32_t)f->fasync->fd);
	}
	int err = kind->save(e, f);
	if (!err)
		vfs_pseudo_save(e, f); /* pipes' and sockets' inode, last: it may be absent */
	if (err || !kind->save_links)
		return err;
	/* F gets a links record; the files it will refer to are queued now, while the files are
	 * being saved, so that writing the links never adds to a section already written. */
	struct enc scratch;
	if (!e->refs || !ckpt_refs_id(e->refs, CK_FILE_LINKS, f))
		return enc_fail(e, "file links outside a checkpoint");
	enc_init(&scratch, e->refs);
	err = kind->save_links(&scratch, f);
	if (!enc_ok(&scratch))
		err = enc_fail(e, "%s", scratch.error);
	enc_free(&scratch);
	return err;
}

void *vfs_file_load(struct dec *d)
{
	char name[64];
	struct vfs_file *f = calloc(1, sizeof(*f));

	if (!f) {
		dec_fail(d, "out of memory");
		return NULL;
	}
	f->refs = 1;
	const struct vfs_file_kind *kind =
	    dec_str_buf(d, name, sizeof(name)) ? kind_by_name(name) : NULL;
	if (!kind && dec_ok(d))
		dec_fail(d, "an open file of unknown kind '%s'", name);
	f->flags = (int)dec_u32(d);
	f->pos = dec_i64(d);
	f->seekable = dec_bool(d);
	struct vfs_dentry *dentry = dec_ref(d, CK_DENTRY);
	struct vfs_fasync fa = {0};
	bool has_fasync = dec_bool(d);
	if (has_fasync) {
		fa.owner_type = (int)dec_u32(d);
		fa.owner = (int)dec_u32(d);
		fa.sig = (int)dec_u32(d);
		fa.fd = (int)dec_u32(d);
	}
	if (!dec_ok(d) || f->pos < 0 || fa.sig < 0 || fa.sig > 64 ||
	    (has_fasync && !(f->fasync = malloc(sizeof(*f->fasync))))) {
		dec_fail(d, "bad file record");
		free(f);
		return NULL;
	}
	if (f->fasync) {
		*f->fasync = fa;
		f->fasync->file = f;
	}
	f->dentry = dentry ? vfs_dentry_get(dentry) : NULL;
	f->ops = kind->ops;
	if (kind->load(d, f) || !dec_ok(d)) {
		dec_fail(d, "bad %s file record", kind->name);
		/* A failed LOAD has freed what it made: nothing is left to release. */
		f->ops = NULL;
		vfs_file_put(f);
		return NULL;
	}
	if (vfs_pseudo_load(d, f) || !dec_ok(d)) {
		dec_fail(d, "bad %s file record", kind->name);
		vfs_file_put(f);
		return NULL;
	}
	return f;
}

void vfs_file_drop(void *file)
{
	vfs_file_put(file);
}

/* A CK_FILE_LINKS record: the file (a CK_FILE reference, loaded already), then what its kind's
 * SAVE_LINKS wrote. */
int vfs_file_links_save(struct enc *e, const void *file)
{
	struct vfs_file *f = (struct vfs_file *)file;
	const struct vfs_file_kind *kind = kind_by_ops(f->ops);

	if (!kind || !kind->save_links)
		return enc_fail(e, "links of an open file of a kind that has none");
	enc_ref(e, CK_FILE, f);
	return kind->save_links(e, f);
}

void *vfs_file_links_load(struct dec *d)
{
	struct vfs_file *f = dec_ref(d, CK_FILE);
	const struct vfs_file_kind *kind = f ? kind_by_ops(f->ops) : NULL;

	if (!kind || !kind->load_links) {
		dec_fail(d, "file links of a file that has none");
		return NULL;
	}
	if (kind->load_links(d, f) || !dec_ok(d)) {
		dec_fail(d, "bad %s file links record", kind->name);
		return NULL;
	}
	return f;
}

/* Kinds that keep nothing of their own open the restored inode again with the saved flags.
 * Only inodes whose open makes one of those kinds qualify: a FIFO or a socket node would
 * connect to something, and a corrupt image must not get that far. */
int vfs_file_reopen(struct dec *d, struct vfs_file *f)
{
	struct vfs_inode *ino = f->dentry ? f->dentry->inode : NULL;
	const struct vfs_file_kind *kind;
	int err;

	if (!ino || S_ISFIFO(ino->mode) || S_ISSOCK(ino->mode) || S_ISLNK(ino->mode))
		return dec_fail(d, "an open file whose name is not a file");
	f->priv = NULL;
	err = ino->ops->open(ino, f, f->flags);
	if (err)
		return dec_fail(d, "cannot open '%s' again: %s", f->dentry->name, strerror(-err));
	kind = kind_by_ops(f->ops);
	if (!kind || kind->load != vfs_file_reopen) {
		if (f->ops && f->ops->release)
			f->ops->release(f);
		f->priv = NULL;
		return dec_fail(d, "'%s' opens as another kind of file", f->dentry->name);
	}
	return 0;
}
