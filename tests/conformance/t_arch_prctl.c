/*
 * t_arch_prctl: ARCH_GET_FS returns the thread pointer, which on both glibc and musl is the
 * address stored at %fs:0; ARCH_SET_FS to a copy of the thread block moves %fs there (read
 * back through %fs:0) and is then restored. Between set and restore no libc code may run (it
 * uses %fs), so those calls are inline syscalls. Unknown codes are EINVAL, a non-canonical
 * base EPERM, a bad result pointer EFAULT.
 */
#include "check.h"
#include <stdint.h>

#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003

static long raw_arch_prctl(long code, unsigned long arg)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_arch_prctl), "D"(code), "S"(arg)
			 : "rcx", "r11", "memory");
	return ret;
}

static uintptr_t fs_self(void)
{
	uintptr_t p;

	__asm__ volatile("mov %%fs:0, %0" : "=r"(p));
	return p;
}

/* Gets a copy of the real thread block's first 64 bytes (self pointer, stack guard). */
static uintptr_t fake_tcb[64] __attribute__((aligned(64)));

int main(void)
{
	uintptr_t base = 0;

	CHECK_EQ(syscall(SYS_arch_prctl, ARCH_GET_FS, &base), 0);
	CHECK(base != 0);
	CHECK_EQ(base, fs_self());

	memcpy(fake_tcb, (void *)base, 8 * sizeof(uintptr_t));
	fake_tcb[0] = (uintptr_t)fake_tcb;

	uintptr_t got = 0, seen;
	long set = raw_arch_prctl(ARCH_SET_FS, (uintptr_t)fake_tcb);
	seen = fs_self();
	long get = raw_arch_prctl(ARCH_GET_FS, (uintptr_t)&got);
	long restore = raw_arch_prctl(ARCH_SET_FS, base);
	CHECK_EQ(set, 0);
	CHECK_EQ(get, 0);
	CHECK_EQ(restore, 0);
	CHECK_EQ(seen, fake_tcb);
	CHECK_EQ(got, fake_tcb);
	CHECK_EQ(fs_self(), base);

	maybe_save();
	CHECK_EQ(fs_self(), base);
	got = 0;
	CHECK_EQ(syscall(SYS_arch_prctl, ARCH_GET_FS, &got), 0);
	CHECK_EQ(got, base);

	/* Errors leave %fs alone. */
	CHECK_EQ(raw_arch_prctl(ARCH_SET_FS, 0xffff800000000000UL), -EPERM);
	CHECK_EQ(fs_self(), base);
	CHECK_ERR(syscall(SYS_arch_prctl, 0x9999, 0), EINVAL);
	CHECK_ERR(syscall(SYS_arch_prctl, ARCH_GET_FS, BAD_PTR), EFAULT);
	CHECK_EQ(fs_self(), base);
	return check_done();
}
