/* Unit tests for the guests' seccomp filters (sentry/seccomp.c): the checker refuses what
 * Linux's refuses, the interpreter computes what classic BPF computes over struct
 * seccomp_data, and a chain of filters round-trips through the checkpoint codec with each
 * filter once and its links intact, while a forged program is refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <string.h>

#include "sentry/seccomp.h"
#include "state/codec.h"

#define S(c, k)                                                                                    \
	{                                                                                          \
		(uint16_t)(c), 0, 0, (k)                                                           \
	}
#define J(c, k, t, f)                                                                              \
	{                                                                                          \
		(uint16_t)(c), (t), (f), (k)                                                       \
	}
#define N(a) (sizeof(a) / sizeof((a)[0]))

static struct seccomp_filter *make(const struct seccomp_insn *p, unsigned int n,
				   struct seccomp_filter *prev)
{
	struct seccomp_filter *f = calloc(1, sizeof(*f) + n * sizeof(*p));
	assert_non_null(f);
	f->refs = 1;
	f->len = n;
	f->prev = prev;
	memcpy(f->insns, p, n * sizeof(*p));
	assert_int_equal(gseccomp_check_prog(f->insns, n), 0);
	return f;
}

static void test_the_checker_refuses_what_linux_refuses(void **state)
{
	(void)state;
	const struct seccomp_insn ret = S(BPF_RET | BPF_K, 0);
	struct {
		struct seccomp_insn p[3];
		unsigned int n;
	} bad[] = {
	    {{J(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0), ret}, 2}, /* jump past the end */
	    {{S(BPF_JMP | BPF_JA, 1), ret}, 2},		       /* likewise */
	    {{S(BPF_LD | BPF_B | BPF_ABS, 0), ret}, 2},	       /* not a seccomp load */
	    {{S(BPF_ALU | BPF_MOD | BPF_X, 0), ret}, 2},       /* MOD: not for seccomp */
	    {{S(BPF_LD | BPF_W | BPF_ABS, 2), ret}, 2},	       /* misaligned */
	    {{S(BPF_LD | BPF_W | BPF_ABS, 64), ret}, 2},       /* past seccomp_data */
	    {{S(BPF_ALU | BPF_DIV | BPF_K, 0), ret}, 2},       /* by a constant zero */
	    {{S(BPF_ALU | BPF_RSH | BPF_K, 32), ret}, 2},      /* shift too far */
	    {{S(BPF_LDX | BPF_MEM, 0), ret}, 2},	       /* read before a write */
	    {{S(BPF_ST, 16), ret}, 2},			       /* no such cell */
	    {{ret, S(BPF_LD | BPF_IMM, 0)}, 2},		       /* no RET at the end */
	    {{J(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1), S(BPF_ST, 1), S(BPF_LD | BPF_MEM, 1)}, 3},
	    /* (the last: M[1] is unwritten on the jump's false path, and there is no RET) */
	};
	for (size_t i = 0; i < N(bad); i++)
		assert_int_equal(gseccomp_check_prog(bad[i].p, bad[i].n), -EINVAL);
	assert_int_equal(gseccomp_check_prog(&ret, 0), -EINVAL);
	struct seccomp_insn *big = calloc(4097, sizeof(*big));
	for (int i = 0; i < 4097; i++)
		big[i] = ret;
	assert_int_equal(gseccomp_check_prog(big, 4097), -EINVAL);
	assert_int_equal(gseccomp_check_prog(big, 4096), 0);
	free(big);
}

