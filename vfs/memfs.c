/* memfs: the in-memory filesystem behind tmpfs and the overlay root's upper layer. Inodes live
 * in the Sentry; a directory is an ordered array of (name, inode) entries; a regular file's
 * data is one memory-file object (struct mobj) reserved larger than the file, so its pages can
 * be mapped MAP_SHARED by the guest and grow in place. Bytes past the reservation, and holes
 * punched in it, read as zeros. */
#include "vfs/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "common/units.h"
#include "mem/memfile.h"
#include "state/codec.h"
#include "vfs/dirent.h"
#include "vfs/save.h"
#include "vfs/waitq.h"

#define MEMFS_PAGE 4096ULL
/* A file's first reservation of the memory file: address space only, the file is sparse. */
#define MEMFS_MIN_RESERVE (64 * 1024ULL)
/* The reservation of a file once mapped MAP_SHARED: its pages stay put while it grows to this
 * (see memfs_mmap_range). */
#define MEMFS_MAPPED_RESERVE (256ULL << 20)
/* What Linux's tmpfs counts per directory entry in a directory's st_size. */
#define MEMFS_DIRENT_SIZE 20
/* The first directory cookie of an entry: 0 and 1 are "." and "..". */
#define MEMFS_FIRST_SEQ 2

struct memfs_sb {
	int refs; /* one per inode */
	char *type;
	dev_t dev;
	ino_t next_ino;
};

static struct memfs_sb *sb_get(struct memfs_sb *sb)
{
	sb->refs++;
	return sb;
}

static void sb_put(struct memfs_sb *sb)
{
	if (--sb->refs == 0) {
		free(sb->type);
		free(sb);
	}
}

struct memfs_entry {
	char *name;
	struct memfs_inode *ino; /* a reference; NULL for a whiteout */
	uint64_t seq;		 /* the entry's directory cookie, increasing along the array */
};

struct memfs_inode {
	struct vfs_inode vfs; /* vfs.mode is the whole mode, type and permissions */
	struct memfs_sb *sb;
	ino_t ino, origin_ino;
	uid_t uid;
	gid_t gid;
	nlink_t nlink;
	dev_t rdev;
	struct timespec atime, mtime, ctime;
	off_t size;
	struct mobj *data; /* regular files: the reservation, NULL until the first write */
	char *target;	   /* symlinks */
	/* Directories. */
	struct memfs_entry *ents;
	size_t nents, cap;
	uint64_t next_seq;
	struct memfs_inode *parent; /* for ".."; no reference (the parent holds ours) */
	bool opaque;		    /* overlay: lower entries are hidden */
	void *fifo;		    /* FIFOs: the pipe while any end is open */
	bool linkable;		    /* an O_TMPFILE file: linkat may give it a name */
	unsigned int seals;	    /* regular files: F_SEAL_*; F_SEAL_SEAL but for a memfd */
	/* A checkpoint numbers the inodes of a tree to save hard links once: SAVE_IDX is valid
	 * while SAVE_GEN is the current save's. */
	uint64_t save_gen, save_idx;
};

static const struct vfs_inode_ops memfs_inode_ops;

#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x0020 /* Linux 6.3: the execute bits stay as they are */
#endif
#define MEMFS_SEALS                                                                                \
	(F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_FUTURE_WRITE |          \
	 F_SEAL_EXEC)
static const struct vfs_file_ops memfs_reg_ops, memfs_dir_ops;

static struct memfs_inode *memfs_i(struct vfs_inode *ino)
{
	return ino->priv;
}

bool memfs_is(struct vfs_inode *ino)
{
	return ino && ino->ops == &memfs_inode_ops;
}

static void touch(struct timespec *a, struct timespec *b)
{
	struct timespec now = vfs_now();

	if (a)
		*a = now;
	if (b)
		*b = now;
}

static struct memfs_inode *memfs_inode_alloc(struct memfs_sb *sb, const struct vfs_node_attr *attr)
{
	struct memfs_inode *mi = calloc(1, sizeof(*mi));

	if (!mi)
		return NULL;
	if (S_ISLNK(attr->mode) && !(mi->target = strdup(attr->target))) {
		free(mi);
		return NULL;
	}
	mi->vfs.ops = &memfs_inode_ops;
	mi->vfs.refs = 1;
	mi->vfs.mode = attr->mode;
	mi->vfs.priv = mi;
	mi->sb = sb_get(sb);
	mi->ino = sb->next_ino++;
	mi->uid = attr->uid;
	mi->gid = attr->gid;
	mi->rdev = attr->rdev;
	mi->nlink = S_ISDIR(attr->mode) ? 2 : 1;
	mi->next_seq = MEMFS_FIRST_SEQ;
	mi->seals = F_SEAL_SEAL;
	if (S_ISLNK(attr->mode))
		mi->size = (off_t)strlen(attr->target);
	touch(&mi->atime, &mi->mtime);
	mi->ctime = mi->mtime;
	return mi;
}

static void memfs_release(struct vfs_inode *ino)
{
	struct memfs_inode *mi = memfs_i(ino);
	struct memfs_sb *sb = mi->sb;

	for (size_t i = 0; i < mi->nents; i++) {
		struct memfs_inode *child = mi->ents[i].ino;

		free(mi->ents[i].name);
		if (!child)
			continue;
		if (child->parent == mi)
			child->parent = NULL; /* it may outlive us, held by an open file */
		vfs_inode_put(&child->vfs);
	}
	free(mi->ents);
	if (mi->data)
		mobj_put(mi->data);
	free(mi->target);
	free(mi);
	sb_put(sb);
}

int memfs_new(const char *fs_type, mode_t mode, uint64_t ino_base, struct vfs_inode **root)
{
	struct vfs_node_attr attr = {.mode = S_IFDIR | (mode & 07777)};
	struct memfs_sb *sb = calloc(1, sizeof(*sb));
	struct memfs_inode *mi;

	if (!sb || !(sb->type = strdup(fs_type))) {
		free(sb);
		return -ENOMEM;
	}
	sb->dev = vfs_anon_dev_new();
	sb->next_ino = ino_base + 1;
	mi = memfs_inode_alloc(sb, &attr);
	if (!mi) {
		free(sb->type);
		free(sb);
		return -ENOMEM;
	}
	mi->parent = mi;
	*root = &mi->vfs;
	return 0;
}

/* Directory entries. */

static struct memfs_entry *find_entry(struct memfs_inode *dir, const char *name)
{
	for (size_t i = 0; i < dir->nents; i++)
		if (strcmp(dir->ents[i].name, name) == 0)
			return &dir->ents[i];
	return NULL;
}

