/* Eviction before save and its report (sentry/evict.h): the kernfs mounts' unused nodes go
 * before a checkpoint, counted per mount kind, with what the Sentry's heap gave back; the
 * report is written into the image for inspect, sent to the checkpoint client, and printed
 * with the same wording by both. */
#include "sentry/evict.h"

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sentry/kernel.h"
#include "state/codec.h"
#include "vfs/kernfs.h"
#include "vfs/vfs.h"

static int evict_mount(struct vfs_mount *m, void *arg)
{
	struct evict_report *r = arg;
	int i;

	if (!m->root || !kernfs_node_of(m->root->inode))
		return 0;
	uint64_t n = kernfs_evict(m->root);
	r->nodes += n;
	for (i = 0; i < r->nkinds && strcmp(r->kind[i].fs_type, m->fs_type); i++)
		;
	if (i == r->nkinds) {
		/* Past the table's size the total still counts them. */
		if (i == EVICT_MAX_KINDS || strlen(m->fs_type) >= EVICT_KIND_NAME_MAX)
			return 0;
		snprintf(r->kind[i].fs_type, EVICT_KIND_NAME_MAX, "%s", m->fs_type);
		r->kind[i].nodes = 0;
		r->nkinds++;
	}
	r->kind[i].nodes += n;
	return 0;
}

/* Seed 000's eviction before save: the image never holds /proc or /sys nodes (a restore
 * makes them again when looked at), so the ones nothing uses are freed now rather than kept
 * by a sandbox that goes on running (--leave-running) or copied into nothing. */
void evict_unused(struct evict_report *r)
{
	size_t before = mallinfo2().uordblks;

	memset(r, 0, sizeof(*r));
	vfs_mounts_foreach(evict_mount, r);
	size_t after = mallinfo2().uordblks;
	r->heap_bytes = after < before ? before - after : 0;
	if (r->nodes)
		malloc_trim(0);
	if (kernel.cfg.stats) {
		char text[256];
		evict_report_format(r, text, sizeof(text));
		fprintf(stderr,
			"minisentry: stats: checkpoint: %s, Sentry heap in use %zu -> %zu KiB\n",
			text, before / 1024, after / 1024);
	}
}

void evict_report_save(struct enc *e, const struct evict_report *r)
{
	enc_u64(e, r->nodes);
	enc_u64(e, r->heap_bytes);
	enc_u32(e, (uint32_t)r->nkinds);
	for (int i = 0; i < r->nkinds; i++) {
		enc_str(e, r->kind[i].fs_type);
		enc_u64(e, r->kind[i].nodes);
	}
}

/* A kind is a mount's fs type: printed by inspect, so only [a-z0-9_-]. */
static bool kind_name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		      *s == '-'))
			return false;
	return true;
}

int evict_report_load(struct dec *d, struct evict_report *r)
{
	uint64_t sum = 0;

	memset(r, 0, sizeof(*r));
	r->nodes = dec_u64(d);
	r->heap_bytes = dec_u64(d);
	uint32_t n = dec_u32(d);
	if (dec_ok(d) && n > EVICT_MAX_KINDS)
		return dec_fail(d, "bad number of mount kinds %" PRIu32, n);
	for (uint32_t i = 0; i < n && dec_ok(d); i++) {
		if (!dec_str_buf(d, r->kind[i].fs_type, EVICT_KIND_NAME_MAX) ||
		    !kind_name_ok(r->kind[i].fs_type))
			return dec_fail(d, "bad mount kind");
		for (uint32_t j = 0; j < i; j++)
			if (!strcmp(r->kind[j].fs_type, r->kind[i].fs_type))
				return dec_fail(d, "mount kind '%s' twice", r->kind[i].fs_type);
		r->kind[i].nodes = dec_u64(d);
		sum += r->kind[i].nodes;
		if (sum < r->kind[i].nodes || sum > r->nodes)
			return dec_fail(d, "more nodes per mount kind than in all");
	}
	r->nkinds = (int)n;
	return dec_ok(d) ? 0 : -EINVAL;
}

void evict_report_words(const struct evict_report *r, char *buf, size_t size)
{
	size_t at =
	    (size_t)snprintf(buf, size, "%" PRIu64 " %" PRIu64 " ", r->nodes, r->heap_bytes);

	if (!r->nkinds && at < size)
		at += (size_t)snprintf(buf + at, size - at, "-");
	for (int i = 0; i < r->nkinds && at < size; i++)
		at += (size_t)snprintf(buf + at, size - at, "%s%s:%" PRIu64, i ? "," : "",
				       r->kind[i].fs_type, r->kind[i].nodes);
}

bool evict_report_parse(const char *s, struct evict_report *r)
{
	char kinds[256];
	int used = 0;

	memset(r, 0, sizeof(*r));
	if (sscanf(s, "%" SCNu64 " %" SCNu64 " %255s%n", &r->nodes, &r->heap_bytes, kinds, &used) !=
		3 ||
	    (s[used] && s[used] != ' '))
		return false;
	if (!strcmp(kinds, "-"))
		return true;
	for (char *save = NULL, *k = strtok_r(kinds, ",", &save); k;
	     k = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(k, ':');
		if (!colon || r->nkinds == EVICT_MAX_KINDS || colon - k >= EVICT_KIND_NAME_MAX)
			return false;
		*colon = 0;
		snprintf(r->kind[r->nkinds].fs_type, EVICT_KIND_NAME_MAX, "%s", k);
		r->kind[r->nkinds++].nodes = strtoull(colon + 1, NULL, 10);
	}
	return true;
}

void evict_report_format(const struct evict_report *r, char *buf, size_t size)
{
	size_t at = (size_t)snprintf(buf, size, "%" PRIu64 " unused /proc and /sys nodes evicted (",
				     r->nodes);

	for (int i = 0; i < r->nkinds && at < size; i++)
		at += (size_t)snprintf(buf + at, size - at, "%s%s %" PRIu64, i ? ", " : "",
				       r->kind[i].fs_type, r->kind[i].nodes);
	if (at < size)
		snprintf(buf + at, size - at, "%s%" PRIu64 " bytes of heap)", r->nkinds ? "; " : "",
			 r->heap_bytes);
}
