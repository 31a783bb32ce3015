/* Unit tests for the VFS's checkpoint (vfs/save.c and each filesystem's save code): a
 * sandbox's trees are built (an overlay root over a temporary host directory with copy-ups,
 * whiteouts, an opaque directory, hard links and symlinks; devfs; tmpfs mounts, one of them
 * nested and mounted as a guest would; sysfs), saved with vfs_save and the dentry and file
 * saves, torn down, loaded into an empty VFS and compared: names, modes, owners, times, link
 * counts, sizes, data, st_dev/st_ino, the mount table, dentry paths and open files' offsets.
 * The memory file stays alive across the "restore", as the Sentry's reloaded memory file is
 * at the same offsets. Corrupt images must fail cleanly (run under ASan: make unit SAN=1). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs-sys/sysfs.h"
#include "mem/memfile.h"
#include "state/codec.h"
#include "vfs/internal.h"
#include "vfs/save.h"

static char host_dir[] = "/tmp/test_vfs_save.XXXXXX";
static struct vfs_fs_ctx fs;

/* A checkpoint held in memory: the vfs record, one record per shared object (by kind, in
 * id order), the test's own record referring to what it holds, and the memory objects kept
 * alive in id order. */
#define MAX_RECS 256

struct rec {
	uint8_t *buf;
	size_t len;
};

struct image {
	struct rec vfs, top;
	struct rec recs[CK_NKINDS][MAX_RECS];
	size_t nrecs[CK_NKINDS];
	struct mobj *mobjs[MAX_RECS];
	size_t nmobjs;
};

static struct rec take(struct enc *e)
{
	struct rec r = {e->buf, e->len};

	if (!enc_ok(e))
		fail_msg("save failed: %s", e->error);
	e->buf = NULL;
	enc_free(e);
	return r;
}

/* Saves the VFS and, in the test's record, DENTS and FILES (and whatever they refer to). */
static void image_save(struct image *im, struct vfs_dentry **dents, size_t nd,
		       struct vfs_file **files, size_t nf)
{
	struct ckpt_refs *refs = ckpt_refs_new();
	struct enc e;
	bool more = true;

	memset(im, 0, sizeof(*im));
	enc_init(&e, refs);
	assert_int_equal(vfs_save(&e), 0);
	im->vfs = take(&e);
	enc_init(&e, refs);
	for (size_t i = 0; i < nd; i++)
		enc_ref(&e, CK_DENTRY, dents[i]);
	for (size_t i = 0; i < nf; i++)
		enc_ref(&e, CK_FILE, files[i]);
	im->top = take(&e);
	while (more) {
		const void *obj;
		uint64_t id;

		more = false;
		while ((obj = ckpt_refs_next(refs, CK_FILE, &id))) {
			assert_int_equal(id, im->nrecs[CK_FILE] + 1);
			enc_init(&e, refs);
			vfs_file_save(&e, obj);
			im->recs[CK_FILE][im->nrecs[CK_FILE]++] = take(&e);
			more = true;
		}
		while ((obj = ckpt_refs_next(refs, CK_DENTRY, &id))) {
			assert_int_equal(id, im->nrecs[CK_DENTRY] + 1);
			enc_init(&e, refs);
			vfs_dentry_save(&e, obj);
			im->recs[CK_DENTRY][im->nrecs[CK_DENTRY]++] = take(&e);
			more = true;
		}
		while ((obj = ckpt_refs_next(refs, CK_MOBJ, &id))) {
			assert_int_equal(id, im->nmobjs + 1);
			im->mobjs[im->nmobjs++] = mobj_get((struct mobj *)obj);
			more = true;
		}
	}
	ckpt_refs_free(refs);
}

static void image_free(struct image *im)
{
	free(im->vfs.buf);
	free(im->top.buf);
	for (int k = 0; k < CK_NKINDS; k++)
		for (size_t i = 0; i < im->nrecs[k]; i++)
			free(im->recs[k][i].buf);
	for (size_t i = 0; i < im->nmobjs; i++)
		mobj_put(im->mobjs[i]);
}

static int make_fs(const char *type, struct vfs_dentry **root)
{
	if (!strcmp(type, "sysfs"))
		return sysfs_new(4, false, root);
	return -ENODEV;
}

/* Loads IM into an empty VFS; DENTS and FILES get what the test's record refers to (the
 * test's references). Returns the root. */
static struct vfs_dentry *image_load(struct image *im, struct vfs_dentry **dents, size_t nd,
				     struct vfs_file **files, size_t nf)
{
	struct ckpt_refs *refs = ckpt_refs_new();
	struct vfs_dentry *root = NULL;
	struct dec d;

