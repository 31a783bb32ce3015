/* Private to platform/: what the ptrace platform (ptrace.c) and the seccomp platform
 * (systrap.c) share. Both make stubs the same way, from the factory by ptrace; the seccomp
 * platform then detaches from each new stub and drives it through its threads' areas. */
#ifndef PLATFORM_INTERNAL_H
#define PLATFORM_INTERNAL_H

#include <sched.h>

#include "platform/platform.h"
#include "platform/stub.h"

struct platform_state {
	enum platform_kind kind;
	uintptr_t stub_base;
	uintptr_t user_top;
	int memfd;
	enum platform_placement placement;
	/* The Sentry's CPU; where guest threads are pinned (the Sentry's but under --placement
	 * other); where auto sends a thread away (seccomp), -1 if nowhere. */
	int sentry_cpu, guest_cpu, away_cpu;
	/* /proc/stat, read by auto's tick: how idle the away CPU was lately (percent). */
	int stat_fd, away_idle_pct;
	cpu_set_t all_cpus; /* where the Sentry was allowed to run when it started */
	size_t fpstate_size;
	void (*stub_hook)(void);
	struct platform_thread *factory; /* NULL before platform_start and once killed */
	/* The stubs' descriptor socket (stubfd.c): the Sentry's end, the stubs' end, and the
	 * number a stub's userfaultfd gets (the lowest it has free). */
	int fdsock, fdsock_stub;
	int fdmsg_fds[STUB_FDMSG_FDS];
	bool factory_starting; /* forked, its first stop not yet taken */
};

extern struct platform_state plat;

#define PAGE 4096UL
/* The stub's code and parameter pages, and under the seccomp platform the shared page and the
 * thread areas after them: the range kept from guests (an image taken under ptrace restores
 * under seccomp unless its guests mapped something where the areas go, which a restore
 * refuses as it refuses any mapping over the stub). */
#define STUB_PAGES_LEN (2 * PAGE)
#define SYSTRAP_AREAS_OFF (64 * 1024UL)
#define SYSTRAP_MAX_LOCAL 4096 /* threads of one stub at once */
#define STUB_LEN                                                                                   \
	(plat.kind == PLATFORM_SECCOMP ? SYSTRAP_AREAS_OFF + SYSTRAP_MAX_LOCAL * 16384UL           \
				       : STUB_PAGES_LEN)

/* The address of stub code symbol SYM in every stub. */
#define STUB_CODE_ADDR(sym) (plat.stub_base + (uintptr_t)((sym)-stub_code_begin))

/* ptrace.c: an injection by ptrace into stopped thread T (the factory, a new stub), the list
 * of threads that can have an event, and the tid table. */
long ptrace_inject(struct platform_thread *t, long nr, const long args[6]);
void plat_watch(struct platform_thread *t);
struct platform_thread *plat_first_watched(void);
void plat_unwatch(struct platform_thread *t);
void plat_hash_del(struct platform_thread *t);
void plat_hash_add(struct platform_thread *t);
void plat_stub_unlink(struct platform_stub *stub);
uint64_t plat_now_ns(void);

/* placement.c: PLACEMENT_AUTO's bookkeeping at a resume, at a call the Sentry makes in T's
 * stub, for a new thread of PARENT's; and the look queue. */
void plat_place_init(void);
void plat_place_release(struct platform_thread *t);
void plat_place_resumed(struct platform_thread *t);
void plat_place_injected(struct platform_thread *t);
void plat_place_new_thread(struct platform_thread *parent, struct platform_thread *t);

/* systrap.c */
int systrap_init(void);
void systrap_factory_prepare(int *keep, int *nkeep);
int systrap_prepare(struct platform_thread *t);
void systrap_unprepare(struct platform_stub *stub);
int systrap_adopt(struct platform_thread *t);
int systrap_thread_new(struct platform_thread *parent, struct platform_thread **out);
void systrap_thread_release(struct platform_thread *t);
long systrap_inject(struct platform_thread *t, long nr, const long args[6]);
int systrap_wait(struct platform_event *ev, bool block);
int systrap_syscall_info(struct platform_thread *t, struct platform_syscall *sc);
int systrap_set_return(struct platform_thread *t, long ret);
int systrap_resume(struct platform_thread *t);
void systrap_blocked(struct platform_thread *t);
int systrap_interrupt(struct platform_thread *t);
int systrap_set_batch(struct platform_thread *t, bool batch);
int systrap_get_regs(struct platform_thread *t, struct user_regs_struct *regs);
int systrap_set_regs(struct platform_thread *t, const struct user_regs_struct *regs);
int systrap_get_fpstate(struct platform_thread *t, void *buf, size_t len);
int systrap_set_fpstate(struct platform_thread *t, const void *buf, size_t len);
int systrap_get_siginfo(struct platform_thread *t, siginfo_t *si);
void systrap_kill(struct platform_thread *t);
/* At the end of the sandbox: what stubs let go of still hold. */
void systrap_teardown(void);
int systrap_stub_filter_fds(int *sysfd, int *doorbell);

/* stubfd.c: the socket stubs send their userfaultfd on (SV[0] the Sentry's end, SV[1] the
 * stubs'), the message in the parameter page that sends FDS, and the Sentry's receipt: 0 and
 * the descriptor of a whole message from host process PID, -EAGAIN if no message is there,
 * -EBADMSG if too many were someone else's or malformed (each closed); never waits.
 * stubfd_drain closes whatever is queued. */
int stubfd_socketpair(int sv[2]);
void stubfd_message(struct stub_fdmsg *m, const int fds[STUB_FDMSG_FDS]);
int stubfd_recv(int sock, pid_t pid, int fds[STUB_FDMSG_FDS]);
void stubfd_drain(int sock);

#endif
