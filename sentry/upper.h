/* The sandbox's writable layer in a host directory: `run --upper DIR` and `--export-upper DIR`
 * (sentry/upper.c). */
#ifndef SENTRY_UPPER_H
#define SENTRY_UPPER_H

struct kernel_config;

/* Before the lock, once the root overlay and the memory file exist and before anything is
 * mounted on the root: opens CFG's --upper or --export-upper directory and, for --upper,
 * applies the layer it holds. Prints what failed; a negative errno. */
int upper_open(const struct kernel_config *cfg);

/* At the end: writes what the sandbox changed in its root into the directory (for --upper,
 * replacing the layer that was there). Prints what failed; a negative errno. */
int upper_save(void);

#endif
