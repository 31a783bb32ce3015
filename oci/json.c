/* The JSON parser of oci/json.h: recursive descent over a bounded buffer. Each value is
 * allocated as it is read and freed with everything read so far when anything fails, so an
 * error leaves nothing behind. Depth is bounded before recursing, sizes before allocating. */
#include "oci/json.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct parser {
	const unsigned char *p, *start, *end;
	char *err;
	size_t errsize;
	bool failed;
};

static void *perr(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void *perr(struct parser *ps, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	if (ps->failed)
		return NULL;
	ps->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ps->err && ps->errsize)
		snprintf(ps->err, ps->errsize, "%s at byte %zu", msg, (size_t)(ps->p - ps->start));
	return NULL;
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static struct json *new_value(enum json_type type)
{
	struct json *v = calloc(1, sizeof(*v));

	if (v)
		v->type = type;
	return v;
}

void json_free(struct json *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->len && (v->type == JSON_ARRAY || v->type == JSON_OBJECT); i++) {
		json_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	free(v);
}

/* --- strings ------------------------------------------------------------------------------- */

/* A growable byte buffer for a string being decoded. */
struct sbuf {
	char *s;
	size_t len, cap;
};

static bool sbuf_put(struct sbuf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 32;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *s = realloc(b->s, cap);
		if (!s)
			return false;
		b->s = s;
		b->cap = cap;
	}
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = 0;
	return true;
}

static int hex4(const unsigned char *p)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		int c = p[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* The length of the valid UTF-8 sequence at P (before END), or 0: no overlong forms, no
 * surrogates, nothing past U+10FFFF. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	size_t n;
	unsigned min, cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static size_t utf8_put(unsigned cp, unsigned char out[4])
{
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xc0 | (cp >> 6));
		out[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xe0 | (cp >> 12));
		out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (unsigned char)(0xf0 | (cp >> 18));
	out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A string literal at ps->p (its opening quote): the decoded bytes, malloc'd, in *OUT. */
static bool parse_string(struct parser *ps, char **out, size_t *outlen)
{
	struct sbuf b = {0};

	ps->p++; /* the quote */
	if (!sbuf_put(&b, "", 0))
		goto nomem;
	for (;;) {
		if (ps->p >= ps->end) {
			perr(ps, "unterminated string");
			goto fail;
		}
		unsigned char c = *ps->p;
		if (c == '"') {
			ps->p++;
			break;
		}
		if (c < 0x20) {
			perr(ps, "control character in a string");
			goto fail;
		}
		if (c != '\\') {
			size_t n = utf8_len(ps->p, ps->end);
			if (!n) {
				perr(ps, "invalid UTF-8 in a string");
				goto fail;
			}
			if (!sbuf_put(&b, ps->p, n))
				goto nomem;
			ps->p += n;
			continue;
		}
		if (ps->end - ps->p < 2) {
			perr(ps, "unterminated string");
			goto fail;
		}
		char e = (char)ps->p[1], lit;
		ps->p += 2;
		switch (e) {
		case '"':
		case '\\':
		case '/':
			lit = e;
			break;
		case 'b':
			lit = '\b';
			break;
		case 'f':
			lit = '\f';
			break;
		case 'n':
			lit = '\n';
			break;
		case 'r':
			lit = '\r';
			break;
		case 't':
			lit = '\t';
			break;
		case 'u': {
			int hi = ps->end - ps->p >= 4 ? hex4(ps->p) : -1;
			unsigned cp;
			unsigned char u[4];
			if (hi < 0) {
				perr(ps, "bad \\u escape");
				goto fail;
			}
			ps->p += 4;
			cp = (unsigned)hi;
			if (hi >= 0xd800 && hi <= 0xdbff) {
				int lo = ps->end - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u'
					     ? hex4(ps->p + 2)
					     : -1;
				if (lo < 0xdc00 || lo > 0xdfff) {
					perr(ps, "unpaired surrogate in a \\u escape");
					goto fail;
				}
				ps->p += 6;
				cp = 0x10000 + (((unsigned)hi - 0xd800) << 10) +
				     ((unsigned)lo - 0xdc00);
			} else if (hi >= 0xdc00 && hi <= 0xdfff) {
				perr(ps, "unpaired surrogate in a \\u escape");
				goto fail;
			} else if (hi == 0) {
				/* The C strings the tree hands out could not hold it. */
				perr(ps, "NUL (\\u0000) in a string");
				goto fail;
			}
			if (!sbuf_put(&b, u, utf8_put(cp, u)))
				goto nomem;
			continue;
		}
		default:
			perr(ps, "bad escape \\%c", e >= 0x20 && e < 0x7f ? e : '?');
			goto fail;
		}
		if (!sbuf_put(&b, &lit, 1))
			goto nomem;
	}
	*out = b.s;
	*outlen = b.len;
	return true;
nomem:
	perr(ps, "out of memory");
fail:
	free(b.s);
	return false;
}

/* --- numbers ------------------------------------------------------------------------------- */

static bool digit(const struct parser *ps, const unsigned char *p)
{
	return p < ps->end && *p >= '0' && *p <= '9';
}

static struct json *parse_number(struct parser *ps)
{
	const unsigned char *s = ps->p, *p = s;
	bool is_int = true;
	char buf[64];
	struct json *v;

	if (p < ps->end && *p == '-')
		p++;
	if (!digit(ps, p))
		return perr(ps, "bad number");
	if (*p == '0')
		p++;
	else
		while (digit(ps, p))
			p++;
	if (p < ps->end && *p == '.') {
		is_int = false;
		p++;
		if (!digit(ps, p))
			return perr(ps, "bad number");
		while (digit(ps, p))
			p++;
	}
	if (p < ps->end && (*p == 'e' || *p == 'E')) {
		is_int = false;
		p++;
		if (p < ps->end && (*p == '+' || *p == '-'))
			p++;
		if (!digit(ps, p))
			return perr(ps, "bad number");
		while (digit(ps, p))
			p++;
	}
	if ((size_t)(p - s) >= sizeof(buf))
		return perr(ps, "number too long");
	memcpy(buf, s, (size_t)(p - s));
	buf[p - s] = 0;
	if (!(v = new_value(JSON_NUMBER)))
		return perr(ps, "out of memory");
	errno = 0;
	v->num = strtod(buf, NULL);
	if (!isfinite(v->num)) {
		free(v);
		return perr(ps, "number out of range");
	}
	if (is_int) {
		errno = 0;
		long long i = strtoll(buf, NULL, 10);
		if (!errno) {
			v->is_int = true;
			v->i = i;
		}
	}
	ps->p = p;
	return v;
}

/* --- values -------------------------------------------------------------------------------- */

static struct json *parse_value(struct parser *ps, int depth);

static bool literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
		return false;
	ps->p += n;
	return true;
}

