/* Unit tests for sentry/elf.c: builds small ELF images in memory, valid and malformed,
 * and checks what elf_parse() accepts, what it describes, and that every malformation
 * is refused with -ENOEXEC rather than handed to the loader. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sentry/elf.h"

#define IMG_SIZE 0x3000
#define IMG_PHOFF sizeof(Elf64_Ehdr)
#define IMG_BASE 0x400000ULL
#define MUSL_LD "/lib/ld-musl-x86_64.so.1"

/* An ELF image under construction: header at 0, program headers right after it. */
struct img {
	uint8_t buf[IMG_SIZE];
	uint64_t len;
};

static Elf64_Ehdr *img_ehdr(struct img *img)
{
	return (Elf64_Ehdr *)img->buf;
}

static Elf64_Phdr *img_phdr(struct img *img, int i)
{
	return (Elf64_Phdr *)(img->buf + IMG_PHOFF) + i;
}

static void img_init(struct img *img, int type)
{
	Elf64_Ehdr *eh = img_ehdr(img);

	memset(img, 0, sizeof(*img));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = type;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = IMG_PHOFF;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	img->len = IMG_SIZE;
}

static Elf64_Phdr *img_add(struct img *img, uint32_t type, uint32_t flags, uint64_t offset,
			   uint64_t vaddr, uint64_t filesz, uint64_t memsz)
{
	Elf64_Ehdr *eh = img_ehdr(img);
	Elf64_Phdr *ph = img_phdr(img, eh->e_phnum++);

	assert_true((uint8_t *)(ph + 1) <= img->buf + 0x400);
	ph->p_type = type;
	ph->p_flags = flags;
	ph->p_offset = offset;
	ph->p_vaddr = vaddr;
	ph->p_paddr = vaddr;
	ph->p_filesz = filesz;
	ph->p_memsz = memsz;
	ph->p_align = type == PT_LOAD ? 0x1000 : 1;
	return ph;
}

static Elf64_Phdr *img_add_interp(struct img *img, const char *path, uint64_t offset)
{
	size_t n = strlen(path) + 1;

	memcpy(img->buf + offset, path, n);
	return img_add(img, PT_INTERP, PF_R, offset, offset, n, n);
}

static ssize_t img_read(void *ctx, void *buf, size_t len, uint64_t off)
{
	struct img *img = ctx;

	if (off >= img->len)
		return 0;
	if (len > img->len - off)
		len = img->len - off;
	memcpy(buf, img->buf + off, len);
	return (ssize_t)len;
}

static int img_parse(struct img *img, struct elf_info *info)
{
	return elf_parse(img_read, img, img->len, info);
}

/* A static executable: text (with the headers) at 0x400000, data + bss after it. */
static void img_static_exec(struct img *img)
{
	img_init(img, ET_EXEC);
	img_ehdr(img)->e_entry = IMG_BASE + 0x100;
	img_add(img, PT_LOAD, PF_R | PF_X, 0, IMG_BASE, 0x1000, 0x1000);
	img_add(img, PT_LOAD, PF_R | PF_W, 0x1010, IMG_BASE + 0x1010, 0x100, 0x2000);
}

/* A PIE linked against musl: PT_PHDR, PT_INTERP, text at 0, data at 0x2000, NX stack. */
static void img_musl_pie(struct img *img)
{
	img_init(img, ET_DYN);
	img_ehdr(img)->e_entry = 0x1040;
	img_add(img, PT_PHDR, PF_R, IMG_PHOFF, IMG_PHOFF, 5 * sizeof(Elf64_Phdr),
		5 * sizeof(Elf64_Phdr));
	img_add_interp(img, MUSL_LD, 0x200);
	img_add(img, PT_LOAD, PF_R | PF_X, 0, 0, 0x1800, 0x1800);
	img_add(img, PT_LOAD, PF_R | PF_W, 0x1800, 0x2800, 0x200, 0x400);
	img_add(img, PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0);
}

