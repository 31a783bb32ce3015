/* vfs — the Sentry's virtual filesystem: dentries, inodes, open file descriptions and path
 * resolution. Every guest path is resolved here, one component at a time; the host is only
 * ever asked to open a single component beneath a directory it already holds, so no guest
 * path can reach outside the root filesystem.
 *
 * Errors are negative errno values. Data moves through Sentry-side iovecs: the syscall layer
 * translates guest buffers into pointers into the memory file, so a read of a host file lands
 * directly in guest memory. */
#ifndef VFS_VFS_H
#define VFS_VFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "vfs/waitq.h"

struct epoll_event;
struct mobj;
struct statfs;
struct statx;
struct waitq;
struct vfs_inode;
struct vfs_dentry;
struct vfs_file;
struct vfs_epitem;
struct vfs_mount;
struct vfs_sock_ops;

/* Longest symlink chain a lookup follows before ELOOP (Linux's MAXSYMLINKS). */
#define VFS_MAX_SYMLINKS 40

/* The credentials a path operation is checked against (the task's fsuid/fsgid, which are its
 * euid/egid here). A NULL cred means the Sentry itself: every check passes as for root. */
struct vfs_cred {
	uid_t uid;
	gid_t gid;
	const gid_t *groups; /* supplementary groups (borrowed from the task) */
	int ngroups;
};

/* True if CRED's group or one of its supplementary groups is GID. */
bool vfs_cred_in_group(const struct vfs_cred *cred, gid_t gid);

/* A node to create (vfs_inode_ops.mknod): MODE holds the type (S_IFREG, S_IFDIR, S_IFLNK,
 * S_IFIFO, S_IFSOCK, and S_IFCHR/S_IFBLK for copy-up only) and the permission bits, already
 * masked by the umask; TARGET is a symlink's target. */
struct vfs_node_attr {
	mode_t mode;
	uid_t uid;
	gid_t gid;
	dev_t rdev;
	const char *target;
};

/* What vfs_inode_ops.setattr changes: the VFS_ATTR_* bits in VALID. Times are absolute (the
 * VFS has resolved UTIME_NOW); the filesystem applies what it is given and nothing else. */
#define VFS_ATTR_MODE 0x01
#define VFS_ATTR_UID 0x02
#define VFS_ATTR_GID 0x04
#define VFS_ATTR_SIZE 0x08
#define VFS_ATTR_ATIME 0x10
#define VFS_ATTR_MTIME 0x20
#define VFS_ATTR_CTIME 0x40

struct vfs_setattr {
	unsigned int valid;
	mode_t mode; /* permission bits only */
	uid_t uid;
	gid_t gid;
	off_t size;
	struct timespec atime, mtime, ctime;
};

struct vfs_inode_ops {
	/* Finds NAME (never "." or "..") in directory DIR and returns a new inode (reference
	 * owned by the caller), or -ENOENT. */
	int (*lookup)(struct vfs_inode *dir, const char *name, struct vfs_inode **out);
	int (*getattr)(struct vfs_inode *ino, struct stat *st);
	/* Copies the target of a symlink into BUF (not NUL-terminated); returns its length. */
	ssize_t (*readlink)(struct vfs_inode *ino, char *buf, size_t size);
	/* Opens the inode for I/O with open(2) FLAGS; fills F->ops and F->priv. */
	int (*open)(struct vfs_inode *ino, struct vfs_file *f, int flags);
	/* Called when the last reference is dropped: frees the filesystem's state and INO itself
	 * (the filesystem allocated it). */
	void (*release)(struct vfs_inode *ino);
	/* Optional: the type name of the filesystem INO belongs to ("devtmpfs", "proc"), which
	 * vfs_mount records for /proc/mounts; NULL (or no op) means "none". */
	const char *(*fs_type)(struct vfs_inode *ino);
	/* Optional: true if symlink INO is a "magic link" (/proc/PID/fd/N, cwd, root, exe), whose
	 * target is an object rather than a path: a walk jumps to what its target names instead
	 * of walking the text, and openat2's RESOLVE_NO_MAGICLINKS and scoped lookups refuse it.
	 * No op means an ordinary symlink. */
	bool (*is_magic_link)(struct vfs_inode *ino);
	/* Optional, on a magic link: the object it names (a new reference), where a walk
	 * following it lands, as Linux's nd_jump_link: a file's dentry even when unlinked, a
	 * directory, a namespace file, or for an open file without one (a pipe, a host
	 * descriptor) an anonymous dentry (vfs_anon_dentry). Opening the link opens that
	 * object: a new open of the dentry, or of the anonymous dentry's file (its reopen), as
	 * Linux's proc_fd_link does. Without the op, a walk follows the text readlink shows. */
	int (*magic_dentry)(struct vfs_inode *ino, struct vfs_dentry **out);

	/* The write side, all optional: a filesystem without SETATTR is read-only, and the VFS
	 * answers -EROFS for it. Directory operations are called on directory DIR with a NAME
	 * the VFS has checked (a normal component, absent for MKNOD and LINK, present for the
	 * others, with VICTIM/SRC/TGT its inode) and permissions already granted. */
	int (*mknod)(struct vfs_inode *dir, const char *name, const struct vfs_node_attr *attr);
	int (*link)(struct vfs_inode *dir, const char *name, struct vfs_inode *target);
	int (*unlink)(struct vfs_inode *dir, const char *name, struct vfs_inode *victim);
	/* -ENOTEMPTY unless VICTIM is empty. */
	int (*rmdir)(struct vfs_inode *dir, const char *name, struct vfs_inode *victim);
	/* FLAGS: RENAME_EXCHANGE (TGT then exists) or 0; TGT, if any, is replaced (a directory
	 * TGT must be empty: -ENOTEMPTY). Both directories belong to this filesystem. */
	int (*rename)(struct vfs_inode *odir, const char *oname, struct vfs_inode *src,
		      struct vfs_inode *ndir, const char *nname, struct vfs_inode *tgt,
		      unsigned int flags);
	int (*setattr)(struct vfs_inode *ino, const struct vfs_setattr *attr);
	int (*statfs)(struct vfs_inode *ino, struct statfs *buf);
	/* Optional: true when a filesystem that has the write side is read-only now (a root
	 * overlay made read-only: OCI's root.readonly). */
	bool (*rdonly)(struct vfs_inode *ino);
};

struct vfs_inode {
	const struct vfs_inode_ops *ops;
	int refs;
	mode_t mode; /* file type bits, cached from the first getattr */
	void *priv;  /* filesystem-private; for the host filesystem, the inode itself (a struct
		      * hostfs_inode holding an O_PATH descriptor) */
};

