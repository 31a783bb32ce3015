/* /proc/PID/ns: a process's namespaces, as links reading "TYPE:[INODE]" that lead to the
 * files of a small unmounted nsfs. A sandbox is one set of namespaces (every process shares
 * them; unshare and setns are not implemented), so every process's links name the same
 * files, numbered as Linux numbers its initial namespaces. The files stat and open as on
 * Linux (a read is EINVAL), so tools that compare namespaces by inode see one set. */
#include "fs-proc/internal.h"

#include <errno.h>
#include <string.h>

#define NSFS_MAGIC 0x6e736673

/* One namespace type: its file in nsfs and the inode Linux gives its initial namespace. */
struct ns_type {
	const char *name;
	ino_t ino;
};

enum { NS_CGROUP, NS_IPC, NS_MNT, NS_NET, NS_PID, NS_TIME, NS_USER, NS_UTS, NS_NTYPES };

static const struct ns_type ns_types[NS_NTYPES] = {
    [NS_CGROUP] = {"cgroup", 4026531835}, [NS_IPC] = {"ipc", 4026531839},
    [NS_MNT] = {"mnt", 4026531832},	  [NS_NET] = {"net", 4026531833},
    [NS_PID] = {"pid", 4026531836},	  [NS_TIME] = {"time", 4026531834},
    [NS_USER] = {"user", 4026531837},	  [NS_UTS] = {"uts", 4026531838},
};

/* nsfs: one regular 0444 file per type. */

static void nsfs_file_getattr(struct kernfs_node *n, struct stat *st)
{
	st->st_ino = ns_types[kernfs_arg(n)].ino;
}

#define NSFS_FILE(NAME, TYPE)                                                                      \
	{                                                                                          \
		.name = (NAME), .mode = S_IFREG | 0444, .flags = KERNFS_WRITE_EINVAL,              \
		.getattr = nsfs_file_getattr, .arg = (TYPE)                                        \
	}

static const struct kernfs_entry nsfs_rows[] = {
    NSFS_FILE("cgroup", NS_CGROUP), NSFS_FILE("ipc", NS_IPC), NSFS_FILE("mnt", NS_MNT),
    NSFS_FILE("net", NS_NET),	    NSFS_FILE("pid", NS_PID), NSFS_FILE("time", NS_TIME),
    NSFS_FILE("user", NS_USER),	    NSFS_FILE("uts", NS_UTS),
};

static const struct kernfs_entry nsfs_root = {
    .name = "/",
    .mode = S_IFDIR | 0555,
    .children = nsfs_rows,
    .nchildren = sizeof(nsfs_rows) / sizeof(nsfs_rows[0]),
};

/* The nsfs of procfs P, made on first use and kept for P's life. */
static int nsfs_of(struct procfs *p, struct vfs_dentry **root)
{
	int err = 0;

	if (!p->nsfs)
		err = kernfs_new("nsfs", NSFS_MAGIC, &nsfs_root, NULL, NULL, false, &p->nsfs);
	*root = p->nsfs;
	return err;
}

void procfs_nsfs_free(struct procfs *p)
{
	if (p->nsfs)
		vfs_dentry_put(p->nsfs);
	p->nsfs = NULL;
}

/* /proc/PID/ns/NAME */

static int ns_readlink(struct kernfs_node *n, struct kernfs_buf *b)
{
	const struct ns_type *ns = &ns_types[kernfs_arg(n)];

	kernfs_buf_printf(b, "%s:[%lu]", ns->name, (unsigned long)ns->ino);
	return 0;
}

static int ns_dentry(struct kernfs_node *n, struct vfs_dentry **out)
{
	struct vfs_dentry *root;
	int err = nsfs_of(procfs_of(n), &root);
	struct vfs_fs_ctx fs = {.root = root, .cwd = root};

	if (err)
		return err;
	return vfs_lookup(&fs, root, ns_types[kernfs_arg(n)].name, 0, out);
}

#define NS_LINK(NAME, TYPE)                                                                        \
	{                                                                                          \
		.name = (NAME), .mode = S_IFLNK | 0777, .flags = KERNFS_MAGIC_LINK,                \
		.readlink = ns_readlink, .link_dentry = ns_dentry, .getattr = procfs_pid_owner,    \
		.arg = (TYPE)                                                                      \
	}

/* In Linux's order (fs/proc/namespaces.c lists them so). */
const struct kernfs_entry procfs_ns_rows[] = {
    NS_LINK("net", NS_NET),
    NS_LINK("uts", NS_UTS),
    NS_LINK("ipc", NS_IPC),
    NS_LINK("pid", NS_PID),
    NS_LINK("pid_for_children", NS_PID),
    NS_LINK("user", NS_USER),
    NS_LINK("mnt", NS_MNT),
    NS_LINK("cgroup", NS_CGROUP),
    NS_LINK("time", NS_TIME),
    NS_LINK("time_for_children", NS_TIME),
    KERNFS_END_ROW,
};
