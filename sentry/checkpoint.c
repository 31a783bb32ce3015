/* The checkpoint of a whole sandbox as an image: which sections there are, in which order they
 * load, and the framing of the object records in them. Every object is saved and loaded by its
 * own subsystem, beside its definition; the tables below are the whole list, and the only place
 * that knows them all. The files themselves are state/image.c's. */
#include "sentry/checkpoint.h"
#include "sentry/confine.h"
#include "sentry/evict.h"
#include "sentry/fasync.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs-proc/procfs.h"
#include "mem/memfile.h"
#include "sentry/fdtable.h"
#include "sentry/ipc.h"
#include "sentry/kernel.h"
#include "sentry/locks.h"
#include "sentry/mm.h"
#include "sentry/seccomp.h"
#include "sentry/signal.h"
#include "sentry/task.h"
#include "state/codec.h"
#include "state/image.h"
#include "state/mac.h"
#include "vfs/save.h"

/* Kinds of shared objects: one section each, records framed as [id][length][payload]. */
static const struct kind_ops {
	const char *section;
	int (*save)(struct enc *e, const void *obj);
	void *(*load)(struct dec *d);
	void (*drop)(void *obj); /* drops the load's own reference; NULL: nothing to drop */
} kinds[CK_NKINDS] = {
    [CK_MOBJ] = {"mobjs", mobj_save, mobj_load, mobj_drop},
    [CK_DENTRY] = {"dentries", vfs_dentry_save, vfs_dentry_load, vfs_dentry_drop},
    [CK_FILE] = {"files", vfs_file_save, vfs_file_load, vfs_file_drop},
    [CK_FILE_LINKS] = {"file-links", vfs_file_links_save, vfs_file_links_load, NULL},
    [CK_FDTABLE] = {"fdtables", fdtable_save, fdtable_load, fdtable_drop},
    [CK_FSCTX] = {"fs-contexts", fsctx_save, fsctx_load, fsctx_drop},
    [CK_SIGHAND] = {"sighands", sighand_save, sighand_load, sighand_drop},
    [CK_MM] = {"mms", mm_save, mm_load, mm_drop},
    [CK_SECCOMP] = {"seccomp", gseccomp_filter_save, gseccomp_filter_load, gseccomp_filter_drop},
    [CK_TASK] = {"tasks", task_save, task_load, NULL},
};

/* The sections in load order: "kernel" first (configuration, clocks, rootfs check), then the
 * memory file (so memory objects are valid), memory objects, the file system, the kinds, and
 * last the file locks, which name files and processes. After them "evicted", what eviction
 * before save freed: inspect's alone (restore never loads it, and images from before it have
 * none). */
enum { SEC_KERNEL, SEC_MEMORY, SEC_MOBJS, SEC_VFS, SEC_KINDS };
#define SEC_LOCKS (SEC_KINDS + CK_NKINDS - 1)
#define SEC_IPC (SEC_LOCKS + 1) /* System V IPC (sentry/ipc.h): names memory objects */
#define NLOADED (SEC_IPC + 1)
#define SEC_EVICTED NLOADED
#define NSECTIONS (SEC_EVICTED + 1)

/* The file systems vfs_load cannot build by itself: procfs and sysfs are the kernel's. */
static int make_fs(const char *fs_type, struct vfs_dentry **root)
{
	if (!strcmp(fs_type, "proc"))
		return kernel_new_procfs(root);
	if (!strcmp(fs_type, "sysfs"))
		return kernel_new_sysfs(root);
	return -ENODEV;
}

static const char *section_name(int i)
{
	static const char *fixed[] = {"kernel", "memory", "mobjs", "vfs"};

	if (i < SEC_KINDS)
		return fixed[i];
	if (i == SEC_LOCKS)
		return "locks";
	if (i == SEC_IPC)
		return "ipc";
	if (i == SEC_EVICTED)
		return "evicted";
	return kinds[i - SEC_KINDS + 1].section; /* CK_MOBJ is SEC_MOBJS */
}

/* Appends one framed record of kind K for OBJ to E. */
static int save_record(struct enc *e, enum ckpt_kind k, uint64_t id, const void *obj)
{
	enc_u64(e, id);
	size_t at = e->len;
	enc_u64(e, 0); /* the length, patched below */
	if (!enc_ok(e))
		return -ENOMEM;
	int err = kinds[k].save(e, obj);
	if (err || !enc_ok(e))
		return err ? err : -ENOMEM;
	uint64_t len = e->len - at - 8;
	for (int i = 0; i < 8; i++)
		e->buf[at + i] = len >> (8 * i);
	return 0;
}