struct vfs_dentry {
	char *name;
	struct vfs_dentry *parent; /* the root is its own parent */
	struct vfs_dentry *children, *next_sibling;
	struct vfs_inode *inode; /* NULL for a cached negative entry */
	int refs;
	/* Mounts (vfs/mount.c). MOUNTED is set on a mountpoint: the mount on top of it, which a
	 * walk descending into the dentry crosses. MOUNT is set on the root of a mounted tree:
	 * its mount, whose mountpoint ".." and vfs_path climb to. Neither holds a reference. */
	struct vfs_mount *mounted;
	struct vfs_mount *mount;
	/* Set when the name was removed (unlink, rmdir, rename over it): the dentry is off its
	 * parent's list but lives on while referenced (open files, a cwd). */
	bool unhashed;
};

struct vfs_file_ops {
	/* IOV points into Sentry memory. POS is the file offset to use and advance, or NULL for a
	 * stream. Returns bytes moved, or a negative errno; -EAGAIN when it would block.
	 * read(2)/write(2) pass &F->pos and pread64/pwrite64 a pointer to their own offset: a
	 * file whose offset lives elsewhere (a host descriptor, see llseek) tells them apart by
	 * that pointer. */
	ssize_t (*read)(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos);
	ssize_t (*write)(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos);
	/* Fills BUF with linux_dirent64 records starting at *POS; returns bytes, 0 at the end,
	 * -EINVAL if not even one record fits. */
	ssize_t (*getdents64)(struct vfs_file *f, void *buf, size_t size, off_t *pos);
	/* ARG is a Sentry buffer of the size the ioctl number encodes. */
	long (*ioctl)(struct vfs_file *f, unsigned int cmd, void *arg);
	int (*getattr)(struct vfs_file *f, struct stat *st);
	/* The host descriptor whose readiness wakes a task blocked on this file, or -1. */
	int (*host_fd)(struct vfs_file *f);
	/* Reads LEN bytes at OFF into BUF in the Sentry (used to populate file mappings). */
	ssize_t (*pread_kernel)(struct vfs_file *f, void *buf, size_t len, off_t off);
	/* Optional: copies LEN bytes at OFF into host descriptor TO_FD at TO_OFF inside the host
	 * kernel, as pread_kernel would into a mapping of it; returns the bytes copied (fewer
	 * only at the end of the file) or -errno. */
	ssize_t (*copy_to_fd)(struct vfs_file *f, int to_fd, off_t to_off, size_t len, off_t off);
	void (*release)(struct vfs_file *f);
	/* Optional: readiness now (POLLIN|POLLOUT|POLLHUP|POLLERR...) and, in *WQ, the queue
	 * woken when it changes. NULL means always ready for what the file supports. */
	uint32_t (*poll)(struct vfs_file *f, struct waitq **wq);
	/* Optional: a file whose offset is kept outside F->pos (a wrapped host descriptor shares
	 * it with host processes) seeks here; NULL means vfs_lseek works on F->pos. */
	off_t (*llseek)(struct vfs_file *f, off_t off, int whence);
	/* Optional: fallocate(2) MODE 0 or FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE. */
	int (*fallocate)(struct vfs_file *f, int mode, off_t off, off_t len);
	/* Optional: a new open file description of the same object with open(2) FLAGS (an open
	 * of /proc/PID/fd/N for a file without a path). Without it such an open is ENXIO. */
	int (*reopen)(struct vfs_file *f, int flags, struct vfs_file **out);
	/* Optional, for files whose data lives in the memory file: see vfs_file_mmap_range. */
	int (*mmap_range)(struct vfs_file *f, off_t off, size_t len, struct mobj **mobj,
			  uint64_t *mf_off);
	/* Optional: a socket's operations (sockets of every family but AF_UNIX, below). */
	const struct vfs_sock_ops *sock;
	/* Optional: the inode of a pipe or socket that has no dentry (vfs_pseudo_inode). */
	struct vfs_pseudo_inode *(*pseudo_inode)(struct vfs_file *f);
};

/* An open file description. */
/* The owner of an open file's asynchronous I/O signals (fcntl F_SETOWN, F_SETSIG; O_ASYNC):
 * data the VFS keeps and saves with the file, and a waiter the kernel queues on the file's
 * poll queue while O_ASYNC is set (sentry/fasync.c). */
struct vfs_fasync {
	int owner_type; /* F_OWNER_TID, F_OWNER_PID or F_OWNER_PGRP */
	int owner;	/* its id; 0: no owner */
	int sig;	/* F_SETSIG's signal; 0: SIGIO */
	int fd;		/* si_fd: the descriptor O_ASYNC was set through */
	struct waiter w;
	struct vfs_file *file;
};

struct vfs_file;
/* File seals (fcntl(2) F_ADD_SEALS, F_GET_SEALS) of a tmpfs file: a memfd made with
 * MFD_ALLOW_SEALING starts with none, every other tmpfs file with F_SEAL_SEAL; a file of
 * another filesystem takes none (-EINVAL). Adding is -EPERM once F_SEAL_SEAL is set or for a
 * file not open for writing; the caller checks F_SEAL_WRITE against writable shared mappings
 * (EBUSY). Writes, truncates and fallocate honour them. */
int vfs_file_get_seals(struct vfs_file *f);
int vfs_file_add_seals(struct vfs_file *f, unsigned int seals);
void vfs_file_allow_sealing(struct vfs_file *f);
/* memfd_create(MFD_NOEXEC_SEAL): the file loses its execute bits and gets F_SEAL_EXEC. */
int vfs_file_seal_noexec(struct vfs_file *f);
/* The memory object holding a sealable file's data (NULL if none yet), which its mappings
 * map: what the F_SEAL_WRITE check looks for. */
struct mobj *vfs_file_tmpfs_data(struct vfs_file *f);

struct vfs_file {
	const struct vfs_file_ops *ops;
	int refs;
	int flags; /* open(2) flags as the guest sees them from F_GETFL */
	off_t pos;
	bool seekable;
	struct vfs_dentry *dentry; /* NULL for files outside the tree (host stdio) */
	void *priv;
	struct vfs_epitem *epoll_links; /* the epoll items watching this file (vfs/epoll.c) */
	struct vfs_fasync *fasync;	/* NULL until fcntl names an owner or sets O_ASYNC */
};

/* The filesystem context of a task: its root and working directory (references held). */
struct vfs_fs_ctx {
	struct vfs_dentry *root;
	struct vfs_dentry *cwd;
	mode_t umask;
};

/* Lookup flags. */
#define VFS_LOOKUP_FOLLOW 0x1	 /* follow a symlink in the last component */
#define VFS_LOOKUP_DIRECTORY 0x2 /* the result must be a directory */
/* Restrictions, openat2(2)'s RESOLVE_ flags with Linux's errors (docs/filesystem.md):
 *   NO_SYMLINKS    ELOOP on any symlink the walk would follow, magic links included;
 *   NO_MAGICLINKS  ELOOP on a magic link it would follow;
 *   NO_XDEV        EXDEV on crossing a mount either way (descending into one, ".." out of
 *                  one, an absolute symlink or a magic link leading to another);
 *   BENEATH        the start directory is the walk's root and must not be left: EXDEV for
 *                  an absolute path or symlink, ".." from the start, and magic links;
 *   IN_ROOT        the start directory is the walk's root: "/" leads to it and ".." stops
 *                  there; magic links are EXDEV.
 * BENEATH and IN_ROOT together are the caller's mistake (openat2 answers EINVAL). */
