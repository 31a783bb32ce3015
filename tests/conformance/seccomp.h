/*
 * seccomp.h: helpers for the t_seccomp_* tests: raw seccomp(2), and the small classic-BPF
 * programs they install ("ACTION for syscall NR, allow the rest", so that maybe_save()'s
 * syscall and everything libc does still pass).
 */
#ifndef CONFORMANCE_SECCOMP_H
#define CONFORMANCE_SECCOMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if __has_include(<linux/seccomp.h>)
#include <linux/filter.h>
#include <linux/seccomp.h>
#else /* musl has no kernel headers: the ABI's definitions */
struct sock_filter {
	uint16_t code;
	uint8_t jt, jf;
	uint32_t k;
};
struct sock_fprog {
	unsigned short len;
	struct sock_filter *filter;
};
struct seccomp_data {
	int nr;
	uint32_t arch;
	uint64_t instruction_pointer;
	uint64_t args[6];
};
struct seccomp_notif_sizes {
	uint16_t seccomp_notif, seccomp_notif_resp, seccomp_data;
};
#define BPF_LD 0x00
#define BPF_LDX 0x01
#define BPF_ST 0x02
#define BPF_ALU 0x04
#define BPF_JMP 0x05
#define BPF_RET 0x06
#define BPF_W 0x00
#define BPF_H 0x08
#define BPF_IMM 0x00
#define BPF_ABS 0x20
#define BPF_MEM 0x60
#define BPF_DIV 0x30
#define BPF_MOD 0x90
#define BPF_LSH 0x60
#define BPF_JA 0x00
#define BPF_JEQ 0x10
#define BPF_K 0x00
#define BPF_X 0x08
#define BPF_A 0x10
#define BPF_STMT(code, k)                                                                          \
	{                                                                                          \
		(unsigned short)(code), 0, 0, k                                                    \
	}
#define BPF_JUMP(code, k, jt, jf)                                                                  \
	{                                                                                          \
		(unsigned short)(code), jt, jf, k                                                  \
	}
#define SECCOMP_MODE_STRICT 1
#define SECCOMP_MODE_FILTER 2
#define SECCOMP_SET_MODE_STRICT 0
#define SECCOMP_SET_MODE_FILTER 1
#define SECCOMP_GET_ACTION_AVAIL 2
#define SECCOMP_GET_NOTIF_SIZES 3
#define SECCOMP_FILTER_FLAG_TSYNC (1UL << 0)
#define SECCOMP_FILTER_FLAG_LOG (1UL << 1)
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#define SECCOMP_RET_KILL_THREAD 0x00000000U
#define SECCOMP_RET_TRAP 0x00030000U
#define SECCOMP_RET_ERRNO 0x00050000U
#define SECCOMP_RET_USER_NOTIF 0x7fc00000U
#define SECCOMP_RET_TRACE 0x7ff00000U
#define SECCOMP_RET_LOG 0x7ffc0000U
#define SECCOMP_RET_ALLOW 0x7fff0000U
#endif
#ifndef AUDIT_ARCH_X86_64
#define AUDIT_ARCH_X86_64 0xc000003eU
#endif
#ifndef PR_SET_SECCOMP
#define PR_GET_SECCOMP 21
#define PR_SET_SECCOMP 22
#endif

#define LOAD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LOAD_ARCH BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch))
#define LOAD_ARG0_LO BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))

static inline long sc_seccomp(unsigned int op, unsigned int flags, const void *args)
{
	return syscall(SYS_seccomp, op, flags, args);
}

static inline long sc_install(struct sock_filter *f, unsigned short n, unsigned int flags)
{
	struct sock_fprog prog = {.len = n, .filter = f};

	return sc_seccomp(SECCOMP_SET_MODE_FILTER, flags, &prog);
}

/* ACTION for syscall NR, ALLOW for every other. */
static inline long sc_on(long nr, unsigned int action, unsigned int flags)
{
	struct sock_filter f[] = {
	    LOAD_NR,
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr, 0, 1),
	    RET(action),
	    RET(SECCOMP_RET_ALLOW),
	};

	return sc_install(f, sizeof(f) / sizeof(f[0]), flags);
}

static inline void sc_nnp(void)
{
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

/* The value of "FIELD:\t" in /proc/self/status (or /proc/self/task/TID/status), or -1. */
static inline long sc_status_field(const char *path, const char *field)
{
	char buf[4096], *p;
	size_t flen = strlen(field);
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f)) {
		if (!strncmp(buf, field, flen) && buf[flen] == ':') {
			p = buf + flen + 1;
			v = strtol(p, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/* /proc is there (always in the sandbox; natively only if the rootfs has it mounted). */
#define CHECK_STATUS(path, field, want)                                                            \
	do {                                                                                       \
		if (in_sandbox() || access("/proc/self/status", R_OK) == 0)                        \
			CHECK_EQ(sc_status_field((path), (field)), (want));                        \
	} while (0)

#endif
