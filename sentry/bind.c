/* Bind mounts (`run --mount type=bind,...`, `-v`, an OCI bundle's bind mounts): host
 * directories and files seen inside the sandbox. Each is opened before the Sentry locks itself
 * (a detached copy of its mount, as the rootfs) and mounted as a host tree (vfs/hostfs.c),
 * writable or not; its mountpoint is made in the sandbox's own layers when the rootfs lacks it,
 * as runc does. A restore opens each host path again. */
#include "sentry/bind.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sentry/confine.h"
#include "sentry/kernel.h"
#include "vfs/save.h"
#include "vfs/vfs.h"

/* Makes every missing directory of guest path PATH (the last one too when DIR, else an empty
 * file there) in the sandbox's tree, as the Sentry: the overlay's memory layer takes them. */
int bind_make_mountpoint(struct vfs_fs_ctx *fs, const char *path, bool dir)
{
	char buf[4096];
	size_t n = strlen(path);
	int err;

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		err = vfs_mkdir(fs, NULL, NULL, buf, 0755);
		*p = '/';
		if (err && err != -EEXIST)
			return err;
	}
	err = dir ? vfs_mkdir(fs, NULL, NULL, buf, 0755)
		  : vfs_mknod(fs, NULL, NULL, buf, S_IFREG | 0644, 0);
	return err == -EEXIST ? 0 : err;
}

int bind_open(const char *host, unsigned long flags, struct vfs_dentry **root)
{
	int fd = confine_open_bind(host, flags & MS_RDONLY), err;

	if (fd < 0)
		return fd;
	err = vfs_bind_root(fd, !(flags & MS_RDONLY), root);
	return err;
}

int bind_mount(const struct kernel_bind *b)
{
	struct vfs_fs_ctx fs = {.root = kernel.root, .cwd = kernel.root, .umask = 022};
	unsigned long flags = MS_BIND | (b->ro ? MS_RDONLY : 0);
	struct vfs_dentry *root, *mp;
	int err;

	if ((err = bind_open(b->src, flags, &root))) {
		fprintf(stderr, "minisentry: bind mount source '%s': %s\n", b->src, strerror(-err));
		return err;
	}
	err = vfs_lookup(&fs, NULL, b->dst, VFS_LOOKUP_FOLLOW, &mp);
	if (err == -ENOENT) {
		err = bind_make_mountpoint(&fs, b->dst, vfs_is_dir(root));
		if (!err)
			err = vfs_lookup(&fs, NULL, b->dst, VFS_LOOKUP_FOLLOW, &mp);
	}
	if (!err) {
		err = vfs_mount_fs(mp, root, "bind", b->src, flags, NULL);
		vfs_dentry_put(mp);
	}
	vfs_dentry_put(root);
	if (err)
		fprintf(stderr, "minisentry: bind mount on '%s': %s\n", b->dst, strerror(-err));
	return err;
}

/* Fewer components first: a bind on /a/b lands on whatever is mounted on /a. */
static int depth(const char *p)
{
	int n = 0;

	for (; *p; p++)
		n += *p == '/';
	return n;
}

int bind_mount_all(const struct kernel_config *cfg)
{
	int done[cfg->nbinds > 0 ? cfg->nbinds : 1];
	int err;

	memset(done, 0, sizeof(done));
	for (int k = 0; k < cfg->nbinds; k++) {
		int next = -1;
		for (int i = 0; i < cfg->nbinds; i++)
			if (!done[i] &&
			    (next < 0 || depth(cfg->binds[i].dst) < depth(cfg->binds[next].dst)))
				next = i;
		done[next] = 1;
		if ((err = bind_mount(&cfg->binds[next])))
			return err;
	}
	return 0;
}

/* The bind mounts a restore's user named (kernel_restore_opts.binds), by guest path. An image
 * is untrusted input: the host paths it names are never opened, only those of its bind mounts
 * that the user names again, and with the user's flags. */
static const struct kernel_bind *replacements;
static int nreplacements;

const struct kernel_bind *bind_restore_source(const char *guest)
{
	for (int i = 0; guest && i < nreplacements; i++)
		if (!strcmp(replacements[i].dst, guest))
			return &replacements[i];
	return NULL;
}

/* Each replacement's tree, opened by bind_restore_init while host paths are still reachable
 * (the VFS section is decoded by a Sentry already locked in), or the errno that failed. */
static struct vfs_dentry **opened;
static int *open_err;

static int reopen(const char *host, const char *guest, unsigned long flags,
		  struct vfs_dentry **root)
{
	(void)host, (void)flags;
	for (int i = 0; guest && i < nreplacements; i++) {
		if (strcmp(replacements[i].dst, guest))
			continue;
		if (!opened || !opened[i])
			return open_err ? -open_err[i] : -ENOENT;
		*root = vfs_dentry_get(opened[i]);
		return 0;
	}
	return -EPERM; /* kernel_ckpt_load said which, first */
}

void bind_restore_init(const struct kernel_bind *binds, int n)
{
	if (replacements == binds && nreplacements == n && (opened || !n))
		return; /* once per restore */
	bind_restore_done();
	replacements = binds;
	nreplacements = n;
	vfs_load_set_bind_opener(reopen);
	opened = n ? calloc((size_t)n, sizeof(*opened)) : NULL;
	open_err = n ? calloc((size_t)n, sizeof(*open_err)) : NULL;
	for (int i = 0; opened && open_err && i < n; i++) {
		struct stat st;
		/* The one error a user can act on: the host path is gone. */
		int err = stat(binds[i].src, &st)
			      ? -errno
			      : bind_open(binds[i].src, MS_BIND | (binds[i].ro ? MS_RDONLY : 0),
					  &opened[i]);
		open_err[i] = -err;
	}
}

void bind_restore_done(void)
{
	for (int i = 0; opened && i < nreplacements; i++)
		if (opened[i])
			vfs_dentry_put(opened[i]);
	free(opened);
	free(open_err);
	opened = NULL;
	open_err = NULL;
}