#define VFS_LOOKUP_NO_SYMLINKS 0x4
#define VFS_LOOKUP_NO_MAGICLINKS 0x8
#define VFS_LOOKUP_NO_XDEV 0x10
#define VFS_LOOKUP_BENEATH 0x20
#define VFS_LOOKUP_IN_ROOT 0x40
#define VFS_LOOKUP_SCOPED (VFS_LOOKUP_BENEATH | VFS_LOOKUP_IN_ROOT)
/* A magic link as the last component is the result itself, not followed: open(2) opens the
 * object it names (vfs_inode_ops.magic_dentry). */
#define VFS_LOOKUP_MAGIC_LAST 0x80

/* Mounts host directory HOST_DIR read-only as a root; returns its root dentry. Fails with a
 * negative errno if the directory cannot be opened or is not a directory. The returned
 * reference is the mount's: putting it (after every other reference is gone) frees the whole
 * tree and closes its host descriptors. */
int vfs_mount_host_root(const char *host_dir, struct vfs_dentry **root);
/* The root of a bind mount: the host object of descriptor FD (O_PATH or a detached mount,
 * owned from here on), a directory tree or a single file; writable when RW, its changes then
 * made in the host tree one name at a time. Mount it with vfs_mount_fs (type "bind", the host
 * path as source, MS_BIND and MS_RDONLY for a read-only one): a checkpoint records it so, and
 * a restore opens the host path again (vfs_load_set_bind_opener). */
int vfs_bind_root(int fd, bool rw, struct vfs_dentry **root);

/* Makes the root overlay read-only, or writable again: every change is then EROFS (OCI's
 * root.readonly; the Sentry's own mountpoints are made before). */
void vfs_overlay_set_rdonly(bool rdonly);
bool vfs_overlay_is_rdonly(void);

/* Writes the root overlay's upper layer — what the sandbox changed in its root filesystem —
 * beneath host directory DIRFD (empty) as an OCI image layer: changed and new objects as they
 * are, a deleted NAME as an empty `.wh.NAME`, an opaque directory with a `.wh..wh..opq`. The
 * host objects are the writer's; devices, FIFOs and sockets are counted in *SKIPPED, not made.
 * 0 or the first negative errno (vfs/layer.c). */
int vfs_upper_export(int dirfd, unsigned int *skipped);
/* The reverse, at a sandbox's start: the layer in host directory DIRFD applied to the root
 * whose dentry is ROOT, as the Sentry (owners, modes and times kept; `.wh.` names removed,
 * opaque directories emptied of what was below). Devices, FIFOs and sockets in the layer are
 * counted in *SKIPPED. 0 or the first negative errno. */
int vfs_upper_import(struct vfs_dentry *root, int dirfd, unsigned int *skipped);

/* A filesystem tree mounted on a directory of another (DESIGN.md §5). Path resolution
 * descending into MOUNTPOINT continues at ROOT, and ".." from ROOT goes to MOUNTPOINT's parent
 * (never above the task's root). The mount table is a list in mount order; each mount holds
 * a reference on MOUNTPOINT (which pins the path above it) and on ROOT (which pins the whole
 * mounted tree). Mounts are identified by dentries, not (mount, dentry) pairs as in Linux, so
 * a tree can be mounted in one place only: bind mounts will need the pair. */
struct vfs_mount {
	int id;			       /* unique, in mount order (for /proc/self/mountinfo) */
	struct vfs_dentry *mountpoint; /* the covered directory */
	struct vfs_dentry *root;       /* the root of the mounted tree */
	char *fs_type;		       /* "devtmpfs", "proc", ... */
	char *source;		       /* the first field of /proc/mounts */
	unsigned long flags;	       /* MS_RDONLY, MS_NOSUID, ... as mount(2) takes them */
	struct vfs_mount *next;
};

/* Mounts the tree whose root is MOUNTED_ROOT on directory MOUNTPOINT, taking references of
 * its own on both: the caller keeps (and eventually puts) the ones it passed in. The mount's
 * fs type and source are MOUNTED_ROOT's inode's fs_type, its flags 0. Errors: ENOTDIR if
 * one of MOUNTPOINT and MOUNTED_ROOT is a directory and the other is not (a file is mounted
 * only on a file: a bind mount of one), EBUSY if MOUNTPOINT is already a mountpoint
 * or MOUNTED_ROOT already mounted, EINVAL if MOUNTED_ROOT is not the root of a tree or
 * MOUNTPOINT lies inside that tree, ENOMEM.
 *
 * At sandbox start-up the sequence is:
 *	vfs_devfs_new(&devroot);                    // devroot: the caller's reference
 *	vfs_lookup(&fs, NULL, "/dev", ..., &dev);   // dev: the caller's reference
 *	vfs_mount(dev, devroot);                    // the mount takes one more on each
 *	vfs_dentry_put(dev); vfs_dentry_put(devroot);
 * after which the mount alone keeps the devfs tree (and the rootfs path to /dev) alive, until
 * vfs_umount_all. If the mount fails the two puts free the devfs tree as well. */
int vfs_mount(struct vfs_dentry *mountpoint, struct vfs_dentry *mounted_root);
/* vfs_mount with the fs type, source and mount(2) FLAGS given; *OUT (may be NULL) gets the
 * mount, owned by the mount table. */
int vfs_mount_fs(struct vfs_dentry *mountpoint, struct vfs_dentry *mounted_root,
		 const char *fs_type, const char *source, unsigned long flags,
		 struct vfs_mount **out);
/* The id of the mount dentry D lies in, as /proc/PID/mountinfo's first column, statx's
 * stx_mnt_id and fdinfo's mnt_id show it: VFS_ROOT_MOUNT_ID for the root's tree, the mount's
 * id + 1 for the others; a file without a dentry (a pipe, a socket, an anonymous file) lies
 * in one of Linux's internal mounts, which mountinfo never lists: D NULL is
 * VFS_INTERNAL_MOUNT_ID. */
#define VFS_ROOT_MOUNT_ID 1
#define VFS_INTERNAL_MOUNT_ID 15
int vfs_mount_id(const struct vfs_dentry *d);
/* The mount(2) flags (MS_RDONLY, MS_NOSUID, ...) of the mount dentry D lies in; 0 for the
 * root's tree. */
unsigned long vfs_mount_flags(const struct vfs_dentry *d);
/* Calls FN on every mount, oldest first (the order of /proc/mounts), until it returns
 * non-zero, which is then returned; 0 after the last. FN must not mount or unmount. */