	for (size_t i = 0; i < im->nmobjs; i++)
		assert_int_equal(ckpt_refs_put(refs, CK_MOBJ, i + 1, im->mobjs[i]), 0);
	dec_init(&d, im->vfs.buf, im->vfs.len, refs);
	if (vfs_load(&d, host_dir, make_fs, &root))
		fail_msg("vfs_load: %s", d.error);
	assert_true(dec_at_end(&d));
	dec_free(&d);
	for (size_t i = 0; i < im->nrecs[CK_DENTRY]; i++) {
		dec_init(&d, im->recs[CK_DENTRY][i].buf, im->recs[CK_DENTRY][i].len, refs);
		void *obj = vfs_dentry_load(&d);
		if (!obj)
			fail_msg("dentry %zu: %s", i + 1, d.error);
		assert_true(dec_at_end(&d));
		assert_int_equal(ckpt_refs_put(refs, CK_DENTRY, i + 1, obj), 0);
		dec_free(&d);
	}
	for (size_t i = 0; i < im->nrecs[CK_FILE]; i++) {
		dec_init(&d, im->recs[CK_FILE][i].buf, im->recs[CK_FILE][i].len, refs);
		void *obj = vfs_file_load(&d);
		if (!obj)
			fail_msg("file %zu: %s", i + 1, d.error);
		assert_true(dec_at_end(&d));
		assert_int_equal(ckpt_refs_put(refs, CK_FILE, i + 1, obj), 0);
		dec_free(&d);
	}
	dec_init(&d, im->top.buf, im->top.len, refs);
	for (size_t i = 0; i < nd; i++)
		dents[i] = vfs_dentry_get(dec_ref(&d, CK_DENTRY));
	for (size_t i = 0; i < nf; i++)
		files[i] = vfs_file_get(dec_ref(&d, CK_FILE));
	assert_true(dec_ok(&d) && dec_at_end(&d));
	dec_free(&d);
	ckpt_refs_foreach(refs, CK_FILE, vfs_file_drop);
	ckpt_refs_foreach(refs, CK_DENTRY, vfs_dentry_drop);
	vfs_load_finish();
	ckpt_refs_free(refs);
	return root;
}

/* Helpers on the current tree (fs). */

static struct vfs_file *open_ok(const char *path, int flags)
{
	struct vfs_file *f = NULL;
	int err = vfs_open(&fs, NULL, path, flags, 0644, &f);

	if (err)
		fail_msg("open of '%s' failed: %s", path, strerror(-err));
	return f;
}

static struct vfs_dentry *lookup_ok(const char *path)
{
	struct vfs_dentry *d = NULL;
	int err = vfs_lookup(&fs, NULL, path, 0, &d);

	if (err)
		fail_msg("lookup of '%s' failed: %s", path, strerror(-err));
	return d;
}

static void write_at(struct vfs_file *f, const char *data, off_t *pos)
{
	struct iovec iov = {.iov_base = (void *)data, .iov_len = strlen(data)};

	assert_int_equal(f->ops->write(f, &iov, 1, pos ? pos : &f->pos), (ssize_t)strlen(data));
}

static void put_file(const char *path, const char *data, int flags)
{
	struct vfs_file *f = open_ok(path, O_WRONLY | flags);

	write_at(f, data, NULL);
	vfs_file_put(f);
}

static ssize_t read_some(struct vfs_file *f, char *buf, size_t size)
{
	struct iovec iov = {.iov_base = buf, .iov_len = size - 1};
	ssize_t n = f->ops->read(f, &iov, 1, &f->pos);

	assert_true(n >= 0);
	buf[n] = '\0';
	return n;
}

static void mount_tmpfs(const char *path, const char *source, unsigned long flags)
{
	struct vfs_dentry *mp = lookup_ok(path), *root;

	assert_int_equal(vfs_tmpfs_new(&root), 0);
	assert_int_equal(vfs_mount_fs(mp, root, "tmpfs", source, flags, NULL), 0);
	vfs_dentry_put(root);
	vfs_dentry_put(mp);
}

static void mount_with(const char *path, int (*make)(struct vfs_dentry **))
{
	struct vfs_dentry *mp = lookup_ok(path), *root;

	assert_int_equal(make(&root), 0);
	assert_int_equal(vfs_mount(mp, root), 0);
	vfs_dentry_put(root);
	vfs_dentry_put(mp);
}

static int make_sysfs(struct vfs_dentry **root)
{
	return sysfs_new(4, false, root);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ULL;
	return h;
}

/* One line per object under PATH (crossing mounts, but not into /sys, which is looked at
 * piecemeal): everything stat shows, a hash of a file's data, a link's target. The listing
 * order is part of it. */