static void test_static_exec_is_described_segment_by_segment(void **state)
{
	struct img img;
	struct elf_info info;

	(void)state;
	img_static_exec(&img);
	assert_int_equal(img_parse(&img, &info), 0);
	assert_int_equal(info.type, ET_EXEC);
	assert_int_equal(info.entry, IMG_BASE + 0x100);
	assert_int_equal(info.phoff, IMG_PHOFF);
	assert_int_equal(info.phnum, 2);
	assert_int_equal(info.phentsize, sizeof(Elf64_Phdr));
	assert_int_equal(info.nseg, 2);
	assert_int_equal(info.seg[0].vaddr, IMG_BASE);
	assert_int_equal(info.seg[0].offset, 0);
	assert_int_equal(info.seg[0].filesz, 0x1000);
	assert_int_equal(info.seg[0].memsz, 0x1000);
	assert_int_equal(info.seg[0].prot, PROT_READ | PROT_EXEC);
	assert_int_equal(info.seg[1].vaddr, IMG_BASE + 0x1010);
	assert_int_equal(info.seg[1].offset, 0x1010);
	assert_int_equal(info.seg[1].filesz, 0x100);
	assert_int_equal(info.seg[1].memsz, 0x2000);
	assert_int_equal(info.seg[1].prot, PROT_READ | PROT_WRITE);
	assert_int_equal(info.lo, IMG_BASE);
	assert_int_equal(info.hi, IMG_BASE + 0x4000);
	assert_false(info.has_interp);
}

static void test_exec_without_gnu_stack_gets_executable_stack(void **state)
{
	struct img img;
	struct elf_info info;

	(void)state;
	img_static_exec(&img);
	assert_int_equal(img_parse(&img, &info), 0);
	assert_true(info.exec_stack);
}

static void test_gnu_stack_without_pf_x_gives_nonexecutable_stack(void **state)
{
	struct img img;
	struct elf_info info;

	(void)state;
	img_static_exec(&img);
	img_add(&img, PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0);
	assert_int_equal(img_parse(&img, &info), 0);
	assert_false(info.exec_stack);
}

static void test_gnu_stack_with_pf_x_gives_executable_stack(void **state)
{
	struct img img;
	struct elf_info info;

	(void)state;
	img_static_exec(&img);
	img_add(&img, PT_GNU_STACK, PF_R | PF_W | PF_X, 0, 0, 0, 0);
	assert_int_equal(img_parse(&img, &info), 0);
	assert_true(info.exec_stack);
}

static void test_phdr_vaddr_without_pt_phdr_comes_from_the_load_holding_them(void **state)
{
	struct img img;
	struct elf_info info;

	(void)state;
	img_static_exec(&img);
	assert_int_equal(img_parse(&img, &info), 0);
	assert_int_equal(info.phdr_vaddr, IMG_BASE + IMG_PHOFF);
}

static void test_phdr_vaddr_is_zero_when_no_load_maps_the_headers(void **state)
{
	struct img img;
	struct elf_info info;

	(void)state;
	img_init(&img, ET_EXEC);
	img_add(&img, PT_LOAD, PF_R | PF_X, 0x1000, IMG_BASE + 0x1000, 0x1000, 0x1000);
	assert_int_equal(img_parse(&img, &info), 0);
	assert_int_equal(info.phdr_vaddr, 0);
}

static void test_dyn_with_interp_reports_interpreter_path(void **state)
{
	struct img img;
	struct elf_info info;

	(void)state;
	img_musl_pie(&img);
	assert_int_equal(img_parse(&img, &info), 0);
	assert_int_equal(info.type, ET_DYN);
	assert_int_equal(info.entry, 0x1040);
	assert_true(info.has_interp);
	assert_string_equal(info.interp, MUSL_LD);
	assert_int_equal(info.nseg, 2);
	assert_int_equal(info.lo, 0);
	assert_int_equal(info.hi, 0x3000);
	assert_int_equal(info.phdr_vaddr, IMG_PHOFF);
	assert_false(info.exec_stack);
}

