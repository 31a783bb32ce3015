/* The sandbox's writable layer kept in a host directory: `--export-upper DIR` writes what the
 * sandbox changed in its root into DIR at the end, and `--upper DIR` also starts from what DIR
 * holds and writes it back at the end, so the layer persists from run to run (vfs/layer.c
 * has the layer's form). Every host directory is opened before the Sentry locks itself, as a
 * detached copy of its mount; `--upper`'s is replaced whole at the end (the new layer is
 * written beside it and swapped in with one rename), so a run that dies leaves the old one. */
#include "sentry/upper.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sentry/confine.h"
#include "sentry/kernel.h"
#include "vfs/dirent.h"
#include "vfs/vfs.h"

#define NEW_SUFFIX ".minisentry-new"

static struct {
	int fd;		/* --export-upper: the directory itself; --upper: its parent */
	char name[256]; /* --upper: DIR's last component */
	const char *path;
	bool replace; /* --upper */
} up = {.fd = -1};

static int open_beneath(int dirfd, const char *name, int flags)
{
	struct open_how how = {.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
			       .resolve =
				   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	long fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

/* Removes NAME beneath DIRFD and everything in it, never following a link. */
static int remove_host_tree(int dirfd, const char *name, int depth)
{
	char buf[8192];
	int fd, err = 0;

	if (!unlinkat(dirfd, name, 0) || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	if (depth > 256)
		return -ELOOP;
	if ((fd = open_beneath(dirfd, name, O_RDONLY | O_DIRECTORY)) < 0)
		return fd;
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		bool removed = false;
		if (n <= 0) {
			err = n < 0 ? -errno : 0;
			break;
		}
		for (long off = 0; off < n && !err;) {
			struct vfs_dirent64 *de = (struct vfs_dirent64 *)(buf + off);
			off += de->d_reclen;
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			err = remove_host_tree(fd, de->d_name, depth + 1);
			removed = true;
		}
		if (err || !removed)
			break;
		lseek(fd, 0, SEEK_SET);
	}
	close(fd);
	if (!err && unlinkat(dirfd, name, AT_REMOVEDIR))
		err = -errno;
	return err;
}

static int fail(const char *opt, const char *path, int err)
{
	fprintf(stderr, "minisentry: %s '%s': %s\n", opt, path, strerror(-err));
	return err;
}

int upper_open(const struct kernel_config *cfg)
{
	unsigned int skipped = 0;
	int err;

	if (cfg->export_upper) {
		up.path = cfg->export_upper;
		if ((up.fd = confine_open_bind(cfg->export_upper, false)) < 0)
			return fail("--export-upper", up.path, up.fd);
		return 0;
	}
	if (!cfg->upper)
		return 0;
	/* --upper DIR (an absolute path without a trailing slash, main checked): its parent
	 * is held, where the new layer is written beside it at the end. */
	char parent[4096];
	const char *slash = strrchr(cfg->upper, '/');
	up.path = cfg->upper;
	up.replace = true;
	if (!slash || !slash[1] || strlen(slash + 1) >= sizeof(up.name) - sizeof(NEW_SUFFIX) - 1 ||
	    (size_t)(slash - cfg->upper) >= sizeof(parent))
		return fail("--upper", up.path, -EINVAL);
	snprintf(up.name, sizeof(up.name), "%s", slash + 1);
	snprintf(parent, sizeof(parent), "%.*s",
		 slash == cfg->upper ? 1 : (int)(slash - cfg->upper), cfg->upper);
	if ((up.fd = confine_open_bind(parent, false)) < 0)
		return fail("--upper", parent, up.fd);
	int fd = open_beneath(up.fd, up.name, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fail("--upper", up.path, fd);
	err = vfs_upper_import(kernel.root, fd, &skipped);
	close(fd);
	if (err)
		return fail("--upper", up.path, err);
	if (skipped)
		fprintf(stderr, "minisentry: --upper: %u device, FIFO or socket node(s) left out\n",
			skipped);
	return 0;
}

/* Writes the layer beneath DIRFD; prints what failed. */
static int export_into(int dirfd)
{
	unsigned int skipped = 0;
	int err = vfs_upper_export(dirfd, &skipped);

	if (err)
		return fail(up.replace ? "--upper" : "--export-upper", up.path, err);
	if (skipped)
		fprintf(stderr, "minisentry: %s: %u device, FIFO or socket node(s) left out\n",
			up.replace ? "--upper" : "--export-upper", skipped);
	return 0;
}

int upper_save(void)
{
	char tmp[sizeof(up.name) + sizeof(NEW_SUFFIX) + 1];
	int fd, err;

	if (up.fd < 0)
		return 0;
	if (!up.replace) {
		err = export_into(up.fd);
		goto out;
	}
	/* The new layer beside the old one, swapped in with one rename, the old one removed. */
	snprintf(tmp, sizeof(tmp), ".%s" NEW_SUFFIX, up.name);
	remove_host_tree(up.fd, tmp, 0); /* a run that died before its swap */
	if (mkdirat(up.fd, tmp, 0755) ||
	    (fd = open_beneath(up.fd, tmp, O_RDONLY | O_DIRECTORY)) < 0) {
		err = fail("--upper", up.path, -errno);
		goto out;
	}
	err = export_into(fd);
	close(fd);
	if (!err && syscall(SYS_renameat2, up.fd, tmp, up.fd, up.name, RENAME_EXCHANGE))
		err = fail("--upper", up.path, -errno);
	if (!err)
		remove_host_tree(up.fd, tmp, 0);
out:
	close(up.fd);
	up.fd = -1;
	return err;
}