static void snap(FILE *out, const char *path)
{
	struct vfs_dentry *d = lookup_ok(path);
	struct stat st;
	char buf[8192];

	assert_true(strlen(path) < PATH_MAX);

	assert_int_equal(vfs_stat(d, &st), 0);
	fprintf(out,
		"%s dev=%lx ino=%lu mode=%o nlink=%lu uid=%u gid=%u rdev=%lx size=%ld "
		"blocks=%ld a=%ld.%ld m=%ld.%ld c=%ld.%ld",
		path, (unsigned long)st.st_dev, (unsigned long)st.st_ino, st.st_mode,
		(unsigned long)st.st_nlink, st.st_uid, st.st_gid, (unsigned long)st.st_rdev,
		(long)st.st_size, (long)st.st_blocks, st.st_atim.tv_sec, st.st_atim.tv_nsec,
		st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
	if (S_ISREG(st.st_mode)) {
		struct vfs_file *f = open_ok(path, O_RDONLY);
		uint64_t h = 14695981039346656037ULL;
		off_t off = 0;
		ssize_t n;

		while ((n = f->ops->pread_kernel(f, buf, sizeof(buf), off)) > 0) {
			h = fnv(h, buf, (size_t)n);
			off += n;
		}
		fprintf(out, " data=%lx", (unsigned long)h);
		vfs_file_put(f);
	} else if (S_ISLNK(st.st_mode)) {
		ssize_t n = vfs_readlink(d, buf, sizeof(buf));

		assert_true(n >= 0);
		fprintf(out, " -> %.*s", (int)n, buf);
	}
	fputc('\n', out);
	vfs_dentry_put(d);
	if (!S_ISDIR(st.st_mode) || !strcmp(path, "/sys"))
		return;

	struct vfs_file *f = open_ok(path, O_RDONLY | O_DIRECTORY);
	char names[128][NAME_MAX + 1];
	int count = 0;
	ssize_t n;

	while ((n = f->ops->getdents64(f, buf, sizeof(buf), &f->pos)) > 0) {
		for (ssize_t off = 0; off < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *de = (void *)(buf + off);

			fprintf(out, "  %s %lu %u\n", de->name, (unsigned long)de->ino, de->type);
			if (strcmp(de->name, ".") && strcmp(de->name, "..")) {
				assert_true(count < 128);
				snprintf(names[count++], NAME_MAX + 1, "%s", de->name);
			}
			off += de->reclen;
		}
	}
	assert_int_equal(n, 0);
	vfs_file_put(f);
	for (int i = 0; i < count; i++) {
		char *sub;

		assert_true(asprintf(&sub, "%s/%s", strcmp(path, "/") ? path : "", names[i]) > 0);
		snap(out, sub);
		free(sub);
	}
}

static char *snapshot(void)
{
	char *s = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&s, &len);

	snap(out, "/");
	snap(out, "/sys/devices/system/cpu");
	snap(out, "/sys/devices/system/cpu/cpu2/topology/core_id");
	fclose(out);
	return s;
}

/* Fails at the first line where A and B differ, showing both. */
static void assert_same_lines(const char *a, const char *b)
{
	while (*a || *b) {
		size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");

		if (la != lb || memcmp(a, b, la))
			fail_msg("before: %.*s\nafter:  %.*s", (int)la, a, (int)lb, b);
		a += la + (a[la] != 0);
		b += lb + (b[lb] != 0);
	}
}

static int mount_line(struct vfs_mount *m, void *arg)
{
	char path[PATH_MAX];

	assert_true(vfs_path(fs.root, m->mountpoint, path, sizeof(path)) > 0);
	fprintf(arg, "%d %s %s %s %lx\n", m->id, path, m->fs_type, m->source, m->flags);
	return 0;
}

static char *mount_table(void)
{
	char *s = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&s, &len);

	vfs_mounts_foreach(mount_line, out);
	fclose(out);
	return s;
}

/* The names a directory file lists from where it is, to its end. */
static void rest_of_listing(struct vfs_file *f, char *out, size_t size)
{
	char buf[4096];
	ssize_t n;

	out[0] = '\0';
	while ((n = f->ops->getdents64(f, buf, sizeof(buf), &f->pos)) > 0) {
		for (ssize_t off = 0; off < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *de = (void *)(buf + off);

			strncat(out, de->name, size - strlen(out) - 2);
			strcat(out, " ");
			off += de->reclen;
		}
	}
	assert_int_equal(n, 0);
}

/* Reads a directory's first record or two (a 64-byte buffer). */
static void start_listing(struct vfs_file *f, char *out, size_t size)
{
	char buf[64];
	ssize_t n = f->ops->getdents64(f, buf, sizeof(buf), &f->pos);

	assert_true(n > 0);
	out[0] = '\0';
	for (ssize_t off = 0; off < n;) {
		struct {
			uint64_t ino;
			int64_t off;
			unsigned short reclen;
			unsigned char type;
			char name[];
		} *de = (void *)(buf + off);

		strncat(out, de->name, size - strlen(out) - 2);
		strcat(out, " ");
		off += de->reclen;
	}
}

