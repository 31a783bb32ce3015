/* Private to platform/: the seccomp platform's per-thread area, shared by a stub thread (its
 * signal handler, written in assembly in stub.c) and the Sentry (platform/systrap.c).
 *
 * Each guest thread has an area of SYSTRAP_AREA bytes, a slot of the platform's own memory
 * file mapped at the same slot of every address space's area range: the first page is the
 * control block below, the rest the thread's alternate signal stack, on which the kernel
 * writes the frame (registers, FPU state, siginfo) of every SIGSYS and fault. The Sentry reads
 * and rewrites that frame in place, through its own mapping of the slot. The handler finds
 * its area from its stack pointer, so the area must be aligned to its size. */
#ifndef PLATFORM_SYSTRAP_H
#define PLATFORM_SYSTRAP_H

#define SYSTRAP_AREA 16384
#define SYSTRAP_AREA_STR "16384"
#define SYSTRAP_STACK_OFF 4096
#define SYSTRAP_STACK_OFF_STR "4096"
#define SYSTRAP_STACK_LEN (SYSTRAP_AREA - SYSTRAP_STACK_OFF)
#define SYSTRAP_STACK_LEN_STR "12288"

/* The state word: who has the thread now. */
#define SYSTRAP_RUNNING 0  /* guest code (the Sentry let it return) */
#define SYSTRAP_EVENT 1	   /* the handler posted an event and waits */
#define SYSTRAP_CMD 2	   /* the Sentry asks the waiting handler to make a call */
#define SYSTRAP_CMD_DONE 3 /* the call's result is in `result`; it waits again */
#define SYSTRAP_PARKED 4   /* the event was taken and its syscall blocks: sleep, do not spin */
#define SYSTRAP_EVENT_STR "1"
#define SYSTRAP_CMD_STR "2"
#define SYSTRAP_CMD_DONE_STR "3"
#define SYSTRAP_PARKED_STR "4"

/* Flags the Sentry sets: load fs/gs base before returning; leave (exit) at the next look. */
#define SYSTRAP_F_SETFS 1
#define SYSTRAP_F_SETGS 2
#define SYSTRAP_F_EXIT 4
#define SYSTRAP_F_SETFS_STR "1"
#define SYSTRAP_F_SETGS_STR "2"
#define SYSTRAP_F_EXIT_STR "4"

/* Offsets into the control block, for the assembly. */
#define A_STATE "0"
#define A_SIG "4"
#define A_INFO "8"
#define A_UCTX "16"
#define A_ONE "24"
#define A_NR "32"
#define A_ARG0 "40"
#define A_ARG1 "48"
#define A_ARG2 "56"
#define A_ARG3 "64"
#define A_ARG4 "72"
#define A_ARG5 "80"
#define A_RESULT "88"
#define A_FS "96"
#define A_GS "104"
#define A_SETFS "112"
#define A_SETGS "120"
#define A_FLAGS "128"
#define A_DOORBELL "132"
#define A_STUB_SLEEPING "140"
#define A_SENTRY_WAITING "144"

/* Where in its area a new thread's start (stub_systrap_thread_start) keeps its stack_t and
 * the signal set it unblocks: 32 bytes below the area's top, the set at 24 of them. The
 * stub's filter admits sigaltstack and rt_sigprocmask only with these (platform/stubfilter.c),
 * and clone only with the top 8 bytes below the area's end as the stack. */
#define SYSTRAP_START_SS_OFF (SYSTRAP_AREA - 32)
#define SYSTRAP_START_SET_OFF (SYSTRAP_AREA - 8)
#define SYSTRAP_CLONE_STACK_OFF (SYSTRAP_AREA - 8)

/* The page every stub maps read-only at the stub's base + SYSTRAP_GLOBAL_OFF: whether the
 * Sentry may be asleep (so an event must ring the doorbell), and its CPU (a handler on
 * another CPU spins a while before it sleeps; -1: never spin). */
#define SYSTRAP_GLOBAL_OFF 8192
#define SYSTRAP_GLOBAL_OFF_STR "8192"
#define G_SENTRY_SLEEPING "0"
#define G_SENTRY_CPU "4"
/* How many pause instructions a handler on another CPU spins before it sleeps. */
#define SYSTRAP_SPIN_STR "2000"

#ifndef __ASSEMBLER__
#include <stddef.h>
#include <stdint.h>

struct systrap_area {
	uint32_t state;
	int32_t sig;   /* the event's host signal */
	uint64_t info; /* its siginfo_t, a stub address on the alternate stack */
	uint64_t uctx; /* its ucontext_t, likewise */
	uint64_t one;  /* 1: what the doorbell is written */
	uint64_t nr;   /* SYSTRAP_CMD: the call and its arguments */
	uint64_t args[6];
	uint64_t result;
	uint64_t fs_base, gs_base; /* read at the event (rdfsbase, rdgsbase) */
	uint64_t set_fs, set_gs;   /* loaded before returning, with the flags */
	uint32_t flags;
	int32_t doorbell;	 /* the descriptor the handler writes */
	int32_t tid;		 /* the thread's tid while it lives (CLONE_CHILD_CLEARTID) */
	uint32_t stub_sleeping;	 /* the handler sleeps on the futex: a change must wake it */
	uint32_t sentry_waiting; /* the Sentry sleeps on the futex for a call's end */
};

struct systrap_global {
	uint32_t sentry_sleeping;
	int32_t sentry_cpu;
};

#define SYSTRAP_ASSERT_OFF(field, off)                                                             \
	_Static_assert(offsetof(struct systrap_area, field) == (off), "systrap area layout")
SYSTRAP_ASSERT_OFF(state, 0);
SYSTRAP_ASSERT_OFF(sig, 4);
SYSTRAP_ASSERT_OFF(info, 8);
SYSTRAP_ASSERT_OFF(uctx, 16);
SYSTRAP_ASSERT_OFF(one, 24);
SYSTRAP_ASSERT_OFF(nr, 32);
SYSTRAP_ASSERT_OFF(args, 40);
SYSTRAP_ASSERT_OFF(result, 88);
SYSTRAP_ASSERT_OFF(fs_base, 96);
SYSTRAP_ASSERT_OFF(gs_base, 104);
SYSTRAP_ASSERT_OFF(set_fs, 112);
SYSTRAP_ASSERT_OFF(set_gs, 120);
SYSTRAP_ASSERT_OFF(flags, 128);
SYSTRAP_ASSERT_OFF(doorbell, 132);
SYSTRAP_ASSERT_OFF(stub_sleeping, 140);
SYSTRAP_ASSERT_OFF(sentry_waiting, 144);

extern const char stub_systrap_gadget[], stub_systrap_handler[], stub_systrap_restorer[],
    stub_systrap_thread_start[], stub_systrap_park[];
#endif

#endif