int vfs_mounts_foreach(int (*fn)(struct vfs_mount *m, void *arg), void *arg);
/* Takes every mount down, newest first, dropping their references: a tree nothing else holds
 * is freed (Sentry shutdown, tests). */
void vfs_umount_all(void);

/* A new devfs: null, zero, full, random, urandom, tty, console, ptmx (vfs/pty.h), the
 * fd/stdin/stdout/stderr links into /proc/self/fd, pts (the sandbox's terminal 0, ptmx and
 * the slaves of live pseudo-terminal pairs) and an empty shm directory. Returns its root dentry,
 * the caller's reference (see vfs_mount for the start-up sequence). Nothing can be created in it:
 * O_CREAT of a new name gives -EROFS (Linux's devtmpfs is writable; a tmpfs-backed devfs will
 * be). Opening tty or console gives the Sentry's own stdin when it is a terminal, -ENXIO
 * otherwise (no controlling terminal). */
int vfs_devfs_new(struct vfs_dentry **root);
/* Unmounts the tree whose root is ROOT (the caller holds one reference to it): -EINVAL if ROOT
 * is not a mounted root, -EBUSY if anything else holds the tree, unless DETACH. */
int vfs_umount_at(struct vfs_dentry *root, bool detach);

/* The writable root: an overlay whose lower layer is HOST_DIR, read-only (vfs_mount_host_root)
 * and never modified, and whose upper layer is a memfs in the memory file. Lookups see upper
 * then lower; the first change to a lower object copies it (and its parent directories) up;
 * removing a lower name leaves a whiteout; a directory removed and created again is opaque.
 * Renaming a directory that has lower contents gives -EXDEV (mv then copies). */
int vfs_mount_overlay_root(const char *host_dir, struct vfs_dentry **root);

/* A new tmpfs (file data in the memory file, which must be initialised before the first
 * write). Returns its root dentry (mode 1777), the caller's reference, as vfs_devfs_new. */
int vfs_tmpfs_new(struct vfs_dentry **root);

/* Resolves PATH relative to START (a directory dentry; NULL means FS->cwd; absolute paths
 * start at FS->root). ".." never climbs above FS->root, and symlinks are followed by the
 * Sentry, absolute targets restarting at FS->root. Returns a referenced dentry. Errors:
 * ENOENT, ENOTDIR, ELOOP, ENAMETOOLONG (component > 255 or path >= 4096), EACCES. */
int vfs_lookup(const struct vfs_fs_ctx *fs, struct vfs_dentry *start, const char *path,
	       int lookup_flags, struct vfs_dentry **out);

/* Opens PATH with open(2) FLAGS. Write access to a regular file, O_CREAT of a missing file
 * and O_TRUNC on this read-only cut return -EROFS (devices may be opened for writing; their
 * filesystem decides); O_DIRECTORY on a non-directory -ENOTDIR; O_NOFOLLOW on a symlink
 * -ELOOP; O_PATH gives a file that supports only fstat and use as a dirfd. */
int vfs_open(const struct vfs_fs_ctx *fs, struct vfs_dentry *start, const char *path, int flags,
	     mode_t mode, struct vfs_file **out);

/* vfs_open with the caller's credentials: O_CREAT creates a regular file owned by CRED with
 * MODE (already masked by the umask) where the filesystem allows it, O_TRUNC truncates, and
 * read/write permission and search permission on every directory are checked. vfs_open is
 * this with a NULL CRED. */
int vfs_open_cred(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred,
		  struct vfs_dentry *start, const char *path, int flags, mode_t mode,
		  struct vfs_file **out);
/* openat2(2): vfs_open_cred with RESOLVE, the VFS_LOOKUP_NO_* / BENEATH / IN_ROOT
 * restrictions, applied to every walk the open makes. With BENEATH or IN_ROOT, START (NULL:
 * FS->cwd) is the lookup's root, also for an absolute PATH. */
int vfs_open_resolve(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred,
		     struct vfs_dentry *start, const char *path, int flags, mode_t mode,
		     int resolve, struct vfs_file **out);
/* vfs_lookup with search permission checked against CRED. */
int vfs_lookup_cred(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred,
		    struct vfs_dentry *start, const char *path, int lookup_flags,
		    struct vfs_dentry **out);

/* The write side of the tree. Each takes paths as vfs_lookup does (START NULL = cwd) and
 * follows Linux's errors: EEXIST, ENOENT, ENOTDIR, EISDIR, ENOTEMPTY, EXDEV (across
 * filesystems), EBUSY (a mountpoint, "/"), EINVAL (rmdir "." or a directory renamed into
 * itself), EACCES/EPERM (CRED lacks write or search permission; the sticky bit), EROFS (a
 * read-only filesystem), ELOOP, ENAMETOOLONG. MODE is the permission bits, umask applied. */
int vfs_mkdir(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred, struct vfs_dentry *start,
	      const char *path, mode_t mode);
/* MODE's type: S_IFREG (or 0), S_IFIFO or S_IFSOCK; device nodes give -EPERM. */
int vfs_mknod(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred, struct vfs_dentry *start,
	      const char *path, mode_t mode, dev_t dev);
int vfs_symlink(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred, const char *target,
		struct vfs_dentry *start, const char *path);
/* A new name PATH for OLD (a non-directory, already resolved by the caller). */
int vfs_link(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred, struct vfs_dentry *old,
	     struct vfs_dentry *start, const char *path);
int vfs_unlink(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred, struct vfs_dentry *start,
	       const char *path);
int vfs_rmdir(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred, struct vfs_dentry *start,
	      const char *path);
/* FLAGS: RENAME_NOREPLACE, RENAME_EXCHANGE (not both; RENAME_WHITEOUT gives -EINVAL). */
int vfs_rename(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred, struct vfs_dentry *ostart,
	       const char *opath, struct vfs_dentry *nstart, const char *npath, unsigned int flags);

/* chmod, chown (-1 leaves an id alone), truncate and utimensat on a resolved dentry, with
 * Linux's permission rules (owner or root for chmod and explicit times; root for changing the
 * owner; write permission for truncate and for setting both times to now). TIMES as
 * utimensat's: NULL means both now, tv_nsec UTIME_NOW/UTIME_OMIT as documented. */
int vfs_chmod(struct vfs_dentry *d, const struct vfs_cred *cred, mode_t mode);
int vfs_chown(struct vfs_dentry *d, const struct vfs_cred *cred, uid_t uid, gid_t gid);
int vfs_truncate(struct vfs_dentry *d, const struct vfs_cred *cred, off_t size);
int vfs_utimens(struct vfs_dentry *d, const struct vfs_cred *cred, const struct timespec *times);
/* ftruncate(2): -EBADF (O_PATH), -EINVAL (not open for writing, not a regular file, SIZE < 0). */
int vfs_ftruncate(struct vfs_file *f, off_t size);
/* fallocate(2): MODE 0 or FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE; -EBADF unless open for
 * writing, -ENODEV on non-regular files, -EOPNOTSUPP where the filesystem has no support. */
