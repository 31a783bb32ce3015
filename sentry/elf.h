/* ELF parsing: validates an x86_64 ELF executable's headers and describes what to map.
 * Pure: the caller supplies a read callback, so malformed headers are unit-testable and
 * the loader (exec.c) only ever sees a checked description. */
#ifndef SENTRY_ELF_H
#define SENTRY_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ELF_MAX_SEGMENTS 16
#define ELF_INTERP_MAX 256

struct elf_segment {
	uint64_t vaddr;	 /* as in the file, not page-aligned */
	uint64_t offset; /* file offset of the segment's first byte */
	uint64_t filesz;
	uint64_t memsz;
	int prot; /* PROT_READ|PROT_WRITE|PROT_EXEC from p_flags */
};

struct elf_info {
	int type;	/* ET_EXEC or ET_DYN */
	uint64_t entry; /* e_entry, unrelocated */
	uint64_t phoff; /* e_phoff */
	uint16_t phnum; /* e_phnum */
	uint16_t phentsize;
	uint64_t
	    phdr_vaddr;	 /* unrelocated address of the program headers in memory, 0 if unmapped */
	uint64_t lo, hi; /* page-aligned span of all PT_LOAD segments: [lo, hi) */
	struct elf_segment seg[ELF_MAX_SEGMENTS];
	int nseg;
	bool has_interp;
	char interp[ELF_INTERP_MAX]; /* PT_INTERP path, NUL-terminated */
	bool exec_stack;	     /* PT_GNU_STACK with PF_X, or no PT_GNU_STACK */
};

/* Reads LEN bytes at OFF; returns the number read (short at end of file) or a negative errno. */
typedef ssize_t (*elf_read_fn)(void *ctx, void *buf, size_t len, uint64_t off);

/* Parses the executable of FILE_SIZE bytes. Returns 0, or -ENOEXEC for anything that is not a
 * loadable x86_64 ELF executable (bad magic, class, data, machine, version, type, truncated
 * or overlapping headers, segments past the end of the file, filesz > memsz, unaligned
 * segments, no PT_LOAD, more than one PT_INTERP or one that is not NUL-terminated), or the
 * read callback's error. */
int elf_parse(elf_read_fn read, void *ctx, uint64_t file_size, struct elf_info *out);

#endif
