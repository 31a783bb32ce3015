/* seccomp — the guests' own seccomp filters (seccomp(2), prctl PR_SET_SECCOMP), as Linux has
 * them: strict mode, and stacks of classic-BPF programs over struct seccomp_data that the
 * Sentry checks as Linux's seccomp_check_filter and bpf_check_classic do and runs itself on
 * every syscall a filtered task enters, before the syscall is served (docs/seccomp.md). Its
 * functions are gseccomp_* (the guests'): libseccomp, which the Sentry links for its own
 * filter, owns the seccomp_* names. */
#ifndef SENTRY_SECCOMP_H
#define SENTRY_SECCOMP_H

#include <stdbool.h>
#include <stdint.h>

struct task;
struct enc;
struct dec;

/* One classic BPF instruction (struct sock_filter's layout). */
struct seccomp_insn {
	uint16_t code;
	uint8_t jt, jf;
	uint32_t k;
};

/* struct seccomp_data, what a program reads: 64 bytes. */
struct seccomp_data_ {
	int32_t nr;
	uint32_t arch;
	uint64_t instruction_pointer;
	uint64_t args[6];
};

/* One installed program. Filters form chains through PREV, newest first; a chain is shared by
 * every task that inherited it (fork, clone, TSYNC) and by newer filters stacked on it. */
struct seccomp_filter {
	int refs; /* tasks whose newest filter it is, and newer filters whose PREV it is */
	struct seccomp_filter *prev;
	bool log; /* SECCOMP_FILTER_FLAG_LOG */
	unsigned int len;
	struct seccomp_insn insns[];
};

/* A task's seccomp state: MODE is 0 (disabled), 1 (strict) or 2 (filter); FILTER is the newest
 * filter of the chain (a reference), NFILTERS the chain's length (/proc's Seccomp_filters). */
struct task_seccomp {
	int mode;
	unsigned int nfilters;
	struct seccomp_filter *filter;
};

#define SECCOMP_MAX_INSNS 4096	     /* BPF_MAXINSNS */
#define SECCOMP_MAX_PATH_INSNS 32768 /* MAX_INSNS_PER_PATH: a chain's total, 4 per filter more */

/* Checks a program as Linux does before it installs one: 0, or -EINVAL. */
int gseccomp_check_prog(const struct seccomp_insn *insns, unsigned int len);
/* Runs checked program F over SD: the 32-bit action and data it returns. */
uint32_t gseccomp_run(const struct seccomp_filter *f, const struct seccomp_data_ *sd);

/* Another reference on F (may be NULL); gseccomp_put drops one, the last frees F and drops
 * its PREV. */
struct seccomp_filter *gseccomp_get(struct seccomp_filter *f);
void gseccomp_put(struct seccomp_filter *f);
/* Child C of T starts with T's mode and filters (fork, clone, and threads alike). */
void gseccomp_fork(struct task *c, const struct task *t);
/* Drops T's filters (its release: a zombie keeps its mode and count, for /proc). */
void gseccomp_release(struct task *t);

/* T entered the syscall in t->sc from IP (the address after the instruction, or the vsyscall
 * address). Called only when t->seccomp.mode is set. Returns true when the syscall is to be
 * served; otherwise *RET is its result (SIGSYS queued for RET_TRAP), or T is gone (killed). */
bool gseccomp_allows(struct task *t, unsigned long ip, long *ret);

/* Stacks a filter of LEN instructions at PROG (struct sock_filter's layout, checked here as a
 * guest's) on T, as the Sentry starts a process an OCI bundle's linux.seccomp filters: 0, or
 * a negative errno. Needs neither no_new_privs nor a capability (runc installs it while it is
 * still privileged). */
long gseccomp_attach(struct task *t, const void *prog, unsigned int len, bool log);

/* seccomp(2)'s operations, and prctl's PR_SET_SECCOMP / PR_GET_SECCOMP. */
long gseccomp_op(struct task *t, unsigned int op, unsigned int flags, unsigned long uargs);
long gseccomp_prctl_set(struct task *t, unsigned long mode, unsigned long filter);

/* Checkpoint: filters are a kind (CK_SECCOMP, state/codec.h), each saved once with a
 * reference to its PREV; SECCOMP_SAVE_TASK writes T's state at the end of its task record
 * (nothing when T has none, so images without filters are unchanged), SECCOMP_LOAD_TASK reads
 * it back if the record has it. */
int gseccomp_filter_save(struct enc *e, const void *f);
void *gseccomp_filter_load(struct dec *d);
void gseccomp_filter_drop(void *f);
void gseccomp_save_task(struct enc *e, const struct task *t);
void gseccomp_load_task(struct dec *d, struct task *t);

#endif