int vfs_fallocate(struct vfs_file *f, int mode, off_t off, off_t len);
/* statfs(2) of the filesystem D lies on. */
int vfs_statfs(struct vfs_dentry *d, struct statfs *buf);
/* access(2) against CRED's ids (the real ones, for access(2) without AT_EACCESS). */
int vfs_access_cred(struct vfs_dentry *d, const struct vfs_cred *cred, int mode);
/* Permission MASK (R_OK|W_OK|X_OK) on D for CRED, without the read-only filesystem check. */
int vfs_permission(struct vfs_dentry *d, const struct vfs_cred *cred, int mask);

/* HOOK is called whenever a file whose data lives in memory object MO (tmpfs, the overlay's
 * upper layer, memfd) changes size to SIZE — truncate, a write or fallocate past the end — so
 * the kernel can make shared mappings of it fault past the new end, as Linux does. */
void vfs_set_resize_hook(void (*hook)(struct mobj *mo, uint64_t size));
/* NOW gives the guest's CLOCK_REALTIME, which file times are taken from (the host's until it is
 * set), so that a file written after a clock read is never older than it. */
void vfs_set_clock(struct timespec (*now)(void));

/* For a MAP_SHARED mapping of [OFF, OFF+LEN) of F (OFF page-aligned): the memory-file object
 * holding the file's pages (*MOBJ, a new reference the caller puts) and the memory-file offset
 * of byte OFF (*MF_OFF). The file's backing is grown as needed, so a mapping's writes are
 * seen by read(2) and by every other mapper. If the file later grows past what was reserved
 * its data moves, and older mappings keep the old pages (the file reserves generously).
 * -ENODEV for files whose data is not in the memory file (the host lower layer: the caller
 * copies with pread_kernel). */
int vfs_file_mmap_range(struct vfs_file *f, off_t off, size_t len, struct mobj **mobj,
			uint64_t *mf_off);

int vfs_stat(struct vfs_dentry *d, struct stat *st);
/* True if the content of the file D names cannot change: a file of the host's lower layer
 * that has not been copied up (the host tree is never written). */
bool vfs_dentry_immutable(struct vfs_dentry *d);
/* For such a file, the host's own attributes of it (its host device and inode, which the
 * overlay does not show), to know it by; -EINVAL for any other. */
int vfs_dentry_host_stat(struct vfs_dentry *d, struct stat *st);
/* Reads up to LEN bytes at OFF of the regular file D names, as the Sentry (no permission
 * check, no open file left behind): what a private file mapping was filled from. Returns the
 * bytes read (fewer at the end of the file) or a negative errno. */
ssize_t vfs_dentry_pread(struct vfs_dentry *d, void *buf, size_t len, off_t off);
/* The same, written by the host kernel to TO_FD at TO_OFF (which moves TO_FD's position, to be
 * the caller's alone), without a copy through the Sentry's memory; -ENOTSUP where D's file
 * system cannot. */
ssize_t vfs_dentry_copy_to_fd(struct vfs_dentry *d, int to_fd, off_t to_off, size_t len, off_t off);
int vfs_statx_fill(const struct stat *st, unsigned int mask, struct statx *stx);
ssize_t vfs_readlink(struct vfs_dentry *d, char *buf, size_t size);
/* access(2) with MODE (F_OK/R_OK/W_OK/X_OK); W_OK on this read-only cut gives -EROFS, except
 * on devices, fifos and sockets. */
int vfs_access(struct vfs_dentry *d, int mode);
/* Writes the path of D as seen from ROOT into BUF (NUL-terminated), through the mounts it
 * lies under (the root of a tree mounted on /dev is "/dev"); returns its length+1, or
 * -ERANGE if it does not fit. */
int vfs_path(struct vfs_dentry *root, struct vfs_dentry *d, char *buf, size_t size);

/* A new pipe: *RD and *WR are its ends, with O_NONBLOCK from FLAGS. Capacity 64 KiB. */
int vfs_pipe_new(int flags, struct vfs_file **rd, struct vfs_file **wr);
/* F_GETPIPE_SZ (SIZE < 0) and F_SETPIPE_SZ; -EBADF if F is not a pipe. */
long vfs_pipe_size(struct vfs_file *f, long size);
/* Opens an end of the FIFO whose pipe the inode keeps in *SLOT (created on the first open,
 * cleared when the last end goes): F gets the pipe's ops. O_WRONLY|O_NONBLOCK without a reader
 * is -ENXIO. */
int vfs_fifo_open(void **slot, struct vfs_file *f, int flags);
/* A blocking FIFO open waits for its partner: true while F (just opened) has none, with *WQ
 * the queue a partner's open wakes. */
bool vfs_fifo_waiting(struct vfs_file *f, struct waitq **wq);
/* tee(2): copies up to LEN bytes from pipe IN to pipe OUT without consuming them; -EAGAIN when
 * IN is empty (with writers) or OUT full, 0 at IN's end, -EINVAL unless two distinct pipes. */
long vfs_pipe_tee(struct vfs_file *in, struct vfs_file *out, size_t len);
/* True if F is one end of a pipe (writes there raise SIGPIPE when no reader is left). */
bool vfs_is_pipe(struct vfs_file *f);

/* --- the inodes of pipes and sockets outside the tree (vfs/pseudo.c) ------------------------
 * Linux gives every pipe an inode in pipefs and every socket one in sockfs: fstat shows it,
 * fchmod and fchown change it, fstatfs names its filesystem, and record and flock locks are
 * kept on it. A FIFO's is its node in the tree. */
struct vfs_pseudo_inode {
	unsigned long magic; /* its filesystem's f_type: PIPEFS_MAGIC, SOCKFS_MAGIC */
	dev_t dev;	     /* and st_dev, which is also its f_fsid */
	mode_t perm;	     /* permission bits */
	uid_t uid;
	gid_t gid;
	struct timespec ctime;
	bool changed; /* by fchmod or fchown since it was made: a checkpoint saves it */
};

void vfs_pseudo_init(struct vfs_pseudo_inode *pi, unsigned long magic, dev_t dev, mode_t perm,
		     uid_t uid, gid_t gid, struct timespec ctime);
/* Fills ST's permission bits (the type bits are kept), owner and ctime from PI. */
void vfs_pseudo_stat(const struct vfs_pseudo_inode *pi, struct stat *st);
/* F's pseudo inode, or NULL (a file in the tree, or one without such an inode). */
struct vfs_pseudo_inode *vfs_file_pseudo(struct vfs_file *f);
/* fchmod(2) and fchown(2) of an open file: its dentry's inode, or its pseudo inode; -EINVAL
 * for a file with neither (host stdio). */