static void test_pt_phdr_sets_phdr_vaddr(void **state)
{
	struct img img;
	struct elf_info info;

	(void)state;
	img_static_exec(&img);
	img_add(&img, PT_PHDR, PF_R, IMG_PHOFF, IMG_BASE + 0x777, 0, 0);
	assert_int_equal(img_parse(&img, &info), 0);
	assert_int_equal(info.phdr_vaddr, IMG_BASE + 0x777);
}

static void test_interp_of_maximum_length_is_accepted(void **state)
{
	struct img img;
	struct elf_info info;
	char path[ELF_INTERP_MAX];

	(void)state;
	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	img_static_exec(&img);
	img_add_interp(&img, path, 0x400);
	assert_int_equal(img_parse(&img, &info), 0);
	assert_string_equal(info.interp, path);
}

static void test_empty_load_segments_are_dropped(void **state)
{
	struct img img;
	struct elf_info info;

	(void)state;
	img_static_exec(&img);
	img_add(&img, PT_LOAD, PF_R, 0, IMG_BASE + 0x10000, 0, 0);
	assert_int_equal(img_parse(&img, &info), 0);
	assert_int_equal(info.nseg, 2);
	assert_int_equal(info.hi, IMG_BASE + 0x4000);
}

struct fd_ctx {
	int fd;
};

static ssize_t fd_read(void *ctx, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(((struct fd_ctx *)ctx)->fd, buf, len, (off_t)off);

	return n < 0 ? -errno : n;
}

static void test_host_bin_true_parses_as_dynamic_executable(void **state)
{
	struct fd_ctx ctx;
	struct stat st;
	struct elf_info info;
	int err;

	(void)state;
	ctx.fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
	if (ctx.fd < 0)
		skip();
	assert_int_equal(fstat(ctx.fd, &st), 0);
	err = elf_parse(fd_read, &ctx, (uint64_t)st.st_size, &info);
	close(ctx.fd);
	assert_int_equal(err, 0);
	assert_int_equal(info.type, ET_DYN);
	assert_true(info.has_interp);
	assert_int_equal(info.interp[0], '/');
	assert_true(info.nseg >= 1);
	assert_true(info.lo < info.hi);
	assert_int_not_equal(info.phdr_vaddr, 0);
}

/* Malformed images: each starts from a valid one and breaks one thing. */

static void assert_enoexec(struct img *img)
{
	struct elf_info info;

	assert_int_equal(img_parse(img, &info), -ENOEXEC);
}

static void test_bad_magic_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_ehdr(&img)->e_ident[EI_MAG1] = 'X';
	assert_enoexec(&img);
}

static void test_32bit_class_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_ehdr(&img)->e_ident[EI_CLASS] = ELFCLASS32;
	assert_enoexec(&img);
}

static void test_big_endian_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_ehdr(&img)->e_ident[EI_DATA] = ELFDATA2MSB;
	assert_enoexec(&img);
}

static void test_unknown_version_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_ehdr(&img)->e_version = 2;
	assert_enoexec(&img);
}

static void test_wrong_machine_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_ehdr(&img)->e_machine = EM_AARCH64;
	assert_enoexec(&img);
}

static void test_relocatable_object_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_ehdr(&img)->e_type = ET_REL;
	assert_enoexec(&img);
}

static void test_core_file_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_ehdr(&img)->e_type = ET_CORE;
	assert_enoexec(&img);
}

static void test_truncated_header_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img.len = sizeof(Elf64_Ehdr) - 1;
	assert_enoexec(&img);
}

static void test_empty_file_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img.len = 0;
	assert_enoexec(&img);
}

static void test_wrong_ehsize_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_ehdr(&img)->e_ehsize = sizeof(Elf64_Ehdr) - 1;
	assert_enoexec(&img);
}

