/* fd table storage: a growable array of slots; numbers are always the lowest free one, as
 * POSIX requires. */
#include "sentry/fdtable.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "state/codec.h"
#include "vfs/vfs.h"

struct fdtable *fdtable_new(void)
{
	struct fdtable *t = calloc(1, sizeof(*t));

	if (t)
		t->refs = 1;
	return t;
}

struct fdtable *fdtable_get(struct fdtable *t)
{
	t->refs++;
	return t;
}

void fdtable_put(struct fdtable *t)
{
	if (!t || --t->refs > 0)
		return;
	for (int i = 0; i < t->n; i++)
		if (t->fds[i].file)
			vfs_file_put(t->fds[i].file);
	free(t->fds);
	free(t);
}

static int grow(struct fdtable *t, int need)
{
	if (need <= t->n)
		return 0;
	int n = t->n ? t->n : 16;
	while (n < need)
		n *= 2;
	struct fd_entry *f = realloc(t->fds, n * sizeof(*f));
	if (!f)
		return -ENOMEM;
	memset(f + t->n, 0, (n - t->n) * sizeof(*f));
	t->fds = f;
	t->n = n;
	return 0;
}

int fdtable_install(struct fdtable *t, struct vfs_file *file, bool cloexec, int min, int limit)
{
	int fd = min < 0 ? 0 : min;

	while (fd < t->n && t->fds[fd].file)
		fd++;
	if (fd >= limit)
		return -EMFILE;
	if (grow(t, fd + 1))
		return -ENOMEM;
	t->fds[fd].file = file;
	t->fds[fd].cloexec = cloexec;
	return fd;
}

int fdtable_install_at(struct fdtable *t, int fd, struct vfs_file *file, bool cloexec, int limit)
{
	if (fd < 0 || fd >= limit)
		return -EBADF;
	if (grow(t, fd + 1))
		return -ENOMEM;
	struct vfs_file *old = t->fds[fd].file;
	t->fds[fd].file = file;
	t->fds[fd].cloexec = cloexec;
	if (old)
		vfs_file_put(old);
	return fd;
}

struct fd_entry *fdtable_entry(struct fdtable *t, int fd)
{
	if (fd < 0 || fd >= t->n || !t->fds[fd].file)
		return NULL;
	return &t->fds[fd];
}

struct vfs_file *fdtable_peek(struct fdtable *t, int fd)
{
	struct fd_entry *e = fdtable_entry(t, fd);

	return e ? e->file : NULL;
}

int fdtable_close(struct fdtable *t, int fd)
{
	struct fd_entry *e = fdtable_entry(t, fd);

	if (!e)
		return -EBADF;
	struct vfs_file *f = e->file;
	e->file = NULL;
	e->cloexec = false;
	vfs_file_put(f);
	return 0;
}

/* Checkpoint (CK_FDTABLE): the used slots, each a descriptor number, its FD_CLOEXEC and the
 * open file by reference. */
int fdtable_save(struct enc *e, const void *obj)
{
	const struct fdtable *t = obj;
	uint64_t used = 0;

	for (int i = 0; i < t->n; i++)
		used += t->fds[i].file != NULL;
	enc_u64(e, used);
	for (int i = 0; i < t->n; i++) {
		if (!t->fds[i].file)
			continue;
		enc_u32(e, i);
		enc_bool(e, t->fds[i].cloexec);
		enc_ref(e, CK_FILE, t->fds[i].file);
	}
	return 0;
}

/* Descriptor numbers above Linux's nr_open cannot have been saved. */
#define FD_MAX 1048576

void *fdtable_load(struct dec *d)
{
	struct fdtable *t = fdtable_new();
	uint64_t used = dec_max(d, FD_MAX, "descriptor count");

	if (!t) {
		dec_fail(d, "out of memory");
		return NULL;
	}
	for (uint64_t i = 0; i < used && dec_ok(d); i++) {
		uint32_t fd = dec_u32(d);
		bool cloexec = dec_bool(d);
		struct vfs_file *f = dec_ref(d, CK_FILE);
		if (!dec_ok(d))
			break;
		if (!f || fd >= FD_MAX || fdtable_peek(t, (int)fd)) {
			dec_fail(d, "bad descriptor table");
			break;
		}
		if (fdtable_install_at(t, (int)fd, vfs_file_get(f), cloexec, FD_MAX) < 0) {
			vfs_file_put(f);
			dec_fail(d, "out of memory");
		}
	}
	if (!dec_ok(d)) {
		fdtable_put(t);
		return NULL;
	}
	return t;
}

void fdtable_drop(void *t)
{
	fdtable_put(t);
}

struct fdtable *fdtable_copy(struct fdtable *old)
{
	struct fdtable *t = fdtable_new();

	if (!t)
		return NULL;
	for (int fd = 0; fd < old->n; fd++) {
		struct fd_entry *e = fdtable_entry(old, fd);
		if (e && fdtable_install_at(t, fd, vfs_file_get(e->file), e->cloexec, fd + 1) < 0) {
			fdtable_put(t);
			return NULL;
		}
	}
	return t;
}