static struct enc *kind_enc(struct enc *secs, enum ckpt_kind k)
{
	return k == CK_MOBJ ? &secs[SEC_MOBJS] : &secs[SEC_KINDS + k - 1];
}

int checkpoint_save(int at, const char *dir, const struct checkpoint_opts *o,
		    struct checkpoint_stats *stats, char **err)
{
	struct ckpt_refs *refs = ckpt_refs_new();
	struct enc secs[NSECTIONS];
	uint64_t counts[NSECTIONS] = {0};
	struct image img = {.codec = o->codec ? o->codec : IMAGE_CODEC_ZLIB, .dirfd = -1};
	struct memfile_save_stats ms = {0};
	struct memfile_parent *parent = NULL;
	struct image_out *out = NULL;
	int ret = 0;

	*err = NULL;
	struct evict_report evicted;
	evict_unused(&evicted);
	for (int i = 0; i < NSECTIONS; i++)
		enc_init(&secs[i], refs);
	if (!refs) {
		ret = -ENOMEM;
		goto out;
	}
	if ((ret = kernel_ckpt_save(&secs[SEC_KERNEL])) || (ret = vfs_save(&secs[SEC_VFS])) ||
	    (ret = locks_save(&secs[SEC_LOCKS])) || (ret = ipc_save(&secs[SEC_IPC])))
		goto out;
	evict_report_save(&secs[SEC_EVICTED], &evicted);
	counts[SEC_KERNEL] = counts[SEC_VFS] = counts[SEC_LOCKS] = counts[SEC_EVICTED] = 1;
	counts[SEC_IPC] = 1;
	/* Saving an object queues what it refers to; go round until nothing new is queued. */
	for (bool progress = true; progress;) {
		progress = false;
		for (int k = CK_NKINDS - 1; k >= 0; k--) {
			uint64_t id;
			const void *obj;
			while ((obj = ckpt_refs_next(refs, k, &id))) {
				struct enc *e = kind_enc(secs, k);
				if ((ret = save_record(e, k, id, obj)))
					goto out;
				counts[k == CK_MOBJ ? SEC_MOBJS : SEC_KINDS + k - 1]++;
				progress = true;
			}
		}
	}
	/* The kernel record ends with the rootfs files the saved dentries show. */
	if ((ret = kernel_ckpt_save_rootfs_deps(&secs[SEC_KERNEL])))
		goto out;
	/* The image's directory exists from here on: the memory's pages stream into its files. */
	if ((ret = image_begin_tagged(at, dir, o->force, o->tag, &out, err)))
		goto out;
	/* A confined Sentry reaches no image by its path: a parent whose directory the client
	 * did not send is not used, the image is then a full one, and the client says so
	 * (stats->note). */
	bool parent_unreachable = o->parent && o->base_fd < 0 && confine_active();
	if (o->parent && !parent_unreachable && !o->key) {
		int fd = o->base_fd >= 0 ? fcntl(o->base_fd, F_DUPFD_CLOEXEC, 0) : -1;
		if (o->base_fd >= 0 && fd < 0) {
			ret = -errno;
			goto out;
		}
		if ((ret = memfile_parent_open(o->parent, fd, o->base, &parent, err)))
			goto out;
	}
	/* A signed image keeps its memory inside its sections, which the MAC covers: no data
	 * file and no other image's pages that it would not. */
	struct memfile_save_opts mo = {.out = out,
				       .codec = img.codec,
				       .no_inline = o->no_inline && !o->key,
				       .all_inline = o->key != NULL,
				       .parent = parent,
				       .base = o->base && !o->key,
				       .golden = o->golden && !o->key};
	if ((ret = memfile_save(&secs[SEC_MEMORY], &mo, &ms, err)))
		goto out;
	counts[SEC_MEMORY] = ms.pages;
	img.nsections = NSECTIONS;
	for (int i = 0; i < NSECTIONS; i++) {
		snprintf(img.sec[i].name, sizeof(img.sec[i].name), "%s", section_name(i));
		img.sec[i].data = secs[i].buf;
		img.sec[i].len = secs[i].len;
		img.sec[i].count = counts[i];
	}
	if (o->key && (ret = image_mac_sign(&img, o->key, o->key_len)))
		goto out;
	ret = image_commit(out, &img, err);
	out = NULL;
	if (o->key)
		image_mac_free(&img);
	if (!ret && stats) {
		stats->pages = ms.pages;
		stats->evicted = evicted;
		stats->bytes = ms.file_bytes;
		stats->ref_pages = ms.ref_pages;
		stats->note = NULL;
		stats->delta = o->base && !o->key;
		if (o->parent && o->key)
			stats->note = "not used: a signed image holds all its memory itself";
		else if (parent_unreachable)
			stats->note =
			    "not used: the confined Sentry cannot open it (a full image was "
			    "written; --unsafe-no-confine runs allow it)";
		else if (parent && !o->base && !ms.ref_pages && ms.pages)
			stats->note = memfile_track_why_not()
					  ? "not used: writes cannot be tracked here"
					  : "not used: it is not this sandbox's last image, or a "
					    "change since could not be tracked";
		for (int i = 0; i < NSECTIONS; i++)
			stats->bytes += img.sec[i].stored;
	}
	if (!ret && o->goes_on)
		checkpoint_track_base();
out:
	image_abort(out);
	memfile_parent_close(parent);
	if (ret)
		memfile_save_skip_clear();
	if (ret && !*err) {
		const char *why = NULL;
		for (int i = 0; i < NSECTIONS && !why; i++)
			why = secs[i].error;
		if (asprintf(err, "cannot checkpoint: %s", why ? why : strerror(-ret)) < 0)
			*err = NULL;
	}
	for (int i = 0; i < NSECTIONS; i++)
		enc_free(&secs[i]);
	ckpt_refs_free(refs);
	return ret;
}

