/* Unit tests for the checkpoint of open files outside the tree (vfs/save.c and the kinds in
 * pipe.c, eventfd.c, epoll.c, unix.c, hostfd.c): each test builds files, saves them as a
 * checkpoint would (CK_FILE then CK_FILE_LINKS records over one reference table), drops the
 * originals, loads the records into a fresh table and checks what the guest would observe.
 * Corrupt images (every truncation, flipped bytes) must be refused without a crash. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "state/codec.h"
#include "vfs/save.h"
#include "vfs/vfs.h"
#include "vfs/waitq.h"

/* --- a checkpoint in memory ---------------------------------------------------------------- */

/* Each section is a sequence of length-prefixed records, in id order; ROOTS holds the ids of
 * the files the test keeps (as enc_ref writes them). */
struct image {
	struct enc files, links, roots;
	/* Dentries are another engineer's section: the tests keep the saved ones (a reference
	 * each) and hand them to the load as if restored. */
	struct vfs_dentry *dentries[4];
	int ndentries;
};

static void image_free(struct image *img)
{
	enc_free(&img->files);
	enc_free(&img->links);
	enc_free(&img->roots);
	for (int i = 0; i < img->ndentries; i++)
		vfs_dentry_put(img->dentries[i]);
}

/* Saves ROOTS and everything they reach, then puts the caller's references on ROOTS. */
static void save(struct vfs_file **roots, int n, struct image *img)
{
	struct ckpt_refs *refs = ckpt_refs_new();
	const void *obj;
	uint64_t id;
	bool more = true;

	assert_non_null(refs);
	enc_init(&img->files, NULL);
	enc_init(&img->links, NULL);
	enc_init(&img->roots, refs);
	for (int i = 0; i < n; i++)
		enc_ref(&img->roots, CK_FILE, roots[i]);
	while (more) {
		more = false;
		while ((obj = ckpt_refs_next(refs, CK_FILE, &id))) {
			struct enc rec;
			enc_init(&rec, refs);
			assert_int_equal(vfs_file_save(&rec, obj), 0);
			assert_true(enc_ok(&rec));
			enc_bytes(&img->files, rec.buf, rec.len);
			enc_free(&rec);
			more = true;
		}
		while ((obj = ckpt_refs_next(refs, CK_FILE_LINKS, &id))) {
			struct enc rec;
			enc_init(&rec, refs);
			assert_int_equal(vfs_file_links_save(&rec, obj), 0);
			assert_true(enc_ok(&rec));
			enc_bytes(&img->links, rec.buf, rec.len);
			enc_free(&rec);
			more = true;
		}
	}
	img->ndentries = 0;
	while ((obj = ckpt_refs_next(refs, CK_DENTRY, &id))) {
		assert_true(img->ndentries < 4);
		img->dentries[img->ndentries++] = vfs_dentry_get((struct vfs_dentry *)obj);
	}
	img->roots.refs = NULL;
	ckpt_refs_free(refs);
	for (int i = 0; i < n; i++)
		vfs_file_put(roots[i]);
}

/* Loads IMG into ROOTS (references of the caller's); returns 0, or -EINVAL when the image is
 * refused (nothing is left over). */
