/* codec — how every saved object is written and read back. A subsystem saves its objects with
 * the enc_* calls next to their definitions and loads them with dec_*, which never read past a
 * record: a truncated or corrupt record sets the decoder's error and yields zeros, so load code
 * checks dec_ok() once at the end rather than after every field. Which objects go into which
 * section, and in which order, is the Sentry's (sentry/checkpoint.c): state/ calls no one.
 *
 * Objects that several others refer to (a file in two fd tables, an mm shared by threads, a
 * memory object shared by mappings) are saved once and referred to by id: enc_ref writes the id
 * and queues the object for its kind's section; dec_ref returns the object loaded under that
 * id. Sections are loaded in the order of enum ckpt_kind, so an object may refer only to kinds
 * before its own (and to its own kind's earlier objects); links that would point forward are
 * saved by a later kind (CK_FILE_LINKS). */
#ifndef STATE_CODEC_H
#define STATE_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "common/units.h"

/* Kinds of shared objects, in load order. */
enum ckpt_kind {
	CK_MOBJ,       /* a memory-file range (mem/memfile.h) */
	CK_DENTRY,     /* a dentry: a path in a mounted tree, or a detached inode (vfs) */
	CK_FILE,       /* an open file description (vfs, and sentry's signalfd/timerfd) */
	CK_FILE_LINKS, /* what files refer to among files: epoll interest, in-flight fds */
	CK_FDTABLE,
	CK_FSCTX,
	CK_SIGHAND,
	CK_MM,
	CK_SECCOMP, /* a guest's seccomp filter (sentry/seccomp.h) */
	CK_TASK,
	CK_NKINDS,
};

struct ckpt_refs;

/* An encoder: a growing buffer. Failures (out of memory, an object that cannot be saved) are
 * sticky; the first message is kept. */
struct enc {
	uint8_t *buf;
	size_t len, cap;
	char *error;
	struct ckpt_refs *refs; /* where enc_ref queues objects; NULL: refs are refused */
};

void enc_init(struct enc *e, struct ckpt_refs *refs);
void enc_free(struct enc *e);
bool enc_ok(const struct enc *e);
void enc_u8(struct enc *e, uint8_t v);
void enc_u32(struct enc *e, uint32_t v);
void enc_u64(struct enc *e, uint64_t v);
void enc_i64(struct enc *e, int64_t v);
void enc_bool(struct enc *e, bool v);
/* N bytes without a length. */
void enc_raw(struct enc *e, const void *p, size_t n);
/* A length and N bytes. */
void enc_bytes(struct enc *e, const void *p, size_t n);
/* A string, or NULL. */
void enc_str(struct enc *e, const char *s);
/* A time: seconds and nanoseconds, two i64. */
void enc_timespec(struct enc *e, struct timespec ts);
/* The id of OBJ (0 for NULL) of kind K, queueing OBJ to be saved in its section. */
void enc_ref(struct enc *e, enum ckpt_kind k, const void *obj);
/* Marks the save failed: "cannot checkpoint: <what>". Returns -EOPNOTSUPP for the caller to
 * return. */
int enc_fail(struct enc *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A decoder over [p, p+len). */
struct dec {
	const uint8_t *p;
	size_t len, off;
	char *error; /* the first failure; shared with sub-decoders through dec_sub */
	char **errp;
	struct ckpt_refs *refs;
};

void dec_init(struct dec *d, const void *p, size_t len, struct ckpt_refs *refs);
/* A decoder over the next N bytes of D (which skips them); failures go to D's error. */
struct dec dec_sub(struct dec *d, size_t n);
void dec_free(struct dec *d);
bool dec_ok(const struct dec *d);
/* True when every byte has been read. */
bool dec_at_end(const struct dec *d);
uint8_t dec_u8(struct dec *d);
uint32_t dec_u32(struct dec *d);
uint64_t dec_u64(struct dec *d);
int64_t dec_i64(struct dec *d);
bool dec_bool(struct dec *d);
/* dec_u64, failing ("bad WHAT") unless it is at most MAX. */
uint64_t dec_max(struct dec *d, uint64_t max, const char *what);
void dec_raw(struct dec *d, void *out, size_t n);
/* The next N bytes in place, or NULL (and the error set) if there are fewer. */
const void *dec_view(struct dec *d, size_t n);
/* A length-prefixed byte string: a view of it, its length in *LEN. */
const void *dec_bytes(struct dec *d, size_t *len);
/* A length-prefixed string copied into BUF (SIZE with the NUL); fails if it does not fit or
 * holds a NUL. Returns BUF, or NULL for a saved NULL. */
char *dec_str_buf(struct dec *d, char *buf, size_t size);
/* A saved string, malloc'd (NULL for a saved NULL or on failure). */
char *dec_str(struct dec *d);
/* A time, failing ("bad time") unless its nanoseconds are in [0, 1e9) and its seconds within
 * ±DEC_TIME_MAX_SEC (about 146 years), so that any two saved times subtract and convert to
 * nanoseconds without overflow. */
#define DEC_TIME_MAX_SEC (INT64_MAX / NSEC_PER_SEC / 2)
struct timespec dec_timespec(struct dec *d);
/* The object of kind K loaded under the next id (borrowed: the load keeps its reference
 * until the end of the restore); NULL for id 0. An unknown id fails the decoder. */
void *dec_ref(struct dec *d, enum ckpt_kind k);
/* Marks the load failed with a message (the first one wins). Returns -EINVAL. */
int dec_fail(struct dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reference tables: pointer -> id when saving, id -> pointer when loading. */
struct ckpt_refs *ckpt_refs_new(void);
void ckpt_refs_free(struct ckpt_refs *r);
/* Saving: the id of OBJ (assigning the next one and queueing OBJ if new). */
uint64_t ckpt_refs_id(struct ckpt_refs *r, enum ckpt_kind k, const void *obj);
/* Saving: the next queued object of kind K not yet taken (in id order) and its id, or NULL. */
const void *ckpt_refs_next(struct ckpt_refs *r, enum ckpt_kind k, uint64_t *id);
/* Loading: records OBJ as id ID of kind K; -EINVAL unless ID is the next id, -ENOMEM. */
int ckpt_refs_put(struct ckpt_refs *r, enum ckpt_kind k, uint64_t id, void *obj);
/* Loading: the object of kind K with id ID, or NULL. */
void *ckpt_refs_get(struct ckpt_refs *r, enum ckpt_kind k, uint64_t id);
/* Loading: calls FN on every object of kind K (to drop the load's references). */
void ckpt_refs_foreach(struct ckpt_refs *r, enum ckpt_kind k, void (*fn)(void *obj));

#endif