/* Appends NAME -> INO (whose reference the entry takes over; NULL for a whiteout). */
static int add_entry(struct memfs_inode *dir, const char *name, struct memfs_inode *ino)
{
	struct memfs_entry *e;
	char *copy = strdup(name);

	if (!copy)
		return -ENOMEM;
	if (dir->nents == dir->cap) {
		size_t cap = dir->cap ? 2 * dir->cap : 8;

		e = realloc(dir->ents, cap * sizeof(*e));
		if (!e) {
			free(copy);
			return -ENOMEM;
		}
		dir->ents = e;
		dir->cap = cap;
	}
	e = &dir->ents[dir->nents++];
	e->name = copy;
	e->ino = ino;
	e->seq = dir->next_seq++;
	if (ino && S_ISDIR(ino->vfs.mode)) {
		ino->parent = dir;
		dir->nlink++;
	}
	return 0;
}

/* Removes entry E of DIR, returning the reference it held (NULL for a whiteout). */
static struct memfs_inode *remove_entry(struct memfs_inode *dir, struct memfs_entry *e)
{
	struct memfs_inode *ino = e->ino;
	size_t i = (size_t)(e - dir->ents);

	free(e->name);
	memmove(e, e + 1, (dir->nents - i - 1) * sizeof(*e));
	dir->nents--;
	if (ino && S_ISDIR(ino->vfs.mode))
		dir->nlink--;
	return ino;
}

static void changed(struct memfs_inode *mi)
{
	touch(&mi->mtime, &mi->ctime);
}

static bool dir_has_entries(struct memfs_inode *dir)
{
	for (size_t i = 0; i < dir->nents; i++)
		if (dir->ents[i].ino)
			return true;
	return false;
}

static int memfs_lookup(struct vfs_inode *dir, const char *name, struct vfs_inode **out)
{
	struct memfs_entry *e = find_entry(memfs_i(dir), name);

	if (!e || !e->ino)
		return -ENOENT;
	*out = vfs_inode_get(&e->ino->vfs);
	return 0;
}

int memfs_lookup_entry(struct vfs_inode *dir, const char *name, bool *whiteout,
		       struct vfs_inode **out)
{
	struct memfs_entry *e = find_entry(memfs_i(dir), name);

	*whiteout = false;
	*out = NULL;
	if (!e)
		return -ENOENT;
	if (!e->ino) {
		*whiteout = true;
		return 0;
	}
	*out = vfs_inode_get(&e->ino->vfs);
	return 0;
}

static int memfs_getattr(struct vfs_inode *ino, struct stat *st)
{
	struct memfs_inode *mi = memfs_i(ino);
	uint64_t held = 0;

	memset(st, 0, sizeof(*st));
	st->st_dev = mi->sb->dev;
	st->st_ino = mi->ino;
	st->st_mode = ino->mode;
	st->st_nlink = mi->nlink;
	st->st_uid = mi->uid;
	st->st_gid = mi->gid;
	st->st_rdev = mi->rdev;
	st->st_size = S_ISDIR(ino->mode) ? (off_t)(mi->nents + 2) * MEMFS_DIRENT_SIZE : mi->size;
	st->st_blksize = 4096;
	if (mi->data) {
		held = ((uint64_t)mi->size + MEMFS_PAGE - 1) & ~(MEMFS_PAGE - 1);
		if (held > mi->data->len)
			held = mi->data->len;
	}
	st->st_blocks = (blkcnt_t)(held / 512);
	st->st_atim = mi->atime;
	st->st_mtim = mi->mtime;
	st->st_ctim = mi->ctime;
	return 0;
}

static ssize_t memfs_readlink(struct vfs_inode *ino, char *buf, size_t size)
{
	struct memfs_inode *mi = memfs_i(ino);
	size_t n = strlen(mi->target);

	if (n > size)
		n = size;
	memcpy(buf, mi->target, n);
	return (ssize_t)n;
}

static const char *memfs_fs_type(struct vfs_inode *ino)
{
	return memfs_i(ino)->sb->type;
}

/* A removed directory (nlink 0 after rmdir) takes no new entries, as on Linux. */
static int memfs_mknod_inode(struct vfs_inode *dir, const char *name,
			     const struct vfs_node_attr *attr, struct memfs_inode **out)
{
	struct memfs_inode *md = memfs_i(dir), *mi;
	struct memfs_entry *e = find_entry(md, name);
	int err;

	if (md->nlink == 0)
		return -ENOENT;
	if (e && e->ino)
		return -EEXIST;
	mi = memfs_inode_alloc(md->sb, attr);
	if (!mi)
		return -ENOMEM;
	if (e)
		remove_entry(md, e); /* a whiteout */
	err = add_entry(md, name, mi);
	if (err) {
		vfs_inode_put(&mi->vfs);
		return err;
	}
	changed(md);
	*out = mi;
	return 0;
}

static int memfs_mknod(struct vfs_inode *dir, const char *name, const struct vfs_node_attr *attr)
{
	struct memfs_inode *mi;

	return memfs_mknod_inode(dir, name, attr, &mi);
}

int memfs_mknod_get(struct vfs_inode *dir, const char *name, const struct vfs_node_attr *attr,
		    struct vfs_inode **out)
{
	struct memfs_inode *mi;
	int err = memfs_mknod_inode(dir, name, attr, &mi);

	if (!err)
		*out = vfs_inode_get(&mi->vfs);
	return err;
}

static int memfs_link(struct vfs_inode *dir, const char *name, struct vfs_inode *target)
{
	struct memfs_inode *md = memfs_i(dir), *mt;
	struct memfs_entry *e = find_entry(md, name);
	int err;

	if (!memfs_is(target) || memfs_i(target)->sb != md->sb)
		return -EXDEV;
	mt = memfs_i(target);
	if (md->nlink == 0)
		return -ENOENT;
	if (mt->nlink == 0 && !mt->linkable)
		return -ENOENT; /* only an O_TMPFILE file may be linked back in */
	mt->linkable = false;
	if (e && e->ino)
		return -EEXIST;
	if (e)
		remove_entry(md, e);
	err = add_entry(md, name, memfs_i(vfs_inode_get(target)));
	if (err) {
		vfs_inode_put(target);
		return err;
	}
	mt->nlink++;
	touch(&mt->ctime, NULL);
	changed(md);
	return 0;
}

/* Drops one link to MI (an entry just removed, whose reference the caller passes). */
static void unlinked(struct memfs_inode *mi)
{
	if (S_ISDIR(mi->vfs.mode)) {
		mi->nlink = 0;
		mi->parent = NULL;
	} else if (mi->nlink)
		mi->nlink--;
	touch(&mi->ctime, NULL);
	vfs_inode_put(&mi->vfs);
}

static int memfs_unlink(struct vfs_inode *dir, const char *name, struct vfs_inode *victim)
{
	struct memfs_inode *md = memfs_i(dir);
	struct memfs_entry *e = find_entry(md, name);

	if (!e || !e->ino)
		return -ENOENT;
	(void)victim;
	if (S_ISDIR(e->ino->vfs.mode))
		return -EISDIR;
	unlinked(remove_entry(md, e));
	changed(md);
	return 0;
}