static void test_the_interpreter_computes_classic_bpf(void **state)
{
	(void)state;
	struct seccomp_data_ sd = {.nr = 39, .arch = 0xc000003e, .args = {0x100000007ULL}};
	/* ((nr + 3) * 2 - 1) ^ 0xf0, stored, reloaded into X, back into A, shifted right. */
	const struct seccomp_insn alu[] = {
	    S(BPF_LD | BPF_W | BPF_ABS, 0),
	    S(BPF_ALU | BPF_ADD | BPF_K, 3),
	    S(BPF_ALU | BPF_MUL | BPF_K, 2),
	    S(BPF_ALU | BPF_SUB | BPF_K, 1),
	    S(BPF_ALU | BPF_XOR | BPF_K, 0xf0),
	    S(BPF_ST, 5),
	    S(BPF_LDX | BPF_MEM, 5),
	    S(BPF_MISC | BPF_TXA, 0),
	    S(BPF_ALU | BPF_RSH | BPF_K, 1),
	    S(BPF_ALU | BPF_OR | BPF_K, 0),
	    S(BPF_RET | BPF_A, 0),
	};
	struct seccomp_filter *f = make(alu, N(alu), NULL);
	assert_int_equal(gseccomp_run(f, &sd), (((39 + 3) * 2 - 1) ^ 0xf0) >> 1);
	gseccomp_put(f);

	/* Jumps on the arch and the low and high words of an argument; LEN is 64. */
	const struct seccomp_insn jumps[] = {
	    S(BPF_LD | BPF_W | BPF_ABS, 4),
	    J(BPF_JMP | BPF_JEQ | BPF_K, 0xc000003e, 1, 0),
	    S(BPF_RET | BPF_K, 1),
	    S(BPF_LD | BPF_W | BPF_ABS, 16),
	    J(BPF_JMP | BPF_JSET | BPF_K, 4, 0, 1),
	    S(BPF_RET | BPF_K, 2),
	    S(BPF_LD | BPF_W | BPF_ABS, 20),
	    J(BPF_JMP | BPF_JGE | BPF_K, 2, 0, 2),
	    S(BPF_RET | BPF_K, 3),
	    S(BPF_RET | BPF_K, 4),
	    S(BPF_LD | BPF_W | BPF_LEN, 0),
	    S(BPF_RET | BPF_A, 0),
	};
	f = make(jumps, N(jumps), NULL);
	assert_int_equal(gseccomp_run(f, &sd), 2); /* arg0 low word 7 has bit 4 */
	sd.args[0] = 0x100000008ULL;
	assert_int_equal(gseccomp_run(f, &sd), 64);
	sd.arch = 0x40000003;
	assert_int_equal(gseccomp_run(f, &sd), 1);
	gseccomp_put(f);

	/* A division by X = 0 ends the program with 0; shifts by X use its low five bits. */
	const struct seccomp_insn div[] = {S(BPF_LD | BPF_IMM, 64), S(BPF_LDX | BPF_IMM, 0),
					   S(BPF_ALU | BPF_DIV | BPF_X, 0), S(BPF_RET | BPF_K, 9)};
	f = make(div, N(div), NULL);
	assert_int_equal(gseccomp_run(f, &sd), 0);
	gseccomp_put(f);
	const struct seccomp_insn shift[] = {S(BPF_LD | BPF_IMM, 1), S(BPF_LDX | BPF_IMM, 33),
					     S(BPF_ALU | BPF_LSH | BPF_X, 0),
					     S(BPF_RET | BPF_A, 0)};
	f = make(shift, N(shift), NULL);
	assert_int_equal(gseccomp_run(f, &sd), 2);
	gseccomp_put(f);
}

static void test_a_chain_round_trips_once_per_filter(void **state)
{
	(void)state;
	const struct seccomp_insn a[] = {S(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	const struct seccomp_insn b[] = {
	    S(BPF_LD | BPF_W | BPF_ABS, 0), J(BPF_JMP | BPF_JEQ | BPF_K, 39, 0, 1),
	    S(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1), S(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	struct seccomp_filter *old = make(a, 1, NULL);
	struct seccomp_filter *new = make(b, 4, gseccomp_get(old));
	struct ckpt_refs *save = ckpt_refs_new(), *load = ckpt_refs_new();
	struct enc e;
	uint64_t id;
	const void *obj;

	/* Oldest first, as gseccomp_save_task assigns them; the newest refers to the oldest. */
	assert_int_equal(ckpt_refs_id(save, CK_SECCOMP, old), 1);
	assert_int_equal(ckpt_refs_id(save, CK_SECCOMP, new), 2);
	while ((obj = ckpt_refs_next(save, CK_SECCOMP, &id))) {
		enc_init(&e, save);
		assert_int_equal(gseccomp_filter_save(&e, obj), 0);
		struct dec d;
		dec_init(&d, e.buf, e.len, load);
		struct seccomp_filter *f = gseccomp_filter_load(&d);
		assert_non_null(f);
		assert_true(dec_at_end(&d));
		assert_int_equal(ckpt_refs_put(load, CK_SECCOMP, id, f), 0);
		dec_free(&d);
		enc_free(&e);
	}
	assert_null(ckpt_refs_next(save, CK_SECCOMP, &id)); /* nothing saved twice */
	struct seccomp_filter *l_old = ckpt_refs_get(load, CK_SECCOMP, 1);
	struct seccomp_filter *l_new = ckpt_refs_get(load, CK_SECCOMP, 2);
	assert_ptr_equal(l_new->prev, l_old);
	assert_null(l_old->prev);
	assert_int_equal(l_new->len, 4);
	assert_memory_equal(l_new->insns, b, sizeof(b));
	struct seccomp_data_ sd = {.nr = 39};
	assert_int_equal(gseccomp_run(l_new, &sd), SECCOMP_RET_ERRNO | 1);
	ckpt_refs_foreach(load, CK_SECCOMP, gseccomp_filter_drop);
	ckpt_refs_free(load);
	ckpt_refs_free(save);
	gseccomp_put(new);
	gseccomp_put(old);
}

static void test_a_forged_program_is_refused(void **state)
{
	(void)state;
	struct enc e;
	struct dec d;

	enc_init(&e, NULL);
	enc_bool(&e, false);
	enc_u32(&e, 1);
	enc_u32(&e, BPF_LD | BPF_W | BPF_ABS); /* no RET */
	enc_u32(&e, 0);
	enc_u64(&e, 0); /* no prev */
	struct ckpt_refs *r = ckpt_refs_new();
	dec_init(&d, e.buf, e.len, r);
	assert_null(gseccomp_filter_load(&d));
	assert_false(dec_ok(&d));
	dec_free(&d);
	ckpt_refs_free(r);
	enc_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_checker_refuses_what_linux_refuses),
	    cmocka_unit_test(test_the_interpreter_computes_classic_bpf),
	    cmocka_unit_test(test_a_chain_round_trips_once_per_filter),
	    cmocka_unit_test(test_a_forged_program_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
