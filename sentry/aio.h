/* Linux native asynchronous I/O (io_setup(2) and the io_* calls): contexts of an address
 * space, each with its completion ring mapped in the guest ("[aio]"), whose layout libaio
 * reads and advances itself. Requests are carried out when they are submitted, and their
 * completions wait in the ring; only IOCB_CMD_POLL, which would have to wait, is refused. */
#ifndef SENTRY_AIO_H
#define SENTRY_AIO_H

struct mm;
struct enc;
struct dec;

/* MM goes: its contexts with it (their rings go with its mappings). */
void aio_mm_release(struct mm *mm);
/* Checkpoint: MM's contexts, within its record; the rings are its memory. */
void aio_save(struct enc *e, const struct mm *mm);
int aio_load(struct dec *d, struct mm *mm);

#endif