static int load(const struct image *img, struct vfs_file **roots, int n)
{
	struct ckpt_refs *refs = ckpt_refs_new();
	struct dec sec, rec;
	uint64_t id = 0;
	int err = 0;

	assert_non_null(refs);
	for (int i = 0; i < img->ndentries; i++)
		assert_int_equal(ckpt_refs_put(refs, CK_DENTRY, i + 1, img->dentries[i]), 0);
	dec_init(&sec, img->files.buf, img->files.len, refs);
	while (!err && dec_ok(&sec) && !dec_at_end(&sec)) {
		size_t len;
		const void *p = dec_bytes(&sec, &len);
		if (!p)
			break;
		dec_init(&rec, p, len, refs);
		void *f = vfs_file_load(&rec);
		if (!f || !dec_at_end(&rec))
			err = -EINVAL;
		if (f && ckpt_refs_put(refs, CK_FILE, ++id, f))
			vfs_file_drop(f);
		dec_free(&rec);
	}
	id = 0;
	if (!dec_ok(&sec))
		err = -EINVAL;
	dec_free(&sec);
	dec_init(&sec, img->links.buf, img->links.len, refs);
	while (!err && dec_ok(&sec) && !dec_at_end(&sec)) {
		size_t len;
		const void *p = dec_bytes(&sec, &len);
		if (!p)
			break;
		dec_init(&rec, p, len, refs);
		void *f = vfs_file_links_load(&rec);
		if (!f || !dec_at_end(&rec) || ckpt_refs_put(refs, CK_FILE_LINKS, ++id, f))
			err = -EINVAL;
		dec_free(&rec);
	}
	if (!dec_ok(&sec))
		err = -EINVAL;
	dec_free(&sec);
	dec_init(&sec, img->roots.buf, img->roots.len, refs);
	for (int i = 0; i < n && !err; i++) {
		roots[i] = dec_ref(&sec, CK_FILE);
		if (roots[i])
			vfs_file_get(roots[i]);
	}
	if (!dec_ok(&sec))
		err = -EINVAL;
	if (err)
		for (int i = 0; i < n; i++)
			if (roots[i]) {
				vfs_file_put(roots[i]);
				roots[i] = NULL;
			}
	dec_free(&sec);
	ckpt_refs_foreach(refs, CK_FILE, vfs_file_drop);
	ckpt_refs_free(refs);
	return err;
}

static void roundtrip(struct vfs_file **files, int n)
{
	struct image img;

	save(files, n, &img);
	for (int i = 0; i < n; i++)
		files[i] = NULL;
	assert_int_equal(load(&img, files, n), 0);
	for (int i = 0; i < n; i++)
		assert_non_null(files[i]);
	image_free(&img);
}

/* --- helpers --------------------------------------------------------------------------------- */

static ssize_t file_read(struct vfs_file *f, void *buf, size_t len)
{
	struct iovec iov = {buf, len};

	return f->ops->read(f, &iov, 1, NULL);
}

static ssize_t file_write(struct vfs_file *f, const void *buf, size_t len)
{
	struct iovec iov = {(void *)buf, len};

	return f->ops->write(f, &iov, 1, NULL);
}

static uint32_t file_poll(struct vfs_file *f)
{
	struct waitq *wq;

	return f->ops->poll(f, &wq);
}

static const struct vfs_unix_cred CRED = {42, 1000, 100};

static ssize_t sock_send(struct vfs_file *f, const char *s, struct vfs_file **files, int nfiles)
{
	struct iovec iov = {(void *)s, strlen(s)};
	struct vfs_unix_msg m = {
	    .iov = &iov, .iovcnt = 1, .cred = CRED, .files = files, .nfiles = nfiles};

	return vfs_unix_sendmsg(f, &m);
}

/* Receives into BUF (NUL-terminated); *FILES gets what came along (or NULL). */
static ssize_t sock_recv(struct vfs_file *f, char *buf, size_t len, struct vfs_unix_msg *m)
{
	struct iovec iov = {buf, len - 1};
	ssize_t r;

	*m = (struct vfs_unix_msg){.iov = &iov, .iovcnt = 1};
	r = vfs_unix_recvmsg(f, m);
	buf[r > 0 ? r : 0] = 0;
	return r;
}

static void put_files(struct vfs_unix_msg *m)
{
	for (int i = 0; i < m->nfiles; i++)
		vfs_file_put(m->files[i]);
	free(m->files);
}

/* --- pipes ----------------------------------------------------------------------------------- */

static void test_pipe_keeps_bytes_capacity_and_one_shared_pipe(void **state)
{
	struct vfs_file *f[2];
	char buf[16] = {0};

	(void)state;
	assert_int_equal(vfs_pipe_new(O_NONBLOCK, &f[0], &f[1]), 0);
	assert_int_equal(vfs_pipe_size(f[0], 8192), 8192);
	assert_int_equal(file_write(f[1], "hello", 5), 5);
	assert_int_equal(file_read(f[0], buf, 2), 2); /* the ring's head moves off 0 */

	roundtrip(f, 2);
	assert_true(vfs_is_pipe(f[0]) && vfs_is_pipe(f[1]));
	assert_ptr_equal(f[0]->priv, f[1]->priv);
	assert_int_equal(f[0]->flags, O_RDONLY | O_NONBLOCK);
	assert_int_equal(f[1]->flags, O_WRONLY | O_NONBLOCK);
	assert_int_equal(vfs_pipe_size(f[0], -1), 8192);
	assert_int_equal(file_poll(f[0]) & POLLIN, POLLIN);
	assert_int_equal(file_read(f[0], buf, sizeof(buf)), 3);
	assert_memory_equal(buf, "llo", 3);
	assert_int_equal(file_read(f[0], buf, sizeof(buf)), -EAGAIN);
	assert_int_equal(file_write(f[1], "more", 4), 4);
	assert_int_equal(file_read(f[0], buf, sizeof(buf)), 4);
	/* One writer: closing it is EOF for the reader. */
	vfs_file_put(f[1]);
	assert_int_equal(file_read(f[0], buf, sizeof(buf)), 0);
	vfs_file_put(f[0]);
}

