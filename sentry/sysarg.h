/* Typed access to a syscall's arguments, in the spirit of xv6's argint/argptr/argfd: a register
 * becomes an int, a descriptor the file it names, a path the string and the directory its walk
 * starts from, a versioned struct or an iovec array a checked copy. Each rule of Linux's for
 * fetching an argument is written once, here; handlers fetch through these and never cast
 * a register or copy a path themselves. Pointers and sizes are the registers as they are. */
#ifndef SENTRY_SYSARG_H
#define SENTRY_SYSARG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct mm;
struct task;
struct vfs_dentry;
struct vfs_file;

/* The most one read or write moves (Linux's MAX_RW_COUNT), and the most iovecs one call
 * takes (UIO_MAXIOV). */
#define ARG_RW_MAX (INT_MAX & ~4095L)
#define ARG_IOV_MAX 1024

/* Linux's int and unsigned int parameters are a register's low 32 bits; long and off_t
 * ones the whole register, signed. */
static inline int arg_int(const unsigned long *a, int n)
{
	return (int)a[n];
}

static inline unsigned int arg_uint(const unsigned long *a, int n)
{
	return (unsigned int)a[n];
}

static inline long arg_long(const unsigned long *a, int n)
{
	return (long)a[n];
}

/* The open file FD names in T's table, or NULL. It is borrowed: the table holds the
 * reference, so it stays valid until the handler closes a descriptor or returns. O_PATH
 * descriptors count, as for Linux's fdget_raw (fstat, fchdir, dup, close, *at dirfds). */
struct vfs_file *arg_file(struct task *t, int fd);
/* The same for calls that act on an open file (Linux's fdget): an O_PATH descriptor only
 * names a file, so it is NULL here too. */
struct vfs_file *arg_file_nopath(struct task *t, int fd);

/* Flags of arg_path_at and arg_lookup beside Linux's AT_ ones. */
#define ARG_IN_ROOT 0x10000000	     /* an absolute path starts at DIRFD (RESOLVE_IN_ROOT) */
#define ARG_NULL_IS_EMPTY 0x20000000 /* with AT_EMPTY_PATH a NULL path is the empty one */

/* Copies the path string at ADDR into PATH (PATH_MAX bytes): -EFAULT, or -ENAMETOOLONG when
 * it does not end within PATH_MAX bytes. */
long arg_path(struct task *t, uintptr_t addr, char *path);
/* The path argument of an *at call: the string at ADDR copied into PATH (PATH_MAX bytes) and
 * *START, where its walk begins: NULL for the cwd (AT_FDCWD) or the root (an absolute path),
 * else DIRFD's directory, borrowed from its file. An empty path is -ENOENT, a DIRFD that is
 * not open -EBADF and one that is not a directory -ENOTDIR. FLAGS: ARG_IN_ROOT. */
long arg_path_at(struct task *t, int dirfd, uintptr_t addr, int flags, char *path,
		 struct vfs_dentry **start);
/* Resolves the path argument at ADDR from DIRFD to *OUT (a reference), following a last
 * symlink unless FLAGS has AT_SYMLINK_NOFOLLOW. With AT_EMPTY_PATH an empty path names DIRFD
 * itself (the cwd for AT_FDCWD); a DIRFD with no dentry (a pipe, a socket) is then -ENOENT,
 * or is returned in *EMPTY_FILE (borrowed) when the caller gives it, with *OUT NULL. FLAGS
 * may have ARG_NULL_IS_EMPTY. */
long arg_lookup(struct task *t, int dirfd, uintptr_t addr, int flags, struct vfs_dentry **out,
		struct vfs_file **empty_file);

/* Copies a struct argument that grows by versions (clone_args, open_how) into DST (KSIZE
 * bytes) as Linux's copy_struct_from_user: a USIZE below MIN is -EINVAL and one above a page
 * -E2BIG; a struct shorter than ours is zero-filled, a longer one must be zero past ours
 * (-E2BIG: the caller asks for something this kernel does not know). */
long arg_struct(struct task *t, void *dst, size_t ksize, uintptr_t src, size_t usize, size_t min);

/* Copies the iovec array of CNT entries at ADDR into *IOV (malloc'd; NULL when CNT is 0) as
 * Linux's import_iovec checks it: more than ARG_IOV_MAX entries or a length beyond SSIZE_MAX
 * is -EINVAL, a segment reaching past the top of user space -EFAULT. Lengths past ARG_RW_MAX
 * in all are cut there. Returns the total length. */
long arg_iovec(struct task *t, uintptr_t addr, unsigned int cnt, struct iovec **iov);

/* Maps the guest iovecs GIOV[0..CNT) to Sentry memory (pieces of the memory file: at most MAX
 * of them and LIMIT bytes in all) for the kernel to read from, or with ARG_IOV_WRITE to write
 * into. A segment that cannot be mapped from its first byte ends the list: -EFAULT when it is
 * the first, or with ARG_IOV_WHOLE (a datagram goes whole or not at all). Returns the number
 * of pieces and their bytes in *TOTAL. */
#define ARG_IOV_WRITE 1
#define ARG_IOV_WHOLE 2
int arg_iovec_map(struct mm *mm, const struct iovec *giov, size_t cnt, size_t limit, int flags,
		  struct iovec *iov, int max, size_t *total);
/* Drops the first SKIP bytes of IOV (N pieces), the part a retried call has moved already.
 * Returns the new count. */
int arg_iovec_advance(struct iovec *iov, int n, size_t skip);

#endif
