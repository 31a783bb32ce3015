/* System V shared memory: shmget, shmat, shmdt, shmctl. A segment is a memory object of the
 * memory file (mem/memfile.h), as MAP_SHARED anonymous memory is; an attach is a MAP_SHARED
 * mapping of it (mm_map_pages), so fork shares it and exec and exit drop it with the rest of
 * the address space, with nothing here to hook. Every mapped piece holds one reference on the
 * object and the segment holds one: shm_nattch is the object's references less the segment's,
 * which counts VMAs as Linux's vm_ops open/close do (a piece split off by mprotect counts). A
 * segment removed while attached (SHM_DEST) goes when that count reaches zero: shm_collect
 * runs at every shm syscall, process exit, exec and checkpoint, the points where it can be
 * observed or where its memory would otherwise stay. */
#include "sentry/ipc.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/stat.h>

#include "mem/memfile.h"
#include "sentry/caps.h"
#include "sentry/mm.h"
#include "sentry/syscall.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "state/codec.h"

struct shm_seg {
	struct ipc_obj o;
	struct mobj *mo; /* the segment's reference */
	uint64_t size;
	int64_t atime, dtime, ctime;
	pid_t cpid, lpid;
};

static struct ipc_ids shm_ids = {.mni = &ipc_limits.shmmni, .last_idx = -1};
static uint64_t shm_tot; /* pages of all segments, against shmall */

static inline struct shm_seg *seg_of(struct ipc_obj *o)
{
	return (struct shm_seg *)o;
}

static unsigned long nattch(const struct shm_seg *s)
{
	return s->mo->refs - 1;
}

static uint64_t pages(const struct shm_seg *s)
{
	return PAGE_UP(s->size) / PAGE_SIZE;
}

static void destroy(struct shm_seg *s)
{
	ipc_remove(&shm_ids, &s->o);
	shm_tot -= pages(s);
	mobj_put(s->mo);
	free(s);
}

void shm_collect(void)
{
	for (int i = 0; i < shm_ids.cap; i++) {
		struct shm_seg *s = (struct shm_seg *)shm_ids.v[i];
		if (s && (s->o.mode & SHM_DEST) && nattch(s) == 0)
			destroy(s);
	}
}

static long shm_create(struct task *t, int32_t key, int flg, long arg)
{
	uint64_t size = (uint64_t)arg, n = PAGE_UP(size) / PAGE_SIZE;

	if (flg & SHM_HUGETLB)
		return syscall_unsupported(t, -EINVAL, "SHM_HUGETLB");
	if (size < 1 || size > ipc_limits.shmmax)
		return -EINVAL;
	if (shm_tot + n < shm_tot || shm_tot + n > ipc_limits.shmall)
		return -ENOSPC;
	if (shm_ids.in_use >= ipc_limits.shmmni)
		return -ENOSPC;
	struct shm_seg *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (!(s->mo = mobj_new(n * PAGE_SIZE))) {
		free(s);
		return -ENOMEM;
	}
	int err = ipc_add(&shm_ids, &s->o, t, key, flg);
	if (err) {
		mobj_put(s->mo);
		free(s);
		return err;
	}
	s->size = size;
	s->cpid = t->tgid;
	s->ctime = ipc_now();
	shm_tot += n;
	return ipc_id(&s->o);
}

static int shm_more(struct ipc_obj *o, long arg)
{
	return seg_of(o)->size < (uint64_t)arg ? -EINVAL : 0;
}

long sys_shmget(struct task *t, const unsigned long *a)
{
	shm_collect();
	return ipc_get(t, &shm_ids, (int32_t)arg_int(a, 0), arg_int(a, 2), shm_create, shm_more,
		       (long)a[1]);
}