static void test_pipe_without_reader_still_gives_epipe(void **state)
{
	struct vfs_file *rd, *wr, *f[1];

	(void)state;
	assert_int_equal(vfs_pipe_new(0, &rd, &wr), 0);
	assert_int_equal(file_write(wr, "x", 1), 1);
	vfs_file_put(rd);
	f[0] = wr;
	roundtrip(f, 1);
	assert_int_equal(file_write(f[0], "y", 1), -EPIPE);
	assert_int_equal(file_poll(f[0]) & POLLERR, POLLERR);
	vfs_file_put(f[0]);
}

static void test_fifo_is_reattached_to_its_inode(void **state)
{
	struct vfs_dentry *root;
	struct vfs_file *f[2], *w2;
	char buf[16];

	(void)state;
	assert_int_equal(vfs_tmpfs_new(&root), 0);
	struct vfs_fs_ctx fs = {root, root, 022};
	assert_int_equal(vfs_mknod(&fs, NULL, NULL, "/fifo", S_IFIFO | 0644, 0), 0);
	assert_int_equal(vfs_open(&fs, NULL, "/fifo", O_RDONLY | O_NONBLOCK, 0, &f[0]), 0);
	assert_int_equal(vfs_open(&fs, NULL, "/fifo", O_WRONLY, 0, &f[1]), 0);
	assert_int_equal(file_write(f[1], "fifo", 4), 4);

	roundtrip(f, 2); /* the originals are closed first: the inode's slot is empty */
	assert_ptr_equal(f[0]->priv, f[1]->priv);
	assert_int_equal(file_read(f[0], buf, 2), 2);
	assert_memory_equal(buf, "fi", 2);
	/* A new open of the FIFO finds the restored pipe through the inode. */
	assert_int_equal(vfs_open(&fs, NULL, "/fifo", O_WRONLY | O_NONBLOCK, 0, &w2), 0);
	assert_ptr_equal(w2->priv, f[0]->priv);
	assert_int_equal(file_write(w2, "!", 1), 1);
	assert_int_equal(file_read(f[0], buf, sizeof(buf)), 3);
	assert_memory_equal(buf, "fo!", 3);
	vfs_file_put(w2);
	vfs_file_put(f[1]);
	assert_int_equal(file_read(f[0], buf, sizeof(buf)), 0); /* no writer left */
	vfs_file_put(f[0]);
	/* The last end gone, the slot is empty again: a non-blocking writer finds no reader. */
	assert_int_equal(vfs_open(&fs, NULL, "/fifo", O_WRONLY | O_NONBLOCK, 0, &w2), -ENXIO);
	vfs_dentry_put(root);
}

/* --- eventfd and epoll ---------------------------------------------------------------------- */

static void test_eventfd_keeps_count_and_semaphore_mode(void **state)
{
	struct vfs_file *f[1];
	uint64_t v;

	(void)state;
	assert_int_equal(vfs_eventfd_new(5, EFD_SEMAPHORE | EFD_NONBLOCK, &f[0]), 0);
	roundtrip(f, 1);
	assert_true(vfs_is_eventfd(f[0]));
	assert_int_equal(vfs_eventfd_count(f[0]), 5);
	assert_int_equal(f[0]->flags & O_NONBLOCK, O_NONBLOCK);
	assert_int_equal(file_read(f[0], &v, 8), 8);
	assert_int_equal(v, 1); /* EFD_SEMAPHORE */
	assert_int_equal(vfs_eventfd_count(f[0]), 4);
	vfs_file_put(f[0]);
}