static int memfs_rmdir(struct vfs_inode *dir, const char *name, struct vfs_inode *victim)
{
	struct memfs_inode *md = memfs_i(dir);
	struct memfs_entry *e = find_entry(md, name);

	(void)victim;
	if (!e || !e->ino)
		return -ENOENT;
	if (!S_ISDIR(e->ino->vfs.mode))
		return -ENOTDIR;
	if (dir_has_entries(e->ino))
		return -ENOTEMPTY;
	memfs_clear_whiteouts(&e->ino->vfs);
	unlinked(remove_entry(md, e));
	changed(md);
	return 0;
}

/* Renames as Linux's simple_rename and shmem_exchange: the entries move, with their inodes
 * and cookies renewed in the new directory; a replaced target loses a link. */
static int memfs_rename(struct vfs_inode *odir, const char *oname, struct vfs_inode *src,
			struct vfs_inode *ndir, const char *nname, struct vfs_inode *tgt,
			unsigned int flags)
{
	struct memfs_inode *mo = memfs_i(odir), *mn = memfs_i(ndir), *ms, *mt = NULL;
	struct memfs_entry *es = find_entry(mo, oname), *et;
	int err;

	(void)src, (void)tgt;
	if (!es || !es->ino)
		return -ENOENT;
	ms = es->ino;
	et = find_entry(mn, nname);
	if (et && et->ino)
		mt = et->ino;
	if (flags & RENAME_EXCHANGE) {
		if (!mt)
			return -ENOENT;
		es->ino = mt;
		et->ino = ms;
		if (S_ISDIR(ms->vfs.mode) != S_ISDIR(mt->vfs.mode)) {
			/* The directory moves, and the link its ".." holds with it. */
			struct memfs_inode *d = S_ISDIR(ms->vfs.mode) ? mn : mo;
			struct memfs_inode *o = d == mn ? mo : mn;

			d->nlink++;
			o->nlink--;
		}
		if (S_ISDIR(ms->vfs.mode))
			ms->parent = mn;
		if (S_ISDIR(mt->vfs.mode))
			mt->parent = mo;
		touch(&ms->ctime, &mt->ctime);
		changed(mo);
		changed(mn);
		return 0;
	}
	if (mt == ms)
		return 0;
	if (mt && S_ISDIR(mt->vfs.mode)) {
		if (!S_ISDIR(ms->vfs.mode))
			return -EISDIR;
		if (dir_has_entries(mt))
			return -ENOTEMPTY;
	} else if (mt && S_ISDIR(ms->vfs.mode)) {
		return -ENOTDIR;
	}
	if (mn->nlink == 0)
		return -ENOENT;
	/* Add the new name first (taking a reference), so a failure changes nothing. */
	vfs_inode_get(&ms->vfs);
	if (et) {
		struct memfs_inode *old = et->ino;

		if (S_ISDIR(ms->vfs.mode) && !(old && S_ISDIR(old->vfs.mode)))
			mn->nlink++;
		if (old && S_ISDIR(old->vfs.mode) && !S_ISDIR(ms->vfs.mode))
			mn->nlink--;
		et->ino = ms;
		if (S_ISDIR(ms->vfs.mode))
			ms->parent = mn;
		if (old) {
			memfs_clear_whiteouts(&old->vfs);
			unlinked(old);
		}
	} else {
		err = add_entry(mn, nname, ms);
		if (err) {
			vfs_inode_put(&ms->vfs);
			return err;
		}
		es = find_entry(mo, oname); /* the array may have moved */
	}
	vfs_inode_put(&remove_entry(mo, es)->vfs);
	touch(&ms->ctime, NULL);
	changed(mo);
	changed(mn);
	return 0;
}

/* Data. The reservation is zero beyond the file's size at all times, so growing the size
 * (truncate up, a write past the end) exposes zeros. */

static void zero_range(struct mobj *m, uint64_t from, uint64_t to)
{
	uint64_t head_end, tail_start;

	if (!m || from >= to)
		return;
	if (to > m->len)
		to = m->len;
	if (from >= to)
		return;
	head_end = (from + MEMFS_PAGE - 1) & ~(MEMFS_PAGE - 1);
	tail_start = to & ~(MEMFS_PAGE - 1);
	if (head_end >= tail_start) {
		memset(memfile_ptr(m->off + from), 0, to - from);
		return;
	}
	memset(memfile_ptr(m->off + from), 0, head_end - from);
	memfile_zero(m->off + head_end, tail_start - head_end);
	memset(memfile_ptr(m->off + tail_start), 0, to - tail_start);
}

/* Makes the reservation cover [0, END): a new, larger object with the old data copied over
 * (holes stay holes). */
static int reserve(struct memfs_inode *mi, uint64_t end)
{
	uint64_t cap = mi->data ? mi->data->len : 0, want = cap ? 2 * cap : MEMFS_MIN_RESERVE;
	struct mobj *m;

	if (end <= cap)
		return 0;
	end = (end + MEMFS_PAGE - 1) & ~(MEMFS_PAGE - 1);
	if (want < end)
		want = end;
	m = mobj_new(want);
	if (!m)
		return -ENOSPC;
	if (mi->data) {
		uint64_t used = (uint64_t)mi->size < cap ? (uint64_t)mi->size : cap;

		if (memfile_copy_guarded(m->off, mi->data->off, used)) {
			mobj_put(m);
			return -ENOSPC;
		}
		mobj_put(mi->data);
	}
	mi->data = m;
	return 0;
}

static void (*resize_hook)(struct mobj *mo, uint64_t size);

void vfs_set_resize_hook(void (*hook)(struct mobj *mo, uint64_t size))
{
	resize_hook = hook;
}

/* The size becomes SIZE: mappings learn of it when that moves the last page. */
static void resized(struct memfs_inode *mi, off_t size)
{
	uint64_t old_end = ((uint64_t)mi->size + MEMFS_PAGE - 1) / MEMFS_PAGE;
	uint64_t new_end = ((uint64_t)size + MEMFS_PAGE - 1) / MEMFS_PAGE;

	mi->size = size;
	if (old_end != new_end && mi->data && resize_hook)
		resize_hook(mi->data, (uint64_t)size);
}

static int set_size(struct memfs_inode *mi, off_t size)
{
	if (size < mi->size)
		zero_range(mi->data, (uint64_t)size, (uint64_t)mi->size);
	resized(mi, size);
	return 0;
}

/* A copy to or from the memory file, for memfile_guard. */
struct mcopy {
	void *dst;
	const void *src;
	size_t len;
};

static void mcopy(void *arg)
{
	struct mcopy *c = arg;

	memcpy(c->dst, c->src, c->len);
}

static ssize_t data_read(struct memfs_inode *mi, void *buf, size_t len, off_t off)
{
	uint64_t cap = mi->data ? mi->data->len : 0, end;
	size_t n, inres;

	if (off >= mi->size)
		return 0;
	n = (uint64_t)(mi->size - off) < len ? (size_t)(mi->size - off) : len;
	end = (uint64_t)off + n;
	inres = (uint64_t)off >= cap ? 0 : (size_t)((end < cap ? end : cap) - (uint64_t)off);
	if (inres) {
		struct mcopy c = {buf, memfile_ptr(mi->data->off + (uint64_t)off), inres};
		if (memfile_guard(mcopy, &c))
			return -ENOMEM;
	}
	memset((char *)buf + inres, 0, n - inres);
	return (ssize_t)n;
}