int vfs_file_chmod(struct vfs_file *f, const struct vfs_cred *cred, mode_t mode);
int vfs_file_chown(struct vfs_file *f, const struct vfs_cred *cred, uid_t uid, gid_t gid);
/* fstatfs(2) of a file outside the tree: pipefs, sockfs or anon_inodefs; -ENOSYS if F is none
 * of those (a host descriptor handed in as stdio). */
int vfs_file_statfs_pseudo(struct vfs_file *f, struct statfs *out);
/* What advisory locks on F are kept on: its inode, or its pseudo inode; NULL if neither. */
const void *vfs_file_lock_key(struct vfs_file *f);

/* eventfd, epoll, signalfd and timerfd files share one anonymous inode, as Linux's anon_inode
 * files do: fstat shows this device and inode, mode 0600 with no file type bits, and one link
 * (vfs_anon_getattr, a getattr for their operation tables). */
#define VFS_ANON_INODE_DEV 0xd
#define VFS_ANON_INODE_INO 1
int vfs_anon_getattr(struct vfs_file *f, struct stat *st);

/* eventfd2(2): a counter starting at INITVAL. FLAGS are EFD_SEMAPHORE, EFD_NONBLOCK (kept in
 * F->flags as O_NONBLOCK) and EFD_CLOEXEC (the caller's); others give -EINVAL. Reads and
 * writes return -EAGAIN instead of blocking. */
int vfs_eventfd_new(unsigned int initval, int flags, struct vfs_file **out);
bool vfs_is_eventfd(struct vfs_file *f);
/* The counter of eventfd F (for /proc fdinfo). */
uint64_t vfs_eventfd_count(struct vfs_file *f);

/* epoll_create1(2): FLAGS may hold only EPOLL_CLOEXEC (the caller's). */
int vfs_epoll_new(int flags, struct vfs_file **out);
bool vfs_is_epoll(struct vfs_file *f);
/* epoll_ctl(2) on epoll file EP for descriptor FD open on TARGET; items are keyed by (FD,
 * TARGET) as in Linux, and hold no reference on TARGET: its last put removes them. EV may be
 * NULL for EPOLL_CTL_DEL. Errors in Linux's order: EPERM (TARGET cannot be polled), EINVAL
 * (EP not an epoll, TARGET == EP, bad EPOLLEXCLUSIVE use, bad OP), ELOOP (a cycle or more than
 * four levels of nested epolls), EEXIST, ENOENT, ENOMEM. */
int vfs_epoll_ctl(struct vfs_file *ep, int op, int fd, struct vfs_file *target,
		  const struct epoll_event *ev);
/* Fills OUT with up to MAXEVENTS ready events and returns their number, 0 if none; never
 * blocks: the caller waits on the queue EP's poll op gives (and on vfs_epoll_host_fds) and
 * calls again. -EINVAL if EP is not an epoll or MAXEVENTS <= 0. */
int vfs_epoll_wait(struct vfs_file *ep, struct epoll_event *out, int maxevents);
/* The host descriptors a task blocked on EP (or on a poll of it) must watch, since no wait
 * queue tells of their readiness: each enabled item's (nested epolls' too) host fd, with the
 * poll events it waits for. Fills at most MAX entries, one per descriptor, and returns how
 * many there are; a result above MAX is only an upper bound: call again with that much room. */
int vfs_epoll_host_fds(struct vfs_file *ep, int *fds, uint32_t *events, int max);
/* Removes every epoll item watching F; vfs_file_put calls it before F's release. */
void vfs_epoll_file_released(struct vfs_file *f);

/* A file wrapping host descriptor FD (the sandbox's stdio). The file owns FD when OWNED.
 * Returns NULL if out of memory (FD then stays the caller's). Reads return -EAGAIN when FD has no
 * input: the caller blocks the task on ops->host_fd() and retries. */
struct vfs_file *vfs_file_host_fd(int fd, int flags, bool owned);
/* The sandbox's stdio: a file wrapping a dup of the Sentry's descriptor STD_FD (0, 1 or 2),
 * which a checkpoint records so that a restore wraps the restoring Sentry's own. Returns 0 or
 * -errno (the dup failed, -ENOMEM). */
int vfs_file_host_stdio(int std_fd, int flags, struct vfs_file **out);
/* Records that host-descriptor file F (vfs_file_host_fd, vfs_host_fd_attach) wraps a dup of the
 * Sentry's descriptor STD_FD (/dev/tty's open wraps stdin). */
void vfs_host_fd_set_stdio(struct vfs_file *f, int std_fd);

/* lseek(2): -ESPIPE on a non-seekable file, -EINVAL for a negative result or bad WHENCE,
 * -EBADF on an O_PATH file. On a directory the offset is a getdents64 cookie: SEEK_SET to 0
 * (or to a d_off from a record) restarts the listing there. */
off_t vfs_lseek(struct vfs_file *f, off_t off, int whence);

/* A detached dentry standing for open file F, which has none (a pipe, a socket, a host
 * descriptor): what a walk through /proc/PID/fd/N lands on. Its inode stats as F does and
 * holds a reference on F. vfs_anon_file gives F back (NULL for any other dentry): vfs_open
 * reopens it rather than opening the dentry. */
int vfs_anon_dentry(struct vfs_file *f, struct vfs_dentry **out);
struct vfs_file *vfs_anon_file(struct vfs_dentry *d);

/* Inode references: a dentry holds one on its inode. */
struct vfs_inode *vfs_inode_get(struct vfs_inode *ino);
void vfs_inode_put(struct vfs_inode *ino);

/* A cached child holds a reference on its parent, so a dentry lives while it or any
 * descendant is referenced; the put that drops the last reference frees it. */
struct vfs_dentry *vfs_dentry_get(struct vfs_dentry *d);
void vfs_dentry_put(struct vfs_dentry *d);
struct vfs_file *vfs_file_get(struct vfs_file *f);
void vfs_file_put(struct vfs_file *f);
bool vfs_is_dir(struct vfs_dentry *d);

/* Unix domain sockets (vfs/unix.c) */

/* A socket object behind a file; names resolve to it (vfs_unix_lookup_*), and it is only
 * borrowed for the syscall that looked it up: the Sentry is single-threaded. */
struct vfs_unix_sock;

/* Credentials as SO_PEERCRED and SCM_CREDENTIALS carry them (struct ucred's layout). */
struct vfs_unix_cred {
	int32_t pid;
	uint32_t uid, gid;
};

/* Room for any socket address these calls write: a sockaddr_un whose 108-byte path is
 * followed by its NUL. */
#define VFS_UNIX_ADDR_MAX 128

