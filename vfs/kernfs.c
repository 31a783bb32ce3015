/* The synthetic-filesystem helper behind procfs and sysfs (vfs/kernfs.h): nodes built from
 * rows, lazy directories that instantiate a row only when it is named or listed, dynamic
 * directory parts asked on every lookup and readdir, seq-file style generated files and
 * symlinks computed on read. A directory holds a reference on each row it instantiated; a
 * dynamic child is held only by its dentry, so it goes when nobody looks at it any more.
 * Every node holds its filesystem, which counts them for kernfs_stats. */
#include "vfs/kernfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "vfs/internal.h"
#include "vfs/dirent.h"
#include "vfs/save.h"
#include "state/codec.h"

struct kernfs_fs {
	int refs; /* one per node */
	char *type;
	unsigned long magic;
	dev_t dev;
	ino_t next_ino;
	struct timespec built;
	bool eager;
	unsigned long inodes, populated;
	void *priv;
	void (*priv_release)(void *priv);
};

struct kernfs_node {
	struct vfs_inode vfs;
	struct kernfs_fs *fs;
	const struct kernfs_entry *entry;
	char *name;
	ino_t ino, parent_ino;
	long key[KERNFS_NKEYS];
	long arg;
	void *priv;
	/* Directories: NROWS rows (NSUBDIRS of them directories), SLOTS[i] the instantiated row
	 * i or NULL; POPULATED once every row is. */
	size_t nrows, nsubdirs, ninst;
	struct kernfs_node **slots;
	bool populated;
};

/* An open generated file: the snapshot SHOW made, and whether it is still unread (a read
 * starting at 0 after that regenerates it, as seq_file does after a rewind). */
struct kernfs_open {
	struct kernfs_node *node;
	struct kernfs_buf buf;
	bool fresh;
};

static const struct vfs_inode_ops kernfs_inode_ops;
static const struct vfs_file_ops kernfs_dir_ops, kernfs_file_ops;

/* Buffers */

bool kernfs_buf_grow(struct kernfs_buf *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->oom)
		return false;
	if (b->len + more + 1 <= b->cap)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + more + 1)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

void kernfs_buf_u64(struct kernfs_buf *b, uint64_t v)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324"
				    "25262728293031323334353637383940414243444546474849"
				    "50515253545556575859606162636465666768697071727374"
				    "75767778798081828384858687888990919293949596979899";
	char tmp[20], *p = tmp + sizeof(tmp);

	while (v >= 100) {
		p -= 2;
		memcpy(p, pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, pairs + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	kernfs_buf_write(b, p, (size_t)(tmp + sizeof(tmp) - p));
}

void kernfs_buf_i64(struct kernfs_buf *b, int64_t v)
{
	if (v < 0) {
		kernfs_buf_putc(b, '-');
		kernfs_buf_u64(b, -(uint64_t)v);
	} else {
		kernfs_buf_u64(b, (uint64_t)v);
	}
}

void kernfs_buf_nums(struct kernfs_buf *b, const int64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		kernfs_buf_putc(b, ' ');
		kernfs_buf_i64(b, v[i]);
	}
}

void kernfs_buf_vprintf(struct kernfs_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	if (!kernfs_buf_grow(b, 64))
		return;
	va_copy(ap2, ap);
	n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		if (!kernfs_buf_grow(b, (size_t)n))
			return;
		vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
	}
	b->len += (size_t)n;
}