static int data_write(struct memfs_inode *mi, const void *buf, size_t len, off_t off)
{
	off_t end;
	int err;

	if (len == 0)
		return 0;
	if (__builtin_add_overflow(off, (off_t)len, &end))
		return -EFBIG;
	err = reserve(mi, (uint64_t)end);
	if (err)
		return err;
	struct mcopy c = {memfile_ptr(mi->data->off + (uint64_t)off), buf, len};
	/* Past the sandbox's --memory, after the OOM killer's try, tmpfs is full. */
	if (memfile_guard(mcopy, &c))
		return -ENOSPC;
	if (end > mi->size)
		resized(mi, end);
	return 0;
}

/* The tmpfs inode of F if F is a regular tmpfs file opened as such (a memfd, or a file of a
 * tmpfs mount): an overlay's upper file is the overlay's, which takes no seals. */
static struct memfs_inode *sealable(struct vfs_file *f)
{
	struct memfs_inode *mi = f->ops == &memfs_reg_ops ? f->priv : NULL;

	if (!mi || (f->dentry && f->dentry->inode != &mi->vfs))
		return NULL;
	return mi;
}

int vfs_file_get_seals(struct vfs_file *f)
{
	struct memfs_inode *mi = sealable(f);

	return mi ? (int)mi->seals : -EINVAL;
}

int vfs_file_add_seals(struct vfs_file *f, unsigned int seals)
{
	struct memfs_inode *mi = sealable(f);

	if (!mi)
		return -EINVAL;
	if ((f->flags & O_ACCMODE) == O_RDONLY)
		return -EPERM;
	if (seals & ~(unsigned int)MEMFS_SEALS)
		return -EINVAL;
	if (mi->seals & F_SEAL_SEAL)
		return -EPERM;
	mi->seals |= seals;
	return 0;
}

int vfs_file_seal_noexec(struct vfs_file *f)
{
	struct memfs_inode *mi = sealable(f);

	if (!mi)
		return -EINVAL;
	mi->vfs.mode &= ~(mode_t)0111;
	mi->seals |= F_SEAL_EXEC;
	return 0;
}

struct mobj *vfs_file_tmpfs_data(struct vfs_file *f)
{
	struct memfs_inode *mi = sealable(f);

	return mi ? mi->data : NULL;
}

void vfs_file_allow_sealing(struct vfs_file *f)
{
	struct memfs_inode *mi = sealable(f);

	if (mi)
		mi->seals = 0;
}

int memfs_write_kernel(struct vfs_inode *ino, const void *buf, size_t len, off_t off)
{
	return data_write(memfs_i(ino), buf, len, off);
}

static int memfs_setattr(struct vfs_inode *ino, const struct vfs_setattr *attr)
{
	struct memfs_inode *mi = memfs_i(ino);
	int err;

	if ((attr->valid & VFS_ATTR_MODE) && (mi->seals & F_SEAL_EXEC) &&
	    ((ino->mode ^ attr->mode) & 0111))
		return -EPERM;
	if (attr->valid & VFS_ATTR_SIZE) {
		if (S_ISDIR(ino->mode))
			return -EISDIR;
		if (!S_ISREG(ino->mode))
			return -EINVAL;
		if ((attr->size < mi->size && (mi->seals & F_SEAL_SHRINK)) ||
		    (attr->size > mi->size && (mi->seals & F_SEAL_GROW)))
			return -EPERM;
		err = set_size(mi, attr->size);
		if (err)
			return err;
	}
	if (attr->valid & VFS_ATTR_MODE)
		ino->mode = (ino->mode & S_IFMT) | (attr->mode & 07777);
	if (attr->valid & VFS_ATTR_UID)
		mi->uid = attr->uid;
	if (attr->valid & VFS_ATTR_GID)
		mi->gid = attr->gid;
	if (attr->valid & VFS_ATTR_ATIME)
		mi->atime = attr->atime;
	if (attr->valid & VFS_ATTR_MTIME)
		mi->mtime = attr->mtime;
	if (attr->valid & VFS_ATTR_CTIME)
		mi->ctime = attr->ctime;
	return 0;
}

static int memfs_statfs(struct vfs_inode *ino, struct statfs *buf)
{
	(void)ino;
	buf->f_type = TMPFS_MAGIC;
	buf->f_bsize = 4096;
	buf->f_frsize = 4096;
	buf->f_blocks = buf->f_bfree = buf->f_bavail = 1 << 20; /* 4 GiB, as a nominal size */
	buf->f_files = buf->f_ffree = 1 << 20;
	buf->f_namelen = NAME_MAX;
	return 0;
}

/* Open files. */

static ssize_t memfs_reg_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct memfs_inode *mi = f->priv;
	ssize_t total = 0;

	for (int i = 0; i < iovcnt; i++) {
		ssize_t n = data_read(mi, iov[i].iov_base, iov[i].iov_len, *pos);

		*pos += n;
		total += n;
		if ((size_t)n < iov[i].iov_len)
			break;
	}
	touch(&mi->atime, NULL);
	return total;
}

static ssize_t memfs_reg_write(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct memfs_inode *mi = f->priv;
	ssize_t total = 0;
	int err;

	if (f->flags & O_APPEND)
		*pos = mi->size;
	if (mi->seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE))
		return -EPERM;
	for (int i = 0; i < iovcnt; i++) {
		if ((mi->seals & F_SEAL_GROW) && *pos + (off_t)iov[i].iov_len > mi->size) {
			if (total)
				break;
			return -EPERM;
		}
		err = data_write(mi, iov[i].iov_base, iov[i].iov_len, *pos);
		if (err)
			return total ? total : err;
		*pos += (off_t)iov[i].iov_len;
		total += (ssize_t)iov[i].iov_len;
	}
	if (total)
		changed(mi);
	return total;
}

static ssize_t memfs_reg_pread_kernel(struct vfs_file *f, void *buf, size_t len, off_t off)
{
	return data_read(f->priv, buf, len, off);
}

static ssize_t memfs_reg_getdents64(struct vfs_file *f, void *buf, size_t size, off_t *pos)
{
	(void)f, (void)buf, (void)size, (void)pos;
	return -ENOTDIR;
}

static long memfs_ioctl(struct vfs_file *f, unsigned int cmd, void *arg)
{
	(void)f, (void)cmd, (void)arg;
	return -ENOTTY;
}

/* Through the dentry when there is one, so an overlay file stats as the overlay shows it. */
static int memfs_file_getattr(struct vfs_file *f, struct stat *st)
{
	if (f->dentry)
		return vfs_stat(f->dentry, st);
	return memfs_getattr(&((struct memfs_inode *)f->priv)->vfs, st);
}

