/* Eviction before save (seed 000, docs/kernfs.md): before a checkpoint, every /proc and /sys
 * node nothing holds is freed, and what went is reported three ways that must agree: the
 * checkpoint's line, `run --stats`, and the image's `evicted` section, which `inspect` shows
 * (docs/image-format.md). Restore never reads that section: the trees are rebuilt lazily. */
#ifndef SENTRY_EVICT_H
#define SENTRY_EVICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct enc;
struct dec;

#define EVICT_MAX_KINDS 8      /* kernfs mount kinds told apart (proc, sysfs); more are summed */
#define EVICT_KIND_NAME_MAX 16 /* a kind (a mount's fs type) with its NUL */

struct evict_report {
	uint64_t nodes;	     /* freed, all kinds */
	uint64_t heap_bytes; /* the Sentry's heap in use before the eviction less after it */
	int nkinds;	     /* every kernfs mount kind seen, in mount order, even at 0 nodes */
	struct {
		char fs_type[EVICT_KIND_NAME_MAX];
		uint64_t nodes;
	} kind[EVICT_MAX_KINDS];
};

/* Frees the unused nodes of every kernfs mount; what went in *R. */
void evict_unused(struct evict_report *r);

/* The image's `evicted` section: one record. _load fails D on anything but a well-formed one. */
void evict_report_save(struct enc *e, const struct evict_report *r);
int evict_report_load(struct dec *d, struct evict_report *r);

/* The control protocol's words for R: "NODES HEAP KINDS", KINDS "proc:812,sysfs:116" or "-"
 * (no spaces). _parse reads them back from S (false on anything else). */
void evict_report_words(const struct evict_report *r, char *buf, size_t size);
bool evict_report_parse(const char *s, struct evict_report *r);

/* The one wording the checkpoint line and inspect share: "928 unused /proc and /sys nodes
 * evicted (proc 812, sysfs 116; 190464 bytes of heap)". */
void evict_report_format(const struct evict_report *r, char *buf, size_t size);

#endif
