/* epoll instances as files. Each item watches one target file through a waiter on the queue
 * the target's poll op gives; the waiter marks the item ready and wakes the epoll's own queue,
 * which the syscall layer (or an outer epoll, or poll(2)) waits on. epoll_wait never blocks:
 * it re-polls the items and reports what is ready now. Items hold no reference on their
 * target: a target's last vfs_file_put removes them, as Linux does. Host descriptors have no
 * queue: their readiness is polled, and vfs_epoll_host_fds lists them for the caller to watch. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "vfs/internal.h"
#include "vfs/save.h"
#include "vfs/vfs.h"
#include "vfs/waitq.h"

/* Bits of an item's event mask that are not poll events. */
#define EP_PRIVATE_BITS (EPOLLWAKEUP | EPOLLONESHOT | EPOLLET | EPOLLEXCLUSIVE)
/* What EPOLLEXCLUSIVE may be combined with. */
#define EP_EXCLUSIVE_OK_BITS                                                                       \
	(EPOLLIN | EPOLLOUT | EPOLLERR | EPOLLHUP | EPOLLWAKEUP | EPOLLET | EPOLLEXCLUSIVE)
/* Longest chain of epolls inside epolls (Linux's EP_MAX_NESTS). */
#define EP_MAX_NESTS 4

struct epoll {
	struct vfs_file *file;		/* the epoll's own file (not referenced: it owns us) */
	struct vfs_epitem *head, *tail; /* every item; reported items move to the tail */
	int nitems;
	struct waitq wq;  /* woken with POLLIN when an item becomes ready */
	unsigned int gen; /* loop_check's visit mark, with DEPTH its result */
	int depth;
};

struct vfs_epitem {
	struct epoll *ep;
	int fd;
	struct vfs_file *target;
	uint32_t events; /* interest, EPOLLHUP|EPOLLERR and flags; no poll bits once a
			  * EPOLLONESHOT item has been reported (disabled until MOD) */
	epoll_data_t data;
	struct waiter w; /* on the target's queue, if it has one */
	bool has_queue;
	bool ready;    /* for EPOLLET: an edge not yet reported */
	uint32_t seen; /* for EPOLLET without a queue: the events ready at the last look */
	struct vfs_epitem *prev, *next;	    /* in ep's list */
	struct vfs_epitem *tnext, **tpprev; /* in target->epoll_links */
};

static const struct vfs_file_ops epoll_ops;
static unsigned int loop_check_gen;

static uint32_t item_interest(const struct vfs_epitem *it)
{
	return it->events & ~EP_PRIVATE_BITS;
}

/* What IT reports now, 0 if nothing. Level-triggered items report whatever matching is
 * ready. An edge-triggered item reports once per edge: one its queue signalled (item_fired),
 * the readiness it had when added or modified, or for a target without a queue, events that
 * were not ready at the last look. An edge that finds nothing ready is dropped, as Linux
 * drops an item from its ready list. */
static uint32_t item_poll(struct vfs_epitem *it)
{
	uint32_t interest = item_interest(it), revents;
	struct waitq *wq;

	if (!interest)
		return 0;
	revents = it->target->ops->poll(it->target, &wq) & interest;
	if (!(it->events & EPOLLET))
		return revents;
	if (!it->has_queue) {
		if (revents & ~it->seen)
			it->ready = true;
		it->seen = revents;
	}
	if (!revents)
		it->ready = false;
	return it->ready ? revents : 0;
}

/* The target's queue fired: WAKE_EVENTS is what changed, 0 for anything. */
static void item_fired(struct waiter *w, uint32_t wake_events)
{
	struct vfs_epitem *it = (struct vfs_epitem *)((char *)w - offsetof(struct vfs_epitem, w));
	uint32_t interest = item_interest(it);

	if (!interest || (wake_events && !(wake_events & interest)))
		return;
	it->ready = true;
	waitq_wake(&it->ep->wq, POLLIN);
}

/* Sets IT's interest and data, then takes a target that is ready already as one edge, and
 * wakes those waiting on the epoll. */
static void item_arm(struct vfs_epitem *it, uint32_t events, epoll_data_t data)
{
	struct waitq *wq;
	uint32_t revents;

	it->events = events;
	it->data = data;
	revents = it->target->ops->poll(it->target, &wq) & item_interest(it);
	it->seen = revents;
	it->ready = revents != 0;
	if (revents)
		waitq_wake(&it->ep->wq, POLLIN);
}