static int memfs_host_fd(struct vfs_file *f)
{
	(void)f;
	return -1;
}

static void memfs_file_release(struct vfs_file *f)
{
	vfs_inode_put(&((struct memfs_inode *)f->priv)->vfs);
}

static int memfs_fallocate(struct vfs_file *f, int mode, off_t off, off_t len)
{
	struct memfs_inode *mi = f->priv;
	off_t end;
	int err;

	if (__builtin_add_overflow(off, len, &end))
		return -EFBIG;
	if ((mode & FALLOC_FL_PUNCH_HOLE) && (mi->seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)))
		return -EPERM;
	if (!(mode & FALLOC_FL_KEEP_SIZE) && end > mi->size && (mi->seals & F_SEAL_GROW))
		return -EPERM;
	if (mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)) {
		zero_range(mi->data, (uint64_t)off, (uint64_t)(end < mi->size ? end : mi->size));
		changed(mi);
		return 0;
	}
	if (mode != 0 && mode != FALLOC_FL_KEEP_SIZE)
		return -EOPNOTSUPP;
	err = reserve(mi, (uint64_t)end);
	if (err)
		return err;
	if (mode == 0 && end > mi->size) {
		resized(mi, end);
		changed(mi);
	}
	return 0;
}

static int memfs_mmap_range(struct vfs_file *f, off_t off, size_t len, struct mobj **mobj,
			    uint64_t *mf_off)
{
	struct memfs_inode *mi = f->priv;
	off_t end;
	int err;

	if (off < 0 || __builtin_add_overflow(off, (off_t)len, &end))
		return -EINVAL;
	/* Growing past the reservation moves the file's pages, which mappings made before would
	 * not follow: a file mapped for the first time gets a reservation large enough for any
	 * file but a huge one first (address space only: the memory file is sparse). */
	if ((!mi->data || mi->data->refs == 1) && (uint64_t)end < MEMFS_MAPPED_RESERVE)
		reserve(mi,
			MEMFS_MAPPED_RESERVE); /* if the memory file is that full, END will do */
	err = reserve(mi, (uint64_t)end);
	if (err)
		return err;
	*mobj = mobj_get(mi->data);
	*mf_off = mi->data->off + (uint64_t)off;
	return 0;
}

/* lseek, with SEEK_DATA and SEEK_HOLE answered from the memory file's own holes: a range
 * never written (or punched) is a hole, as on tmpfs. The end of the file counts as a hole. */
static off_t memfs_reg_llseek(struct vfs_file *f, off_t off, int whence)
{
	struct memfs_inode *mi = f->priv;
	off_t res;

	switch (whence) {
	case SEEK_SET:
		res = off;
		break;
	case SEEK_CUR:
		res = f->pos + off;
		break;
	case SEEK_END:
		res = mi->size + off;
		break;
	case SEEK_DATA:
	case SEEK_HOLE:
		if (off < 0 || off >= mi->size)
			return -ENXIO;
		if (!mi->data)
			return whence == SEEK_DATA ? -ENXIO : off;
		res = memfile_seek(mi->data->off + off, mi->data->off + mi->size,
				   whence == SEEK_DATA);
		if (res < 0)
			return whence == SEEK_DATA ? -ENXIO : mi->size;
		res -= mi->data->off;
		if (res > mi->size)
			res = whence == SEEK_DATA ? -ENXIO : mi->size;
		if (res < 0)
			return res;
		break;
	default:
		return -EINVAL;
	}
	if (res < 0)
		return -EINVAL;
	f->pos = res;
	return res;
}

static const struct vfs_file_ops memfs_reg_ops = {
    .llseek = memfs_reg_llseek,
    .read = memfs_reg_read,
    .write = memfs_reg_write,
    .getdents64 = memfs_reg_getdents64,
    .ioctl = memfs_ioctl,
    .getattr = memfs_file_getattr,
    .host_fd = memfs_host_fd,
    .pread_kernel = memfs_reg_pread_kernel,
    .release = memfs_file_release,
    .fallocate = memfs_fallocate,
    .mmap_range = memfs_mmap_range,
};

/* *POS is a cookie: 0 ".", 1 "..", then an entry's seq; an entry removed meanwhile is just
 * skipped, and one added later is listed if its seq is still ahead. */
static ssize_t memfs_dir_getdents64(struct vfs_file *f, void *buf, size_t size, off_t *pos)
{
	struct memfs_inode *md = f->priv;
	size_t done = 0;

	if (md->nlink == 0)
		return -ENOENT; /* a removed directory lists nothing, as on Linux */
	if (*pos == 0) {
		if (!vfs_dirent_put(buf, size, &done, md->ino, 1, DT_DIR, "."))
			return -EINVAL;
		*pos = 1;
	}
	if (*pos == 1) {
		struct memfs_inode *up = md->parent ? md->parent : md;

		if (!vfs_dirent_put(buf, size, &done, up->ino, MEMFS_FIRST_SEQ, DT_DIR, ".."))
			return done ? (ssize_t)done : -EINVAL;
		*pos = MEMFS_FIRST_SEQ;
	}
	for (size_t i = 0; i < md->nents; i++) {
		struct memfs_entry *e = &md->ents[i];

		if (e->seq < (uint64_t)*pos || !e->ino)
			continue;
		if (!vfs_dirent_put(buf, size, &done, e->ino->ino, (int64_t)e->seq + 1,
				    IFTODT(e->ino->vfs.mode), e->name))
			return done ? (ssize_t)done : -EINVAL;
		*pos = (off_t)e->seq + 1;
	}
	return (ssize_t)done;
}

static const struct vfs_file_ops memfs_dir_ops = {
    .read = vfs_dir_read,
    .write = vfs_dir_write,
    .getdents64 = memfs_dir_getdents64,
    .ioctl = memfs_ioctl,
    .getattr = memfs_file_getattr,
    .host_fd = memfs_host_fd,
    .pread_kernel = vfs_dir_pread_kernel,
    .release = memfs_file_release,
};

static int memfs_open(struct vfs_inode *ino, struct vfs_file *f, int flags)
{
	(void)flags;
	switch (ino->mode & S_IFMT) {
	case S_IFREG:
		f->ops = &memfs_reg_ops;
		break;
	case S_IFDIR:
		f->ops = &memfs_dir_ops;
		break;
	case S_IFLNK:
		return -ELOOP;
	case S_IFCHR:
	case S_IFBLK:
		return -EACCES; /* device nodes copied up from the host: devices come from devfs */
	case S_IFIFO:
		return vfs_fifo_open(&memfs_i(ino)->fifo, f, flags);
	default:
		return -ENXIO; /* sockets are connected to, not opened */
	}
	f->priv = memfs_i(vfs_inode_get(ino));
	return 0;
}

