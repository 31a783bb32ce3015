/* vfs/synth.h — in-memory synthetic filesystems built from tables, as Linux's procfs lists a
 * process's files in one array: a tree of static directories (entries fixed when built),
 * device nodes, symlinks and files whose operations the caller supplies. devfs is built with
 * it; procfs and sysfs will add lazy and dynamic directories and generated files on top. */
#ifndef VFS_SYNTH_H
#define VFS_SYNTH_H

#include "vfs/vfs.h"

/* One entry of a synthetic directory. Names, targets and child tables are copied when the
 * tree is built, so a table may live on the stack. */
struct vfs_synth_node {
	const char *name;
	mode_t mode;			       /* type and permission bits: S_IFCHR | 0666 */
	unsigned int dev_major, dev_minor;     /* S_IFCHR, S_IFBLK: st_rdev */
	const char *target;		       /* S_IFLNK */
	const struct vfs_synth_node *children; /* S_IFDIR: its entries, in listing order */
	size_t nchildren;
	/* Other types: opening installs FOPS with PRIV as the file's priv; OPEN, if set, is
	 * called instead (PRIV is then vfs_synth_priv(INO)). Neither: -ENXIO, a node without a
	 * driver. Write access is the file's to refuse. */
	const struct vfs_file_ops *fops;
	int (*open)(struct vfs_inode *ino, struct vfs_file *f, int flags);
	void *priv;
	uid_t uid; /* the owner (root unless set) */
	gid_t gid;
	/* S_IFDIR: entries besides CHILDREN that come and go (devpts's terminals), asked on every
	 * lookup and listing; NULL for none. */
	const struct vfs_synth_dynamic *dynamic;
};

/* A directory's changing entries. Each is described as a node (whose name may point into
 * NAMEBUF, NAME_MAX + 1 bytes) with a stable inode number and a key that orders the listing:
 * LOOKUP finds NAME (-ENOENT if absent); NEXT finds the first entry whose key is at least *KEY
 * and sets *KEY to its key (false past the last). Such an entry's inode lives as long as a
 * dentry holds it. */
struct vfs_synth_dynamic {
	int (*lookup)(const char *name, struct vfs_synth_node *node, char *namebuf, ino_t *ino);
	bool (*next)(uint64_t *key, struct vfs_synth_node *node, char *namebuf, ino_t *ino);
};

#define VFS_SYNTH_DIR(NAME, PERM, KIDS)                                                            \
	{                                                                                          \
		.name = (NAME), .mode = S_IFDIR | (PERM), .children = (KIDS),                      \
		.nchildren = sizeof(KIDS) / sizeof((KIDS)[0])                                      \
	}
#define VFS_SYNTH_EMPTY_DIR(NAME, PERM)                                                            \
	{                                                                                          \
		.name = (NAME), .mode = S_IFDIR | (PERM)                                           \
	}
#define VFS_SYNTH_CHR(NAME, PERM, MAJOR, MINOR, FOPS)                                              \
	{                                                                                          \
		.name = (NAME), .mode = S_IFCHR | (PERM), .dev_major = (MAJOR),                    \
		.dev_minor = (MINOR), .fops = (FOPS)                                               \
	}
#define VFS_SYNTH_LNK(NAME, TARGET)                                                                \
	{                                                                                          \
		.name = (NAME), .mode = S_IFLNK | 0777, .target = (TARGET)                         \
	}

/* A new synthetic filesystem of type FS_TYPE (what its mounts show) with its own st_dev,
 * whose root directory has permissions PERM and the N entries NODES. *ROOT gets its root
 * dentry, the caller's reference: the last put frees the whole tree. Inode numbers are
 * unique within the filesystem, the root's is 1; everything is owned by root and dated from
 * the build. Errors: EINVAL (a bad name or type), EEXIST (a duplicate name), ENOMEM. */
int vfs_synth_new(const char *fs_type, mode_t perm, const struct vfs_synth_node *nodes, size_t n,
		  struct vfs_dentry **root);
/* Adds the N entries NODES to synthetic directory DIR (which must not be listed or looked up
 * concurrently: the Sentry is single-threaded). On failure the entries before the failing one
 * stay. Errors as vfs_synth_new, and ENOTDIR if DIR is not a synthetic directory. */
int vfs_synth_add(struct vfs_inode *dir, const struct vfs_synth_node *nodes, size_t n);
/* The PRIV of the node INO was built from. */
void *vfs_synth_priv(struct vfs_inode *ino);
/* A getattr for the file ops of synthetic nodes: the attributes of the node opened. */
int vfs_synth_file_getattr(struct vfs_file *f, struct stat *st);

#endif