/* The host tree: a small rootfs. */
static const struct {
	char type;
	const char *path, *data;
} host_tree[] = {
    {'d', "etc", NULL},
    {'f', "etc/passwd", "root:x:0:0::/root:/bin/sh\n"},
    {'f', "etc/hosts", "127.0.0.1 localhost\n"},
    {'d', "etc/dir", NULL},
    {'f', "etc/dir/one", "1"},
    {'f', "etc/dir/two", "2"},
    {'l', "etc/link", "passwd"},
    {'d', "empty", NULL},
    {'d', "dev", NULL},
    {'d', "tmp", NULL},
    {'d', "sys", NULL},
    {'d', "mnt", NULL},
};

static int group_setup(void **state)
{
	char path[PATH_MAX];

	(void)state;
	assert_int_equal(memfile_init(), 0);
	assert_non_null(mkdtemp(host_dir));
	for (size_t i = 0; i < sizeof(host_tree) / sizeof(host_tree[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", host_dir, host_tree[i].path);
		if (host_tree[i].type == 'd') {
			assert_int_equal(mkdir(path, 0755), 0);
		} else if (host_tree[i].type == 'l') {
			assert_int_equal(symlink(host_tree[i].data, path), 0);
		} else {
			int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);

			assert_true(fd >= 0);
			assert_int_equal(write(fd, host_tree[i].data, strlen(host_tree[i].data)),
					 (ssize_t)strlen(host_tree[i].data));
			close(fd);
		}
	}
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	return remove(path);
}

static int group_teardown(void **state)
{
	(void)state;
	assert_int_equal(nftw(host_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
	return 0;
}

/* The sandbox of the tests: the root with its start-up mounts and a guest's changes. */
static void build_sandbox(void)
{
	struct vfs_dentry *d;

	assert_int_equal(vfs_mount_overlay_root(host_dir, &fs.root), 0);
	fs.cwd = vfs_dentry_get(fs.root);
	fs.umask = 022;
	mount_with("/dev", vfs_devfs_new);
	mount_tmpfs("/tmp", "tmpfs", 0);
	mount_tmpfs("/dev/shm", "tmpfs", 0);
	mount_with("/sys", make_sysfs);

	/* The overlay: a copy-up, a whiteout, an opaque directory, a hard link, a symlink, a
	 * new file, a chmod and a chown, a FIFO and a socket node. */
	put_file("/etc/passwd", "user:x:1000:1000::/home/user:/bin/sh\n", O_APPEND);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/etc/hosts"), 0);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/etc/dir/one"), 0);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/etc/dir/two"), 0);
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/etc/dir"), 0);
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/etc/dir", 0750), 0);
	put_file("/etc/dir/three", "3", O_CREAT);
	d = lookup_ok("/etc/passwd");
	assert_int_equal(vfs_link(&fs, NULL, d, NULL, "/etc/passwd.hard"), 0);
	vfs_dentry_put(d);
	assert_int_equal(vfs_symlink(&fs, NULL, "../etc/passwd", NULL, "/empty/up"), 0);
	put_file("/newfile", "new in the upper layer\n", O_CREAT);
	d = lookup_ok("/empty");
	assert_int_equal(vfs_chmod(d, NULL, 0700), 0);
	assert_int_equal(vfs_chown(d, NULL, 1000, 100), 0);
	vfs_dentry_put(d);
	assert_int_equal(vfs_mknod(&fs, NULL, NULL, "/etc/fifo", S_IFIFO | 0600, 0), 0);
	assert_int_equal(vfs_mknod(&fs, NULL, NULL, "/etc/sock", S_IFSOCK | 0755, 0), 0);

	/* tmpfs: data, a sparse file, a file truncated up, hard links, a subdirectory, a guest
	 * mount inside it, a symlink. */
	put_file("/tmp/data", "0123456789", O_CREAT);
	{
		struct vfs_file *f = open_ok("/tmp/sparse", O_RDWR | O_CREAT);
		off_t at = 1 << 20;

		write_at(f, "end", &at);
		vfs_file_put(f);
	}
	put_file("/tmp/trunc", "abc", O_CREAT);
	d = lookup_ok("/tmp/trunc");
	assert_int_equal(vfs_truncate(d, NULL, 100000), 0);
	assert_int_equal(vfs_link(&fs, NULL, d, NULL, "/tmp/trunc.2"), 0);
	assert_int_equal(vfs_link(&fs, NULL, d, NULL, "/tmp/trunc.3"), 0);
	vfs_dentry_put(d);
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/tmp/sub", 0700), 0);
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/tmp/sub/mnt", 0755), 0);
	assert_int_equal(vfs_symlink(&fs, NULL, "/tmp/data", NULL, "/tmp/sub/link"), 0);
	mount_tmpfs("/tmp/sub/mnt", "guest", MS_NOSUID | MS_NODEV);
	put_file("/tmp/sub/mnt/inside", "in the guest's mount", O_CREAT);
	mount_tmpfs("/mnt", "none", MS_RDONLY);
}

static void teardown_sandbox(void)
{
	vfs_dentry_put(fs.cwd);
	vfs_umount_all();
	vfs_dentry_put(fs.root);
	fs.root = fs.cwd = NULL;
}

static void stat_dentry(struct vfs_dentry *d, struct stat *st)
{
	assert_int_equal(vfs_stat(d, st), 0);
}

enum { D_SUB, D_GONE, D_OGONE, D_CPU, D_DEVROOT, D_ROOT, ND };
enum {
	F_DATA,
	F_APPEND,
	F_UNLINKED,
	F_HARD,
	F_LOWER,
	F_ROOTDIR,
	F_TMPDIR,
	F_NULL,
	F_PATH,
	F_SYSFS,
	F_MEMFD,
	F_UPPER,
	F_SYSDIR,
	NF
};

static void test_a_sandbox_restores_as_it_was(void **state)
{
	struct vfs_dentry *dents[ND], *anon;
	struct vfs_file *files[NF];
	struct stat dst[ND], fst[NF];
	off_t pos[NF];
	char path_before[ND][PATH_MAX], listing[2][2][512], buf[256];
	struct image im;
	dev_t next_dev;

	(void)state;
	build_sandbox();

	/* Dentries held from outside: a cwd, directories removed while held (tmpfs and
	 * overlay), a sysfs directory, the root of a mounted tree, the root. */
	dents[D_SUB] = lookup_ok("/tmp/sub");
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/tmp/gone", 0755), 0);
	dents[D_GONE] = lookup_ok("/tmp/gone");
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/tmp/gone"), 0);
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/etc/ogone", 0755), 0);
	dents[D_OGONE] = lookup_ok("/etc/ogone");
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/etc/ogone"), 0);
	dents[D_CPU] = lookup_ok("/sys/devices/system/cpu");
	dents[D_DEVROOT] = lookup_ok("/dev");
	dents[D_ROOT] = vfs_dentry_get(fs.root);

	/* Open files of every kind this code saves. */
	files[F_DATA] = open_ok("/tmp/data", O_RDWR);
	files[F_DATA]->pos = 3;
	files[F_APPEND] = open_ok("/tmp/sub/mnt/inside", O_WRONLY | O_APPEND);
	files[F_UNLINKED] = open_ok("/tmp/unlinked", O_RDWR | O_CREAT);
	write_at(files[F_UNLINKED], "gone but open", NULL);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/tmp/unlinked"), 0);
	files[F_HARD] = open_ok("/tmp/trunc.3", O_RDWR);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/tmp/trunc.3"), 0);
	/* A lower file opened, then its name removed: it reads the host's file. */
	{
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "%s/etc/lowonly", host_dir);
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0640);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, "lower data", 10), 10);
		close(fd);
	}
	files[F_LOWER] = open_ok("/etc/lowonly", O_RDONLY);
	files[F_LOWER]->pos = 6;
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/etc/lowonly"), 0);
	files[F_ROOTDIR] = open_ok("/", O_RDONLY | O_DIRECTORY);
	start_listing(files[F_ROOTDIR], listing[0][0], sizeof(listing[0][0]));
	files[F_TMPDIR] = open_ok("/tmp", O_RDONLY | O_DIRECTORY);
	start_listing(files[F_TMPDIR], listing[1][0], sizeof(listing[1][0]));
	files[F_NULL] = open_ok("/dev/null", O_WRONLY);
	files[F_PATH] = open_ok("/etc", O_PATH);
	files[F_SYSFS] = open_ok("/sys/devices/system/cpu/online", O_RDONLY);
	assert_int_equal(read_some(files[F_SYSFS], buf, 2), 1);
	files[F_UPPER] = open_ok("/etc/dir/three", O_RDWR);
	files[F_UPPER]->pos = 1;
	files[F_SYSDIR] = open_ok("/sys/devices/system/cpu", O_RDONLY | O_DIRECTORY);
	files[F_SYSDIR]->pos = 3;
	/* A memfd: a file unlinked from a tmpfs mounted nowhere. */
	{
		struct vfs_fs_ctx anonfs;

		assert_int_equal(vfs_tmpfs_new(&anon), 0);
		anonfs = (struct vfs_fs_ctx){.root = anon, .cwd = anon};
		assert_int_equal(vfs_open(&anonfs, NULL, "/memfd", O_RDWR | O_CREAT | O_EXCL, 0777,
					  &files[F_MEMFD]),
				 0);
		write_at(files[F_MEMFD], "memfd data", NULL);
		assert_int_equal(vfs_unlink(&anonfs, NULL, NULL, "/memfd"), 0);
		vfs_dentry_put(anon);
	}

	for (int i = 0; i < ND; i++) {
		stat_dentry(dents[i], &dst[i]);
		assert_true(vfs_path(fs.root, dents[i], path_before[i], PATH_MAX) > 0);
	}
	for (int i = 0; i < NF; i++) {
		assert_int_equal(files[i]->ops->getattr(files[i], &fst[i]), 0);
		pos[i] = files[i]->pos;
	}
	/* The host updates a file's atime on its first read (relatime): one snapshot first. */
	free(snapshot());
	char *snap_before = snapshot(), *mounts_before = mount_table();

	image_save(&im, dents, ND, files, NF);
	{
		struct vfs_dentry *t;
		struct stat st;

		assert_int_equal(vfs_tmpfs_new(&t), 0);
		stat_dentry(t, &st);
		next_dev = st.st_dev;
		vfs_dentry_put(t);
	}
	for (int i = 0; i < ND; i++)
		vfs_dentry_put(dents[i]);
	for (int i = 0; i < NF; i++)
		vfs_file_put(files[i]);
	teardown_sandbox();

	/* The restore, into an empty VFS whose device numbers have moved on. */
	vfs_anon_dev_set_next(vfs_anon_dev_next() + 100);
	fs.root = image_load(&im, dents, ND, files, NF);
	fs.cwd = vfs_dentry_get(fs.root);
	fs.umask = 022;

	char *snap_after = snapshot(), *mounts_after = mount_table();
	assert_same_lines(snap_before, snap_after);
	assert_same_lines(mounts_before, mounts_after);
	free(snap_before);
	free(snap_after);
	free(mounts_before);
	free(mounts_after);

	for (int i = 0; i < ND; i++) {
		struct stat st;
		char p[PATH_MAX];

		stat_dentry(dents[i], &st);
		assert_int_equal(st.st_dev, dst[i].st_dev);
		assert_int_equal(st.st_ino, dst[i].st_ino);
		assert_int_equal(st.st_mode, dst[i].st_mode);
		assert_int_equal(st.st_nlink, dst[i].st_nlink);
		assert_true(vfs_path(fs.root, dents[i], p, sizeof(p)) > 0);
		assert_string_equal(p, path_before[i]);
	}
	assert_true(dents[D_GONE]->unhashed && dents[D_OGONE]->unhashed);
	assert_int_equal(dst[D_GONE].st_nlink, 0);
	for (int i = 0; i < NF; i++) {
		struct stat st;

		assert_int_equal(files[i]->ops->getattr(files[i], &st), 0);
		assert_int_equal(st.st_dev, fst[i].st_dev);
		assert_int_equal(st.st_ino, fst[i].st_ino);
		assert_int_equal(st.st_nlink, fst[i].st_nlink);
		assert_int_equal(st.st_size, fst[i].st_size);
		assert_int_equal(files[i]->pos, pos[i]);
	}

	/* The files work on the restored inodes. */
	read_some(files[F_DATA], buf, 4);
	assert_string_equal(buf, "345");
	write_at(files[F_DATA], "X", NULL);
	{
		struct vfs_file *f = open_ok("/tmp/data", O_RDONLY);

		read_some(f, buf, sizeof(buf));
		assert_string_equal(buf, "012345X789");
		vfs_file_put(f);
	}
	write_at(files[F_APPEND], "!", NULL);
	{
		struct vfs_file *f = open_ok("/tmp/sub/mnt/inside", O_RDONLY);

		read_some(f, buf, sizeof(buf));
		assert_string_equal(buf, "in the guest's mount!");
		vfs_file_put(f);
	}
	files[F_UNLINKED]->pos = 0;
	read_some(files[F_UNLINKED], buf, sizeof(buf));
	assert_string_equal(buf, "gone but open");
	assert_int_equal(fst[F_UNLINKED].st_nlink, 0);
	write_at(files[F_HARD], "xyz", NULL);
	{
		struct vfs_file *f = open_ok("/tmp/trunc.2", O_RDONLY);

		read_some(f, buf, 5);
		assert_string_equal(buf, "xyz");
		vfs_file_put(f);
	}
	assert_int_equal(fst[F_HARD].st_nlink, 2);
	read_some(files[F_LOWER], buf, sizeof(buf));
	assert_string_equal(buf, "data");
	rest_of_listing(files[F_ROOTDIR], listing[0][1], sizeof(listing[0][1]));
	rest_of_listing(files[F_TMPDIR], listing[1][1], sizeof(listing[1][1]));
	{
		struct vfs_file *f = open_ok("/", O_RDONLY | O_DIRECTORY);
		char all[1024];

		rest_of_listing(f, all, sizeof(all));
		vfs_file_put(f);
		char joined[1024];

		snprintf(joined, sizeof(joined), "%s%s", listing[0][0], listing[0][1]);
		assert_string_equal(joined, all);
		f = open_ok("/tmp", O_RDONLY | O_DIRECTORY);
		rest_of_listing(f, all, sizeof(all));
		vfs_file_put(f);
		snprintf(joined, sizeof(joined), "%s%s", listing[1][0], listing[1][1]);
		assert_string_equal(joined, all);
	}
	write_at(files[F_NULL], "into the void", NULL);
	assert_true(files[F_PATH]->flags & O_PATH);
	read_some(files[F_SYSFS], buf, sizeof(buf));
	assert_string_equal(buf, "-3\n");
	files[F_MEMFD]->pos = 0;
	read_some(files[F_MEMFD], buf, sizeof(buf));
	assert_string_equal(buf, "memfd data");
	read_some(files[F_UPPER], buf, sizeof(buf));
	assert_string_equal(buf, "");
	files[F_UPPER]->pos = 0;
	read_some(files[F_UPPER], buf, sizeof(buf));
	assert_string_equal(buf, "3");

	/* New filesystems get device numbers after the saved ones. */
	{
		struct vfs_dentry *t;
		struct stat st;

		assert_int_equal(vfs_tmpfs_new(&t), 0);
		stat_dentry(t, &st);
		assert_int_equal(st.st_dev, next_dev);
		vfs_dentry_put(t);
	}

	for (int i = 0; i < ND; i++)
		vfs_dentry_put(dents[i]);
	for (int i = 0; i < NF; i++)
		vfs_file_put(files[i]);
	teardown_sandbox();
	image_free(&im);
	{
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "%s/etc/lowonly", host_dir);
		assert_int_equal(unlink(p), 0);
	}
}

