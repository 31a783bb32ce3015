/* Memory syscalls: argument checks, then the mm operations. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/mman.h>

#include "mem/memfile.h"
#include "sentry/mm.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "vfs/vfs.h"

/* Linux's data_vm: private writable memory that is not a stack. */
static bool is_data(int prot, int flags, const char *name)
{
	return (prot & PROT_WRITE) && !(flags & (MAP_SHARED | MAP_GROWSDOWN)) &&
	       strcmp(name, "[stack]") != 0;
}

/* The bytes of MM's guest mappings inside [start, end), all of them or the data ones only. */
static uint64_t vm_bytes(struct mm *mm, uintptr_t start, uintptr_t end, bool data)
{
	uint64_t n = 0;

	for (size_t i = 0; i < mm->vmas.n; i++) {
		const struct vma *v = &mm->vmas.v[i];
		uintptr_t s = v->start > start ? v->start : start, e = v->end < end ? v->end : end;
		if (s < e && !(v->flags & VMA_RESERVED) &&
		    (!data || is_data(v->prot, v->flags, v->name)))
			n += e - s;
	}
	return n;
}

/* Whether T's address space may grow by GROW bytes (DATA: of data memory) after FREED of
 * each kind go away: RLIMIT_AS and RLIMIT_DATA, as Linux's may_expand_vm. */
static bool may_expand(struct task *t, uint64_t grow, uint64_t freed, uint64_t freed_data,
		       bool data)
{
	rlim_t as = t->rlim[RLIMIT_AS].rlim_cur, dl = t->rlim[RLIMIT_DATA].rlim_cur;

	if (as != RLIM_INFINITY && vm_bytes(t->mm, 0, UINTPTR_MAX, false) - freed + grow > as)
		return false;
	if (data && dl != RLIM_INFINITY &&
	    vm_bytes(t->mm, 0, UINTPTR_MAX, true) - freed_data + grow > dl)
		return false;
	return true;
}

long sys_mmap(struct task *t, const unsigned long *a)
{
	uintptr_t addr = a[0];
	size_t len = a[1];
	int prot = arg_int(a, 2), flags = arg_int(a, 3), fd = arg_int(a, 4);
	off_t off = arg_long(a, 5);
	int type = flags & MAP_TYPE;
	struct vfs_file *file = NULL;
	size_t file_bytes = 0;

	if (type != MAP_PRIVATE && type != MAP_SHARED && type != MAP_SHARED_VALIDATE)
		return -EINVAL;
	if (len == 0 || (off & (PAGE_SIZE - 1)))
		return -EINVAL;
	if (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC))
		return -EINVAL;
	if (len > UINTPTR_MAX - PAGE_SIZE)
		return -ENOMEM;
	if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
		uintptr_t end = addr + PAGE_UP(len) < addr ? UINTPTR_MAX : addr + PAGE_UP(len);
		if (!may_expand(t, PAGE_UP(len), vm_bytes(t->mm, addr, end, false),
				vm_bytes(t->mm, addr, end, true),
				is_data(prot, type == MAP_PRIVATE ? 0 : MAP_SHARED, "")))
			return -ENOMEM;
	} else if (!may_expand(t, PAGE_UP(len), 0, 0,
			       is_data(prot, type == MAP_PRIVATE ? 0 : MAP_SHARED, ""))) {
		return -ENOMEM;
	}
	if (!(flags & MAP_ANONYMOUS)) {
		struct stat st;
		file = arg_file_nopath(t, fd);
		if (!file)
			return -EBADF;
		/* The access the descriptor gives comes first (do_mmap), then whether the file
		 * can be mapped at all. */
		if (type != MAP_PRIVATE && (prot & PROT_WRITE) &&
		    (file->flags & O_ACCMODE) != O_RDWR)
			return -EACCES;
		if ((file->flags & O_ACCMODE) == O_WRONLY)
			return -EACCES;
		if (!file->ops->getattr || file->ops->getattr(file, &st))
			return -ENODEV;
		if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 5)) {
			/* /dev/zero is anonymous memory, as Linux's mmap_zero makes it: private
			 * or shared (then shared with the children, and saved, as MAP_SHARED |
			 * MAP_ANONYMOUS is). */
			file = NULL;
			flags |= MAP_ANONYMOUS;
			goto map;
		}
		if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
			return syscall_unsupported(t, -ENODEV, "mapping a device");
		if (!file->ops->pread_kernel || !S_ISREG(st.st_mode))
			return -ENODEV;
		if (off < st.st_size)
			file_bytes = st.st_size - off;
	}
	if (file && type != MAP_PRIVATE) {
		/* A file sealed against writes maps shared only read-only, for good. */
		int seals = vfs_file_get_seals(file);
		bool sealed = seals > 0 && (seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE));
		if (sealed && (prot & PROT_WRITE))
			return -EPERM;
		/* Files whose data lives in the memory file are mapped in place: writes through the
		 * mapping are the file's. Others (the host lower layer) get a copy. */
		struct mobj *mo;
		uint64_t mf_off;
		struct stat st;
		int err = vfs_file_mmap_range(file, off, PAGE_UP(len), &mo, &mf_off);
		if (err == 0) {
			file->ops->getattr(file, &st);
			int sflags =
			    flags |
			    ((file->flags & O_ACCMODE) == O_RDWR && !sealed ? 0 : VMA_NO_WRITE);
			long r = mm_map_mobj(t->mm, addr, len, prot, sflags, mo, mf_off, off,
					     st.st_ino, st.st_size);
			mobj_put(mo);
			return r;
		}
		if (err != -ENODEV)
			return err;
	}