/* One sendmsg/recvmsg at the object level. IOV points into Sentry memory. FLAGS are MSG_*
 * (MSG_PEEK, MSG_TRUNC are honoured; the object never blocks: it returns -EAGAIN and the
 * caller waits on the queue the file's poll op gives, or on *WQ where a call returns one).
 *   send: NAMED says the caller gave an address; DEST is what it names (dgram only: stream
 *     sockets refuse an address, seqpacket ignores it). FILES/NFILES are SCM_RIGHTS: the
 *     references stay the caller's, the message takes its own. CRED is who sends (always
 *     recorded; delivered to a receiver with SO_PASSCRED).
 *   recv: FILES is a malloc'd array of NFILES references that become the caller's (NULL when
 *     none); HAS_CRED is set (with CRED) when the socket has SO_PASSCRED; ADDR (if not NULL,
 *     VFS_UNIX_ADDR_MAX bytes) gets the sender's address and ADDRLEN its length, 0 for an
 *     unnamed sender; MSG_FLAGS gets MSG_TRUNC for a cut datagram. */
struct vfs_unix_msg {
	const struct iovec *iov;
	int iovcnt;
	int flags;
	bool named;
	struct vfs_unix_sock *dest;
	struct vfs_file **files;
	int nfiles;
	struct vfs_unix_cred cred;
	bool has_cred;
	void *addr;
	unsigned int addrlen;
	int msg_flags;
};

/* socket(AF_UNIX, TYPE, 0): TYPE is SOCK_STREAM, SOCK_DGRAM (SOCK_RAW means it too) or
 * SOCK_SEQPACKET, else -ESOCKTNOSUPPORT. FLAGS may hold O_NONBLOCK. OWNER (the creator's
 * tgid, euid, egid) owns the inode fstat shows. */
int vfs_unix_socket_new(int type, int flags, const struct vfs_unix_cred *owner,
			struct vfs_file **out);
/* socketpair(2): two connected sockets; each one's SO_PEERCRED is CRED. */
int vfs_unix_socketpair(int type, int flags, const struct vfs_unix_cred *cred, struct vfs_file **a,
			struct vfs_file **b);
bool vfs_is_unix_socket(struct vfs_file *f);
int vfs_unix_type(struct vfs_file *f);
/* True if an -EPIPE from writing F raises SIGPIPE (SOCK_STREAM does; datagrams do not). */
bool vfs_unix_sends_sigpipe(struct vfs_file *f);
/* What a blocking send on F (any file) that was woken from its wait for room ends with before
 * sending more, as in Linux's sock_alloc_send_pskb: on a stream socket, a pending error
 * (taken: ECONNRESET when the peer went away with data unread) or EPIPE, without SIGPIPE, once
 * F can no longer send; 0 to go on. */
int vfs_unix_woken_send_error(struct vfs_file *f);

/* Names. Abstract names (sun_path[0] == 0) live in a Sentry-wide table, one namespace per
 * socket type as in Linux; NAME/LEN are the bytes after the NUL. Filesystem names live in a
 * registry keyed by NODE, a string the caller derives from the S_IFSOCK node the bind made
 * (its device and inode number: sentry/sys_socket.c), so the socket follows its node through
 * renames and links; SUN_PATH is the path as the guest gave it, which getsockname shows. A
 * name goes when its socket is closed or vfs_unix_unbind_path removes it. Errors: -EINVAL
 * (already bound), -EADDRINUSE, -ENOMEM. */
int vfs_unix_bind_abstract(struct vfs_file *f, const void *name, size_t len);
int vfs_unix_bind_path(struct vfs_file *f, const char *node, const char *sun_path);
/* bind(2) with only a family, or an implicit bind: a free abstract name of 5 hex digits. */
int vfs_unix_autobind(struct vfs_file *f);
/* -ECONNREFUSED if no socket of TYPE has the abstract name. */
int vfs_unix_lookup_abstract(int type, const void *name, size_t len, struct vfs_unix_sock **out);
/* -ENOENT if no socket is bound to NODE. */
int vfs_unix_lookup_path(const char *node, struct vfs_unix_sock **out);
int vfs_unix_unbind_path(const char *node);

/* listen(2) with BACKLOG already clamped to [0, somaxconn]; CRED becomes what connecting
 * sockets see as SO_PEERCRED. */
int vfs_unix_listen(struct vfs_file *f, int backlog, const struct vfs_unix_cred *cred);
/* connect(2) to TARGET (NULL: AF_UNSPEC, which dissolves a datagram association). Stream and
 * seqpacket sockets are queued on the listener and connected at once, as Linux does; CRED is
 * what the accepted socket sees as SO_PEERCRED. -EAGAIN with *WQ set when the listener's
 * backlog is full. Errors: EISCONN, EINVAL, EPROTOTYPE, ECONNREFUSED, EPERM. */
int vfs_unix_connect(struct vfs_file *f, struct vfs_unix_sock *target,
		     const struct vfs_unix_cred *cred, struct waitq **wq);
/* accept4(2): FLAGS may hold O_NONBLOCK for the new file. -EAGAIN when nothing is queued. */
int vfs_unix_accept(struct vfs_file *f, int flags, struct vfs_file **out);
/* getsockname (PEER false) / getpeername: ADDR gets VFS_UNIX_ADDR_MAX bytes at most. */
int vfs_unix_getname(struct vfs_file *f, bool peer, void *addr, unsigned int *len);
/* Bytes sent (a stream send may be partial) or received, or a negative errno. */
ssize_t vfs_unix_sendmsg(struct vfs_file *f, struct vfs_unix_msg *m);
ssize_t vfs_unix_recvmsg(struct vfs_file *f, struct vfs_unix_msg *m);
/* shutdown(2) with SHUT_RD, SHUT_WR or SHUT_RDWR. */
int vfs_unix_shutdown(struct vfs_file *f, int how);
/* SOL_SOCKET options. getsockopt fills VAL (at least 32 bytes) and sets *LEN to the value's
 * natural size; the caller copies out what the guest has room for. */
int vfs_unix_getsockopt(struct vfs_file *f, int level, int name, void *val, unsigned int *len);
int vfs_unix_setsockopt(struct vfs_file *f, int level, int name, const void *val, unsigned int len);

/* One AF_UNIX socket as /proc/net/unix lists it. */
struct vfs_unix_info {
	int type;
	bool listening;
	int state; /* SS_UNCONNECTED 1, SS_CONNECTING 2, SS_CONNECTED 3 */
	uint64_t ino;
	int refs;
	const char *addr; /* the sockaddr_un, ADDRLEN bytes; 0: unnamed */
	unsigned int addrlen;
};
/* Calls FN on every AF_UNIX socket with a file (and connections waiting for accept), until it
 * returns non-zero. */
int vfs_unix_foreach(int (*fn)(const struct vfs_unix_info *i, void *arg), void *arg);

/* Sockets of the other families: the private loopback network (vfs/inet.c), netlink
 * (vfs/netlink.c) and host sockets (vfs/hostnet.c) answer the socket calls through the
 * operations of their file, F->ops->sock. Addresses are the guest's sockaddr bytes, at most
 * VFS_SOCK_ADDR_MAX. Nothing blocks: an op that cannot finish now returns -EAGAIN, and the
 * caller waits for the file's readiness (its poll queue or host descriptor) and calls again.
 * connect(2) is Linux's: a connection that is not made at once gives -EINPROGRESS, and
 * calling again reports -EALREADY while it is still being made, 0 once it is (then -EISCONN),
 * or why it failed; a file without O_NONBLOCK waits for POLLOUT in between. */