static const struct vfs_inode_ops memfs_inode_ops = {
    .lookup = memfs_lookup,
    .getattr = memfs_getattr,
    .readlink = memfs_readlink,
    .open = memfs_open,
    .release = memfs_release,
    .fs_type = memfs_fs_type,
    .mknod = memfs_mknod,
    .link = memfs_link,
    .unlink = memfs_unlink,
    .rmdir = memfs_rmdir,
    .rename = memfs_rename,
    .setattr = memfs_setattr,
    .statfs = memfs_statfs,
};

/* The overlay's view. */

int memfs_whiteout(struct vfs_inode *dir, const char *name)
{
	struct memfs_inode *md = memfs_i(dir);
	struct memfs_entry *e = find_entry(md, name);

	if (e && !e->ino)
		return 0;
	if (e) {
		struct memfs_inode *old = remove_entry(md, e);

		memfs_clear_whiteouts(&old->vfs);
		unlinked(old);
	}
	changed(md);
	return add_entry(md, name, NULL);
}

void memfs_drop_whiteout(struct vfs_inode *dir, const char *name)
{
	struct memfs_entry *e = find_entry(memfs_i(dir), name);

	if (e && !e->ino)
		remove_entry(memfs_i(dir), e);
}

void memfs_set_opaque(struct vfs_inode *dir, bool opaque)
{
	memfs_i(dir)->opaque = opaque;
}

void memfs_set_linkable(struct vfs_inode *ino)
{
	if (memfs_is(ino))
		memfs_i(ino)->linkable = true;
}

bool memfs_is_opaque(struct vfs_inode *dir)
{
	return memfs_i(dir)->opaque;
}

void memfs_clear_whiteouts(struct vfs_inode *dir)
{
	struct memfs_inode *md = memfs_i(dir);

	for (size_t i = 0; i < md->nents;) {
		if (md->ents[i].ino)
			i++;
		else
			remove_entry(md, &md->ents[i]);
	}
}

int memfs_foreach(struct vfs_inode *dir,
		  int (*fn)(const char *name, struct vfs_inode *ino, void *arg), void *arg)
{
	struct memfs_inode *md = memfs_i(dir);

	for (size_t i = 0; i < md->nents; i++) {
		struct memfs_entry *e = &md->ents[i];
		int r = fn(e->name, e->ino ? &e->ino->vfs : NULL, arg);

		if (r)
			return r;
	}
	return 0;
}

ino_t memfs_ino(struct vfs_inode *ino)
{
	return memfs_i(ino)->ino;
}

void memfs_set_origin_ino(struct vfs_inode *ino, ino_t origin)
{
	memfs_i(ino)->origin_ino = origin;
}

ino_t memfs_origin_ino(struct vfs_inode *ino)
{
	return memfs_i(ino)->origin_ino;
}

/* tmpfs: a memfs mounted on its own. */
int vfs_tmpfs_new(struct vfs_dentry **root)
{
	struct vfs_inode *ino;
	int err = memfs_new("tmpfs", 01777, 0, &ino);

	if (err)
		return err;
	err = vfs_dentry_new_root(ino, root);
	if (err)
		vfs_inode_put(ino);
	return err;
}

/* Checkpoint and restore (docs/image-format.md, "vfs"). A tree is written depth first, each
 * inode once: the first entry naming it carries it, later ones (hard links) refer to its
 * index in that order. File data stays where it is in the memory file, which the restore
 * reloads at the same offsets: a file records its reservation as a CK_MOBJ reference. */

#define MEMFS_SAVE_MAX_DEPTH 2048
#define MEMFS_SAVE_MAX_ENTRIES (1u << 24)
#define MEMFS_SAVE_MAX_NLINK (1u << 24)
#define MEMFS_ENT_WHITEOUT 0
#define MEMFS_ENT_NODE 1
#define MEMFS_ENT_LINK 2
#define MEMFS_SAVE_OPAQUE 0x1
#define MEMFS_SAVE_LINKABLE 0x2

struct memfs_saver {
	struct enc *e;
	uint64_t gen, next_idx;
	bool shallow;
};

static uint64_t memfs_save_gen;

static void save_time(struct enc *e, struct timespec t)
{
	enc_i64(e, t.tv_sec);
	enc_i64(e, t.tv_nsec);
}

static int save_node(struct memfs_saver *s, struct memfs_inode *mi, unsigned int depth)
{
	struct enc *e = s->e;
	int err;

	if (depth > MEMFS_SAVE_MAX_DEPTH)
		return enc_fail(e, "a tmpfs tree more than %d directories deep",
				MEMFS_SAVE_MAX_DEPTH);
	mi->save_gen = s->gen;
	mi->save_idx = s->next_idx++;
	enc_u32(e, (uint32_t)mi->vfs.mode);
	enc_u32(e, (uint32_t)mi->uid);
	enc_u32(e, (uint32_t)mi->gid);
	enc_u64(e, (uint64_t)mi->ino);
	enc_u64(e, (uint64_t)mi->origin_ino);
	enc_u32(e, (uint32_t)mi->nlink);
	enc_u64(e, (uint64_t)mi->rdev);
	save_time(e, mi->atime);
	save_time(e, mi->mtime);
	save_time(e, mi->ctime);
	enc_u8(e, (mi->opaque ? MEMFS_SAVE_OPAQUE : 0) | (mi->linkable ? MEMFS_SAVE_LINKABLE : 0));
	switch (mi->vfs.mode & S_IFMT) {
	case S_IFREG:
		enc_i64(e, mi->size);
		enc_ref(e, CK_MOBJ, mi->data);
		enc_u32(e, mi->seals);
		break;
	case S_IFLNK:
		enc_str(e, mi->target);
		break;
	case S_IFDIR:
		enc_u64(e, mi->next_seq);
		enc_u64(e, s->shallow ? 0 : mi->nents);
		for (size_t i = 0; !s->shallow && i < mi->nents; i++) {
			struct memfs_entry *ent = &mi->ents[i];

			enc_str(e, ent->name);
			enc_u64(e, ent->seq);
			if (!ent->ino) {
				enc_u8(e, MEMFS_ENT_WHITEOUT);
			} else if (ent->ino->save_gen == s->gen) {
				if (S_ISDIR(ent->ino->vfs.mode))
					return enc_fail(e, "a tmpfs directory linked twice");
				enc_u8(e, MEMFS_ENT_LINK);
				enc_u64(e, ent->ino->save_idx);
			} else {
				enc_u8(e, MEMFS_ENT_NODE);
				if ((err = save_node(s, ent->ino, depth + 1)))
					return err;
			}
		}
		break;
	default:
		break; /* FIFOs, sockets and device nodes are nodes only */
	}
	return enc_ok(e) ? 0 : -ENOMEM;
}

static void save_sb(struct enc *e, struct memfs_sb *sb)
{
	enc_str(e, sb->type);
	enc_u64(e, (uint64_t)sb->dev);
	enc_u64(e, (uint64_t)sb->next_ino);
}

static int save_from(struct enc *e, struct memfs_inode *mi, bool shallow)
{
	struct memfs_saver s = {.e = e, .gen = ++memfs_save_gen, .shallow = shallow};

	save_sb(e, mi->sb);
	return save_node(&s, mi, 0);
}