map:;
	int vflags =
	    (flags &
	     (MAP_FIXED | MAP_FIXED_NOREPLACE | MAP_ANONYMOUS | MAP_GROWSDOWN | MAP_32BIT)) |
	    (type == MAP_PRIVATE ? MAP_PRIVATE : MAP_SHARED) | (file ? MM_SIGBUS_PAST_EOF : 0) |
	    (file && type != MAP_PRIVATE && (file->flags & O_ACCMODE) != O_RDWR ? VMA_NO_WRITE : 0);
	return mm_map(t->mm, addr, len, prot, vflags, file, file ? off : 0, file_bytes, NULL);
}

long sys_munmap(struct task *t, const unsigned long *a)
{
	return mm_unmap(t->mm, a[0], a[1]);
}

long sys_mprotect(struct task *t, const unsigned long *a)
{
	return mm_protect(t->mm, a[0], a[1], arg_int(a, 2));
}

long sys_brk(struct task *t, const unsigned long *a)
{
	struct mm *mm = t->mm;
	uintptr_t want = a[0];
	rlim_t dl = t->rlim[RLIMIT_DATA].rlim_cur;

	/* Growth past RLIMIT_DATA or RLIMIT_AS leaves the break where it is. */
	if (want > mm->brk && PAGE_UP(want) > PAGE_UP(mm->brk)) {
		if (dl != RLIM_INFINITY && want - mm->brk_start > dl)
			return mm->brk;
		if (!may_expand(t, PAGE_UP(want) - PAGE_UP(mm->brk), 0, 0, false))
			return mm->brk;
	}
	return mm_brk(mm, want);
}

long sys_mremap(struct task *t, const unsigned long *a)
{
	if (arg_int(a, 3) & MREMAP_DONTUNMAP)
		return syscall_unsupported(t, -EINVAL, "MREMAP_DONTUNMAP");
	struct vma *v = vma_find(&t->mm->vmas, a[0]);
	if (v && PAGE_UP(a[2]) > PAGE_UP(a[1]) &&
	    !may_expand(t, PAGE_UP(a[2]) - PAGE_UP(a[1]), 0, 0,
			is_data(v->prot, v->flags, v->name)))
		return -ENOMEM;
	return mm_remap(t->mm, a[0], a[1], a[2], arg_int(a, 3), a[4]);
}

long sys_madvise(struct task *t, const unsigned long *a)
{
	return mm_advise(t->mm, a[0], a[1], arg_int(a, 2));
}

long sys_msync(struct task *t, const unsigned long *a)
{
	return mm_sync(t->mm, a[0], a[1], arg_int(a, 2));
}

/* mincore(2): the vector is copied out a piece at a time, as Linux does, so a hole found
 * later (ENOMEM) leaves the bytes of the pages before it written. */
