/* The guests' vDSO: the image the Makefile builds from vdso/ and embeds here, kept with the clock
 * page in the memory file's reserved pages, and mapped into every address space at exec as
 * [vvar] (the clock page) and [vdso] right above it. docs/platform.md, "The guests' vDSO". */
#ifndef SENTRY_VDSO_H
#define SENTRY_VDSO_H

#include <stdbool.h>
#include <stdint.h>

struct mm;
struct vma;

/* Writes the image and a clock page into the reserved pages and starts the guests' clocks on
 * it (clock_init). After memfile_init, before any exec. */
int vdso_init(void);
/* Maps [vvar] and [vdso] into MM, a fresh address space being built by exec, top-down in its
 * mmap area as Linux places them (so under its randomisation). Returns the address of the
 * vDSO's ELF header (AT_SYSINFO_EHDR), 0 when there is no vDSO (vdso_init was not called), or a
 * negative errno. */
long vdso_map(struct mm *mm);

/* Checkpoint. A VMA that maps the vDSO's pages (a copy-on-write one a guest has not written) is
 * saved as "the vDSO" with its offset within them, never as memory, and mapped at restore to
 * the restoring Sentry's pages. */
bool vdso_vma(const struct vma *v);
/* V's offset within the vDSO's pages. */
uint64_t vdso_vma_offset(const struct vma *v);
/* Makes V, whose record said "the vDSO" at offset REL, map the vDSO's pages: 0, or -EINVAL if
 * it does not fit in them, or -ENOEXEC when the image was taken by a minisentry whose vDSO
 * differs from this one's (its guests may hold pointers into the old one's code). */
int vdso_vma_bind(struct vma *v, uint64_t rel);
/* The vDSO's identity, saved in the kernel record; a restore sets the image's with
 * vdso_set_image_id. */
uint64_t vdso_id(void);
void vdso_set_image_id(uint64_t id);

#endif
