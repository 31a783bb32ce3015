/* Unit tests for the VMA set: insertion order, lookups, splitting on remove and protect, and
 * the top-down gap search that places mmaps. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/mman.h>

#include "sentry/vma.h"

#define P 4096UL

static struct vma mk(uintptr_t start, uintptr_t end, uint64_t mf)
{
	struct vma v = {.start = start, .end = end, .prot = PROT_READ, .mf_off = mf};
	return v;
}

static void test_find_returns_the_containing_vma_or_null(void **state)
{
	struct vma_set s = {0};
	(void)state;
	struct vma a = mk(10 * P, 20 * P, 0), b = mk(30 * P, 40 * P, 100 * P);

	assert_int_equal(vma_insert(&s, &b), 0);
	assert_int_equal(vma_insert(&s, &a), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[0].start, 10 * P); /* kept sorted whatever the insertion order */
	assert_ptr_equal(vma_find(&s, 10 * P), &s.v[0]);
	assert_ptr_equal(vma_find(&s, 20 * P - 1), &s.v[0]);
	assert_null(vma_find(&s, 20 * P));
	assert_null(vma_find(&s, 9 * P));
	assert_ptr_equal(vma_find(&s, 35 * P), &s.v[1]);
	assert_null(vma_find(&s, 40 * P));
	vma_set_destroy(&s);
}

static void test_range_free_and_covered_see_holes(void **state)
{
	struct vma_set s = {0};
	(void)state;
	struct vma a = mk(10 * P, 20 * P, 0), b = mk(20 * P, 25 * P, 0), c = mk(30 * P, 40 * P, 0);

	vma_insert(&s, &a);
	vma_insert(&s, &b);
	vma_insert(&s, &c);
	assert_true(vma_range_covered(&s, 10 * P, 25 * P)); /* adjacent VMAs cover together */
	assert_false(vma_range_covered(&s, 10 * P, 31 * P));
	assert_true(vma_range_free(&s, 25 * P, 30 * P));
	assert_false(vma_range_free(&s, 24 * P, 30 * P));
	assert_true(vma_range_free(&s, 0, 10 * P));
	vma_set_destroy(&s);
}

static int removed_pages;
static uint64_t removed_mf[8];
static void count_removed(const struct vma *v, void *ctx)
{
	(void)ctx;
	removed_mf[removed_pages % 8] = v->mf_off;
	removed_pages += (v->end - v->start) / P;
}

static void test_remove_from_the_middle_splits_and_keeps_offsets(void **state)
{
	struct vma_set s = {0};
	(void)state;
	struct vma a = mk(10 * P, 20 * P, 1000 * P);

	vma_insert(&s, &a);
	removed_pages = 0;
	assert_int_equal(vma_remove(&s, 12 * P, 15 * P, count_removed, NULL), 0);
	assert_int_equal(removed_pages, 3);
	assert_int_equal(removed_mf[0], 1002 * P);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[0].start, 10 * P);
	assert_int_equal(s.v[0].end, 12 * P);
	assert_int_equal(s.v[0].mf_off, 1000 * P);
	assert_int_equal(s.v[1].start, 15 * P);
	assert_int_equal(s.v[1].end, 20 * P);
	assert_int_equal(s.v[1].mf_off, 1005 * P); /* the upper piece's backing moved with it */
	vma_set_destroy(&s);
}

static void test_remove_across_several_vmas_and_holes(void **state)
{
	struct vma_set s = {0};
	(void)state;
	struct vma a = mk(10 * P, 20 * P, 0), b = mk(30 * P, 40 * P, 0), c = mk(50 * P, 60 * P, 0);

	vma_insert(&s, &a);
	vma_insert(&s, &b);
	vma_insert(&s, &c);
	removed_pages = 0;
	assert_int_equal(vma_remove(&s, 15 * P, 55 * P, count_removed, NULL), 0);
	assert_int_equal(removed_pages, 5 + 10 + 5);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[0].end, 15 * P);
	assert_int_equal(s.v[1].start, 55 * P);
	vma_set_destroy(&s);
}

static void test_protect_splits_at_both_edges(void **state)
{
	struct vma_set s = {0};
	(void)state;
	struct vma a = mk(10 * P, 20 * P, 0);

	vma_insert(&s, &a);
	assert_int_equal(vma_protect(&s, 12 * P, 14 * P, PROT_READ | PROT_WRITE), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.v[0].prot, PROT_READ);
	assert_int_equal(s.v[1].prot, PROT_READ | PROT_WRITE);
	assert_int_equal(s.v[1].start, 12 * P);
	assert_int_equal(s.v[1].end, 14 * P);
	assert_int_equal(s.v[2].prot, PROT_READ);
	vma_set_destroy(&s);
}

static void test_protect_over_a_hole_is_enomem_and_changes_nothing(void **state)
{
	struct vma_set s = {0};
	(void)state;
	struct vma a = mk(10 * P, 20 * P, 0), b = mk(30 * P, 40 * P, 0);

	vma_insert(&s, &a);
	vma_insert(&s, &b);
	assert_int_equal(vma_protect(&s, 15 * P, 35 * P, PROT_NONE), -12 /* ENOMEM */);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[0].prot, PROT_READ);
	vma_set_destroy(&s);
}

static void test_gap_search_is_top_down_below_the_ceiling(void **state)
{
	struct vma_set s = {0};
	(void)state;
	struct vma a = mk(90 * P, 100 * P, 0), b = mk(70 * P, 85 * P, 0);

	vma_insert(&s, &a);
	vma_insert(&s, &b);
	/* Highest fit under 100: [85, 90) holds 5 pages but not 6. */
	assert_int_equal(vma_find_gap(&s, 5 * P, 10 * P, 100 * P), 85 * P);
	assert_int_equal(vma_find_gap(&s, 6 * P, 10 * P, 100 * P), 64 * P);
	assert_int_equal(vma_find_gap(&s, 2 * P, 10 * P, 200 * P), 198 * P);
	assert_int_equal(vma_find_gap(&s, 61 * P, 10 * P, 100 * P), 0); /* nothing fits */
	vma_set_destroy(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_find_returns_the_containing_vma_or_null),
	    cmocka_unit_test(test_range_free_and_covered_see_holes),
	    cmocka_unit_test(test_remove_from_the_middle_splits_and_keeps_offsets),
	    cmocka_unit_test(test_remove_across_several_vmas_and_holes),
	    cmocka_unit_test(test_protect_splits_at_both_edges),
	    cmocka_unit_test(test_protect_over_a_hole_is_enomem_and_changes_nothing),
	    cmocka_unit_test(test_gap_search_is_top_down_below_the_ceiling),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