long sys_mincore(struct task *t, const unsigned long *a)
{
	uintptr_t start = a[0], vec = a[2];
	size_t len = a[1];
	unsigned char buf[1024];

	if (start & (PAGE_SIZE - 1))
		return -EINVAL;
	if (len > t->mm->task_size || start > t->mm->task_size - len)
		return -ENOMEM;
	size_t pages = PAGE_UP(len) / PAGE_SIZE;
	for (size_t done = 0; done < pages;) {
		size_t n = pages - done < sizeof(buf) ? pages - done : sizeof(buf);
		size_t got = mm_mincore(t->mm, start + done * PAGE_SIZE, n, buf);
		if (got && copy_out(t->mm, vec + done, buf, got))
			return -EFAULT;
		if (got < n)
			return -ENOMEM;
		done += n;
	}
	return 0;
}

/* --- mlock: memory locks as Linux counts them against RLIMIT_MEMLOCK ----------------------
 * A locked VMA carries MAP_LOCKED. The host pages are not pinned (the Sentry has no business
 * pinning host memory for a guest); what the guest observes is the accounting. */

/* Whether T holds CAP_IPC_LOCK: the guest's root does. */
static bool can_lock_any(struct task *t)
{
	return t->euid == 0;
}

static uint64_t locked_bytes(struct mm *mm, uintptr_t start, uintptr_t end)
{
	uint64_t n = 0;

	for (size_t i = 0; i < mm->vmas.n; i++) {
		const struct vma *v = &mm->vmas.v[i];
		uintptr_t s = v->start > start ? v->start : start, e = v->end < end ? v->end : end;
		if (s < e && (v->flags & MAP_LOCKED))
			n += e - s;
	}
	return n;
}

static long lock_range(struct task *t, uintptr_t addr, size_t len, bool lock)
{
	uintptr_t start = PAGE_DOWN(addr), end = PAGE_UP(addr + len);
	rlim_t lim = t->rlim[RLIMIT_MEMLOCK].rlim_cur;

	if (addr + len < addr || end < start)
		return -EINVAL;
	if (lock && !can_lock_any(t) && lim == 0)
		return -EPERM;
	if (start == end)
		return 0;
	if (lock && !can_lock_any(t) && lim != RLIM_INFINITY &&
	    locked_bytes(t->mm, 0, UINTPTR_MAX) - locked_bytes(t->mm, start, end) + (end - start) >
		lim)
		return -ENOMEM;
	for (uintptr_t at = start; at < end;) {
		struct vma *v = vma_find(&t->mm->vmas, at);
		if (!v || (v->flags & VMA_RESERVED))
			return -ENOMEM;
		at = v->end;
	}
	return vma_set_flags(&t->mm->vmas, start, end, lock ? MAP_LOCKED : 0,
			     lock ? 0 : MAP_LOCKED);
}

long sys_mlock(struct task *t, const unsigned long *a)
{
	return lock_range(t, a[0], a[1], true);
}

long sys_mlock2(struct task *t, const unsigned long *a)
{
	if (a[2] & ~(unsigned long)MLOCK_ONFAULT)
		return -EINVAL;
	return lock_range(t, a[0], a[1], true);
}

long sys_munlock(struct task *t, const unsigned long *a)
{
	return lock_range(t, a[0], a[1], false);
}

long sys_mlockall(struct task *t, const unsigned long *a)
{
	unsigned long flags = a[0];
	rlim_t lim = t->rlim[RLIMIT_MEMLOCK].rlim_cur;

	if (!flags || (flags & ~(unsigned long)(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)) ||
	    flags == MCL_ONFAULT)
		return -EINVAL;
	if (!can_lock_any(t) && lim == 0)
		return -EPERM;
	if (!(flags & MCL_CURRENT))
		return 0;
	if (!can_lock_any(t) && lim != RLIM_INFINITY &&
	    vm_bytes(t->mm, 0, UINTPTR_MAX, false) > lim)
		return -ENOMEM;
	for (size_t i = 0; i < t->mm->vmas.n; i++)
		if (!(t->mm->vmas.v[i].flags & VMA_RESERVED))
			t->mm->vmas.v[i].flags |= MAP_LOCKED;
	vma_set_touched(&t->mm->vmas);
	return 0;
}

long sys_munlockall(struct task *t, const unsigned long *a)
{
	(void)a;
	for (size_t i = 0; i < t->mm->vmas.n; i++)
		t->mm->vmas.v[i].flags &= ~MAP_LOCKED;
	vma_set_touched(&t->mm->vmas);
	return 0;
}
