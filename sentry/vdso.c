/* The guests' vDSO (vdso.h): the image, embedded at build time, and the clock page in the
 * memory file's reserved pages, one copy for every guest; mapping them at exec; binding saved
 * mappings of them at a restore. */
#include "sentry/vdso.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mem/memfile.h"
#include "sentry/clock.h"
#include "sentry/mm.h"
#include "vdso/vclock.h"
#include "vdso_image.h" /* generated from vdso/vdso.so: vdso_image[] */

_Static_assert(sizeof(struct vclock_page) <= PAGE_SIZE, "the clock page is one page");

static struct {
	struct mobj *mo;    /* the reserved pages: the clock page, then the image */
	uint64_t image_len; /* page-rounded */
	uint64_t id;	    /* this vDSO's */
	uint64_t image_id;  /* the one of the image being restored */
} vd;

/* FNV-1a over the image's bytes: two builds whose vDSO code or clock page layout differ have
 * different ids. */
static uint64_t image_hash(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

int vdso_init(void)
{
	uint64_t off, len, need = PAGE_SIZE + PAGE_UP(sizeof(vdso_image));
	struct mobj *mo;

	memfile_reserved(&off, &len);
	if (need > len)
		return -ENOSPC;
	/* A memory object of its own, never returned to the allocator: this reference is held
	 * for the Sentry's life, so the count never reaches zero. */
	if (!(mo = calloc(1, sizeof(*mo))))
		return -ENOMEM;
	*mo = (struct mobj){.off = off, .len = need, .refs = 1};
	char *p = memfile_ptr(off);
	memset(p, 0, need);
	memcpy(p + PAGE_SIZE, vdso_image, sizeof(vdso_image));
	vd.mo = mo;
	vd.image_len = need - PAGE_SIZE;
	vd.id = image_hash(vdso_image, sizeof(vdso_image));
	clock_init((struct vclock_page *)p);
	return 0;
}

long vdso_map(struct mm *mm)
{
	size_t len = PAGE_SIZE + vd.image_len;
	uintptr_t at;
	long r;

	if (!vd.mo)
		return 0;
	if (!(at = mm_find_free(mm, len)))
		return -ENOMEM;
	/* Like Linux's [vvar], the clock page can be neither written nor made writable; the
	 * image, like [vdso], can (a debugger's breakpoint), which gives the process a copy. */
	r = mm_map_pages(mm, at, PAGE_SIZE, PROT_READ,
			 MAP_PRIVATE | VMA_COW | VMA_NO_WRITE | VMA_VDSO, vd.mo, vd.mo->off,
			 "[vvar]");
	if (r >= 0)
		r = mm_map_pages(mm, at + PAGE_SIZE, vd.image_len, PROT_READ | PROT_EXEC,
				 MAP_PRIVATE | VMA_COW | VMA_VDSO, vd.mo, vd.mo->off + PAGE_SIZE,
				 "[vdso]");
	return r < 0 ? r : (long)(at + PAGE_SIZE);
}

uint64_t vdso_vma_offset(const struct vma *v)
{
	return v->mf_off - vd.mo->off;
}

int vdso_vma_bind(struct vma *v, uint64_t rel)
{
	if (!vd.mo || vd.image_id != vd.id)
		return -ENOEXEC;
	if (rel % PAGE_SIZE || rel > vd.mo->len || v->end - v->start > vd.mo->len - rel)
		return -EINVAL;
	v->mobj = vd.mo;
	v->mf_off = vd.mo->off + rel;
	return 0;
}

uint64_t vdso_id(void)
{
	return vd.id;
}

void vdso_set_image_id(uint64_t id)
{
	vd.image_id = id;
}