/* From here on every stub may have run: none is known to map no page. */
static void mm_all_touched(void)
{
	for (struct task *t = task_list_first(); t; t = t->next)
		if (t->mm)
			t->mm->untouched = false;
}

void checkpoint_track_base(void)
{
	struct mm **done = NULL;
	size_t ndone = 0, cap = 0;
	uint8_t id[16];
	int e = 0;

	if (!memfile_image_id(id) || memfile_track_begin()) {
		mm_all_touched();
		return;
	}
	for (struct task *t = task_list_first(); t && !e; t = t->next) {
		bool seen = !t->mm;
		for (size_t i = 0; i < ndone && !seen; i++)
			seen = done[i] == t->mm;
		if (seen)
			continue;
		if (ndone == cap) {
			cap = cap ? 2 * cap : 16;
			struct mm **v = realloc(done, cap * sizeof(*v));
			if (!v) {
				e = -ENOMEM;
				break;
			}
			done = v;
		}
		done[ndone++] = t->mm;
		/* Through one of its stopped threads (the guest is stopped: every one is). */
		struct task *stopped = NULL;
		for (struct task *u = t; u && !stopped; u = u->next)
			if (u->mm == t->mm && u->pt && !u->running)
				stopped = u;
		e = stopped ? mm_track(t->mm, stopped->pt) : -EBUSY;
	}
	free(done);
	/* A restored stub not reached here runs before its next base. */
	mm_all_touched();
	if (e)
		memfile_track_invalidate();
	else
		memfile_track_commit(id);
}

/* Loads every framed record of kind K from D into REFS. */
static int load_records(struct dec *d, enum ckpt_kind k)
{
	while (!dec_at_end(d) && dec_ok(d)) {
		uint64_t id = dec_u64(d);
		uint64_t len = dec_u64(d);
		if (!dec_ok(d) || len > d->len - d->off)
			return dec_fail(d, "truncated record");
		struct dec sub = dec_sub(d, len);
		void *obj = kinds[k].load(&sub);
		if (!obj || !dec_ok(d))
			return dec_fail(d, "bad record %llu", (unsigned long long)id);
		if (!dec_at_end(&sub)) {
			if (kinds[k].drop)
				kinds[k].drop(obj);
			return dec_fail(d, "bad record %llu (trailing bytes)",
					(unsigned long long)id);
		}
		if (ckpt_refs_put(d->refs, k, id, obj)) {
			if (kinds[k].drop)
				kinds[k].drop(obj);
			return dec_fail(d, "bad record id %llu", (unsigned long long)id);
		}
	}
	return dec_ok(d) ? 0 : -EINVAL;
}

/* A restore in two steps (checkpoint.h): what the image holds, read and checked, and the
 * references its records resolve through. */
struct checkpoint_restore {
	struct image img;
	struct ckpt_refs *refs;
	char dir[4096];
};

