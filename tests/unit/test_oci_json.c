/* Unit tests for oci/json.c: the grammar (RFC 8259) exactly, strings decoded to UTF-8, and
 * every kind of hostile input refused with a message — never a crash, never a leak. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "oci/json.h"

static struct json *parse(const char *text, char *err)
{
	return json_parse(text, strlen(text), err, 200);
}

/* TEXT must be refused, with a message containing WHAT. */
static void refused(const char *text, const char *what)
{
	char err[200];
	struct json *v = parse(text, err);

	if (v)
		fail_msg("accepted: %s", text);
	if (!strstr(err, what))
		fail_msg("'%s': message '%s' lacks '%s'", text, err, what);
}

static void test_objects_arrays_and_scalars_are_read(void **state)
{
	char err[200];
	(void)state;
	struct json *v = parse(" {\"a\": [1, -2.5e1, true, false, null, \"s\"], \"b\": {}} ", err);
	int64_t i;

	assert_non_null(v);
	assert_int_equal(v->type, JSON_OBJECT);
	const struct json *a = json_get(v, "a");
	assert_true(json_is(a, JSON_ARRAY));
	assert_int_equal(a->len, 6);
	assert_true(json_int(a->items[0], &i));
	assert_int_equal(i, 1);
	assert_false(json_int(a->items[1], &i)); /* not an integer */
	assert_true(a->items[1]->num == -25.0);
	assert_true(a->items[2]->b);
	assert_false(a->items[3]->b);
	assert_int_equal(a->items[4]->type, JSON_NULL);
	assert_string_equal(json_str(a->items[5]), "s");
	assert_true(json_is(json_get(v, "b"), JSON_OBJECT));
	assert_null(json_get(v, "c"));
	assert_null(json_get(a, "a")); /* not an object */
	json_free(v);
}

static void test_a_repeated_name_gives_its_last_value(void **state)
{
	char err[200];
	(void)state;
	struct json *v = parse("{\"k\":1,\"k\":2}", err);
	int64_t i;

	assert_non_null(v);
	assert_true(json_int(json_get(v, "k"), &i));
	assert_int_equal(i, 2);
	json_free(v);
}

