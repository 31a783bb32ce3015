/*
 * compat32: a guest whose thread the Sentry must drive while it runs 32-bit code (a far jump to
 * the compatibility code segment): it writes, in 32-bit code, to a page shared copy-on-write
 * with a child, and the Sentry breaks the sharing by injecting an mmap through that thread. It
 * must end normally and soon: it prints "done 42" and exits 0. (The host's `syscall`
 * instruction, run by the injection with the guest's 32-bit code segment, faults at a
 * truncated address: the injection must not run it in 32-bit mode.)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOW_SIZE (64 << 10)

static volatile int target = 1;

/* Enters 32-bit code at LOW (which ends with a far return to 64-bit code) on a stack at the
 * top of the low region. */
static void run32(unsigned char *low)
{
	asm volatile(
	    "mov %%rsp, %%r13\n\t"
	    "mov %[stack], %%rsp\n\t"
	    "lea 1f(%%rip), %%r12\n\t"
	    "pushq $0x23\n\t"
	    "pushq %[code]\n\t"
	    "lretq\n\t"
	    "1: mov %%r13, %%rsp\n\t"
	    :
	    : [stack] "r"((uint64_t)(uintptr_t)low + LOW_SIZE - 64), [code] "r"(
									 (uint64_t)(uintptr_t)low)
	    : "rax", "r12", "r13", "memory");
}

/* 32-bit code: BODY, then back to 64-bit code through the landing at +256 (jmp *%r12). */
static unsigned char *make_low(const unsigned char *body, int len)
{
	unsigned char *low = mmap(NULL, LOW_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	uint32_t back = (uint32_t)(uintptr_t)(low + 256);
	int n = len;

	if (low == MAP_FAILED || (uintptr_t)low >= 0x80000000UL) {
		printf("no MAP_32BIT memory\n");
		_exit(2);
	}
	memcpy(low, body, len);
	low[n++] = 0x6a; /* push $0x33 */
	low[n++] = 0x33;
	low[n++] = 0x68; /* push $back */
	memcpy(low + n, &back, 4);
	n += 4;
	low[n++] = 0xcb;		      /* lret */
	memcpy(low + 256, "\x41\xff\xe4", 3); /* jmp *%r12 */
	return low;
}

int main(void)
{
	/* push %ss; pop %ds; movl $42, target */
	unsigned char body[16] = {0x16, 0x1f, 0xc7, 0x05};
	uint32_t at = (uint32_t)(uintptr_t)&target, v = 42;

	if ((uintptr_t)&target >= 0x100000000UL) {
		printf("not a static, non-PIE build\n");
		return 2;
	}
	memcpy(body + 4, &at, 4);
	memcpy(body + 8, &v, 4);
	unsigned char *low = make_low(body, 12);
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	waitpid(c, NULL, 0);
	run32(low);
	printf("done %d\n", target);
	return 0;
}