long sys_shmat(struct task *t, const unsigned long *a)
{
	int id = arg_int(a, 0), flg = arg_int(a, 2);
	uintptr_t addr = a[1];
	int prot = PROT_READ, req = IPC_R;

	shm_collect();
	if (addr) {
		if (addr & (PAGE_SIZE - 1)) {
			if (!(flg & SHM_RND))
				return -EINVAL;
			addr = PAGE_DOWN(addr);
			if (!addr && (flg & SHM_REMAP))
				return -EINVAL;
		}
	} else if (flg & SHM_REMAP) {
		return -EINVAL;
	}
	if (!(flg & SHM_RDONLY)) {
		prot |= PROT_WRITE;
		req |= IPC_W;
	}
	if (flg & SHM_EXEC) {
		prot |= PROT_EXEC;
		req |= IPC_X;
	}
	struct ipc_obj *o = ipc_find_id(&shm_ids, id);
	if (!o)
		return -EINVAL;
	int err = ipc_perm_check(t, o, req);
	if (err)
		return err;
	struct shm_seg *s = seg_of(o);
	size_t len = PAGE_UP(s->size);
	if (addr) {
		if (addr + len < addr)
			return -EINVAL;
		if (!vma_range_free(&t->mm->vmas, addr, addr + len)) {
			if (!(flg & SHM_REMAP))
				return -EINVAL;
			if ((err = mm_unmap(t->mm, addr, len)))
				return err;
		}
	} else if (!(addr = mm_find_free(t->mm, len))) {
		return -ENOMEM;
	}
	/* A read-only attach may never be made writable (mprotect answers EACCES), as a
	 * read-only file mapping. The name is what Linux's /proc/PID/maps shows. */
	char name[VMA_NAME_MAX];
	snprintf(name, sizeof(name), "/SYSV%08x (deleted)", (unsigned int)o->key);
	long r = mm_map_pages(t->mm, addr, len, prot,
			      MAP_SHARED | (flg & SHM_RDONLY ? VMA_NO_WRITE : VMA_WAS_WRITABLE),
			      s->mo, s->mo->off, name);
	if (r < 0)
		return r;
	s->atime = ipc_now();
	s->lpid = t->tgid;
	return r;
}

/* The segment whose first page is mapped at ADDR in MM, or NULL. */
static struct shm_seg *attached_at(struct mm *mm, uintptr_t addr)
{
	struct vma *v = vma_find(&mm->vmas, addr);

	if (!v || v->start != addr || !v->mobj)
		return NULL;
	for (int i = 0; i < shm_ids.cap; i++) {
		struct shm_seg *s = (struct shm_seg *)shm_ids.v[i];
		if (s && s->mo == v->mobj && v->mf_off == s->mo->off)
			return s;
	}
	return NULL;
}

long sys_shmdt(struct task *t, const unsigned long *a)
{
	uintptr_t addr = a[0];

	if (addr & (PAGE_SIZE - 1))
		return -EINVAL;
	struct shm_seg *s = attached_at(t->mm, addr);
	if (!s)
		return -EINVAL;
	/* Every piece of this attach: the segment's pages at their own offset from ADDR. */
	uintptr_t end = addr + PAGE_UP(s->size);
	for (size_t i = 0; i < t->mm->vmas.n;) {
		struct vma *v = &t->mm->vmas.v[i];
		if (v->start >= end)
			break;
		if (v->start < addr || v->mobj != s->mo ||
		    v->mf_off - s->mo->off != v->start - addr) {
			i++;
			continue;
		}
		int err = mm_unmap(t->mm, v->start, v->end - v->start);
		if (err)
			return err;
	}
	s->dtime = ipc_now();
	s->lpid = t->tgid;
	shm_collect();
	return 0;
}

static void fill_ds(const struct shm_seg *s, struct shmid_ds *ds)
{
	memset(ds, 0, sizeof(*ds));
	ipc_fill_perm(&s->o, &ds->shm_perm);
	ds->shm_segsz = s->size;
	ds->shm_atime = s->atime;
	ds->shm_dtime = s->dtime;
	ds->shm_ctime = s->ctime;
	ds->shm_cpid = s->cpid;
	ds->shm_lpid = s->lpid;
	ds->shm_nattch = nattch(s);
}

static long shm_info(struct task *t, int cmd, uintptr_t buf)
{
	int max = ipc_max_idx(&shm_ids);

	if (cmd == IPC_INFO) {
		struct shminfo si = {.shmmax = ipc_limits.shmmax,
				     .shmmin = 1,
				     .shmmni = ipc_limits.shmmni,
				     .shmseg = ipc_limits.shmmni,
				     .shmall = ipc_limits.shmall};
		if (copy_out(t->mm, buf, &si, sizeof(si)))
			return -EFAULT;
	} else {
		struct shm_info si = {.used_ids = shm_ids.in_use, .shm_tot = shm_tot};
		for (int i = 0; i < shm_ids.cap; i++)
			if (shm_ids.v[i])
				si.shm_rss += pages(seg_of(shm_ids.v[i]));
		if (copy_out(t->mm, buf, &si, sizeof(si)))
			return -EFAULT;
	}
	return max < 0 ? 0 : max;
}