/* Loads sections FROM..TO-1 of R's image. */
static int load_sections(struct checkpoint_restore *r, const struct kernel_restore_opts *o,
			 int from, int to, char **err)
{
	int ret = 0;

	for (int i = from; i < to && !ret; i++) {
		const char *name = section_name(i);
		struct image_section *s = image_find(&r->img, name);
		struct dec d;
		if (!s && i == SEC_KINDS + CK_SECCOMP - 1)
			continue; /* an image from before guests had filters: none */
		if (!s && i == SEC_IPC)
			continue; /* an image from before System V IPC: no object */
		if (!s) {
			if (asprintf(err, "image '%s' has no %s section", r->dir, name) < 0)
				*err = NULL;
			ret = -EINVAL;
			break;
		}
		if (i == SEC_KINDS + CK_TASK - 1) {
			ret = memfile_load_join(err);
			memfile_mark("memory-join");
			if (ret)
				break;
		}
		dec_init(&d, s->data, s->len, r->refs);
		switch (i) {
		case SEC_KERNEL:
			ret = kernel_ckpt_load(&d, o);
			break;
		case SEC_MEMORY: {
			/* The overlay or load runs while the sections after it are read (none of
			 * them reads guest memory before the tasks, joined there), on a thread made
			 * only by a Sentry locked in already (a warm slot's). */
			struct memfile_load_opts mo = {.img = &r->img,
						       .dir = r->dir,
						       .lazy = o->lazy,
						       .async =
							   !o->lazy && confine_locked_or_off()};
			ret = memfile_load(&d, &mo, err);
			break;
		}
		case SEC_VFS: {
			/* The rootfs as the locked Sentry reaches it (its kept descriptor). */
			const char *reach = confine_rootfs(kernel.cfg.rootfs);
			ret = reach ? vfs_load(&d, reach, make_fs, &kernel.root)
				    : dec_fail(&d, "rootfs '%s': %s", kernel.cfg.rootfs,
					       strerror(errno));
			break;
		}
		case SEC_LOCKS:
			ret = locks_load(&d);
			break;
		case SEC_IPC:
			ret = ipc_load(&d);
			break;
		default:
			ret = load_records(
			    &d, i == SEC_MOBJS ? CK_MOBJ : (enum ckpt_kind)(i - SEC_KINDS + 1));
		}
		/* The VFS keeps what dentries and files load against until they are all in. */
		if (i == SEC_KINDS + CK_FILE_LINKS - 1 ||
		    (ret && i >= SEC_VFS && i < SEC_KINDS + CK_FILE_LINKS))
			vfs_load_finish();
		if (!ret &&
		    (i == SEC_KERNEL || i == SEC_MEMORY || i == SEC_VFS || i == SEC_LOCKS ||
		     i == SEC_IPC) &&
		    !dec_at_end(&d))
			ret = dec_fail(&d, "trailing bytes");
		if (ret || !dec_ok(&d)) {
			if (!ret)
				ret = -EINVAL;
		}
		if (ret && !*err) {
			/* Messages that name the problem for the user (a missing rootfs) are kept
			 * as they are; the rest say where the image is bad. */
			if (i == SEC_KERNEL) {
				if (asprintf(err, "%s", d.error ? d.error : "bad kernel record") <
				    0)
					*err = NULL;
			} else if (asprintf(err, "image '%s' is corrupt (section %s: %s)", r->dir,
					    name, d.error ? d.error : strerror(-ret)) < 0) {
				*err = NULL;
			}
		}
		dec_free(&d);
		memfile_mark(name);
	}
	return ret;
}

static void restore_free(struct checkpoint_restore *r)
{
	char *err = NULL;

	/* A restore that failed before its tasks: the load may still be writing. */
	memfile_load_join(&err);
	free(err);
	/* The load's own references go; what the restored kernel holds stays. */
	for (int k = 0; k < CK_NKINDS && r->refs; k++)
		if (kinds[k].drop)
			ckpt_refs_foreach(r->refs, k, kinds[k].drop);
	ckpt_refs_free(r->refs);
	image_free(&r->img);
	procfs_set_restoring(false);
	free(r);
}

int checkpoint_load_begin(const char *dir, const struct kernel_restore_opts *o,
			  struct checkpoint_restore **out, char **err)
{
	struct checkpoint_restore *r = calloc(1, sizeof(*r));
	int ret;

