/* The record codec and the reference tables of a checkpoint (see codec.h). Integers are
 * little-endian and fixed-width: sections are zlib-compressed, which takes the zeros out. */
#include "state/codec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ids are dense from 1 and in order; anything else in an image is corrupt. */
#define MAX_IDS (1u << 24)

static void enc_set_error(struct enc *e, const char *msg)
{
	if (!e->error)
		e->error = strdup(msg ? msg : "out of memory");
}

static bool enc_room(struct enc *e, size_t n)
{
	if (e->error)
		return false;
	if (e->len + n <= e->cap)
		return true;
	size_t cap = e->cap ? e->cap : 256;
	while (cap < e->len + n)
		cap *= 2;
	uint8_t *b = realloc(e->buf, cap);
	if (!b) {
		enc_set_error(e, "out of memory");
		return false;
	}
	e->buf = b;
	e->cap = cap;
	return true;
}

void enc_init(struct enc *e, struct ckpt_refs *refs)
{
	*e = (struct enc){.refs = refs};
}

void enc_free(struct enc *e)
{
	free(e->buf);
	free(e->error);
	*e = (struct enc){0};
}

bool enc_ok(const struct enc *e)
{
	return !e->error;
}

void enc_raw(struct enc *e, const void *p, size_t n)
{
	if (n && enc_room(e, n)) {
		memcpy(e->buf + e->len, p, n);
		e->len += n;
	}
}

void enc_u8(struct enc *e, uint8_t v)
{
	enc_raw(e, &v, 1);
}

void enc_u32(struct enc *e, uint32_t v)
{
	uint8_t b[4];
	for (int i = 0; i < 4; i++)
		b[i] = v >> (8 * i);
	enc_raw(e, b, 4);
}

void enc_u64(struct enc *e, uint64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = v >> (8 * i);
	enc_raw(e, b, 8);
}

void enc_i64(struct enc *e, int64_t v)
{
	enc_u64(e, (uint64_t)v);
}

void enc_bool(struct enc *e, bool v)
{
	enc_u8(e, v);
}

void enc_bytes(struct enc *e, const void *p, size_t n)
{
	enc_u64(e, n);
	enc_raw(e, p, n);
}

/* A NULL string is the length UINT64_MAX. */
void enc_str(struct enc *e, const char *s)
{
	if (!s)
		enc_u64(e, UINT64_MAX);
	else
		enc_bytes(e, s, strlen(s));
}

void enc_timespec(struct enc *e, struct timespec ts)
{
	enc_i64(e, ts.tv_sec);
	enc_i64(e, ts.tv_nsec);
}

void enc_ref(struct enc *e, enum ckpt_kind k, const void *obj)
{
	if (!obj) {
		enc_u64(e, 0);
		return;
	}
	if (!e->refs) {
		enc_fail(e, "a reference outside a checkpoint");
		return;
	}
	uint64_t id = ckpt_refs_id(e->refs, k, obj);
	if (!id)
		enc_set_error(e, "out of memory");
	enc_u64(e, id);
}

int enc_fail(struct enc *e, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	enc_set_error(e, msg);
	return -EOPNOTSUPP;
}

void dec_init(struct dec *d, const void *p, size_t len, struct ckpt_refs *refs)
{
	*d = (struct dec){.p = p, .len = len, .refs = refs};
	d->errp = &d->error;
}

void dec_free(struct dec *d)
{
	if (d->errp == &d->error) {
		free(d->error);
		d->error = NULL;
	}
}

bool dec_ok(const struct dec *d)
{
	return !*d->errp;
}

bool dec_at_end(const struct dec *d)
{
	return d->off == d->len;
}

int dec_fail(struct dec *d, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (*d->errp)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	*d->errp = strdup(msg);
	if (!*d->errp)
		*d->errp = (char *)"out of memory"; /* never freed: see dec_free */
	return -EINVAL;
}

