/* Fuzz target: restore of a checkpoint image, every section's decoder. The input is the
 * image's sections uncompressed, in load order, each a u32 length (little-endian) and its bytes
 * (missing sections are empty); the harness writes them as a well-formed image (state/image.c:
 * checksums right, compressed) and restores it with checkpoint_load into a kernel with no
 * guest, on the fake platform, then tears everything down. So every input reaches the
 * decoders, in the order and with the cross-references a real restore has; the files' own
 * checks are fuzz_image's. Seeds: tests/fuzz/corpus/restore, made from real images by
 * `seedtool restore`. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sentry/checkpoint.h"
#include "sentry/kernel.h"
#include "sentry/task.h"
#include "state/image.h"
#include "tests/fuzz/sandbox.h"

/* sentry/checkpoint.c's sections, in its load order. */
static const char *const sections[] = {
    "kernel",	"memory",      "mobjs",	   "vfs", "dentries", "files", "file-links",
    "fdtables", "fs-contexts", "sighands", "mms", "tasks",    "locks",
};
#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

static char dir[256];
static bool verbose; /* FUZZ_VERBOSE=1: say why each input was refused */

static void remove_image(void)
{
	char path[512];

	for (size_t i = 0; i < NSECTIONS; i++) {
		snprintf(path, sizeof(path), "%s/%s.z", dir, sections[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/header", dir);
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_kernel_init();
	verbose = getenv("FUZZ_VERBOSE") != NULL;
	snprintf(dir, sizeof(dir), "/dev/shm/minisentry-fuzz-restore.%d", (int)getpid());
	remove_image();
	atexit(remove_image);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size, 0};
	struct image img = {.version = IMAGE_VERSION, .codec = IMAGE_CODEC_ZLIB};
	struct kernel_restore_opts o = {.rootfs = fuzz_rootfs_path(), .force = true};
	char *err = NULL;

	img.nsections = NSECTIONS;
	for (size_t i = 0; i < NSECTIONS; i++) {
		struct image_section *s = &img.sec[i];
		size_t len = fuzz_u32(&in);
		snprintf(s->name, sizeof(s->name), "%s", sections[i]);
		s->data = (uint8_t *)fuzz_bytes(&in, len, &s->len);
		s->count = 1;
	}
	if (image_write(dir, &img, false, &err)) {
		dprintf(2, "fuzz_restore: cannot write the image: %s\n", err);
		abort();
	}
	int ret = checkpoint_load(dir, &o, &err);
	if (verbose)
		dprintf(2, "fuzz_restore: %s\n", ret ? (err ? err : "failed") : "restored");
	free(err);
	err = NULL;
	/* A load that failed half-way through the tasks keeps them for task_load_finish, which
	 * a real restore never reaches: the process exits. Here the next input follows. */
	if (ret) {
		task_load_finish(&err);
		free(err);
	}
	fuzz_teardown();
	remove_image();
	return 0;
}