void kernfs_buf_printf(struct kernfs_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kernfs_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void kernfs_buf_pad(struct kernfs_buf *b, size_t columns)
{
	size_t start = b->len, col;

	while (start > 0 && b->data[start - 1] != '\n')
		start--;
	col = b->len - start;
	while (col++ < columns)
		kernfs_buf_putc(b, ' ');
}

void kernfs_buf_free(struct kernfs_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/* Nodes */

static struct kernfs_node *kn(struct vfs_inode *ino)
{
	return ino->priv;
}

struct kernfs_node *kernfs_node_of(struct vfs_inode *ino)
{
	return ino && ino->ops == &kernfs_inode_ops ? ino->priv : NULL;
}

long kernfs_key(struct kernfs_node *n, int i)
{
	return i >= 0 && i < KERNFS_NKEYS ? n->key[i] : 0;
}

long kernfs_arg(struct kernfs_node *n)
{
	return n->arg;
}

void *kernfs_priv(struct kernfs_node *n)
{
	return n->priv;
}

const struct kernfs_entry *kernfs_entry_of(struct kernfs_node *n)
{
	return n->entry;
}

size_t kernfs_nchildren(const struct kernfs_entry *dir)
{
	size_t n = dir->nchildren;

	if (dir->children && n == 0)
		while (dir->children[n].name)
			n++;
	return n;
}

static struct kernfs_fs *fs_get(struct kernfs_fs *fs)
{
	fs->refs++;
	return fs;
}

static void fs_put(struct kernfs_fs *fs)
{
	if (--fs->refs > 0)
		return;
	if (fs->priv_release)
		fs->priv_release(fs->priv);
	free(fs->type);
	free(fs);
}

static bool is_lazy(const struct kernfs_entry *e)
{
	return (e->flags & KERNFS_LAZY) || e->gen;
}

static int populate(struct kernfs_node *dir);

/* A new node for row E named NAME under PARENT (NULL for the root) with KEY and ARG, inode
 * number INO (0: the next free one). */
static int node_new(struct kernfs_fs *fs, struct kernfs_node *parent, const struct kernfs_entry *e,
		    const char *name, const long *key, long arg, ino_t ino, void *root_priv,
		    struct kernfs_node **out)
{
	struct kernfs_node *n;
	int err;

	switch (e->mode & S_IFMT) {
	case S_IFDIR:
	case S_IFREG:
		break;
	case S_IFLNK:
		if (!e->target && !e->readlink)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->name = strdup(name);
	if (!n->name) {
		free(n);
		return -ENOMEM;
	}
	n->vfs.ops = &kernfs_inode_ops;
	n->vfs.refs = 1;
	n->vfs.mode = e->mode;
	n->vfs.priv = n;
	n->fs = fs_get(fs);
	fs->inodes++;
	n->entry = e;
	n->ino = ino ? ino : fs->next_ino++;
	n->parent_ino = parent ? parent->ino : n->ino;
	if (key)
		memcpy(n->key, key, sizeof(n->key));
	n->arg = arg;
	n->priv = e->priv ? e->priv : parent ? parent->priv : root_priv;
	if (S_ISDIR(e->mode)) {
		if (e->children) {
			n->nrows = kernfs_nchildren(e);
			for (size_t i = 0; i < n->nrows; i++)
				n->nsubdirs += S_ISDIR(e->children[i].mode);
		} else if (e->gen) {
			n->nrows = e->gen->count(n, &n->nsubdirs);
		}
		if (n->nrows == 0) {
			n->populated = true;
		} else if (!is_lazy(e) || fs->eager) {
			err = populate(n);
			if (err) {
				vfs_inode_put(&n->vfs);
				return err;
			}
		}
	}
	*out = n;
	return 0;
}

/* Row I of DIR, described in DESC. */
static int row_desc(struct kernfs_node *dir, size_t i, struct kernfs_child_desc *desc)
{
	const struct kernfs_entry *e = dir->entry;

	memset(desc, 0, sizeof(*desc));
	memcpy(desc->key, dir->key, sizeof(desc->key));
	if (e->children) {
		desc->entry = &e->children[i];
		desc->arg = e->children[i].arg;
		snprintf(desc->name, sizeof(desc->name), "%s", e->children[i].name);
		return 0;
	}
	return e->gen->row(dir, i, desc);
}

/* Rows get inode numbers derived from their directory's and their position, as dynamic
 * children do from their key: the same whatever order lazy directories are populated in, so
 * an eager and a lazy tree stat alike, and a tree rebuilt by a restore (saved unpopulated)
 * shows the numbers the guest saw. Bit 61 set and bit 62 clear keep them apart from dynamic
 * children (bit 62) and the root (1). */
static ino_t row_ino(struct kernfs_node *dir, size_t i)
{
	uint64_t x = (uint64_t)dir->ino * 0xd1b54a32d192ed03ULL + (uint64_t)i + 1;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (ino_t)((x & ((1ULL << 61) - 1)) | (1ULL << 61));
}

static int instantiate(struct kernfs_node *dir, size_t i, struct kernfs_node **out)
{
	struct kernfs_child_desc desc;
	struct kernfs_node *n;
	int err;

	if (!dir->slots) {
		dir->slots = calloc(dir->nrows, sizeof(*dir->slots));
		if (!dir->slots)
			return -ENOMEM;
	}
	if (!dir->slots[i]) {
		err = row_desc(dir, i, &desc);
		if (err)
			return err;
		err = node_new(dir->fs, dir, desc.entry, desc.name, desc.key, desc.arg,
			       row_ino(dir, i), NULL, &n);
		if (err)
			return err;
		dir->slots[i] = n;
		if (++dir->ninst == dir->nrows) {
			dir->populated = true;
			dir->fs->populated++;
		}
	}
	if (out)
		*out = dir->slots[i];
	return 0;
}

static int populate(struct kernfs_node *dir)
{
	int err;

	for (size_t i = 0; !dir->populated && i < dir->nrows; i++) {
		err = instantiate(dir, i, NULL);
		if (err)
			return err;
	}
	return 0;
}

/* The row of DIR named NAME, or -ENOENT. Instantiated rows answer from their names; the others
 * are described one by one (a generated directory of 512 CPUs formats 512 short names). */
static int row_find(struct kernfs_node *dir, const char *name, size_t *out)
{
	struct kernfs_child_desc desc;

	for (size_t i = 0; i < dir->nrows; i++) {
		if (dir->slots && dir->slots[i]) {
			if (strcmp(dir->slots[i]->name, name) == 0)
				goto found;
			continue;
		}
		if (dir->entry->children) {
			if (strcmp(dir->entry->children[i].name, name) == 0)
				goto found;
			continue;
		}
		if (row_desc(dir, i, &desc) == 0 && strcmp(desc.name, name) == 0)
			goto found;
		continue;
	found:
		*out = i;
		return 0;
	}
	return -ENOENT;
}

/* Dynamic children get inode numbers derived from their directory and key, so that readdir
 * and stat agree without instantiating anything; the top bit keeps them apart from the
 * counted ones. */
static ino_t dyn_ino(struct kernfs_node *dir, long key)
{
	uint64_t x = (uint64_t)dir->ino * 0x9e3779b97f4a7c15ULL + (uint64_t)key + 1;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	return (ino_t)(x | (1ULL << 62));
}

static int kernfs_lookup(struct vfs_inode *ino, const char *name, struct vfs_inode **out)
{
	struct kernfs_node *dir = kn(ino), *n;
	struct kernfs_child_desc desc;
	size_t i;
	int err;

	if (row_find(dir, name, &i) == 0) {
		err = instantiate(dir, i, &n);
		if (err)
			return err;
		*out = vfs_inode_get(&n->vfs);
		return 0;
	}
	if (!dir->entry->dyn || !dir->entry->dyn->lookup)
		return -ENOENT;
	memset(&desc, 0, sizeof(desc));
	memcpy(desc.key, dir->key, sizeof(desc.key));
	err = dir->entry->dyn->lookup(dir, name, &desc);
	if (err)
		return err;
	err = node_new(dir->fs, dir, desc.entry, name, desc.key, desc.arg, dyn_ino(dir, desc.arg),
		       NULL, &n);
	if (err)
		return err;
	*out = &n->vfs;
	return 0;
}

static int kernfs_getattr(struct vfs_inode *ino, struct stat *st)
{
	struct kernfs_node *n = kn(ino);
	const struct kernfs_entry *e = n->entry;

	memset(st, 0, sizeof(*st));
	st->st_dev = n->fs->dev;
	st->st_ino = n->ino;
	st->st_mode = e->mode;
	st->st_nlink = 1;
	if (S_ISDIR(e->mode) && !(e->flags & KERNFS_NLINK1))
		st->st_nlink = 2 + n->nsubdirs;
	if (S_ISREG(e->mode))
		st->st_size = e->size;
	else if (S_ISLNK(e->mode) && e->target)
		st->st_size = (off_t)strlen(e->target);
	st->st_blksize = 4096;
	st->st_atim = st->st_mtim = st->st_ctim = n->fs->built;
	if (e->getattr)
		e->getattr(n, st);
	return 0;
}

static ssize_t kernfs_readlink(struct vfs_inode *ino, char *buf, size_t size)
{
	struct kernfs_node *n = kn(ino);
	struct kernfs_buf b = {0};
	size_t len;
	int err;

	if (!S_ISLNK(n->entry->mode))
		return -EINVAL;
	if (n->entry->target) {
		len = strlen(n->entry->target);
		if (len > size)
			len = size;
		memcpy(buf, n->entry->target, len);
		return (ssize_t)len;
	}
	err = n->entry->readlink(n, &b);
	if (!err && b.oom)
		err = -ENOMEM;
	if (err) {
		kernfs_buf_free(&b);
		return err;
	}
	len = b.len < size ? b.len : size;
	memcpy(buf, b.data, len);
	kernfs_buf_free(&b);
	return (ssize_t)len;
}

static const char *kernfs_fs_type(struct vfs_inode *ino)
{
	return kn(ino)->fs->type;
}

static void kernfs_release(struct vfs_inode *ino)
{
	struct kernfs_node *n = kn(ino);

	for (size_t i = 0; n->slots && i < n->nrows; i++)
		if (n->slots[i])
			vfs_inode_put(&n->slots[i]->vfs);
	if (n->populated && n->nrows)
		n->fs->populated--;
	n->fs->inodes--;
	free(n->slots);
	free(n->name);
	fs_put(n->fs);
	free(n);
}

/* The write side: nothing can be created, removed or renamed, as in Linux's procfs and sysfs
 * (whose directories lack those operations: EPERM, and EACCES for open(O_CREAT)); only a
 * truncation (O_TRUNC on a writable file) is accepted and ignored. */

static int kernfs_setattr(struct vfs_inode *ino, const struct vfs_setattr *attr)
{
	(void)ino;
	if (attr->valid & (VFS_ATTR_MODE | VFS_ATTR_UID | VFS_ATTR_GID))
		return -EPERM;
	return 0;
}

static int kernfs_mknod(struct vfs_inode *dir, const char *name, const struct vfs_node_attr *attr)
{
	(void)dir, (void)name;
	return S_ISREG(attr->mode) ? -EACCES : -EPERM;
}

static int kernfs_link(struct vfs_inode *dir, const char *name, struct vfs_inode *target)
{
	(void)dir, (void)name, (void)target;
	return -EPERM;
}

static int kernfs_remove(struct vfs_inode *dir, const char *name, struct vfs_inode *victim)
{
	(void)dir, (void)name, (void)victim;
	return -EPERM;
}

static int kernfs_rename(struct vfs_inode *odir, const char *oname, struct vfs_inode *src,
			 struct vfs_inode *ndir, const char *nname, struct vfs_inode *tgt,
			 unsigned int flags)
{
	(void)odir, (void)oname, (void)src, (void)ndir, (void)nname, (void)tgt, (void)flags;
	return -EPERM;
}

static int kernfs_statfs(struct vfs_inode *ino, struct statfs *buf)
{
	memset(buf, 0, sizeof(*buf));
	buf->f_type = (typeof(buf->f_type))kn(ino)->fs->magic;
	buf->f_bsize = 4096;
	buf->f_frsize = 4096;
	buf->f_namelen = NAME_MAX;
	return 0;
}

/* Opening */

static int gen_show(struct kernfs_open *o)
{
	int err;

	o->buf.len = 0;
	o->buf.oom = false;
	err = o->node->entry->show(o->node, &o->buf);
	if (!err && o->buf.oom)
		err = -ENOMEM;
	return err;
}

static int kernfs_open(struct vfs_inode *ino, struct vfs_file *f, int flags)
{
	struct kernfs_node *n = kn(ino);
	const struct kernfs_entry *e = n->entry;
	int acc = flags & O_ACCMODE;
	struct kernfs_open *o;
	int err;

	switch (e->mode & S_IFMT) {
	case S_IFDIR:
		if (acc != O_RDONLY)
			return -EISDIR;
		f->ops = &kernfs_dir_ops;
		f->priv = n;
		return 0;
	case S_IFLNK:
		return -ELOOP;
	}
	if ((e->flags & KERNFS_WRITE_EACCES) &&
	    ((acc != O_RDONLY && !(e->mode & 0222)) || (acc != O_WRONLY && !(e->mode & 0444))))
		return -EACCES;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->node = n;
	o->fresh = true;
	if (acc != O_WRONLY && e->show) {
		err = gen_show(o);
		if (err) {
			kernfs_buf_free(&o->buf);
			free(o);
			return err;
		}
	}
	f->ops = &kernfs_file_ops;
	f->priv = o;
	return 0;
}

static bool kernfs_is_magic_link(struct vfs_inode *ino)
{
	return (kn(ino)->entry->flags & KERNFS_MAGIC_LINK) != 0;
}

static int kernfs_magic_dentry(struct vfs_inode *ino, struct vfs_dentry **out)
{
	const struct kernfs_entry *e = kn(ino)->entry;
	struct vfs_file *f;
	int err;

	if (e->link_dentry)
		return e->link_dentry(kn(ino), out);
	if (!e->link_file)
		return -ENOENT;
	err = e->link_file(kn(ino), &f);
	if (err)
		return err;
	if (f->dentry)
		*out = vfs_dentry_get(f->dentry);
	else
		err = vfs_anon_dentry(f, out);
	vfs_file_put(f);
	return err;
}

static const struct vfs_inode_ops kernfs_inode_ops = {
    .lookup = kernfs_lookup,
    .getattr = kernfs_getattr,
    .readlink = kernfs_readlink,
    .is_magic_link = kernfs_is_magic_link,
    .magic_dentry = kernfs_magic_dentry,
    .open = kernfs_open,
    .release = kernfs_release,
    .fs_type = kernfs_fs_type,
    .mknod = kernfs_mknod,
    .link = kernfs_link,
    .unlink = kernfs_remove,
    .rmdir = kernfs_remove,
    .rename = kernfs_rename,
    .setattr = kernfs_setattr,
    .statfs = kernfs_statfs,
};

/* Generated files */

static ssize_t copy_out(struct kernfs_open *o, const struct iovec *iov, int iovcnt, off_t off)
{
	size_t done = 0;

	for (int i = 0; i < iovcnt && off >= 0 && (size_t)off < o->buf.len; i++) {
		size_t n = o->buf.len - (size_t)off;

		if (n > iov[i].iov_len)
			n = iov[i].iov_len;
		memcpy(iov[i].iov_base, o->buf.data + off, n);
		done += n;
		off += (off_t)n;
	}
	return (ssize_t)done;
}

static ssize_t file_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct kernfs_open *o = f->priv;
	off_t off = pos ? *pos : 0;
	ssize_t n;
	int err;

	if ((f->flags & O_ACCMODE) == O_WRONLY)
		return -EBADF;
	if (!o->node->entry->show)
		return -EINVAL;
	if (off == 0 && !o->fresh) {
		err = gen_show(o);
		if (err)
			return err;
	}
	o->fresh = false;
	n = copy_out(o, iov, iovcnt, off);
	if (pos)
		*pos += n;
	return n;
}

static ssize_t file_write(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct kernfs_open *o = f->priv;
	const struct kernfs_entry *e = o->node->entry;
	size_t total = 0, at = 0;
	char *data;
	int err;

	if ((f->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	if (!e->store)
		return e->flags & KERNFS_WRITE_EINVAL ? -EINVAL : -EIO;
	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	data = malloc(total + 1);
	if (!data)
		return -ENOMEM;
	for (int i = 0; i < iovcnt; i++) {
		memcpy(data + at, iov[i].iov_base, iov[i].iov_len);
		at += iov[i].iov_len;
	}
	data[total] = '\0';
	err = e->store(o->node, data, total);
	free(data);
	if (err)
		return err;
	if (pos)
		*pos += (off_t)total;
	return (ssize_t)total;
}

static ssize_t file_pread_kernel(struct vfs_file *f, void *buf, size_t len, off_t off)
{
	struct iovec iov = {buf, len};

	return copy_out(f->priv, &iov, 1, off);
}

/* seq_lseek: SEEK_SET and SEEK_CUR only; the content has no end to seek to. */
static off_t file_llseek(struct vfs_file *f, off_t off, int whence)
{
	off_t res;

	switch (whence) {
	case SEEK_SET:
		res = off;
		break;
	case SEEK_CUR:
		if (__builtin_add_overflow(f->pos, off, &res))
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (res < 0)
		return -EINVAL;
	f->pos = res;
	return res;
}

static void file_release(struct vfs_file *f)
{
	struct kernfs_open *o = f->priv;

	kernfs_buf_free(&o->buf);
	free(o);
}

static ssize_t file_getdents64(struct vfs_file *f, void *buf, size_t size, off_t *pos)
{
	(void)f, (void)buf, (void)size, (void)pos;
	return -ENOTDIR;
}

static long kernfs_ioctl(struct vfs_file *f, unsigned int cmd, void *arg)
{
	(void)f, (void)cmd, (void)arg;
	return -ENOTTY;
}

static int kernfs_host_fd(struct vfs_file *f)
{
	(void)f;
	return -1;
}

static int kernfs_file_getattr(struct vfs_file *f, struct stat *st)
{
	return vfs_stat(f->dentry, st);
}

static const struct vfs_file_ops kernfs_file_ops = {
    .read = file_read,
    .write = file_write,
    .getdents64 = file_getdents64,
    .ioctl = kernfs_ioctl,
    .getattr = kernfs_file_getattr,
    .host_fd = kernfs_host_fd,
    .pread_kernel = file_pread_kernel,
    .release = file_release,
    .llseek = file_llseek,
};

/* Directories opened for listing. Cookies: 0 ".", 1 "..", 2 + i row i, and for the dynamic
 * part 2 + nrows + key, so a listing resumes at the right child however the set changed
 * between calls (pids come and go). Records are assembled aside and copied, since BUF (guest
 * memory) has no alignment. */

struct dir_ctx {
	struct kernfs_node *dir;
	char *buf;
	size_t size, done;
	off_t *pos;
	bool full;
};

static int dir_emit(struct dir_ctx *c, const char *name, uint64_t ino, mode_t mode, off_t cookie)
{
	/* A name no lookup could reach is not listed. */
	if (strlen(name) > NAME_MAX) {
		*c->pos = cookie + 1;
		return 0;
	}
	if (!vfs_dirent_put(c->buf, c->size, &c->done, ino, cookie + 1, IFTODT(mode), name)) {
		c->full = true;
		return 1;
	}
	*c->pos = cookie + 1;
	return 0;
}

static int dyn_emit(void *ctx, const char *name, mode_t mode, long key)
{
	struct dir_ctx *c = ctx;
	off_t cookie = (off_t)(2 + c->dir->nrows) + key;

	if (key < 0 || cookie < *c->pos)
		return 0;
	return dir_emit(c, name, dyn_ino(c->dir, key), mode, cookie);
}

static ssize_t dir_getdents64(struct vfs_file *f, void *buf, size_t size, off_t *pos)
{
	struct kernfs_node *dir = f->priv;
	struct dir_ctx c = {.dir = dir, .buf = buf, .size = size, .pos = pos};
	int err;

	err = populate(dir);
	if (err)
		return err;
	if (*pos < 0)
		return 0;
	while (!c.full && *pos < 2 + (off_t)dir->nrows) {
		size_t at = (size_t)*pos;

		if (at < 2)
			dir_emit(&c, at == 0 ? "." : "..", at == 0 ? dir->ino : dir->parent_ino,
				 S_IFDIR, *pos);
		else
			dir_emit(&c, dir->slots[at - 2]->name, dir->slots[at - 2]->ino,
				 dir->slots[at - 2]->entry->mode, *pos);
	}
	if (!c.full && dir->entry->dyn && dir->entry->dyn->iterate) {
		err = dir->entry->dyn->iterate(dir, dyn_emit, &c);
		if (err < 0 && c.done == 0)
			return err;
	}
	if (c.done == 0 && c.full)
		return -EINVAL;
	return (ssize_t)c.done;
}

static const struct vfs_file_ops kernfs_dir_ops = {
    .read = vfs_dir_read,
    .write = vfs_dir_write,
    .getdents64 = dir_getdents64,
    .ioctl = kernfs_ioctl,
    .getattr = kernfs_file_getattr,
    .host_fd = kernfs_host_fd,
    .pread_kernel = vfs_dir_pread_kernel,
};

/* Filesystems */

int kernfs_new(const char *fs_type, unsigned long magic, const struct kernfs_entry *root_entry,
	       void *priv, void (*priv_release)(void *priv), bool eager, struct vfs_dentry **root)
{
	struct kernfs_fs *fs = calloc(1, sizeof(*fs));
	struct kernfs_node *n = NULL;
	int err;

	if (fs)
		fs->type = strdup(fs_type);
	if (!fs || !fs->type) {
		free(fs);
		if (priv_release)
			priv_release(priv);
		return -ENOMEM;
	}
	fs->magic = magic;
	fs->dev = vfs_anon_dev_new();
	fs->next_ino = 1;
	fs->eager = eager;
	fs->priv = priv;
	fs->priv_release = priv_release;
	fs->built = vfs_now();
	fs->refs = 1; /* ours, while the root is built */
	err = node_new(fs, NULL, root_entry, "/", NULL, root_entry->arg, 0, priv, &n);
	if (!err) {
		err = vfs_dentry_new_root(&n->vfs, root);
		if (err)
			vfs_inode_put(&n->vfs);
	}
	fs_put(fs);
	return err;
}

static unsigned long count_dentries(struct vfs_dentry *d)
{
	unsigned long n = 1;

	for (struct vfs_dentry *c = d->children; c; c = c->next_sibling)
		n += count_dentries(c);
	return n;
}

int kernfs_stats(struct vfs_dentry *root, struct kernfs_stats *out)
{
	struct kernfs_node *n = root && root->inode ? kernfs_node_of(root->inode) : NULL;

	if (!n)
		return -EINVAL;
	out->inodes = n->fs->inodes;
	out->populated_dirs = n->fs->populated;
	out->dentries = count_dentries(root);
	return 0;
}

/* Drops DIR's instantiated rows that only DIR holds, deepest first; returns how many nodes
 * went. A row held by anything else (a dentry: an open file, a cwd, a walk in progress) stays,
 * and so does the path above it, whose dentries it pins. A dropped row is made again, with
 * the same inode number (row_ino), when it is next named or listed. */
static unsigned long evict_rows(struct kernfs_node *dir)
{
	/* Rows of an eager directory are its skeleton, made with it: they stay (their subtrees
	 * may still hold lazy directories). */
	bool lazy = is_lazy(dir->entry) && !dir->fs->eager;
	unsigned long gone = 0;

	for (size_t i = 0; dir->slots && i < dir->nrows; i++) {
		struct kernfs_node *c = dir->slots[i];

		if (!c)
			continue;
		if (S_ISDIR(c->entry->mode))
			gone += evict_rows(c);
		if (!lazy || c->vfs.refs != 1 || c->ninst)
			continue;
		dir->slots[i] = NULL;
		if (dir->populated) {
			dir->populated = false;
			dir->fs->populated--;
		}
		dir->ninst--;
		vfs_inode_put(&c->vfs);
		gone++;
	}
	if (!dir->ninst) {
		free(dir->slots);
		dir->slots = NULL;
	}
	return gone;
}

unsigned long kernfs_evict(struct vfs_dentry *root)
{
	struct kernfs_node *n = root && root->inode ? kernfs_node_of(root->inode) : NULL;

	return n && S_ISDIR(n->entry->mode) ? evict_rows(n) : 0;
}

bool kernfs_dir_populated(struct vfs_dentry *d)
{
	struct kernfs_node *n = d && d->inode ? kernfs_node_of(d->inode) : NULL;

	return n && S_ISDIR(n->entry->mode) && n->populated;
}

/* Linux's "%*pb": 32-bit groups in hex, most significant first, separated by commas; the
 * first group only as wide as the bits it holds. Built in one piece without printf: status
 * prints a 1024-bit Mems_allowed for every process. */
void kernfs_buf_bitmap(struct kernfs_buf *b, const uint64_t *bits, int nbits)
{
	static const char hex[] = "0123456789abcdef";
	int chunk = nbits % 32 ? nbits % 32 : 32;
	size_t at;

	if (nbits <= 0 || !kernfs_buf_room(b, (size_t)(nbits + 31) / 32 * 9))
		return;
	at = b->len;
	for (int i = ((nbits + 31) / 32 - 1) * 32; i >= 0; i -= 32) {
		uint32_t val = (uint32_t)(bits[i / 64] >> (i % 64));

		if (chunk < 32)
			val &= (1U << chunk) - 1;
		if (at > b->len)
			b->data[at++] = ',';
		for (int d = (chunk + 3) / 4 - 1; d >= 0; d--)
			b->data[at++] = hex[val >> (4 * d) & 15];
		chunk = 32;
	}
	b->len = at;
	b->data[at] = '\0';
}

/* Linux's "%*pbl": ranges of set bits, "0-3,8,10-11". */
void kernfs_buf_bitmap_list(struct kernfs_buf *b, const uint64_t *bits, int nbits)
{
	bool first = true;

	for (int i = 0; i < nbits;) {
		int j;

		if (!(bits[i / 64] >> (i % 64) & 1)) {
			i++;
			continue;
		}
		for (j = i; j + 1 < nbits && (bits[(j + 1) / 64] >> ((j + 1) % 64) & 1); j++)
			;
		if (!first)
			kernfs_buf_putc(b, ',');
		kernfs_buf_u64(b, (uint64_t)i);
		if (j > i) {
			kernfs_buf_putc(b, '-');
			kernfs_buf_u64(b, (uint64_t)j);
		}
		first = false;
		i = j + 1;
	}
}

/* Checkpoint and restore. A kernfs tree is saved as unpopulated: the restore makes a new one
 * (the kernel's make_fs) and gives it the old one's st_dev and build time; dentries below are
 * found again by path through its lazy directories. */

int kernfs_identity(struct vfs_inode *ino, const char **type, dev_t *dev, struct timespec *built)
{
	struct kernfs_node *n = kernfs_node_of(ino);

	if (!n)
		return -EINVAL;
	*type = n->fs->type;
	*dev = n->fs->dev;
	*built = n->fs->built;
	return 0;
}

int kernfs_set_identity(struct vfs_inode *ino, dev_t dev, struct timespec built)
{
	struct kernfs_node *n = kernfs_node_of(ino);

	if (!n)
		return -EINVAL;
	n->fs->dev = dev;
	n->fs->built = built;
	return 0;
}

/* An open generated file keeps the snapshot its reader is part way through: the restore
 * gives it back rather than generating it again (the processes a show describes are not
 * restored yet when files are, and a reader must not see two halves of different contents). */
#define KERNFS_SAVE_MAX_SNAPSHOT (1u << 30)

static int kernfs_file_save(struct enc *e, struct vfs_file *f)
{
	struct kernfs_open *o = f->priv;

	if (!f->dentry || kn(f->dentry->inode) != o->node)
		return enc_fail(e, "a /proc or /sys file open on a node its name does not show");
	enc_bool(e, o->fresh);
	enc_bytes(e, o->buf.data, o->buf.len);
	return 0;
}

static int kernfs_file_load(struct dec *d, struct vfs_file *f)
{
	struct kernfs_node *n = f->dentry ? kernfs_node_of(f->dentry->inode) : NULL;
	bool fresh = dec_bool(d);
	size_t len;
	const void *data = dec_bytes(d, &len);
	struct kernfs_open *o;

	if (!dec_ok(d) || !n || !S_ISREG(n->entry->mode) || len > KERNFS_SAVE_MAX_SNAPSHOT)
		return dec_fail(d, "bad /proc or /sys file");
	o = calloc(1, sizeof(*o));
	if (!o)
		return dec_fail(d, "out of memory");
	o->node = n;
	o->fresh = fresh;
	kernfs_buf_write(&o->buf, data, len);
	if (o->buf.oom) {
		kernfs_buf_free(&o->buf);
		free(o);
		return dec_fail(d, "out of memory");
	}
	f->ops = &kernfs_file_ops;
	f->priv = o;
	return 0;
}

const struct vfs_file_kind kernfs_file_kind = {
    .name = "kernfs-file",
    .ops = &kernfs_file_ops,
    .save = kernfs_file_save,
    .load = kernfs_file_load,
};

/* A listing's cookie is a row index or a dynamic child's key: both stable. */
const struct vfs_file_kind kernfs_dir_kind = {
    .name = "kernfs-dir",
    .ops = &kernfs_dir_ops,
    .save = vfs_file_save_none,
    .load = vfs_file_reopen,
};