static void test_wrong_phentsize_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_ehdr(&img)->e_phentsize = sizeof(Elf32_Phdr);
	assert_enoexec(&img);
}

static void test_zero_phnum_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_ehdr(&img)->e_phnum = 0;
	assert_enoexec(&img);
}

static void test_huge_phnum_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_ehdr(&img)->e_phnum = 0xffff;
	assert_enoexec(&img);
}

static void test_more_than_128_program_headers_are_enoexec(void **state)
{
	struct img img;
	struct elf_info info;

	(void)state;
	img_static_exec(&img); /* the extra headers read as PT_NULL */
	img_ehdr(&img)->e_phnum = 128;
	assert_int_equal(img_parse(&img, &info), 0);
	img_ehdr(&img)->e_phnum = 129;
	assert_enoexec(&img);
}

static void test_phdrs_past_eof_are_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img.len = IMG_PHOFF + sizeof(Elf64_Phdr) + 1; /* the second phdr is cut short */
	assert_enoexec(&img);
}

static void test_phoff_overflowing_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_ehdr(&img)->e_phoff = UINT64_MAX - 8;
	assert_enoexec(&img);
}

static void test_phdrs_overlapping_ehdr_are_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_ehdr(&img)->e_phoff = 8;
	assert_enoexec(&img);
}

static void test_entry_outside_user_space_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_ehdr(&img)->e_entry = 0xffffffff81000000ULL;
	assert_enoexec(&img);
}

static void test_filesz_greater_than_memsz_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_phdr(&img, 1)->p_memsz = 0x80;
	assert_enoexec(&img);
}

static void test_segment_past_eof_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img.len = 0x1080; /* the data segment's file bytes run to 0x1110 */
	assert_enoexec(&img);
}

static void test_segment_offset_overflowing_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_phdr(&img, 1)->p_offset = UINT64_MAX - 0xfff + 0x10; /* congruent to p_vaddr */
	assert_enoexec(&img);
}

static void test_misaligned_vaddr_and_offset_are_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_phdr(&img, 1)->p_vaddr = IMG_BASE + 0x1020; /* offset is 0x1010: 0x10 apart */
	assert_enoexec(&img);
}

static void test_segment_above_user_space_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_phdr(&img, 1)->p_vaddr = 0x800000000000ULL;
	img_phdr(&img, 1)->p_offset = 0x1000;
	assert_enoexec(&img);
}

static void test_segment_crossing_user_space_end_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_phdr(&img, 1)->p_offset = 0x1000;
	img_phdr(&img, 1)->p_vaddr = 0x800000000000ULL - 0x1000;
	img_phdr(&img, 1)->p_memsz = 0x2000;
	assert_enoexec(&img);
}

static void test_non_power_of_two_alignment_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_phdr(&img, 1)->p_align = 0x3000;
	assert_enoexec(&img);
}

static void test_pt_phdr_outside_user_space_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_add(&img, PT_PHDR, PF_R, IMG_PHOFF, 0xffff800000000000ULL, 0, 0);
	assert_enoexec(&img);
}

static void test_overlapping_loads_are_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_static_exec(&img);
	img_phdr(&img, 1)->p_vaddr = IMG_BASE + 0x10; /* inside the text segment */
	assert_enoexec(&img);
}

static void test_no_pt_load_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_init(&img, ET_EXEC);
	img_add(&img, PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0);
	assert_enoexec(&img);
}

static void test_too_many_pt_loads_are_enoexec(void **state)
{
	struct img img;
	struct elf_info info;

	(void)state;
	img_init(&img, ET_EXEC);
	for (int i = 0; i < ELF_MAX_SEGMENTS; i++)
		img_add(&img, PT_LOAD, PF_R, 0, IMG_BASE + (uint64_t)i * 0x1000, 0x100, 0x100);
	assert_int_equal(img_parse(&img, &info), 0);
	assert_int_equal(info.nseg, ELF_MAX_SEGMENTS);
	img_add(&img, PT_LOAD, PF_R, 0, IMG_BASE + ELF_MAX_SEGMENTS * 0x1000, 0x100, 0x100);
	assert_enoexec(&img);
}