/* Damages a copy of REC: a truncation for the first ROUNDs, then a few flipped bits. */
static size_t damage(const struct rec *rec, uint8_t *copy, size_t round, unsigned int *seed)
{
	memcpy(copy, rec->buf, rec->len);
	if (round < rec->len)
		return round;
	for (int k = 0; k < 1 + (int)(round % 3); k++)
		copy[rand_r(seed) % rec->len] ^= (uint8_t)(1u << (rand_r(seed) % 8));
	return rec->len;
}

/* Every truncation of the vfs record, and random damage to it, fails or loads without a crash
 * or a leak; a failed load leaves the VFS empty. The same for dentry and file records. */
static void test_a_corrupt_image_fails_cleanly(void **state)
{
	struct vfs_dentry *dents[2];
	struct vfs_file *files[4];
	struct image im;
	struct ckpt_refs *refs;
	unsigned int seed = 12345;
	int loaded = 0;

	(void)state;
	build_sandbox();
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/etc/ogone", 0755), 0);
	dents[0] = lookup_ok("/etc/ogone");
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/etc/ogone"), 0);
	dents[1] = lookup_ok("/sys/devices/system/cpu");
	files[0] = open_ok("/tmp/unlinked", O_RDWR | O_CREAT);
	write_at(files[0], "gone but open", NULL);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/tmp/unlinked"), 0);
	files[1] = open_ok("/", O_RDONLY | O_DIRECTORY);
	{
		char names[256];

		start_listing(files[1], names, sizeof(names));
	}
	files[2] = open_ok("/sys/devices/system/cpu/online", O_RDONLY);
	files[3] = open_ok("/tmp/trunc.2", O_RDONLY);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/tmp/trunc.2"), 0);
	image_save(&im, dents, 2, files, 4);
	for (int i = 0; i < 2; i++)
		vfs_dentry_put(dents[i]);
	for (int i = 0; i < 4; i++)
		vfs_file_put(files[i]);
	teardown_sandbox();

	refs = ckpt_refs_new();
	for (size_t i = 0; i < im.nmobjs; i++)
		assert_int_equal(ckpt_refs_put(refs, CK_MOBJ, i + 1, im.mobjs[i]), 0);
	uint8_t *copy = malloc(im.vfs.len);
	assert_non_null(copy);
	for (size_t round = 0; round < im.vfs.len + 3000; round++) {
		size_t len = damage(&im.vfs, copy, round, &seed);
		struct vfs_dentry *root = NULL;
		struct dec d;

		dec_init(&d, copy, len, refs);
		if (vfs_load(&d, host_dir, make_fs, &root) == 0) {
			loaded++;
			vfs_load_finish();
			vfs_umount_all();
			vfs_dentry_put(root);
		} else {
			assert_false(dec_ok(&d));
			assert_int_equal(vfs_mounts_foreach(mount_line, stderr), 0);
		}
		dec_free(&d);
	}
	assert_true(loaded < 3000);
	free(copy);

	/* Dentries and files, over a good load of the trees (and of the dentries, for files). */
	struct vfs_dentry *root = NULL;
	struct dec d;

	dec_init(&d, im.vfs.buf, im.vfs.len, refs);
	assert_int_equal(vfs_load(&d, host_dir, make_fs, &root), 0);
	dec_free(&d);
	for (int k = CK_DENTRY; k <= CK_FILE; k++) {
		for (size_t i = 0; i < im.nrecs[k]; i++) {
			struct rec *rec = &im.recs[k][i];

			copy = malloc(rec->len);
			assert_non_null(copy);
			for (size_t round = 0; round < rec->len + 500; round++) {
				size_t len = damage(rec, copy, round, &seed);
				void *obj;

				dec_init(&d, copy, len, refs);
				obj = k == CK_DENTRY ? vfs_dentry_load(&d) : vfs_file_load(&d);
				assert_true(!obj == !dec_ok(&d));
				if (obj && k == CK_DENTRY)
					vfs_dentry_drop(obj);
				else if (obj)
					vfs_file_drop(obj);
				dec_free(&d);
			}
			free(copy);
		}
		/* The good ones, for the files to refer to. */
		for (size_t i = 0; k == CK_DENTRY && i < im.nrecs[k]; i++) {
			dec_init(&d, im.recs[k][i].buf, im.recs[k][i].len, refs);
			void *obj = vfs_dentry_load(&d);
			assert_non_null(obj);
			assert_int_equal(ckpt_refs_put(refs, CK_DENTRY, i + 1, obj), 0);
			dec_free(&d);
		}
	}
	ckpt_refs_foreach(refs, CK_DENTRY, vfs_dentry_drop);
	vfs_load_finish();
	vfs_umount_all();
	vfs_dentry_put(root);
	ckpt_refs_free(refs);
	image_free(&im);
}