/* Appends V (and KEY, for an object) to container C. */
static bool append(struct json *c, char *key, struct json *v)
{
	if ((c->len & (c->len - 1)) == 0) { /* 0, 1, 2, 4, ...: grow to the next power of two */
		size_t cap = c->len ? c->len * 2 : 1;
		struct json **items = realloc(c->items, cap * sizeof(*items));
		if (!items)
			return false;
		c->items = items;
		if (c->type == JSON_OBJECT) {
			char **keys = realloc(c->keys, cap * sizeof(*keys));
			if (!keys)
				return false;
			c->keys = keys;
		}
	}
	c->items[c->len] = v;
	if (c->type == JSON_OBJECT)
		c->keys[c->len] = key;
	c->len++;
	return true;
}

static struct json *parse_container(struct parser *ps, int depth, bool object)
{
	char close = object ? '}' : ']';
	struct json *c = new_value(object ? JSON_OBJECT : JSON_ARRAY);

	if (!c)
		return perr(ps, "out of memory");
	ps->p++; /* the bracket */
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return c;
	}
	for (;;) {
		char *key = NULL;
		size_t klen;
		skip_ws(ps);
		if (object) {
			if (ps->p >= ps->end || *ps->p != '"') {
				perr(ps, "expected a member name");
				goto fail;
			}
			if (!parse_string(ps, &key, &klen))
				goto fail;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				free(key);
				perr(ps, "expected ':'");
				goto fail;
			}
			ps->p++;
		}
		struct json *v = parse_value(ps, depth + 1);
		if (!v) {
			free(key);
			goto fail;
		}
		if (!append(c, key, v)) {
			free(key);
			json_free(v);
			perr(ps, "out of memory");
			goto fail;
		}
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			return c;
		}
		perr(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
		goto fail;
	}
