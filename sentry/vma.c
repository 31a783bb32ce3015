/* VMA set operations on a sorted array: lookups by binary search, edits by splitting at range
 * edges. Splitting keeps each piece's memory-file and file offsets pointing at its own start. */
#include "sentry/vma.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void vma_set_touched(struct vma_set *s)
{
	static uint64_t edits;

	s->gen = ++edits;
}

void vma_set_destroy(struct vma_set *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
	vma_set_touched(s);
}

/* Index of the first VMA whose end is above ADDR. */
static size_t first_ending_above(const struct vma_set *s, uintptr_t addr)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct vma *vma_find(struct vma_set *s, uintptr_t addr)
{
	size_t i = first_ending_above(s, addr);

	return i < s->n && s->v[i].start <= addr ? &s->v[i] : NULL;
}

bool vma_range_free(const struct vma_set *s, uintptr_t start, uintptr_t end)
{
	size_t i = first_ending_above(s, start);

	return i == s->n || s->v[i].start >= end;
}

bool vma_range_covered(const struct vma_set *s, uintptr_t start, uintptr_t end)
{
	size_t i = first_ending_above(s, start);
	uintptr_t at = start;

	for (; i < s->n && at < end; i++) {
		if (s->v[i].start > at)
			return false;
		at = s->v[i].end;
	}
	return at >= end;
}

static int make_room(struct vma_set *s, size_t extra)
{
	if (s->n + extra <= s->cap)
		return 0;
	size_t cap = s->cap ? s->cap * 2 : 4; /* the stub's alone, then fork reserves */
	while (cap < s->n + extra)
		cap *= 2;
	struct vma *v = realloc(s->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->v = v;
	s->cap = cap;
	return 0;
}

int vma_set_reserve(struct vma_set *s, size_t n)
{
	if (n <= s->cap)
		return 0;
	struct vma *v = realloc(s->v, n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->v = v;
	s->cap = n;
	return 0;
}

static void insert_at(struct vma_set *s, size_t i, const struct vma *v)
{
	memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(*v));
	s->v[i] = *v;
	s->n++;
	vma_set_touched(s);
}

int vma_insert(struct vma_set *s, const struct vma *v)
{
	if (make_room(s, 1))
		return -ENOMEM;
	insert_at(s, first_ending_above(s, v->start), v);
	return 0;
}

/* Splits the VMA containing ADDR (strictly inside it) into [start, addr) and [addr, end). */
static int split_at(struct vma_set *s, uintptr_t addr)
{
	size_t i = first_ending_above(s, addr);

	if (i == s->n || s->v[i].start >= addr)
		return 0;
	if (make_room(s, 1))
		return -ENOMEM;
	struct vma hi = s->v[i];
	uint64_t delta = addr - hi.start;
	hi.start = addr;
	hi.mf_off += delta;
	hi.file_off += delta;
	s->v[i].end = addr;
	insert_at(s, i + 1, &hi);
	if (s->on_split)
		s->on_split(&s->v[i + 1]);
	return 0;
}

int vma_remove(struct vma_set *s, uintptr_t start, uintptr_t end,
	       void (*fn)(const struct vma *piece, void *ctx), void *ctx)
{
	int err;

	if ((err = split_at(s, start)) || (err = split_at(s, end)))
		return err;
	size_t i = first_ending_above(s, start), j = i;
	while (j < s->n && s->v[j].start < end) {
		if (fn)
			fn(&s->v[j], ctx);
		j++;
	}
	memmove(&s->v[i], &s->v[j], (s->n - j) * sizeof(struct vma));
	s->n -= j - i;
	vma_set_touched(s);
	return 0;
}

int vma_protect(struct vma_set *s, uintptr_t start, uintptr_t end, int prot)
{
	int err;

	if (!vma_range_covered(s, start, end))
		return -ENOMEM;
	if ((err = split_at(s, start)) || (err = split_at(s, end)))
		return err;
	for (size_t i = first_ending_above(s, start); i < s->n && s->v[i].start < end; i++)
		s->v[i].prot = prot;
	vma_set_touched(s);
	return 0;
}

int vma_set_flags(struct vma_set *s, uintptr_t start, uintptr_t end, int set, int clear)
{
	int err;

	if (start >= end)
		return 0;
	if ((err = split_at(s, start)) || (err = split_at(s, end)))
		return err;
	for (size_t i = first_ending_above(s, start); i < s->n && s->v[i].start < end; i++)
		s->v[i].flags = (s->v[i].flags | set) & ~clear;
	vma_set_touched(s);
	return 0;
}

uintptr_t vma_find_gap(const struct vma_set *s, size_t len, uintptr_t bottom, uintptr_t top)
{
	/* Walk downwards from the last VMA starting below TOP. */
	size_t i = first_ending_above(s, top);
	uintptr_t ceiling = top;

	if (i < s->n && s->v[i].start < top)
		ceiling = s->v[i].start;
	for (;;) {
		uintptr_t floor = i == 0 ? bottom : s->v[i - 1].end;
		if (floor < bottom)
			floor = bottom;
		if (ceiling >= floor + len && ceiling >= len)
			return ceiling - len;
		if (i == 0)
			return 0;
		i--;
		ceiling = s->v[i].start;
		if (ceiling <= bottom)
			return 0;
	}
}
