/* Bind mounts of host directories and files into the sandbox (sentry/bind.c). */
#ifndef SENTRY_BIND_H
#define SENTRY_BIND_H

#include <stdbool.h>

struct kernel_bind;
struct kernel_config;
struct vfs_dentry;

/* Mounts every bind mount of CFG in the sandbox's tree (kernel.root), parents first, before
 * confine_lock. Prints what failed; a negative errno. */
int bind_mount_all(const struct kernel_config *cfg);
int bind_mount(const struct kernel_bind *b);

/* Makes every missing directory of guest path PATH in the sandbox's tree (the last one too when
 * DIR, else an empty file there), as the Sentry: the overlay's memory layer takes them. */
struct vfs_fs_ctx;
int bind_make_mountpoint(struct vfs_fs_ctx *fs, const char *path, bool dir);

/* The root of a bind mount of HOST (FLAGS: MS_RDONLY for a read-only one), a reference. */
int bind_open(const char *host, unsigned long flags, struct vfs_dentry **root);

/* Before a restore loads the mount table: the N bind mounts BINDS the user named for it. An
 * image's bind mount on a guest path is opened only if one of them has that guest path, and
 * then with its host path and flags (an image is untrusted: the host paths it names are never
 * opened); the others fail the restore, named. Each is opened here, while host paths are still
 * reachable: the mount table is decoded by a Sentry already locked in. */
void bind_restore_init(const struct kernel_bind *binds, int n);
/* Drops the trees bind_restore_init opened that the restore did not take. */
void bind_restore_done(void);
/* The user's bind mount for the image's one on GUEST, or NULL. */
const struct kernel_bind *bind_restore_source(const char *guest);

#endif