#define VFS_SOCK_ADDR_MAX 128

/* One sendmsg/recvmsg. IOV points into Sentry memory; FLAGS are MSG_*.
 *   send: NAME/NAMELEN the destination, or NULL.
 *   recv: ADDR (VFS_SOCK_ADDR_MAX bytes, or NULL) gets the source and ADDRLEN its length (0
 *     when there is none); MSG_FLAGS gets MSG_TRUNC and the like. */
struct vfs_sock_msg {
	const struct iovec *iov;
	int iovcnt;
	int flags;
	const void *name;
	unsigned int namelen;
	void *addr;
	unsigned int addrlen;
	int msg_flags;
};

struct vfs_sock_ops {
	int family;
	int (*bind)(struct vfs_file *f, const void *addr, unsigned int len);
	/* BACKLOG is clamped to [0, somaxconn] already. */
	int (*listen)(struct vfs_file *f, int backlog);
	int (*connect)(struct vfs_file *f, const void *addr, unsigned int len);
	/* FLAGS: O_NONBLOCK for the new file. -EAGAIN when nothing is queued. */
	int (*accept)(struct vfs_file *f, int flags, struct vfs_file **out);
	/* Into ADDR (VFS_SOCK_ADDR_MAX bytes): PEER 0 getsockname, 1 getpeername, 2 the address
	 * accept(2) reports for a socket it just handed out (even if that connection is gone). */
	int (*getname)(struct vfs_file *f, int peer, void *addr, unsigned int *len);
	/* Bytes sent (a stream send may be partial) or received, or a negative errno. */
	ssize_t (*sendmsg)(struct vfs_file *f, struct vfs_sock_msg *m);
	ssize_t (*recvmsg)(struct vfs_file *f, struct vfs_sock_msg *m);
	int (*shutdown)(struct vfs_file *f, int how);
	/* getsockopt fills VAL (VFS_SOCKOPT_MAX bytes) and sets *LEN to the value's natural size,
	 * or to at most *LEN on entry where Linux cuts the value to the caller's room (TCP_INFO).
	 */
	int (*getsockopt)(struct vfs_file *f, int level, int name, void *val, unsigned int *len);
	int (*setsockopt)(struct vfs_file *f, int level, int name, const void *val,
			  unsigned int len);
};

#define VFS_SOCKOPT_MAX 256

/* The socket operations of F, or NULL when F is not such a socket. */
const struct vfs_sock_ops *vfs_sock_ops(struct vfs_file *f);

/* socket(AF_INET or AF_INET6, TYPE, PROTOCOL) on the sandbox's private loopback network:
 * TCP (SOCK_STREAM) and UDP (SOCK_DGRAM) endpoints on 127.0.0.0/8, ::1 and IPv4-mapped IPv6,
 * connected inside the Sentry with TCP's and UDP's observable semantics (no packets).
 * FLAGS may hold O_NONBLOCK; OWNER owns the inode and the SO_REUSEPORT group it joins. Raw
 * sockets are -EPERM (no CAP_NET_RAW), other types -ESOCKTNOSUPPORT, other protocols
 * -EPROTONOSUPPORT. */
int vfs_inet_socket_new(int family, int type, int protocol, int flags,
			const struct vfs_unix_cred *owner, struct vfs_file **out);
bool vfs_is_inet_socket(struct vfs_file *f);
/* socket(AF_NETLINK, TYPE, PROTOCOL) (SOCK_RAW or SOCK_DGRAM): NETLINK_ROUTE, answering the
 * requests that read the sandbox's interfaces, addresses and routes, and NETLINK_SOCK_DIAG,
 * answering dumps of its TCP, UDP and Unix sockets; other protocols are -EPROTONOSUPPORT. */
int vfs_netlink_socket_new(int type, int protocol, int flags, const struct vfs_unix_cred *owner,
			   struct vfs_file **out);
/* --network host: socket(FAMILY, TYPE, PROTOCOL) as a socket of the host the Sentry owns
 * (vfs/hostnet.c), for AF_INET and AF_INET6 TCP and UDP and NETLINK_ROUTE; raw sockets stay
 * -EPERM. FLAGS may hold O_NONBLOCK. Such sockets cannot be checkpointed. */
int vfs_hostnet_socket_new(int family, int type, int protocol, int flags, struct vfs_file **out);
bool vfs_is_hostnet_socket(struct vfs_file *f);
/* An interface request (SIOCGIF*) of host socket F with ARG in Sentry memory, answered by the
 * host. */
long vfs_hostnet_ifioctl(struct vfs_file *f, unsigned int cmd, void *arg);

/* net.ipv4.ip_local_port_range: where ephemeral ports are taken from. */
void vfs_inet_port_range(int *lo, int *hi);
int vfs_inet_set_port_range(int lo, int hi);

/* The network interfaces of the sandbox (vfs/netdev.c): lo alone, with 127.0.0.1/8 and
 * ::1/128, what /proc/net, netlink and the SIOCGIF* ioctls describe. Counters are those of
 * the loopback traffic since the Sentry started. */
struct vfs_netdev {
	const char *name;
	int index;
	unsigned int flags; /* IFF_* as SIOCGIFFLAGS shows them */
	int mtu, type, txqlen;
	uint8_t v4[4], v4_prefix;
	uint8_t v6[16], v6_prefix;
};
struct vfs_netdev_stats {
	uint64_t rx_bytes, rx_packets, tx_bytes, tx_packets;
};
/* The interface at position I (0, 1...), or NULL past the last. */
const struct vfs_netdev *vfs_netdev_at(int i);
const struct vfs_netdev *vfs_netdev_by_index(int index);
const struct vfs_netdev *vfs_netdev_by_name(const char *name);
void vfs_netdev_stats(const struct vfs_netdev *d, struct vfs_netdev_stats *st);

/* One endpoint as /proc/net/{tcp,udp}[6] list it. Addresses are in IPv6 form (IPv4 ones
 * mapped), ports in host order. */
struct vfs_inet_info {
	int family, protocol, state; /* state: Linux's TCP_* numbers */
	uint8_t local[16], remote[16];
	uint16_t lport, rport;
	uint32_t txq, rxq; /* bytes queued, or a listener's backlog and accept queue */
	uint32_t uid;
	uint64_t ino;
	uint32_t drops;
};
/* Calls FN on every endpoint of PROTOCOL (IPPROTO_TCP or IPPROTO_UDP), in creation order,
 * until it returns non-zero. */
int vfs_inet_foreach(int protocol, int (*fn)(const struct vfs_inet_info *i, void *arg), void *arg);

#endif
