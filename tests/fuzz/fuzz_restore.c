/* Fuzz target: restore of a checkpoint image, every section's decoder. The input is the
 * image's sections uncompressed, in load order, each a u32 length (little-endian) and its bytes
 * (missing sections are empty); the harness writes them as a well-formed image (state/image.c:
 * checksums right, compressed) and restores it with checkpoint_load into a kernel with no
 * guest, on the fake platform; a sandbox that loads lets its blocked tasks retry their
 * syscalls and is checkpointed again; then everything is torn down. So every input reaches
 * the decoders, in the order and with the cross-references a real restore has, and what they
 * accept reaches the save code; the files' own checks are fuzz_image's. Seeds:
 * tests/fuzz/corpus/restore, made from real images by `seedtool restore`. */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sentry/checkpoint.h"
#include "sentry/kernel.h"
#include "sentry/sched.h"
#include "sentry/task.h"
#include "state/image.h"
#include "tests/fuzz/sandbox.h"

/* sentry/checkpoint.c's sections, in its load order ("evicted", last, is inspect's alone). */
static const char *const sections[] = {
    "kernel",	   "memory",   "mobjs", "vfs",	   "dentries", "files", "file-links", "fdtables",
    "fs-contexts", "sighands", "mms",	"seccomp", "tasks",    "locks", "evicted",
};
#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

static char dir[256];
static bool verbose; /* FUZZ_VERBOSE=1: say why each input was refused */

/* Every file of the image: the sections, the header, and the data files (pages.N) that a
 * checkpoint again of a sandbox with enough memory writes. */
static void remove_image(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (d) {
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				unlinkat(dirfd(d), de->d_name, 0);
		closedir(d);
	}
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

/* What a restored sandbox does first: its blocked tasks retry their syscalls (as the event
 * loop runs them); then it is checkpointed again, as kernel_quiesce leaves it (every thread
 * stopped), so that the save code meets whatever a load accepted. */
static void again(void)
{
	char *err = NULL;

	sched_run_woken();
	kernel_free_dead();
	for_each_task(t)
		t->running = false;
	remove_image();
	const struct checkpoint_opts o = {0};
	int ret = checkpoint_save(AT_FDCWD, dir, &o, NULL, &err);
	if (verbose)
		dprintf(2, "fuzz_restore: checkpointed again: %s\n",
			ret ? (err ? err : "failed") : "done");
	free(err);
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
	if (image_write(AT_FDCWD, dir, &img, false, &err)) {
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
	} else {
		again();
	}
	fuzz_teardown();
	remove_image();
	return 0;
}
