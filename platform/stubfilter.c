/* The seccomp filters of the stub factory and of the stubs (docs/security.md, "The stubs'
 * filter"): the factory's entry installs its own before it first stops, and every stub forked
 * from it gets its own stacked on top before any guest instruction runs. libseccomp cannot
 * test the instruction pointer, so a hand-written prefix sends every system call not made
 * from the stub page's syscall instruction to SIGSYS (under SYSEMU only the vsyscall page's
 * get there, for the Sentry to emulate); behind it, the allowlist of
 * platform/stubfilter_rules.c, which the build compiled with libseccomp (gen/stubfilter_bpf.h):
 * a start only puts its descriptors and addresses in, instead of compiling it again. */
#include "platform/stub.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stubfilter_bpf.h"

#define PREFIX_LEN 6

/* The prefix: anything not called from one of the gadgets traps. */
static int put_prefix(struct sock_filter *out, size_t max, const struct stub_filter_spec *spec)
{
	const uint64_t ip = spec->ip, ip2 = spec->ip2 ? spec->ip2 : spec->ip;
	/* seccomp sees the address after the syscall instruction; both gadgets lie in the one
	 * code page, so their high halves are the same. */
	const struct sock_filter prefix[PREFIX_LEN] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)ip, 1, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)ip2, 0, 2),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		     offsetof(struct seccomp_data, instruction_pointer) + 4),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(ip >> 32), 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
	};
	if ((ip >> 32) != (ip2 >> 32))
		return -EINVAL;
	if (max < PREFIX_LEN)
		return -E2BIG;
	for (int i = 0; i < PREFIX_LEN; i++)
		out[i] = prefix[i];
	return PREFIX_LEN;
}

/* The build's program for SPEC's kind (platform, stub or factory), or NULL if SPEC is not
 * one it was compiled for. */
static const struct stub_template *template_for(const struct stub_filter_spec *spec)
{
	const struct stub_template *t = &stub_templates[spec->sysfd >= 0][spec->fork_flags != 0];

	if (spec->thread_flags != STUB_THREAD_FLAGS ||
	    (spec->sysfd >= 0 && spec->systrap_thread_flags != SYSTRAP_THREAD_FLAGS) ||
	    (spec->fork_flags && spec->fork_flags != STUB_FORK_FLAGS) ||
	    (spec->stub_base & 0xffffffffULL) || !spec->stub_len || spec->stub_len >> 32)
		return NULL;
	return t;
}

/* The value placeholder K stands for in SPEC's program; K itself if it is none. */
static uint32_t put_in(uint32_t k, const struct stub_filter_spec *spec)
{
	switch (k) {
	case STUB_PH_MEMFD:
		return (uint32_t)spec->memfd;
	case STUB_PH_SYSFD:
		return (uint32_t)spec->sysfd;
	case STUB_PH_DOORBELL:
		return (uint32_t)spec->doorbell;
	case STUB_PH_BASE_HI:
		return (uint32_t)(spec->stub_base >> 32);
	case STUB_PH_LEN:
		return (uint32_t)spec->stub_len;
	case STUB_PH_PROG_LO:
		return (uint32_t)spec->stub_prog;
	case STUB_PH_PROG_HI:
		return (uint32_t)(spec->stub_prog >> 32);
	case STUB_PH_FDSOCK:
		return (uint32_t)spec->fdsock;
	}
	return k;
}

int stub_filter_build(struct sock_filter *out, size_t max, const struct stub_filter_spec *spec)
{
	const struct stub_template *t = template_for(spec);
	int n;

	if (!t)
		return -EINVAL;
	if ((n = put_prefix(out, max, spec)) < 0)
		return n;
	if ((size_t)n + t->len > max)
		return -E2BIG;
	for (size_t i = 0; i < t->len; i++) {
		struct sock_filter f = t->prog[i];
		/* Only a comparison's constant can be a placeholder (not a load's offset, nor a
		 * return's action). */
		if (BPF_CLASS(f.code) == BPF_JMP && BPF_OP(f.code) != BPF_JA &&
		    BPF_SRC(f.code) == BPF_K)
			f.k = put_in(f.k, spec);
		out[n + i] = f;
	}
	return n + (int)t->len;
}

int stub_filter_compile(struct sock_filter *out, size_t max, const struct stub_filter_spec *spec)
{
	int n, err, fd;

	if ((n = put_prefix(out, max, spec)) < 0)
		return n;
	if ((fd = memfd_create("stub-filter", MFD_CLOEXEC)) < 0)
		return -errno;
	if ((err = stub_filter_allowlist(spec, fd)))
		goto out;
	off_t len = lseek(fd, 0, SEEK_END);
	size_t m = len > 0 ? (size_t)len / sizeof(struct sock_filter) : 0;
	if (m == 0 || n + m > max) {
		err = -E2BIG;
		goto out;
	}
	if (pread(fd, out + n, m * sizeof(struct sock_filter), 0) !=
	    (ssize_t)(m * sizeof(struct sock_filter))) {
		err = -EIO;
		goto out;
	}
	err = n + (int)m;
out:
	close(fd);
	return err;
}
