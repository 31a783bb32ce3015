/* Fuzz target: an OCI bundle's config.json (oci/json.c and oci/spec.c), the runtime's untrusted
 * input. Each input is the file's bytes, parsed as `create` parses it; an accepted spec is also
 * read back the way sentry/oci.c maps it (every string and list it hands out), and freed. The
 * first byte chooses between a whole config and an `exec --process` object. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oci/json.h"
#include "oci/spec.h"

static volatile size_t sink;

static void touch(const char *s)
{
	if (s)
		sink += strlen(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct oci_spec s;
	char err[512];
	int r;

	if (size == 0)
		return 0;
	if (data[0] & 1)
		r = oci_process_parse((const char *)data + 1, size - 1, &s, err, sizeof(err));
	else
		r = oci_spec_parse((const char *)data + 1, size - 1, &s, err, sizeof(err));
	if (r == 0) {
		for (size_t i = 0; i < s.nargs; i++)
			touch(s.args[i]);
		for (size_t i = 0; i < s.nenv; i++)
			touch(s.env[i]);
		touch(s.cwd);
		touch(s.root_path);
		touch(s.hostname);
		for (size_t i = 0; i < s.nmounts; i++) {
			touch(s.mounts[i].destination);
			touch(s.mounts[i].source);
			touch(s.mounts[i].type);
		}
		for (size_t i = 0; s.annotations && i < s.annotations->len; i++)
			touch(json_str(s.annotations->items[i]));
	} else {
		touch(err);
	}
	oci_spec_free(&s);
	return 0;
}