static void test_escapes_and_surrogate_pairs_become_utf8(void **state)
{
	char err[200];
	(void)state;
	struct json *v = parse("\"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u20ac\\ud83d\\ude00\"", err);

	assert_non_null(v);
	assert_string_equal(v->str, "a\"\\/\b\f\n\r\t\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	assert_int_equal(v->len, strlen(v->str));
	json_free(v);
}

static void test_large_integers_stay_exact_and_huge_ones_are_doubles(void **state)
{
	char err[200];
	(void)state;
	struct json *v =
	    parse("[9223372036854775807, -9223372036854775808, 18446744073709551615]", err);
	int64_t i;

	assert_non_null(v);
	assert_true(json_int(v->items[0], &i));
	assert_true(i == INT64_MAX);
	assert_true(json_int(v->items[1], &i));
	assert_true(i == INT64_MIN);
	assert_false(json_int(v->items[2], &i));
	assert_true(v->items[2]->num > 1.8e19);
	json_free(v);
}

static void test_what_is_not_json_is_refused(void **state)
{
	(void)state;
	refused("", "end of input");
	refused("{", "member name");
	refused("{\"a\" 1}", "':'");
	refused("{\"a\":1,}", "member name");
	refused("[1,]", "unexpected character");
	refused("[1 2]", "','");
	refused("01", "trailing");
	refused("1.", "bad number");
	refused("-", "bad number");
	refused("1e", "bad number");
	refused("NaN", "unexpected character");
	refused("tru", "unexpected character");
	refused("{} {}", "trailing");
	refused("/* c */ {}", "unexpected character");
	refused("'single'", "unexpected character");
	refused("1e999", "out of range");
}

static void test_hostile_strings_are_refused(void **state)
{
	(void)state;
	refused("\"abc", "unterminated");
	refused("\"a\\", "unterminated");
	refused("\"\\x\"", "bad escape");
	refused("\"\\u12\"", "\\u escape");
	refused("\"\\u0000\"", "NUL");
	refused("\"\\ud800\"", "surrogate");
	refused("\"\\udc00\\ud800\"", "surrogate");
	refused("\"\\ud800\\u0041\"", "surrogate");
	refused("\"a\nb\"", "control character");
	refused("\"\xff\"", "UTF-8");
	refused("\"\xc0\xaf\"", "UTF-8");	  /* overlong '/' */
	refused("\"\xed\xa0\x80\"", "UTF-8");	  /* an encoded surrogate */
	refused("\"\xf4\x90\x80\x80\"", "UTF-8"); /* past U+10FFFF */
	refused("\"\xe2\x82\"", "UTF-8");	  /* cut short */
}

static void test_embedded_nul_bytes_are_refused(void **state)
{
	char err[200];
	(void)state;
	assert_null(json_parse("\"a\0b\"", 5, err, sizeof(err)));
	assert_null(json_parse("{}\0", 3, err, sizeof(err)));
}

static void test_nesting_is_bounded(void **state)
{
	char *deep = malloc(2 * (JSON_MAX_DEPTH + 1) + 1), err[200];
	(void)state;
	size_t n = JSON_MAX_DEPTH + 1;

	memset(deep, '[', n);
	memset(deep + n, ']', n);
	deep[2 * n] = 0;
	assert_null(parse(deep, err));
	assert_non_null(strstr(err, "nested deeper"));
	/* One level less is fine. */
	struct json *v = json_parse(deep + 1, 2 * n - 2, err, sizeof(err));
	assert_non_null(v);
	json_free(v);
	free(deep);
}

static void test_messages_name_the_offset(void **state)
{
	char err[200];
	(void)state;
	assert_null(parse("{\"a\": [1, 2, x]}", err));
	assert_string_equal(err, "unexpected character at byte 13");
}

static void test_strings_are_written_back_escaped(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	(void)state;
	FILE *f = open_memstream(&buf, &len);

	json_write_string(f, "a\"b\\c\nd\x01");
	fclose(f);
	assert_string_equal(buf, "\"a\\\"b\\\\c\\nd\\u0001\"");
	char err[200];
	struct json *v = parse(buf, err);
	assert_non_null(v);
	assert_string_equal(v->str, "a\"b\\c\nd\x01");
	json_free(v);
	free(buf);
}

/* Every prefix of a valid document is refused cleanly (the parser never reads past LEN). */
static void test_every_truncation_is_refused(void **state)
{
	const char *doc = "{\"ociVersion\":\"1.0.2\",\"process\":{\"args\":[\"/bin/sh\",\"-c\","
			  "\"echo \\u00e9\"],\"cwd\":\"/\"},\"n\":[1.5e3,-0,true,null]}";
	size_t n = strlen(doc);
	char err[200];
	(void)state;

	for (size_t i = 0; i < n; i++) {
		char *copy = malloc(i ? i : 1);
		memcpy(copy, doc, i);
		struct json *v = json_parse(copy, i, err, sizeof(err));
		if (v)
			fail_msg("a prefix of %zu bytes was accepted", i);
		free(copy);
	}
	struct json *v = json_parse(doc, n, err, sizeof(err));
	assert_non_null(v);
	json_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_objects_arrays_and_scalars_are_read),
	    cmocka_unit_test(test_a_repeated_name_gives_its_last_value),
	    cmocka_unit_test(test_escapes_and_surrogate_pairs_become_utf8),
	    cmocka_unit_test(test_large_integers_stay_exact_and_huge_ones_are_doubles),
	    cmocka_unit_test(test_what_is_not_json_is_refused),
	    cmocka_unit_test(test_hostile_strings_are_refused),
	    cmocka_unit_test(test_embedded_nul_bytes_are_refused),
	    cmocka_unit_test(test_nesting_is_bounded),
	    cmocka_unit_test(test_messages_name_the_offset),
	    cmocka_unit_test(test_strings_are_written_back_escaped),
	    cmocka_unit_test(test_every_truncation_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