const void *dec_view(struct dec *d, size_t n)
{
	if (*d->errp)
		return NULL;
	if (n > d->len - d->off) {
		dec_fail(d, "truncated record");
		return NULL;
	}
	const void *p = d->p + d->off;
	d->off += n;
	return p;
}

struct dec dec_sub(struct dec *d, size_t n)
{
	const void *p = dec_view(d, n);
	struct dec s = {.p = p, .len = p ? n : 0, .refs = d->refs, .errp = d->errp};

	return s;
}

void dec_raw(struct dec *d, void *out, size_t n)
{
	const void *p = dec_view(d, n);

	if (p)
		memcpy(out, p, n);
	else
		memset(out, 0, n);
}

uint8_t dec_u8(struct dec *d)
{
	const uint8_t *p = dec_view(d, 1);
	return p ? *p : 0;
}

uint32_t dec_u32(struct dec *d)
{
	const uint8_t *p = dec_view(d, 4);
	uint32_t v = 0;

	for (int i = 0; p && i < 4; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

uint64_t dec_u64(struct dec *d)
{
	const uint8_t *p = dec_view(d, 8);
	uint64_t v = 0;

	for (int i = 0; p && i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

int64_t dec_i64(struct dec *d)
{
	return (int64_t)dec_u64(d);
}

bool dec_bool(struct dec *d)
{
	uint8_t v = dec_u8(d);

	if (v > 1)
		dec_fail(d, "bad boolean");
	return v == 1;
}

uint64_t dec_max(struct dec *d, uint64_t max, const char *what)
{
	uint64_t v = dec_u64(d);

	if (v > max) {
		dec_fail(d, "bad %s", what);
		return 0;
	}
	return v;
}

const void *dec_bytes(struct dec *d, size_t *len)
{
	uint64_t n = dec_u64(d);

	if (*d->errp || n > d->len - d->off) {
		dec_fail(d, "truncated record");
		*len = 0;
		return NULL;
	}
	*len = n;
	return dec_view(d, n);
}

char *dec_str_buf(struct dec *d, char *buf, size_t size)
{
	uint64_t n = dec_u64(d);

	if (n == UINT64_MAX && !*d->errp)
		return NULL;
	const char *p = (n < size && !*d->errp) ? dec_view(d, n) : NULL;
	if (!p || memchr(p, 0, n)) {
		dec_fail(d, "bad string");
		if (size)
			buf[0] = 0;
		return NULL;
	}
	memcpy(buf, p, n);
	buf[n] = 0;
	return buf;
}

char *dec_str(struct dec *d)
{
	uint64_t n = dec_u64(d);

	if (n == UINT64_MAX || *d->errp)
		return NULL;
	const char *p = n <= d->len - d->off ? dec_view(d, n) : NULL;
	if (!p || memchr(p, 0, n)) {
		dec_fail(d, "bad string");
		return NULL;
	}
	char *s = malloc(n + 1);
	if (!s) {
		dec_fail(d, "out of memory");
		return NULL;
	}
	memcpy(s, p, n);
	s[n] = 0;
	return s;
}

struct timespec dec_timespec(struct dec *d)
{
	struct timespec ts;

	ts.tv_sec = dec_i64(d);
	ts.tv_nsec = dec_i64(d);
	/* Every time a sandbox keeps is within ±146 years, so that any two of them subtract and
	 * convert to nanoseconds without overflow. */
	if (ts.tv_nsec < 0 || ts.tv_nsec >= NSEC_PER_SEC || ts.tv_sec > DEC_TIME_MAX_SEC ||
	    ts.tv_sec < -DEC_TIME_MAX_SEC)
		dec_fail(d, "bad time");
	return ts;
}

void *dec_ref(struct dec *d, enum ckpt_kind k)
{
	uint64_t id = dec_u64(d);

	if (!id || *d->errp)
		return NULL;
	void *obj = d->refs ? ckpt_refs_get(d->refs, k, id) : NULL;
	if (!obj)
		dec_fail(d, "reference to a missing object (kind %d, id %llu)", (int)k,
			 (unsigned long long)id);
	return obj;
}

/* The reference tables: per kind, objects by id (ids from 1), and when saving a hash from
 * pointer to id. */
struct kind_table {
	void **objs;
	size_t n, cap;
	size_t taken; /* saving: objects handed out by ckpt_refs_next */
	struct slot {
		const void *obj;
		uint64_t id;
	} * hash;
	size_t hcap; /* a power of two, or 0 */
};

struct ckpt_refs {
	struct kind_table k[CK_NKINDS];
};

struct ckpt_refs *ckpt_refs_new(void)
{
	return calloc(1, sizeof(struct ckpt_refs));
}

void ckpt_refs_free(struct ckpt_refs *r)
{
	if (!r)
		return;
	for (int i = 0; i < CK_NKINDS; i++) {
		free(r->k[i].objs);
		free(r->k[i].hash);
	}
	free(r);
}

static size_t hash_ptr(const void *p, size_t cap)
{
	uint64_t x = (uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x & (cap - 1);
}

static bool append(struct kind_table *t, void *obj)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		void **o = realloc(t->objs, cap * sizeof(*o));
		if (!o)
			return false;
		t->objs = o;
		t->cap = cap;
	}
	t->objs[t->n++] = obj;
	return true;
}

static bool grow_hash(struct kind_table *t)
{
	size_t cap = t->hcap ? 2 * t->hcap : 128;
	struct slot *h = calloc(cap, sizeof(*h));

	if (!h)
		return false;
	for (size_t i = 0; i < t->hcap; i++) {
		if (!t->hash[i].obj)
			continue;
		size_t j = hash_ptr(t->hash[i].obj, cap);
		while (h[j].obj)
			j = (j + 1) & (cap - 1);
		h[j] = t->hash[i];
	}
	free(t->hash);
	t->hash = h;
	t->hcap = cap;
	return true;
}

uint64_t ckpt_refs_id(struct ckpt_refs *r, enum ckpt_kind k, const void *obj)
{
	struct kind_table *t = &r->k[k];

	if (!obj)
		return 0;
	if (2 * (t->n + 1) > t->hcap && !grow_hash(t))
		return 0;
	size_t j = hash_ptr(obj, t->hcap);
	while (t->hash[j].obj) {
		if (t->hash[j].obj == obj)
			return t->hash[j].id;
		j = (j + 1) & (t->hcap - 1);
	}
	if (!append(t, (void *)obj))
		return 0;
	t->hash[j] = (struct slot){obj, t->n};
	return t->n;
}

const void *ckpt_refs_next(struct ckpt_refs *r, enum ckpt_kind k, uint64_t *id)
{
	struct kind_table *t = &r->k[k];

	if (t->taken == t->n)
		return NULL;
	*id = t->taken + 1;
	return t->objs[t->taken++];
}

int ckpt_refs_put(struct ckpt_refs *r, enum ckpt_kind k, uint64_t id, void *obj)
{
	struct kind_table *t = &r->k[k];

	/* A section holds its objects in id order, as ckpt_refs_next handed them out. */
	if (id != t->n + 1 || id > MAX_IDS || !obj)
		return -EINVAL;
	return append(t, obj) ? 0 : -ENOMEM;
}

void *ckpt_refs_get(struct ckpt_refs *r, enum ckpt_kind k, uint64_t id)
{
	struct kind_table *t = &r->k[k];

	return id && id <= t->n ? t->objs[id - 1] : NULL;
}

void ckpt_refs_foreach(struct ckpt_refs *r, enum ckpt_kind k, void (*fn)(void *obj))
{
	struct kind_table *t = &r->k[k];

	for (size_t i = 0; i < t->n; i++)
		if (t->objs[i])
			fn(t->objs[i]);
}
