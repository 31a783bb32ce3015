/* ELF header parsing for exec: turns an untrusted file into a checked struct elf_info.
 * Every field the loader will trust (segment bounds, alignment, interpreter path) is
 * validated here, so exec.c can map segments without re-checking and malformed images
 * fail with -ENOEXEC before any address space is touched. */
#include "sentry/elf.h"

#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#define ELF_PAGE_SIZE 4096ULL
#define ELF_USER_TOP 0x800000000000ULL /* end of the 47-bit user address space */
#define ELF_MAX_PHNUM 128

static uint64_t page_down(uint64_t x)
{
	return x & ~(ELF_PAGE_SIZE - 1);
}

static uint64_t page_up(uint64_t x)
{
	return page_down(x + ELF_PAGE_SIZE - 1);
}

/* Reads exactly LEN bytes at OFF. The callback's errors pass through; running out of file
 * before LEN bytes means the headers lied about the file, which is -ENOEXEC. */
static int read_exact(elf_read_fn read, void *ctx, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(ctx, (char *)buf + got, len - got, off + got);

		if (n < 0)
			return (int)n;
		if (n == 0)
			return -ENOEXEC;
		if ((size_t)n > len - got)
			return -EIO; /* the callback overran its buffer: its bug, not the file's */
		got += (size_t)n;
	}
	return 0;
}

/* True if [off, off + len) lies within a file of FILE_SIZE bytes, without overflow. */
static bool in_file(uint64_t off, uint64_t len, uint64_t file_size)
{
	return off <= file_size && len <= file_size - off;
}

static int check_ehdr(const Elf64_Ehdr *eh, uint64_t file_size)
{
	uint64_t phsize;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_ident[EI_VERSION] != EV_CURRENT || eh->e_version != EV_CURRENT)
		return -ENOEXEC;
	if (eh->e_machine != EM_X86_64)
		return -ENOEXEC;
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return -ENOEXEC;
	if (eh->e_ehsize != sizeof(Elf64_Ehdr) || eh->e_phentsize != sizeof(Elf64_Phdr))
		return -ENOEXEC;
	if (eh->e_phnum < 1 || eh->e_phnum > ELF_MAX_PHNUM)
		return -ENOEXEC;
	if (eh->e_entry >= ELF_USER_TOP)
		return -ENOEXEC;
	/* The program headers may not overlap the ELF header or run past the file. */
	phsize = (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr);
	if (eh->e_phoff < sizeof(Elf64_Ehdr) || !in_file(eh->e_phoff, phsize, file_size))
		return -ENOEXEC;
	return 0;
}

static int load_prot(uint32_t flags)
{
	int prot = 0;

	if (flags & PF_R)
		prot |= PROT_READ;
	if (flags & PF_W)
		prot |= PROT_WRITE;
	if (flags & PF_X)
		prot |= PROT_EXEC;
	return prot;
}

/* Checks one PT_LOAD and appends it to OUT->seg. Segments with p_memsz == 0 map nothing
 * and are dropped, so every entry in seg[] has a non-empty [vaddr, vaddr + memsz). */
static int add_load(const Elf64_Phdr *ph, uint64_t file_size, struct elf_info *out)
{
	struct elf_segment *s;

	if (ph->p_filesz > ph->p_memsz || !in_file(ph->p_offset, ph->p_filesz, file_size))
		return -ENOEXEC;
	if (ph->p_vaddr >= ELF_USER_TOP || ph->p_memsz > ELF_USER_TOP - ph->p_vaddr)
		return -ENOEXEC;
	/* mmap maps whole pages, so the file and memory offsets must agree within a page. */
	if ((ph->p_vaddr - ph->p_offset) % ELF_PAGE_SIZE != 0)
		return -ENOEXEC;
	if (ph->p_align > 1 && (ph->p_align & (ph->p_align - 1)) != 0)
		return -ENOEXEC;
	if (ph->p_memsz == 0)
		return 0;
	if (out->nseg == ELF_MAX_SEGMENTS)
		return -ENOEXEC;
	/* The ELF spec orders PT_LOADs by p_vaddr; overlapping ones would clobber each other. */
	if (out->nseg > 0) {
		const struct elf_segment *prev = &out->seg[out->nseg - 1];

		if (ph->p_vaddr < prev->vaddr + prev->memsz)
			return -ENOEXEC;
	}
	s = &out->seg[out->nseg++];
	s->vaddr = ph->p_vaddr;
	s->offset = ph->p_offset;
	s->filesz = ph->p_filesz;
	s->memsz = ph->p_memsz;
	s->prot = load_prot(ph->p_flags);
	return 0;
}