int memfs_save_tree(struct enc *e, struct vfs_inode *root)
{
	if (!memfs_is(root) || !S_ISDIR(root->mode))
		return enc_fail(e, "a tmpfs whose root is not a tmpfs directory");
	return save_from(e, memfs_i(root), false);
}

int memfs_save_inline(struct enc *e, struct vfs_inode *ino, bool shallow)
{
	if (!memfs_is(ino))
		return enc_fail(e, "an inode that is not a tmpfs one saved as tmpfs");
	return save_from(e, memfs_i(ino), shallow);
}

struct memfs_loader {
	struct dec *d;
	struct memfs_sb *sb;
	struct memfs_inode **inos; /* by index, borrowed: the tree holds them */
	uint32_t *links;	   /* entries naming each, counted while loading */
	size_t n, cap;
	uint32_t top_nlink; /* the saved count of the first inode (an inline one keeps it) */
};

static bool load_time(struct dec *d, struct timespec *t)
{
	t->tv_sec = dec_i64(d);
	t->tv_nsec = dec_i64(d);
	return t->tv_nsec >= 0 && t->tv_nsec < NSEC_PER_SEC;
}

static bool valid_name(const char *name)
{
	return name[0] && strcmp(name, ".") && strcmp(name, "..") && !strchr(name, '/');
}

static bool valid_mode(uint32_t mode)
{
	if (mode & ~(uint32_t)(S_IFMT | 07777))
		return false;
	switch (mode & S_IFMT) {
	case S_IFREG:
	case S_IFDIR:
	case S_IFLNK:
	case S_IFIFO:
	case S_IFSOCK:
	case S_IFCHR:
	case S_IFBLK:
		return true;
	}
	return false;
}

static int loader_add(struct memfs_loader *l, struct memfs_inode *mi)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct memfs_inode **inos = realloc(l->inos, cap * sizeof(*inos));
		uint32_t *links;

		if (!inos)
			return -ENOMEM;
		l->inos = inos;
		links = realloc(l->links, cap * sizeof(*links));
		if (!links)
			return -ENOMEM;
		l->links = links;
		l->cap = cap;
	}
	l->inos[l->n] = mi;
	l->links[l->n] = 0;
	l->n++;
	return 0;
}

static int load_entries(struct memfs_loader *l, struct memfs_inode *dir, unsigned int depth);

/* Loads one inode into *OUT, which is set (the caller's reference) as soon as the inode
 * exists, so a failure further down is cleaned up by the caller's put. */
static int load_node(struct memfs_loader *l, unsigned int depth, struct memfs_inode **out)
{
	struct dec *d = l->d;
	struct memfs_inode *mi;
	uint32_t mode, nlink;
	char target[PATH_MAX];

	*out = NULL;
	if (depth > MEMFS_SAVE_MAX_DEPTH)
		return dec_fail(d, "a tmpfs tree too deep");
	mi = calloc(1, sizeof(*mi));
	if (!mi)
		return dec_fail(d, "out of memory");
	mode = dec_u32(d);
	mi->uid = dec_u32(d);
	mi->gid = dec_u32(d);
	mi->ino = dec_u64(d);
	mi->origin_ino = dec_u64(d);
	nlink = dec_u32(d);
	mi->rdev = dec_u64(d);
	bool times_ok = load_time(d, &mi->atime);
	times_ok = load_time(d, &mi->mtime) && times_ok;
	times_ok = load_time(d, &mi->ctime) && times_ok;
	uint8_t flags = dec_u8(d);
	if (!dec_ok(d) || !valid_mode(mode) || !times_ok || nlink > MEMFS_SAVE_MAX_NLINK ||
	    (flags & ~(MEMFS_SAVE_OPAQUE | MEMFS_SAVE_LINKABLE))) {
		free(mi);
		return dec_fail(d, "bad tmpfs inode");
	}
	mi->vfs.ops = &memfs_inode_ops;
	mi->vfs.refs = 1;
	mi->vfs.mode = mode;
	mi->vfs.priv = mi;
	mi->sb = sb_get(l->sb);
	if (l->n == 0)
		l->top_nlink = nlink;
	/* Directories count their links from their entries, as add_entry keeps them. */
	mi->nlink = S_ISDIR(mode) ? 2 : nlink;
	mi->opaque = flags & MEMFS_SAVE_OPAQUE;
	mi->linkable = flags & MEMFS_SAVE_LINKABLE;
	mi->next_seq = MEMFS_FIRST_SEQ;
	*out = mi;
	if (loader_add(l, mi))
		return dec_fail(d, "out of memory");

	switch (mode & S_IFMT) {
	case S_IFREG: {
		struct mobj *m;

		mi->size = dec_i64(d);
		m = dec_ref(d, CK_MOBJ);
		mi->seals = dec_u32(d);
		if (!dec_ok(d) || mi->size < 0 || (mi->seals & ~MEMFS_SEALS))
			return dec_fail(d, "bad tmpfs file");
		mi->data = m ? mobj_get(m) : NULL;
		return 0;
	}
	case S_IFLNK:
		if (!dec_str_buf(d, target, sizeof(target)) || !target[0])
			return dec_fail(d, "bad tmpfs symlink");
		mi->target = strdup(target);
		if (!mi->target)
			return dec_fail(d, "out of memory");
		mi->size = (off_t)strlen(target);
		return 0;
	case S_IFDIR:
		return load_entries(l, mi, depth);
	default:
		return 0;
	}
}

static int load_entries(struct memfs_loader *l, struct memfs_inode *dir, unsigned int depth)
{
	struct dec *d = l->d;
	uint64_t next_seq = dec_u64(d), last = MEMFS_FIRST_SEQ - 1;
	uint64_t n = dec_max(d, MEMFS_SAVE_MAX_ENTRIES, "tmpfs directory size");
	char name[NAME_MAX + 1];
	int err;

	if (!dec_ok(d) || next_seq < MEMFS_FIRST_SEQ || next_seq > (UINT64_MAX >> 2))
		return dec_fail(d, "bad tmpfs directory");
	for (uint64_t i = 0; i < n; i++) {
		struct memfs_inode *child = NULL;
		uint64_t seq;
		uint8_t kind;

		if (!dec_str_buf(d, name, sizeof(name)) || !valid_name(name))
			return dec_fail(d, "bad name in a tmpfs directory");
		seq = dec_u64(d);
		kind = dec_u8(d);
		if (!dec_ok(d) || seq <= last || seq >= next_seq || find_entry(dir, name))
			return dec_fail(d, "bad entry '%s' in a tmpfs directory", name);
		last = seq;
		switch (kind) {
		case MEMFS_ENT_WHITEOUT:
			break;
		case MEMFS_ENT_LINK: {
			uint64_t idx = dec_u64(d);

			if (!dec_ok(d) || idx >= l->n || S_ISDIR(l->inos[idx]->vfs.mode))
				return dec_fail(d, "bad hard link '%s' in a tmpfs directory", name);
			child = memfs_i(vfs_inode_get(&l->inos[idx]->vfs));
			l->links[idx]++;
			break;
		}
		case MEMFS_ENT_NODE: {
			size_t idx = l->n;

			err = load_node(l, depth + 1, &child);
			if (err) {
				if (child)
					vfs_inode_put(&child->vfs);
				return err;
			}
			l->links[idx]++;
			break;
		}
		default:
			return dec_fail(d, "bad entry kind in a tmpfs directory");
		}
		if (add_entry(dir, name, child)) {
			if (child)
				vfs_inode_put(&child->vfs);
			return dec_fail(d, "out of memory");
		}
		dir->ents[dir->nents - 1].seq = seq;
	}
	dir->next_seq = next_seq;
	return 0;
}