static void list_unlink(struct epoll *ep, struct vfs_epitem *it)
{
	if (it->prev)
		it->prev->next = it->next;
	else
		ep->head = it->next;
	if (it->next)
		it->next->prev = it->prev;
	else
		ep->tail = it->prev;
	it->prev = it->next = NULL;
}

static void list_append(struct epoll *ep, struct vfs_epitem *it)
{
	it->prev = ep->tail;
	it->next = NULL;
	if (ep->tail)
		ep->tail->next = it;
	else
		ep->head = it;
	ep->tail = it;
}

static void item_free(struct vfs_epitem *it)
{
	waitq_remove(&it->w);
	list_unlink(it->ep, it);
	it->ep->nitems--;
	*it->tpprev = it->tnext;
	if (it->tnext)
		it->tnext->tpprev = it->tpprev;
	free(it);
}

static int item_add(struct epoll *ep, int fd, struct vfs_file *target, uint32_t events,
		    epoll_data_t data)
{
	struct vfs_epitem *it = calloc(1, sizeof(*it));
	struct waitq *wq;

	if (!it)
		return -ENOMEM;
	it->ep = ep;
	it->fd = fd;
	it->target = target;
	list_append(ep, it);
	ep->nitems++;
	it->tnext = target->epoll_links;
	if (it->tnext)
		it->tnext->tpprev = &it->tnext;
	it->tpprev = &target->epoll_links;
	target->epoll_links = it;
	/* The queue is taken once: a file's poll op always gives the same one. */
	target->ops->poll(target, &wq);
	if (wq) {
		waitq_add(wq, &it->w, item_fired, 0);
		it->has_queue = true;
	}
	item_arm(it, events, data);
	return 0;
}

static struct vfs_epitem *item_find(struct epoll *ep, int fd, struct vfs_file *target)
{
	for (struct vfs_epitem *it = ep->head; it; it = it->next)
		if (it->fd == fd && it->target == target)
			return it;
	return NULL;
}

/* How deep the epolls nested in EP go (0: none), or INT_MAX when INTO is among them or the
 * chain is too long. Each epoll is measured once per check. */
static int depth_below(struct epoll *ep, struct epoll *into, int depth)
{
	int result = 0;

	if (ep->gen == loop_check_gen)
		return ep->depth;
	ep->gen = loop_check_gen;
	for (struct vfs_epitem *it = ep->head; it && result <= EP_MAX_NESTS; it = it->next) {
		if (!vfs_is_epoll(it->target))
			continue;
		struct epoll *sub = it->target->priv;
		int d = sub == into || depth > EP_MAX_NESTS ? INT_MAX
							    : depth_below(sub, into, depth + 1);
		if (d != INT_MAX)
			d++;
		if (d > result)
			result = d;
	}
	ep->depth = result;
	return result;
}

/* How deep EP sits inside other epolls (0: in none). */
static int depth_above(struct epoll *ep)
{
	int result = 0;

	if (ep->gen == loop_check_gen)
		return ep->depth;
	for (struct vfs_epitem *it = ep->file->epoll_links; it; it = it->tnext) {
		int d = depth_above(it->ep) + 1;
		if (d > result)
			result = d;
	}
	ep->gen = loop_check_gen;
	ep->depth = result;
	return result;
}

/* Adding TO into EP must close no cycle and make no chain of more than EP_MAX_NESTS. */
static int loop_check(struct epoll *ep, struct epoll *to)
{
	int below, above;

	loop_check_gen++;
	below = depth_below(to, ep, 0);
	if (below > EP_MAX_NESTS)
		return -ELOOP;
	loop_check_gen++;
	above = depth_above(ep);
	return below + 1 + above > EP_MAX_NESTS ? -ELOOP : 0;
}

/* Linux refuses files without a poll op: regular files and directories, here or on the host. */
static bool can_poll(struct vfs_file *f)
{
	struct stat st;

	if (!f->ops->poll)
		return false;
	if (!f->ops->host_fd || f->ops->host_fd(f) < 0)
		return true;
	if (f->ops->getattr && f->ops->getattr(f, &st) == 0)
		return !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
	return true;
}