static void test_epoll_interest_list_reports_the_same_readiness(void **state)
{
	struct vfs_file *ep, *efd, *rd, *wr, *inner, *f[5];
	struct epoll_event ev, out[8];
	uint64_t one = 1;

	(void)state;
	assert_int_equal(vfs_epoll_new(0, &ep), 0);
	assert_int_equal(vfs_epoll_new(0, &inner), 0);
	assert_int_equal(vfs_eventfd_new(0, 0, &efd), 0);
	assert_int_equal(vfs_pipe_new(0, &rd, &wr), 0);
	ev = (struct epoll_event){EPOLLIN, {.u64 = 11}};
	assert_int_equal(vfs_epoll_ctl(ep, EPOLL_CTL_ADD, 3, efd, &ev), 0);
	ev = (struct epoll_event){EPOLLIN | EPOLLONESHOT, {.u64 = 22}};
	assert_int_equal(vfs_epoll_ctl(ep, EPOLL_CTL_ADD, 4, rd, &ev), 0);
	ev = (struct epoll_event){EPOLLIN | EPOLLET, {.u64 = 33}};
	assert_int_equal(vfs_epoll_ctl(inner, EPOLL_CTL_ADD, 5, efd, &ev), 0);
	ev = (struct epoll_event){EPOLLIN, {.u64 = 44}};
	assert_int_equal(vfs_epoll_ctl(ep, EPOLL_CTL_ADD, 6, inner, &ev), 0);
	/* The pipe item fires once and is disabled (EPOLLONESHOT). */
	assert_int_equal(file_write(wr, "x", 1), 1);
	assert_int_equal(vfs_epoll_wait(ep, out, 8), 1);
	assert_int_equal(out[0].data.u64, 22);
	assert_int_equal(file_write(efd, &one, 8), 8);

	f[0] = ep, f[1] = efd, f[2] = rd, f[3] = wr, f[4] = inner;
	roundtrip(f, 5);
	ep = f[0], efd = f[1], rd = f[2], wr = f[3], inner = f[4];
	assert_true(vfs_is_epoll(ep) && vfs_is_epoll(inner));
	assert_int_equal(file_poll(ep) & POLLIN, POLLIN);
	int n = vfs_epoll_wait(ep, out, 8);
	assert_int_equal(n, 2); /* the eventfd, and the inner epoll; not the disabled pipe item */
	uint64_t got = out[0].data.u64 + out[1].data.u64;
	assert_int_equal(got, 11 + 44);
	assert_int_equal(vfs_epoll_wait(inner, out, 8), 1);
	assert_int_equal(out[0].data.u64, 33);
	/* EPOLL_CTL_MOD finds the restored item: the key (fd, file) survived. */
	ev = (struct epoll_event){EPOLLIN, {.u64 = 23}};
	assert_int_equal(vfs_epoll_ctl(ep, EPOLL_CTL_MOD, 4, rd, &ev), 0);
	assert_int_equal(vfs_epoll_ctl(ep, EPOLL_CTL_ADD, 4, rd, &ev), -EEXIST);
	/* Items still go with their target. */
	vfs_file_put(efd);
	n = vfs_epoll_wait(ep, out, 8);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].data.u64, 23);
	vfs_file_put(wr);
	vfs_file_put(rd);
	vfs_file_put(inner);
	vfs_file_put(ep);
}

/* --- unix sockets ---------------------------------------------------------------------------- */