static void test_two_pt_interps_are_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_musl_pie(&img);
	img_add_interp(&img, MUSL_LD, 0x300);
	assert_enoexec(&img);
}

static void test_unterminated_interp_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_musl_pie(&img);
	img_phdr(&img, 1)->p_filesz = strlen(MUSL_LD); /* drop the NUL */
	assert_enoexec(&img);
}

static void test_empty_interp_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_musl_pie(&img);
	img.buf[0x200] = '\0';
	img.buf[0x201] = '\0';
	img_phdr(&img, 1)->p_filesz = 2;
	assert_enoexec(&img);
}

static void test_one_byte_interp_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_musl_pie(&img);
	img_phdr(&img, 1)->p_filesz = 1;
	assert_enoexec(&img);
}

static void test_overlong_interp_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_musl_pie(&img);
	img_phdr(&img, 1)->p_filesz = ELF_INTERP_MAX + 1;
	img.buf[0x200 + ELF_INTERP_MAX] = '\0';
	assert_enoexec(&img);
}

static void test_interp_past_eof_is_enoexec(void **state)
{
	struct img img;

	(void)state;
	img_musl_pie(&img);
	img_phdr(&img, 1)->p_offset = IMG_SIZE - 4;
	assert_enoexec(&img);
}

/* Read callbacks that fail: errors pass through, short reads mean a lying header. */

struct failing_ctx {
	struct img *img;
	int reads_left; /* successful reads before the callback starts failing */
	ssize_t result; /* what a failing read returns */
};

static ssize_t failing_read(void *ctx, void *buf, size_t len, uint64_t off)
{
	struct failing_ctx *f = ctx;

	if (f->reads_left-- > 0)
		return img_read(f->img, buf, len, off);
	return f->result;
}

static void test_read_error_on_header_is_returned_as_is(void **state)
{
	struct img img;
	struct elf_info info;
	struct failing_ctx f = {&img, 0, -EIO};

	(void)state;
	img_static_exec(&img);
	assert_int_equal(elf_parse(failing_read, &f, img.len, &info), -EIO);
}

static void test_read_error_on_phdrs_is_returned_as_is(void **state)
{
	struct img img;
	struct elf_info info;
	struct failing_ctx f = {&img, 1, -EIO};

	(void)state;
	img_static_exec(&img);
	assert_int_equal(elf_parse(failing_read, &f, img.len, &info), -EIO);
}

static void test_read_error_on_interp_is_returned_as_is(void **state)
{
	struct img img;
	struct elf_info info;
	struct failing_ctx f = {&img, 2, -EIO};

	(void)state;
	img_musl_pie(&img);
	assert_int_equal(elf_parse(failing_read, &f, img.len, &info), -EIO);
}

static void test_file_shorter_than_its_stated_size_is_enoexec(void **state)
{
	struct img img;
	struct elf_info info;
	struct failing_ctx f = {&img, 1, 0};

	(void)state;
	img_static_exec(&img);
	assert_int_equal(elf_parse(failing_read, &f, img.len, &info), -ENOEXEC);
}

/* Like a pipe or a FUSE file: never more than 7 bytes per read. */
static ssize_t dribble_read(void *ctx, void *buf, size_t len, uint64_t off)
{
	return img_read(ctx, buf, len < 7 ? len : 7, off);
}