int vfs_epoll_ctl(struct vfs_file *epf, int op, int fd, struct vfs_file *target,
		  const struct epoll_event *ev)
{
	uint32_t events = ev && op != EPOLL_CTL_DEL ? ev->events & ~EPOLLWAKEUP : 0;
	struct epoll *ep;
	struct vfs_epitem *it;
	int err;

	if (op != EPOLL_CTL_DEL && !ev)
		return -EFAULT;
	if (!can_poll(target))
		return -EPERM;
	if (epf == target || !vfs_is_epoll(epf))
		return -EINVAL;
	if (events & EPOLLEXCLUSIVE) {
		if (op == EPOLL_CTL_MOD)
			return -EINVAL;
		if (op == EPOLL_CTL_ADD &&
		    (vfs_is_epoll(target) || (events & ~EP_EXCLUSIVE_OK_BITS)))
			return -EINVAL;
	}
	ep = epf->priv;
	if (op == EPOLL_CTL_ADD && vfs_is_epoll(target)) {
		err = loop_check(ep, target->priv);
		if (err)
			return err;
	}
	it = item_find(ep, fd, target);
	switch (op) {
	case EPOLL_CTL_ADD:
		if (it)
			return -EEXIST;
		return item_add(ep, fd, target, events | EPOLLHUP | EPOLLERR, ev->data);
	case EPOLL_CTL_DEL:
		if (!it)
			return -ENOENT;
		item_free(it);
		return 0;
	case EPOLL_CTL_MOD:
		if (!it)
			return -ENOENT;
		if (it->events & EPOLLEXCLUSIVE)
			return -EINVAL;
		item_arm(it, events | EPOLLHUP | EPOLLERR, ev->data);
		return 0;
	default:
		return -EINVAL;
	}
}

int vfs_epoll_wait(struct vfs_file *epf, struct epoll_event *out, int maxevents)
{
	struct epoll *ep;
	struct vfs_epitem *it, *next;
	int n = 0, count;

	if (!vfs_is_epoll(epf) || maxevents <= 0)
		return -EINVAL;
	ep = epf->priv;
	/* One pass over the items as they stand; reported ones move behind the rest, so the
	 * next call starts with those that were not reached. */
	count = ep->nitems;
	for (it = ep->head; it && count-- > 0 && n < maxevents; it = next) {
		uint32_t revents = item_poll(it);
		next = it->next;
		if (!revents)
			continue;
		out[n].events = revents;
		out[n].data = it->data;
		n++;
		it->ready = false;
		if (it->events & EPOLLONESHOT)
			it->events &= EP_PRIVATE_BITS;
		list_unlink(ep, it);
		list_append(ep, it);
	}
	return n;
}

/* Adds FD with EVENTS to the list, merging with an entry already there; returns the new
 * count, exact while it is within MAX (what did not fit cannot be merged). */
static int host_fds_add(int *fds, uint32_t *events, int max, int n, int fd, uint32_t ev)
{
	for (int i = 0; i < n && i < max; i++)
		if (fds[i] == fd) {
			events[i] |= ev;
			return n;
		}
	if (n < max) {
		fds[n] = fd;
		events[n] = ev;
	}
	return n + 1;
}

static int host_fds_walk(struct epoll *ep, int *fds, uint32_t *events, int max, int n)
{
	for (struct vfs_epitem *it = ep->head; it; it = it->next) {
		struct vfs_file *t = it->target;
		uint32_t interest = item_interest(it);
		int fd;

		if (!interest)
			continue;
		if (vfs_is_epoll(t)) {
			n = host_fds_walk(t->priv, fds, events, max, n);
			continue;
		}
		if (!t->ops->host_fd || (fd = t->ops->host_fd(t)) < 0)
			continue;
		/* An edge-triggered item waits only for what was not ready at the last look:
		 * watching a descriptor that stays ready would wake the task for nothing. */
		if (it->events & EPOLLET)
			interest &= ~it->seen;
		n = host_fds_add(fds, events, max, n, fd, interest);
	}
	return n;
}

int vfs_epoll_host_fds(struct vfs_file *epf, int *fds, uint32_t *events, int max)
{
	if (!vfs_is_epoll(epf))
		return -EINVAL;
	return host_fds_walk(epf->priv, fds, events, max, 0);
}

void vfs_epoll_file_released(struct vfs_file *f)
{
	while (f->epoll_links)
		item_free(f->epoll_links);
}