static void test_socketpair_messages_rights_and_credentials_survive(void **state)
{
	struct vfs_file *a, *b, *efd, *f[2];
	struct vfs_unix_msg m;
	char buf[64];
	int one = 1;
	unsigned int len;
	struct vfs_unix_cred pc;

	(void)state;
	assert_int_equal(vfs_unix_socketpair(SOCK_STREAM, O_NONBLOCK, &CRED, &a, &b), 0);
	assert_int_equal(vfs_unix_setsockopt(b, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)), 0);
	assert_int_equal(vfs_eventfd_new(7, 0, &efd), 0);
	assert_int_equal(sock_send(a, "first", NULL, 0), 5);
	/* A's own file travels in its queue, and an eventfd nothing else holds. */
	struct vfs_file *rights[2] = {efd, a};
	assert_int_equal(sock_send(a, "second", rights, 2), 6);
	vfs_file_put(efd);
	assert_int_equal(sock_send(b, "back", NULL, 0), 4);

	f[0] = a, f[1] = b;
	roundtrip(f, 2);
	a = f[0], b = f[1];
	assert_true(vfs_is_unix_socket(a) && vfs_is_unix_socket(b));
	assert_int_equal(a->flags & O_NONBLOCK, O_NONBLOCK);
	/* A stream read runs across messages and stops after one that carried files. */
	assert_int_equal(sock_recv(b, buf, sizeof(buf), &m), 11);
	assert_string_equal(buf, "firstsecond");
	assert_true(m.has_cred);
	assert_int_equal(m.cred.pid, CRED.pid);
	assert_int_equal(m.nfiles, 2);
	assert_true(vfs_is_eventfd(m.files[0]));
	assert_int_equal(vfs_eventfd_count(m.files[0]), 7);
	assert_ptr_equal(m.files[1], a);
	put_files(&m);
	assert_int_equal(sock_recv(a, buf, sizeof(buf), &m), 4);
	assert_string_equal(buf, "back");
	assert_false(m.has_cred);
	len = sizeof(pc);
	assert_int_equal(vfs_unix_getsockopt(a, SOL_SOCKET, SO_PEERCRED, &pc, &len), 0);
	assert_int_equal(pc.uid, CRED.uid);
	/* Still connected both ways; closing one end is EOF for the other. */
	assert_int_equal(sock_send(b, "x", NULL, 0), 1);
	assert_int_equal(sock_recv(a, buf, sizeof(buf), &m), 1);
	vfs_file_put(a);
	assert_int_equal(sock_recv(b, buf, sizeof(buf), &m), 0);
	vfs_file_put(b);
}

static void test_listener_backlog_and_name_survive(void **state)
{
	struct vfs_file *l, *c1, *c2, *s, *f[3];
	struct vfs_unix_sock *target;
	struct vfs_unix_msg m;
	char buf[64], addr[VFS_UNIX_ADDR_MAX];
	unsigned int len;

	(void)state;
	assert_int_equal(vfs_unix_socket_new(SOCK_SEQPACKET, 0, &CRED, &l), 0);
	assert_int_equal(vfs_unix_bind_abstract(l, "ckpt-l", 6), 0);
	assert_int_equal(vfs_unix_listen(l, 4, &CRED), 0);
	assert_int_equal(vfs_unix_socket_new(SOCK_SEQPACKET, 0, &CRED, &c1), 0);
	assert_int_equal(vfs_unix_socket_new(SOCK_SEQPACKET, 0, &CRED, &c2), 0);
	assert_int_equal(vfs_unix_lookup_abstract(SOCK_SEQPACKET, "ckpt-l", 6, &target), 0);
	assert_int_equal(vfs_unix_connect(c1, target, &CRED, NULL), 0);
	assert_int_equal(vfs_unix_connect(c2, target, &CRED, NULL), 0);
	assert_int_equal(sock_send(c1, "to-embryo-1", NULL, 0), 11);
	assert_int_equal(sock_send(c2, "to-embryo-2", NULL, 0), 11);

	f[0] = l, f[1] = c1, f[2] = c2;
	roundtrip(f, 3);
	l = f[0], c1 = f[1], c2 = f[2];
	assert_int_equal(file_poll(l) & POLLIN, POLLIN);
	assert_int_equal(vfs_unix_lookup_abstract(SOCK_SEQPACKET, "ckpt-l", 6, &target), 0);
	assert_ptr_equal(target, l->priv);
	assert_int_equal(vfs_unix_accept(l, 0, &s), 0);
	assert_int_equal(sock_recv(s, buf, sizeof(buf), &m), 11);
	assert_string_equal(buf, "to-embryo-1");
	assert_int_equal(sock_send(s, "reply", NULL, 0), 5);
	assert_int_equal(sock_recv(c1, buf, sizeof(buf), &m), 5);
	assert_string_equal(buf, "reply");
	assert_int_equal(vfs_unix_getname(c1, true, addr, &len), 0);
	assert_int_equal(len, offsetof(struct sockaddr_un, sun_path) + 7);
	assert_memory_equal(addr + offsetof(struct sockaddr_un, sun_path) + 1, "ckpt-l", 6);
	vfs_file_put(s);
	assert_int_equal(vfs_unix_accept(l, 0, &s), 0);
	assert_int_equal(sock_recv(s, buf, sizeof(buf), &m), 11);
	assert_string_equal(buf, "to-embryo-2");
	assert_int_equal(vfs_unix_accept(l, 0, &s), -EAGAIN);
	/* Closing the listener frees its name. */
	vfs_file_put(l);
	assert_int_equal(vfs_unix_lookup_abstract(SOCK_SEQPACKET, "ckpt-l", 6, &target),
			 -ECONNREFUSED);
	vfs_file_put(s);
	vfs_file_put(c1);
	vfs_file_put(c2);
}

