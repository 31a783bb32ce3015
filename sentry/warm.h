/* Warm slots (docs/checkpoint.md, "Warm slots"): per slot of a pool, a Sentry started and
 * confined ahead of time that waits for the one restore it will serve, and the restore client
 * that hands its request over. */
#ifndef SENTRY_WARM_H
#define SENTRY_WARM_H

#include <stdbool.h>

struct kernel_config;
struct kernel_restore_opts;

/* What warm_restore returns when the restore is to be made as without waiting Sentries. */
#define WARM_COLD (-1)

/* `minisentry slots --warm DIR`: starts a waiting Sentry, detached, for every slot of the pool
 * in DIR that has none, and waits (a bounded time) until each listens. 0, or 1 with the reason
 * said in one line. */
int warm_start_all(const char *dir);

/* The waiting Sentry of slot INDEX of DIR (`minisentry slots --serve-slot INDEX DIR`, which
 * warm_start_all and every restore client that used a slot run): returns only in the Sentry,
 * once it served its request or gave up, with the status main() exits with. */
int warm_serve(const char *dir, unsigned index);

/* restore --slots DIR of IMAGE with CFG and O, by a waiting Sentry if DIR has them and the
 * options let it: the restore's exit status, as a direct restore would end; or WARM_COLD when
 * it is to be made directly (no waiting Sentry, another option, or the Sentry refused before it
 * claimed the slot), with nothing of it done. */
int warm_restore(const struct kernel_config *cfg, const struct kernel_restore_opts *o,
		 const char *image, bool delete_image);

#endif