fail:
	json_free(c);
	return NULL;
}

static struct json *parse_value(struct parser *ps, int depth)
{
	struct json *v;

	if (depth > JSON_MAX_DEPTH)
		return perr(ps, "nested deeper than %d levels", JSON_MAX_DEPTH);
	skip_ws(ps);
	if (ps->p >= ps->end)
		return perr(ps, "unexpected end of input");
	switch (*ps->p) {
	case '{':
		return parse_container(ps, depth, true);
	case '[':
		return parse_container(ps, depth, false);
	case '"':
		if (!(v = new_value(JSON_STRING)))
			return perr(ps, "out of memory");
		if (!parse_string(ps, &v->str, &v->len)) {
			free(v);
			return NULL;
		}
		return v;
	case 't':
	case 'f':
	case 'n':
		if (literal(ps, "true") || literal(ps, "false")) {
			if (!(v = new_value(JSON_BOOL)))
				return perr(ps, "out of memory");
			v->b = ps->p[-1] == 'e' && ps->p[-2] == 'u';
			return v;
		}
		if (literal(ps, "null")) {
			if (!(v = new_value(JSON_NULL)))
				return perr(ps, "out of memory");
			return v;
		}
		return perr(ps, "unexpected character");
	default:
		if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
			return parse_number(ps);
		return perr(ps, "unexpected character");
	}
}

struct json *json_parse(const char *text, size_t len, char *err, size_t errsize)
{
	struct parser ps = {.p = (const unsigned char *)text,
			    .start = (const unsigned char *)text,
			    .end = (const unsigned char *)text + len,
			    .err = err,
			    .errsize = errsize};
	struct json *v;

	if (err && errsize)
		err[0] = 0;
	if (len > JSON_MAX_SIZE)
		return perr(&ps, "larger than %d bytes", JSON_MAX_SIZE);
	/* A byte-order mark is not JSON's (RFC 8259 8.1), but tolerated as most parsers do. */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		ps.p += 3;
	if (!(v = parse_value(&ps, 1)))
		return NULL;
	skip_ws(&ps);
	if (ps.p != ps.end) {
		json_free(v);
		return perr(&ps, "trailing characters after the value");
	}
	return v;
}

int json_read_file(const char *path, char **out, size_t *outlen, char *err, size_t errsize)
{
	struct stat st;
	char *buf;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		snprintf(err, errsize, "%s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > JSON_MAX_SIZE) {
		snprintf(err, errsize, "%s",
			 S_ISREG(st.st_mode) ? "too large" : "not a regular file");
		close(fd);
		return -1;
	}
	if (!(buf = malloc((size_t)st.st_size + 1))) {
		snprintf(err, errsize, "out of memory");
		close(fd);
		return -1;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = 0;
	*out = buf;
	*outlen = got;
	return 0;
}

struct json *json_parse_file(const char *path, char *err, size_t errsize)
{
	struct json *v;
	char *buf;
	size_t len;

	if (json_read_file(path, &buf, &len, err, errsize))
		return NULL;
	v = json_parse(buf, len, err, errsize);
	free(buf);
	return v;
}

const struct json *json_get(const struct json *obj, const char *key)
{
	if (!obj || obj->type != JSON_OBJECT)
		return NULL;
	for (size_t i = obj->len; i-- > 0;)
		if (!strcmp(obj->keys[i], key))
			return obj->items[i];
	return NULL;
}

bool json_is(const struct json *v, enum json_type type)
{
	return v && v->type == type;
}

const char *json_str(const struct json *v)
{
	return json_is(v, JSON_STRING) ? v->str : NULL;
}

bool json_int(const struct json *v, int64_t *out)
{
	if (!json_is(v, JSON_NUMBER) || !v->is_int)
		return false;
	*out = v->i;
	return true;
}

void json_write_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}