static int read_interp(elf_read_fn read, void *ctx, const Elf64_Phdr *ph, uint64_t file_size,
		       struct elf_info *out)
{
	int err;

	if (out->has_interp)
		return -ENOEXEC;
	if (ph->p_filesz < 2 || ph->p_filesz > ELF_INTERP_MAX ||
	    !in_file(ph->p_offset, ph->p_filesz, file_size))
		return -ENOEXEC;
	err = read_exact(read, ctx, out->interp, ph->p_filesz, ph->p_offset);
	if (err)
		return err;
	if (out->interp[ph->p_filesz - 1] != '\0' || out->interp[0] == '\0')
		return -ENOEXEC;
	out->has_interp = true;
	return 0;
}

/* AT_PHDR for images without PT_PHDR: the PT_LOAD whose file bytes hold the whole program
 * header table maps it at the corresponding address. */
static uint64_t phdr_from_loads(const struct elf_info *info)
{
	uint64_t phsize = (uint64_t)info->phnum * info->phentsize;

	for (int i = 0; i < info->nseg; i++) {
		const struct elf_segment *s = &info->seg[i];

		if (info->phoff >= s->offset && info->phoff - s->offset <= s->filesz &&
		    phsize <= s->filesz - (info->phoff - s->offset))
			return s->vaddr + (info->phoff - s->offset);
	}
	return 0;
}

int elf_parse(elf_read_fn read, void *ctx, uint64_t file_size, struct elf_info *out)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[ELF_MAX_PHNUM];
	bool has_phdr = false, has_stack = false;
	int err;

	memset(out, 0, sizeof(*out));
	if (file_size < sizeof(eh))
		return -ENOEXEC;
	err = read_exact(read, ctx, &eh, sizeof(eh), 0);
	if (err)
		return err;
	err = check_ehdr(&eh, file_size);
	if (err)
		return err;
	err = read_exact(read, ctx, ph, (size_t)eh.e_phnum * sizeof(Elf64_Phdr), eh.e_phoff);
	if (err)
		return err;

	out->type = eh.e_type;
	out->entry = eh.e_entry;
	out->phoff = eh.e_phoff;
	out->phnum = eh.e_phnum;
	out->phentsize = eh.e_phentsize;
	for (int i = 0; i < eh.e_phnum; i++) {
		switch (ph[i].p_type) {
		case PT_LOAD:
			err = add_load(&ph[i], file_size, out);
			break;
		case PT_INTERP:
			err = read_interp(read, ctx, &ph[i], file_size, out);
			break;
		case PT_PHDR:
			if (ph[i].p_vaddr >= ELF_USER_TOP)
				err = -ENOEXEC;
			out->phdr_vaddr = ph[i].p_vaddr;
			has_phdr = true;
			break;
		case PT_GNU_STACK:
			out->exec_stack = (ph[i].p_flags & PF_X) != 0;
			has_stack = true;
			break;
		}
		if (err)
			goto out_invalid;
	}
	if (out->nseg == 0) {
		err = -ENOEXEC;
		goto out_invalid;
	}

	/* Segments are sorted and disjoint, so the span runs from the first to the last. */
	out->lo = page_down(out->seg[0].vaddr);
	out->hi = page_up(out->seg[out->nseg - 1].vaddr + out->seg[out->nseg - 1].memsz);
	if (!has_stack)
		out->exec_stack = true; /* no PT_GNU_STACK: the legacy executable-stack default */
	if (!has_phdr)
		out->phdr_vaddr = phdr_from_loads(out);
	return 0;

out_invalid:
	/* Leave no half-parsed description behind for a caller that ignores the error. */
	memset(out, 0, sizeof(*out));
	return err;
}