	*out = NULL;
	if (!r) {
		*err = strdup("out of memory");
		return -ENOMEM;
	}
	snprintf(r->dir, sizeof(r->dir), "%s", dir);
	int fd = o->image_by_fd ? fcntl(o->image_fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (o->image_by_fd && fd < 0) {
		ret = -errno;
		*err = strdup("cannot use the image's directory");
		free(r);
		return ret;
	}
	if ((ret =
		 fd >= 0 ? image_read_fd(fd, dir, &r->img, err) : image_read(dir, &r->img, err))) {
		free(r);
		return ret;
	}
	memfile_mark("image-read");
	if (o->key && (ret = image_mac_verify(&r->img, o->key, o->key_len, dir, err))) {
		image_free(&r->img);
		free(r);
		return ret;
	}
	/* Dentries and files under /proc name processes that the tasks section restores last. */
	procfs_set_restoring(true);
	if (!(r->refs = ckpt_refs_new())) {
		*err = strdup("out of memory");
		ret = -ENOMEM;
	} else {
		ret = load_sections(r, o, SEC_KERNEL, SEC_MEMORY + 1, err);
	}
	if (ret) {
		restore_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

int checkpoint_load_finish(struct checkpoint_restore *r, const struct kernel_restore_opts *o,
			   char **err)
{
	int ret = load_sections(r, o, SEC_MEMORY + 1, NLOADED, err);

	restore_free(r);
	memfile_mark("sections");
	if (!ret)
		ret = task_load_finish(err);
	if (!ret)
		fasync_restore();
	memfile_mark("tasks");
	return ret;
}

void checkpoint_load_abort(struct checkpoint_restore *r)
{
	if (r)
		restore_free(r);
}

int checkpoint_load(const char *dir, const struct kernel_restore_opts *o, char **err)
{
	struct checkpoint_restore *r;
	int ret = checkpoint_load_begin(dir, o, &r, err);

	if (!ret && !(ret = checkpoint_load_finish(r, o, err)))
		task_load_resume();
	return ret;
}

/* The image's record of eviction before save, in the checkpoint line's words. */
static int inspect_evicted(struct image *img, const char *dir, FILE *out, char **err)
{
	struct image_section *s = image_find(img, section_name(SEC_EVICTED));
	struct evict_report r;
	char text[512];
	struct dec d;

	if (!s) {
		fprintf(out, "eviction before save: not recorded (the image predates its evicted "
			     "section)\n");
		return 0;
	}
	dec_init(&d, s->data, s->len, NULL);
	int ret = evict_report_load(&d, &r);
	if (!ret && !dec_at_end(&d))
		ret = dec_fail(&d, "trailing bytes");
	if (ret && asprintf(err, "image '%s' is corrupt (section %s: %s)", dir, s->name,
			    d.error ? d.error : strerror(-ret)) < 0)
		*err = NULL;
	dec_free(&d);
	if (ret)
		return ret;
	evict_report_format(&r, text, sizeof(text));
	fprintf(out, "eviction before save: %s\n", text);
	return 0;
}

int checkpoint_inspect(const char *dir, FILE *out, char **err)
{
	return checkpoint_inspect_signed(dir, NULL, 0, out, err);
}

int checkpoint_inspect_signed(const char *dir, const uint8_t *key, size_t key_len, FILE *out,
			      char **err)
{
	struct image img;
	uint64_t raw = 0, stored = 0;
	int ret = image_read(dir, &img, err);

	if (ret)
		return ret;
	if (key && (ret = image_mac_verify(&img, key, key_len, dir, err))) {
		image_free(&img);
		return ret;
	}
	fprintf(out, "image %s: format version %u, codec %s, %d sections\n", dir, img.version,
		codec_name(img.codec), img.nsections);
	fprintf(out, "%-12s %10s %12s %12s\n", "section", "objects", "bytes", "stored");
	for (int i = 0; i < img.nsections; i++) {
		struct image_section *s = &img.sec[i];
		fprintf(out, "%-12s %10llu %12zu %12llu\n", s->name, (unsigned long long)s->count,
			s->len, (unsigned long long)s->stored);
		raw += s->len;
		stored += s->stored;
	}
	fprintf(out, "%-12s %10s %12llu %12llu\n", "total", "", (unsigned long long)raw,
		(unsigned long long)stored);
	uint64_t files = 0;
	struct image_section *mem = image_find(&img, "memory");
	if (mem) {
		struct dec d;
		dec_init(&d, mem->data, mem->len, NULL);
		memfile_inspect(&d, &img, dir, out, &files);
		dec_free(&d);
		fprintf(out, "memory pages saved: %llu (%llu KiB)\n",
			(unsigned long long)mem->count, (unsigned long long)mem->count * 4);
	}
	if (files)
		fprintf(out, "total with data files: %llu bytes\n",
			(unsigned long long)(stored + files));
	ret = inspect_evicted(&img, dir, out, err);
	image_free(&img);
	return ret;
}