/* What cannot be saved refuses with a message: a dentry in a tree unmounted while in use. */
static void test_a_dentry_of_an_unmounted_tree_refuses_to_save(void **state)
{
	struct vfs_dentry *mnt;
	struct ckpt_refs *refs = ckpt_refs_new();
	struct enc e;

	(void)state;
	build_sandbox();
	mnt = lookup_ok("/tmp/sub/mnt");
	assert_int_equal(vfs_umount_at(mnt, true), 0); /* detached, held by MNT */
	enc_init(&e, refs);
	assert_int_equal(vfs_dentry_save(&e, mnt), -EOPNOTSUPP);
	assert_non_null(strstr(e.error, "no longer mounted"));
	enc_free(&e);
	vfs_dentry_put(mnt);
	ckpt_refs_free(refs);
	teardown_sandbox();
}

static ino_t sysfs_ino(struct vfs_dentry *root, const char *path)
{
	struct vfs_fs_ctx sfs = {.root = root, .cwd = root};
	struct vfs_dentry *d;
	struct stat st;

	assert_int_equal(vfs_lookup(&sfs, NULL, path, 0, &d), 0);
	assert_int_equal(vfs_stat(d, &st), 0);
	vfs_dentry_put(d);
	return st.st_ino;
}

/* A /sys or /proc tree is saved unpopulated and rebuilt on demand, so its inode numbers must
 * not depend on the order its lazy directories are filled in. */
static void test_kernfs_inode_numbers_do_not_depend_on_lookup_order(void **state)
{
	static const char *paths[] = {"/devices/system/cpu/cpu3/topology/core_id",
				      "/devices/system/cpu/cpu0/topology",
				      "/devices/system/cpu/online", "/devices/system/cpu/cpu1"};
	struct vfs_dentry *a, *b;
	ino_t ia[4], ib[4];

	(void)state;
	assert_int_equal(sysfs_new(4, false, &a), 0);
	assert_int_equal(sysfs_new(4, false, &b), 0);
	for (int i = 0; i < 4; i++)
		ia[i] = sysfs_ino(a, paths[i]);
	for (int i = 3; i >= 0; i--)
		ib[i] = sysfs_ino(b, paths[i]);
	for (int i = 0; i < 4; i++)
		assert_int_equal(ia[i], ib[i]);
	vfs_dentry_put(a);
	vfs_dentry_put(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_sandbox_restores_as_it_was),
	    cmocka_unit_test(test_a_corrupt_image_fails_cleanly),
	    cmocka_unit_test(test_a_dentry_of_an_unmounted_tree_refuses_to_save),
	    cmocka_unit_test(test_kernfs_inode_numbers_do_not_depend_on_lookup_order),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