static void test_dgram_from_a_closed_sender_keeps_its_address(void **state)
{
	struct vfs_file *srv, *cl, *f[1];
	struct vfs_unix_sock *target;
	struct iovec iov;
	char buf[32], addr[VFS_UNIX_ADDR_MAX];

	(void)state;
	assert_int_equal(vfs_unix_socket_new(SOCK_DGRAM, 0, &CRED, &srv), 0);
	assert_int_equal(vfs_unix_bind_path(srv, "/tmp/ckpt.sock", "ckpt.sock"), 0);
	assert_int_equal(vfs_unix_socket_new(SOCK_DGRAM, 0, &CRED, &cl), 0);
	assert_int_equal(vfs_unix_bind_abstract(cl, "ckpt-c", 6), 0);
	assert_int_equal(vfs_unix_lookup_path("/tmp/ckpt.sock", &target), 0);
	iov = (struct iovec){"dgram", 5};
	struct vfs_unix_msg sm = {.iov = &iov, .iovcnt = 1, .named = true, .dest = target};
	assert_int_equal(vfs_unix_sendmsg(cl, &sm), 5);
	vfs_file_put(cl);

	f[0] = srv;
	roundtrip(f, 1);
	srv = f[0];
	assert_int_equal(vfs_unix_lookup_path("/tmp/ckpt.sock", &target), 0);
	assert_ptr_equal(target, srv->priv);
	iov = (struct iovec){buf, sizeof(buf)};
	struct vfs_unix_msg rm = {.iov = &iov, .iovcnt = 1, .addr = addr};
	assert_int_equal(vfs_unix_recvmsg(srv, &rm), 5);
	assert_memory_equal(buf, "dgram", 5);
	assert_int_equal(rm.addrlen, offsetof(struct sockaddr_un, sun_path) + 7);
	assert_memory_equal(addr + offsetof(struct sockaddr_un, sun_path) + 1, "ckpt-c", 6);
	vfs_file_put(srv);
	assert_int_equal(vfs_unix_lookup_path("/tmp/ckpt.sock", &target), -ENOENT);
}

/* --- host stdio ------------------------------------------------------------------------------ */

static void test_host_stdio_is_rebound_or_detached(void **state)
{
	struct vfs_file *f[1];
	struct image img;
	int saved;

	(void)state;
	assert_int_equal(vfs_file_host_stdio(2, O_WRONLY, &f[0]), 0);
	save(f, 1, &img);
	f[0] = NULL;
	assert_int_equal(load(&img, f, 1), 0);
	assert_int_equal(f[0]->ops->host_fd(f[0]) >= 3, 1);
	assert_int_equal(f[0]->flags, O_WRONLY);
	assert_int_equal(file_write(f[0], "", 0), 0);
	vfs_file_put(f[0]);

	/* A restoring process without a stderr: the file loads, detached. */
	saved = dup(2);
	assert_true(saved >= 0);
	close(2);
	int err = load(&img, f, 1);
	dup2(saved, 2);
	close(saved);
	assert_int_equal(err, 0);
	assert_int_equal(f[0]->ops->host_fd(f[0]), -1);
	assert_int_equal(file_write(f[0], "x", 1), -EBADF);
	assert_int_equal(file_read(f[0], (char[1]){0}, 1), -EBADF);
	assert_int_equal(file_poll(f[0]) & POLLHUP, POLLHUP);
	vfs_file_put(f[0]);
	image_free(&img);

	/* A host descriptor that is not stdio cannot be saved. */
	struct vfs_file *h = vfs_file_host_fd(dup(0), O_RDONLY, true);
	struct ckpt_refs *refs = ckpt_refs_new();
	struct enc e;
	enc_init(&e, refs);
	assert_int_not_equal(vfs_file_save(&e, h), 0);
	assert_false(enc_ok(&e));
	enc_free(&e);
	ckpt_refs_free(refs);
	vfs_file_put(h);
}