static uint32_t epoll_poll(struct vfs_file *f, struct waitq **wq)
{
	struct epoll *ep = f->priv;

	*wq = &ep->wq;
	for (struct vfs_epitem *it = ep->head; it; it = it->next)
		if (item_poll(it))
			return POLLIN | POLLRDNORM;
	return 0;
}

/* Linux's epoll files have no read or write. */
static ssize_t epoll_rw(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	(void)f, (void)iov, (void)iovcnt, (void)pos;
	return -EINVAL;
}

/* Outer epolls watching F have already dropped their items (vfs_file_put). A task still
 * queued would sleep forever on Linux too; its waiter only has to leave the freed queue. */
static void epoll_release(struct vfs_file *f)
{
	struct epoll *ep = f->priv;

	while (ep->head)
		item_free(ep->head);
	waitq_detach_all(&ep->wq);
	free(ep);
}

static const struct vfs_file_ops epoll_ops = {
    .read = epoll_rw,
    .write = epoll_rw,
    .getattr = vfs_anon_getattr,
    .poll = epoll_poll,
    .release = epoll_release,
};

int vfs_epoll_new(int flags, struct vfs_file **out)
{
	struct epoll *ep;
	struct vfs_file *f;

	if (flags & ~EPOLL_CLOEXEC)
		return -EINVAL;
	ep = calloc(1, sizeof(*ep));
	f = calloc(1, sizeof(*f));
	if (!ep || !f) {
		free(ep);
		free(f);
		return -ENOMEM;
	}
	ep->file = f;
	f->ops = &epoll_ops;
	f->refs = 1;
	f->flags = O_RDWR;
	f->priv = ep;
	*out = f;
	return 0;
}

bool vfs_is_epoll(struct vfs_file *f)
{
	return f->ops == &epoll_ops;
}

/* --- checkpoint ---------------------------------------------------------------------------- */

/* An epoll's file record is empty: its items point at other files, so they are its
 * CK_FILE_LINKS record, in list order. Readiness is not saved: each item is armed again as
 * EPOLL_CTL_ADD arms it, so a level-triggered item reports what its target has now, and an
 * edge-triggered one whose target is ready reports one edge (possibly again). A disabled
 * EPOLLONESHOT item comes back disabled (its saved events have no poll bits). */
static int epoll_save(struct enc *e, struct vfs_file *f)
{
	(void)e, (void)f;
	return 0;
}

static int epoll_load(struct dec *d, struct vfs_file *f)
{
	struct epoll *ep = calloc(1, sizeof(*ep));

	if (!ep)
		return dec_fail(d, "out of memory");
	ep->file = f;
	f->priv = ep;
	return 0;
}

static int epoll_save_links(struct enc *e, struct vfs_file *f)
{
	struct epoll *ep = f->priv;

	enc_u64(e, (uint64_t)ep->nitems);
	for (struct vfs_epitem *it = ep->head; it; it = it->next) {
		enc_u32(e, (uint32_t)it->fd);
		enc_ref(e, CK_FILE, it->target);
		enc_u32(e, it->events);
		enc_u64(e, it->data.u64);
	}
	return 0;
}

static int epoll_load_links(struct dec *d, struct vfs_file *f)
{
	struct epoll *ep = f->priv;
	uint64_t n = dec_max(d, INT_MAX, "epoll item count");

	for (uint64_t i = 0; i < n && dec_ok(d); i++) {
		int fd = (int)dec_u32(d);
		struct vfs_file *target = dec_ref(d, CK_FILE);
		uint32_t events = dec_u32(d);
		epoll_data_t data = {.u64 = dec_u64(d)};
		int err;

		if (!dec_ok(d))
			break;
		if (fd < 0 || !target || target == f || !can_poll(target) ||
		    item_find(ep, fd, target))
			return dec_fail(d, "bad epoll item");
		if (vfs_is_epoll(target) && loop_check(ep, target->priv))
			return dec_fail(d, "epoll items nested in a loop or too deep");
		if ((err = item_add(ep, fd, target, events, data)))
			return dec_fail(d, "cannot add an epoll item (%d)", err);
	}
	return dec_ok(d) ? 0 : -EINVAL;
}

const struct vfs_file_kind vfs_epoll_kind = {
    .name = "epoll",
    .ops = &epoll_ops,
    .save = epoll_save,
    .load = epoll_load,
    .save_links = epoll_save_links,
    .load_links = epoll_load_links,
};
