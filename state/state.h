/* state — checkpoint and restore of a whole sandbox (DESIGN.md §7). state_save writes the image
 * of a quiesced kernel; state_load rebuilds a kernel from one in a Sentry that has set up its
 * memory file and platform but no guest yet. Each object is saved by its own subsystem's
 * save/load pair (state/codec.h); this file knows only their order and their sections. */
#ifndef STATE_STATE_H
#define STATE_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sentry/checkpoint.h"

struct state_save_stats {
	uint64_t bytes; /* on disk */
	uint64_t pages; /* memory pages saved */
};

/* Writes the image of the (quiesced) kernel to DIR beneath directory descriptor AT (or
 * AT_FDCWD); see image_write for FORCE. On failure nothing is left at DIR and *ERR (malloc'd)
 * says why in one line. */
int state_save(int at, const char *dir, bool force, struct state_save_stats *stats, char **err);

/* Loads the image in DIR into the kernel and starts its tasks. On failure *ERR says why. */
int state_load(const char *dir, const struct kernel_restore_opts *o, char **err);

/* Prints what the image in DIR holds: sections, objects per kind, bytes, pages. */
int state_inspect(const char *dir, FILE *out, char **err);

#endif