/* --- corrupt images ----------------------------------------------------------------------- */

/* Builds one image with every kind and links in it. */
static void rich_image(struct image *img)
{
	struct vfs_file *f[8], *l, *c, *efd;
	struct vfs_unix_sock *target;
	struct epoll_event ev = {EPOLLIN, {.u64 = 1}};

	assert_int_equal(vfs_pipe_new(0, &f[0], &f[1]), 0);
	assert_int_equal(file_write(f[1], "pipe", 4), 4);
	assert_int_equal(vfs_eventfd_new(3, 0, &efd), 0);
	assert_int_equal(vfs_epoll_new(0, &f[2]), 0);
	assert_int_equal(vfs_epoll_ctl(f[2], EPOLL_CTL_ADD, 9, efd, &ev), 0);
	assert_int_equal(vfs_unix_socketpair(SOCK_DGRAM, 0, &CRED, &f[3], &f[4]), 0);
	assert_int_equal(sock_send(f[3], "rights", &efd, 1), 6);
	assert_int_equal(vfs_unix_socket_new(SOCK_STREAM, 0, &CRED, &l), 0);
	assert_int_equal(vfs_unix_bind_abstract(l, "ckpt-rich", 9), 0);
	assert_int_equal(vfs_unix_listen(l, 2, &CRED), 0);
	assert_int_equal(vfs_unix_socket_new(SOCK_STREAM, 0, &CRED, &c), 0);
	assert_int_equal(vfs_unix_lookup_abstract(SOCK_STREAM, "ckpt-rich", 9, &target), 0);
	assert_int_equal(vfs_unix_connect(c, target, &CRED, NULL), 0);
	assert_int_equal(sock_send(c, "early", NULL, 0), 5);
	f[5] = l, f[6] = c, f[7] = efd;
	save(f, 8, img);
}

static int load_and_drop(const struct image *img)
{
	struct vfs_file *f[8] = {0};
	int err = load(img, f, 8);

	if (err == 0)
		for (int i = 0; i < 8; i++)
			vfs_file_put(f[i]);
	return err;
}

static void test_truncated_or_corrupt_images_are_refused_without_harm(void **state)
{
	struct image img, bad;

	(void)state;
	rich_image(&img);
	assert_int_equal(load_and_drop(&img), 0); /* the intact image loads */
	for (int which = 0; which < 2; which++) {
		struct enc *sec = which ? &img.links : &img.files;
		for (size_t cut = 0; cut < sec->len; cut++) {
			bad = img;
			struct enc *bsec = which ? &bad.links : &bad.files;
			bsec->len = cut;
			load_and_drop(&bad);
		}
		/* Flips that cannot turn one file reference into another valid one (ids are
		 * small): a changed reference could make a cycle of files that never frees. */
		for (size_t i = 0; i < sec->len; i++) {
			static const uint8_t flips[] = {0x80, 0xff};
			for (size_t k = 0; k < sizeof(flips); k++) {
				sec->buf[i] ^= flips[k];
				load_and_drop(&img);
				sec->buf[i] ^= flips[k];
			}
		}
	}
	/* Nothing was left registered (a socket name) by the failures. */
	assert_int_equal(load_and_drop(&img), 0);
	image_free(&img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pipe_keeps_bytes_capacity_and_one_shared_pipe),
	    cmocka_unit_test(test_pipe_without_reader_still_gives_epipe),
	    cmocka_unit_test(test_fifo_is_reattached_to_its_inode),
	    cmocka_unit_test(test_eventfd_keeps_count_and_semaphore_mode),
	    cmocka_unit_test(test_epoll_interest_list_reports_the_same_readiness),
	    cmocka_unit_test(test_socketpair_messages_rights_and_credentials_survive),
	    cmocka_unit_test(test_listener_backlog_and_name_survive),
	    cmocka_unit_test(test_dgram_from_a_closed_sender_keeps_its_address),
	    cmocka_unit_test(test_host_stdio_is_rebound_or_detached),
	    cmocka_unit_test(test_truncated_or_corrupt_images_are_refused_without_harm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