long sys_shmctl(struct task *t, const unsigned long *a)
{
	int id = arg_int(a, 0), cmd = arg_int(a, 1);
	uintptr_t buf = a[2];
	struct shmid_ds ds;
	struct ipc_obj *o;
	int err;

	shm_collect();
	switch (cmd) {
	case IPC_INFO:
	case SHM_INFO:
		return shm_info(t, cmd, buf);
	case SHM_STAT:
	case SHM_STAT_ANY:
		if (id < 0 || id >= shm_ids.cap || !(o = shm_ids.v[id]))
			return -EINVAL;
		if (cmd == SHM_STAT && (err = ipc_perm_check(t, o, IPC_R)))
			return err;
		fill_ds(seg_of(o), &ds);
		return copy_out(t->mm, buf, &ds, sizeof(ds)) ? -EFAULT : ipc_id(o);
	case IPC_STAT:
		if (!(o = ipc_find_id(&shm_ids, id)))
			return -EINVAL;
		if ((err = ipc_perm_check(t, o, IPC_R)))
			return err;
		fill_ds(seg_of(o), &ds);
		return copy_out(t->mm, buf, &ds, sizeof(ds)) ? -EFAULT : 0;
	case IPC_SET:
		if (copy_in(t->mm, &ds, buf, sizeof(ds)))
			return -EFAULT;
		/* fall through */
	case IPC_RMID:
		if (!(o = ipc_find_id(&shm_ids, id)))
			return -EINVAL;
		if ((err = ipc_owner_check(t, o)))
			return err;
		if (cmd == IPC_SET) {
			ipc_set_perm(o, &ds.shm_perm);
			seg_of(o)->ctime = ipc_now();
		} else if (nattch(seg_of(o)) == 0) {
			destroy(seg_of(o));
		} else {
			/* It lives on, unnamed, until its last detach. */
			o->mode |= SHM_DEST;
			o->key = IPC_PRIVATE;
		}
		return 0;
	case SHM_LOCK:
	case SHM_UNLOCK:
		if (!(o = ipc_find_id(&shm_ids, id)))
			return -EINVAL;
		/* The pages are not pinned (the Sentry pins no host memory for a guest); the
		 * flag and its permission are what a guest sees. */
		if (!caps_has(t, CAP_IPC_LOCK)) {
			if (t->euid != o->uid && t->euid != o->cuid)
				return -EPERM;
			if (cmd == SHM_LOCK && t->rlim[RLIMIT_MEMLOCK].rlim_cur == 0)
				return -EPERM;
		}
		if (cmd == SHM_LOCK)
			o->mode |= SHM_LOCKED;
		else
			o->mode &= ~(unsigned int)SHM_LOCKED;
		return 0;
	default:
		return -EINVAL;
	}
}

void shm_proc_lines(FILE *f)
{
	for (int i = 0; i < shm_ids.cap; i++) {
		const struct shm_seg *s = (const struct shm_seg *)shm_ids.v[i];
		if (!s)
			continue;
		/* rss: what of the segment holds data is not tracked per object; its size is
		 * an upper bound, as Linux's figure is for a segment touched everywhere. */
		fprintf(f,
			"%10d %10d  %4o %21lu %5u %5u  %5lu %5u %5u %5u %5u %10lld %10lld %10lld "
			"%21lu %21lu\n",
			s->o.key, ipc_id(&s->o), s->o.mode, (unsigned long)s->size,
			(unsigned)s->cpid, (unsigned)s->lpid, nattch(s), (unsigned)s->o.uid,
			(unsigned)s->o.gid, (unsigned)s->o.cuid, (unsigned)s->o.cgid,
			(long long)s->atime, (long long)s->dtime, (long long)s->ctime, 0UL, 0UL);
	}
}

/* --- Checkpoint: each segment names its memory object (its pages are the memory section's). */

static void save_one(struct enc *e, const struct ipc_obj *o)
{
	const struct shm_seg *s = (const struct shm_seg *)o;

	enc_ref(e, CK_MOBJ, s->mo);
	enc_u64(e, s->size);
	enc_i64(e, s->atime);
	enc_i64(e, s->dtime);
	enc_i64(e, s->ctime);
	enc_u32(e, s->cpid);
	enc_u32(e, s->lpid);
}

static struct ipc_obj *load_one(struct dec *d)
{
	struct mobj *mo = dec_ref(d, CK_MOBJ);
	uint64_t size = dec_u64(d);
	struct shm_seg *s;

	if (!dec_ok(d) || !mo || size < 1 || size > mo->len || !(s = calloc(1, sizeof(*s))))
		return NULL;
	s->mo = mobj_get(mo);
	s->size = size;
	s->atime = dec_i64(d);
	s->dtime = dec_i64(d);
	s->ctime = dec_i64(d);
	s->cpid = (pid_t)dec_u32(d);
	s->lpid = (pid_t)dec_u32(d);
	shm_tot += pages(s);
	return &s->o;
}

void shm_save(struct enc *e)
{
	ipc_ids_save(e, &shm_ids, save_one);
}

int shm_load(struct dec *d)
{
	return ipc_ids_load(d, &shm_ids, load_one);
}
