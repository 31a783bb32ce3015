/* A small JSON parser (RFC 8259) for what OCI runtimes read: a bundle's config.json and the
 * runtime's own state files. Its input is untrusted (a bundle comes from whoever built the
 * image), so it is strict and bounded: the whole grammar and nothing more (no comments, no
 * trailing commas, no leading zeros, no NaN), valid UTF-8 only, no NUL in strings, at most
 * JSON_MAX_DEPTH levels of nesting and JSON_MAX_SIZE bytes; every failure is a message with
 * the byte offset, never a crash. The result is a tree the caller frees with json_free. */
#ifndef OCI_JSON_H
#define OCI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 128
#define JSON_MAX_SIZE (16 << 20)

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json {
	enum json_type type;
	bool b;		     /* JSON_BOOL */
	double num;	     /* JSON_NUMBER */
	bool is_int;	     /* a number without fraction or exponent that fits INT */
	int64_t i;	     /* its value */
	char *str;	     /* JSON_STRING: NUL-terminated (NUL never occurs inside) */
	size_t len;	     /* JSON_STRING: bytes; JSON_ARRAY, JSON_OBJECT: members */
	struct json **items; /* JSON_ARRAY, JSON_OBJECT: the values, in order */
	char **keys;	     /* JSON_OBJECT: the member names */
};

/* Parses LEN bytes of TEXT as one JSON value. NULL on error, with a one-line message (and
 * the offset) in ERR. */
struct json *json_parse(const char *text, size_t len, char *err, size_t errsize);
/* Reads regular file PATH (at most JSON_MAX_SIZE bytes) into *OUT (malloc'd, NUL-terminated),
 * its length in *OUTLEN: 0, or -1 with the reason in ERR. */
int json_read_file(const char *path, char **out, size_t *outlen, char *err, size_t errsize);
/* Reads and parses file PATH. */
struct json *json_parse_file(const char *path, char *err, size_t errsize);
void json_free(struct json *v);

/* The member KEY of object OBJ (the last one, if the name repeats), or NULL (also when OBJ is
 * NULL or not an object). */
const struct json *json_get(const struct json *obj, const char *key);
/* Typed accessors: NULL or false when V is NULL or of another type. */
const char *json_str(const struct json *v);
bool json_is(const struct json *v, enum json_type type);
bool json_int(const struct json *v, int64_t *out);

/* Writes S as a JSON string literal (quotes and escapes) to F. */
void json_write_string(FILE *f, const char *s);

#endif