static void test_short_reads_are_retried(void **state)
{
	struct img img;
	struct elf_info info;

	(void)state;
	img_musl_pie(&img);
	assert_int_equal(elf_parse(dribble_read, &img, img.len, &info), 0);
	assert_string_equal(info.interp, MUSL_LD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_static_exec_is_described_segment_by_segment),
	    cmocka_unit_test(test_exec_without_gnu_stack_gets_executable_stack),
	    cmocka_unit_test(test_gnu_stack_without_pf_x_gives_nonexecutable_stack),
	    cmocka_unit_test(test_gnu_stack_with_pf_x_gives_executable_stack),
	    cmocka_unit_test(test_phdr_vaddr_without_pt_phdr_comes_from_the_load_holding_them),
	    cmocka_unit_test(test_phdr_vaddr_is_zero_when_no_load_maps_the_headers),
	    cmocka_unit_test(test_dyn_with_interp_reports_interpreter_path),
	    cmocka_unit_test(test_pt_phdr_sets_phdr_vaddr),
	    cmocka_unit_test(test_interp_of_maximum_length_is_accepted),
	    cmocka_unit_test(test_empty_load_segments_are_dropped),
	    cmocka_unit_test(test_host_bin_true_parses_as_dynamic_executable),
	    cmocka_unit_test(test_bad_magic_is_enoexec),
	    cmocka_unit_test(test_32bit_class_is_enoexec),
	    cmocka_unit_test(test_big_endian_is_enoexec),
	    cmocka_unit_test(test_unknown_version_is_enoexec),
	    cmocka_unit_test(test_wrong_machine_is_enoexec),
	    cmocka_unit_test(test_relocatable_object_is_enoexec),
	    cmocka_unit_test(test_core_file_is_enoexec),
	    cmocka_unit_test(test_truncated_header_is_enoexec),
	    cmocka_unit_test(test_empty_file_is_enoexec),
	    cmocka_unit_test(test_wrong_ehsize_is_enoexec),
	    cmocka_unit_test(test_wrong_phentsize_is_enoexec),
	    cmocka_unit_test(test_zero_phnum_is_enoexec),
	    cmocka_unit_test(test_huge_phnum_is_enoexec),
	    cmocka_unit_test(test_more_than_128_program_headers_are_enoexec),
	    cmocka_unit_test(test_phdrs_past_eof_are_enoexec),
	    cmocka_unit_test(test_phoff_overflowing_is_enoexec),
	    cmocka_unit_test(test_phdrs_overlapping_ehdr_are_enoexec),
	    cmocka_unit_test(test_entry_outside_user_space_is_enoexec),
	    cmocka_unit_test(test_filesz_greater_than_memsz_is_enoexec),
	    cmocka_unit_test(test_segment_past_eof_is_enoexec),
	    cmocka_unit_test(test_segment_offset_overflowing_is_enoexec),
	    cmocka_unit_test(test_misaligned_vaddr_and_offset_are_enoexec),
	    cmocka_unit_test(test_segment_above_user_space_is_enoexec),
	    cmocka_unit_test(test_segment_crossing_user_space_end_is_enoexec),
	    cmocka_unit_test(test_non_power_of_two_alignment_is_enoexec),
	    cmocka_unit_test(test_pt_phdr_outside_user_space_is_enoexec),
	    cmocka_unit_test(test_overlapping_loads_are_enoexec),
	    cmocka_unit_test(test_no_pt_load_is_enoexec),
	    cmocka_unit_test(test_too_many_pt_loads_are_enoexec),
	    cmocka_unit_test(test_two_pt_interps_are_enoexec),
	    cmocka_unit_test(test_unterminated_interp_is_enoexec),
	    cmocka_unit_test(test_empty_interp_is_enoexec),
	    cmocka_unit_test(test_one_byte_interp_is_enoexec),
	    cmocka_unit_test(test_overlong_interp_is_enoexec),
	    cmocka_unit_test(test_interp_past_eof_is_enoexec),
	    cmocka_unit_test(test_read_error_on_header_is_returned_as_is),
	    cmocka_unit_test(test_read_error_on_phdrs_is_returned_as_is),
	    cmocka_unit_test(test_read_error_on_interp_is_returned_as_is),
	    cmocka_unit_test(test_file_shorter_than_its_stated_size_is_enoexec),
	    cmocka_unit_test(test_short_reads_are_retried),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
