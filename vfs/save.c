/* The VFS's part of a checkpoint (vfs/save.h): open files of every kind, dispatched by their
 * ops table. What is not written yet refuses, so a checkpoint of a sandbox fails with a clear
 * message rather than writing a partial image. */
#include "vfs/save.h"

#include "vfs/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int vfs_save(struct enc *e)
{
	return enc_fail(e, "the file system is not saved yet");
}

int vfs_load(struct dec *d, const char *rootfs, vfs_make_fs_fn make_fs, struct vfs_dentry **root)
{
	(void)rootfs;
	(void)make_fs;
	(void)root;
	return dec_fail(d, "the file system is not loaded yet");
}

int vfs_dentry_save(struct enc *e, const void *dentry)
{
	(void)dentry;
	return enc_fail(e, "dentries are not saved yet");
}

void *vfs_dentry_load(struct dec *d)
{
	dec_fail(d, "dentries are not loaded yet");
	return NULL;
}

void vfs_dentry_drop(void *dentry)
{
	vfs_dentry_put(dentry);
}

/* The kinds of open files. vfs/'s own are listed here (each defined beside its ops); the
 * Sentry registers its own. */
static const struct vfs_file_kind *builtin_kinds[] = {
    /* Files outside the tree (or FIFOs on it): pipe.c, eventfd.c, epoll.c, unix.c, hostfd.c. */
    &vfs_pipe_kind,
    &vfs_eventfd_kind,
    &vfs_epoll_kind,
    &vfs_unix_kind,
    &vfs_hostfd_kind,
    NULL, /* the list ends at the first NULL */
};

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
	int err = kind->save(e, f);
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
	if (!dec_ok(d) || f->pos < 0) {
		dec_fail(d, "bad file record");
		free(f);
		return NULL;
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