/* Every link a non-directory had must be in the tree: a count that disagrees is a corrupt
 * image (or one saved from a broken tree), never silently repaired. Index 0 is the top, which
 * no entry of the tree names. */
static int check_links(struct memfs_loader *l)
{
	for (size_t i = 1; i < l->n; i++) {
		struct memfs_inode *mi = l->inos[i];

		if (!S_ISDIR(mi->vfs.mode) && mi->nlink != l->links[i])
			return dec_fail(l->d, "tmpfs inode %lu has %u links, %lu saved",
					(unsigned long)mi->ino, l->links[i],
					(unsigned long)mi->nlink);
	}
	return 0;
}

static struct memfs_sb *load_sb(struct dec *d, struct vfs_inode *sb_of)
{
	char type[64];
	struct memfs_sb *sb;
	dev_t dev;
	ino_t next_ino;

	if (!dec_str_buf(d, type, sizeof(type)))
		dec_fail(d, "bad tmpfs");
	dev = dec_u64(d);
	next_ino = dec_u64(d);
	if (!dec_ok(d))
		return NULL;
	if (sb_of && memfs_is(sb_of) && memfs_i(sb_of)->sb->dev == dev) {
		return sb_get(memfs_i(sb_of)->sb);
	}
	sb = calloc(1, sizeof(*sb));
	if (!sb || !(sb->type = strdup(type))) {
		free(sb);
		dec_fail(d, "out of memory");
		return NULL;
	}
	sb->refs = 1;
	sb->dev = dev;
	sb->next_ino = next_ino;
	return sb;
}

/* The loader holds a reference on the filesystem while it builds, so an inode that fails
 * early cannot free it under us. */
static int load_from(struct dec *d, struct vfs_inode *sb_of, bool tree, struct vfs_inode **out,
		     uint32_t *top_nlink)
{
	struct memfs_loader l = {.d = d};
	struct memfs_inode *top;
	int err;

	l.sb = load_sb(d, sb_of);
	if (!l.sb)
		return -EINVAL;
	err = load_node(&l, 0, &top);
	if (!err && tree && !S_ISDIR(top->vfs.mode))
		err = dec_fail(d, "a tmpfs whose root is not a directory");
	if (!err)
		err = check_links(&l);
	if (!err && tree)
		top->parent = top;
	if (err && top)
		vfs_inode_put(&top->vfs);
	if (!err)
		*out = &top->vfs;
	*top_nlink = l.top_nlink;
	free(l.inos);
	free(l.links);
	sb_put(l.sb);
	return err;
}

int memfs_load_tree(struct dec *d, struct vfs_inode **root)
{
	uint32_t nlink;

	return load_from(d, NULL, true, root, &nlink);
}

int memfs_load_inline(struct dec *d, struct vfs_inode *sb_of, struct vfs_inode **out)
{
	uint32_t nlink;
	int err = load_from(d, sb_of, false, out, &nlink);

	/* A removed directory keeps its count of 0: it takes no new entries. (A directory
	 * still in place, the root of memfd's tmpfs, counts its links as any other.) */
	if (!err && S_ISDIR((*out)->mode) && nlink == 0)
		memfs_i(*out)->nlink = 0;
	return err;
}

bool memfs_same_fs(struct vfs_inode *a, struct vfs_inode *b)
{
	return memfs_is(a) && memfs_is(b) && memfs_i(a)->sb == memfs_i(b)->sb;
}

nlink_t memfs_nlink(struct vfs_inode *ino)
{
	return memfs_i(ino)->nlink;
}

static int find_path(struct memfs_inode *dir, struct memfs_inode *target, unsigned int depth,
		     char **path)
{
	for (size_t i = 0; i < dir->nents; i++) {
		struct memfs_inode *c = dir->ents[i].ino;
		char *sub;
		int err;

		if (c == target)
			return (*path = strdup(dir->ents[i].name)) ? 0 : -ENOMEM;
		if (!c || !S_ISDIR(c->vfs.mode) || depth >= MEMFS_SAVE_MAX_DEPTH)
			continue;
		err = find_path(c, target, depth + 1, &sub);
		if (err == -ENOENT)
			continue;
		if (err)
			return err;
		err = asprintf(path, "%s/%s", dir->ents[i].name, sub) < 0 ? -ENOMEM : 0;
		free(sub);
		return err;
	}
	return -ENOENT;
}

int memfs_path_of(struct vfs_inode *root, struct vfs_inode *ino, char **path)
{
	if (root == ino)
		return (*path = strdup("")) ? 0 : -ENOMEM;
	return find_path(memfs_i(root), memfs_i(ino), 0, path);
}

int memfs_walk(struct vfs_inode *root, const char *path, struct vfs_inode **out)
{
	struct memfs_inode *cur = memfs_i(root);
	char name[NAME_MAX + 1];
	int r;

	while ((r = vfs_path_next(&path, name)) > 0) {
		struct memfs_entry *e;

		if (!S_ISDIR(cur->vfs.mode))
			return -ENOTDIR;
		e = find_entry(cur, name);
		if (!e || !e->ino)
			return -ENOENT;
		cur = e->ino;
	}
	if (r < 0)
		return r;
	*out = vfs_inode_get(&cur->vfs);
	return 0;
}

/* Open files need nothing of their own: the inode holds the data, and a directory's offset is
 * an entry's cookie, which the restored directory keeps. The file must be on the inode its
 * dentry shows, which the reopen will find. */
static int memfs_file_save(struct enc *e, struct vfs_file *f)
{
	struct memfs_inode *mi = f->priv;

	if (!f->dentry || vfs_memfs_inode(f->dentry->inode) != &mi->vfs)
		return enc_fail(e, "a tmpfs file open on an inode its name no longer shows");
	return 0;
}

const struct vfs_file_kind memfs_reg_kind = {
    .name = "memfs-reg",
    .ops = &memfs_reg_ops,
    .save = memfs_file_save,
    .load = vfs_file_reopen,
};

const struct vfs_file_kind memfs_dir_kind = {
    .name = "memfs-dir",
    .ops = &memfs_dir_ops,
    .save = memfs_file_save,
    .load = vfs_file_reopen,
};
