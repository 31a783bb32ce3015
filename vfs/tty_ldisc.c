/* The terminal line discipline (vfs/tty_ldisc.h), after Linux's n_tty: input processing
 * (ISTRIP, IGNCR, ICRNL, INLCR, IXON), ISIG's characters, canonical editing (ERASE, WERASE,
 * KILL, EOF, EOL, LNEXT) with its echoes, and output processing (OPOST, ONLCR, OCRNL). Echoes
 * go through output processing into the output queue, as Linux's do; an echo that does not fit
 * is dropped rather than holding up input. */
#include "vfs/tty_ldisc.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>

static int queue_init(struct tty_queue *q, size_t cap)
{
	q->buf = malloc(cap);
	q->cap = cap;
	q->head = q->len = 0;
	return q->buf ? 0 : -ENOMEM;
}

static size_t qpos(const struct tty_queue *q, size_t i)
{
	return (q->head + i) % q->cap;
}

static void queue_push(struct tty_queue *q, uint8_t c)
{
	q->buf[qpos(q, q->len)] = c;
	q->len++;
}

void tty_queue_copy(const struct tty_queue *q, uint8_t *p)
{
	for (size_t i = 0; i < q->len; i++)
		p[i] = q->buf[qpos(q, i)];
}

/* Linux's tty_std_termios, with INIT_C_CC's characters. */
static const struct tty_termios std_termios = {
    .c_iflag = ICRNL | IXON,
    .c_oflag = OPOST | ONLCR,
    .c_cflag = B38400 | CS8 | CREAD | HUPCL,
    .c_lflag = ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN,
    .c_cc = {[VINTR] = 003,
	     [VQUIT] = 034,
	     [VERASE] = 0177,
	     [VKILL] = 025,
	     [VEOF] = 004,
	     [VTIME] = 0,
	     [VMIN] = 1,
	     [VSWTC] = 0,
	     [VSTART] = 021,
	     [VSTOP] = 023,
	     [VSUSP] = 032,
	     [VEOL] = 0,
	     [VREPRINT] = 022,
	     [VDISCARD] = 017,
	     [VWERASE] = 027,
	     [VLNEXT] = 026,
	     [VEOL2] = 0},
};

int tty_ldisc_init(struct tty_ldisc *l)
{
	memset(l, 0, sizeof(*l));
	l->t = std_termios;
	if (queue_init(&l->in, TTY_IN_SIZE) || queue_init(&l->out, TTY_OUT_SIZE) ||
	    !(l->in_mark = calloc(1, TTY_IN_SIZE))) {
		tty_ldisc_free(l);
		return -ENOMEM;
	}
	return 0;
}

void tty_ldisc_free(struct tty_ldisc *l)
{
	free(l->in.buf);
	free(l->out.buf);
	free(l->in_mark);
	l->in.buf = l->out.buf = l->in_mark = NULL;
}

#define L(l, f) ((l)->t.c_lflag & (f))
#define I(l, f) ((l)->t.c_iflag & (f))
#define O(l, f) ((l)->t.c_oflag & (f))
#define CC(l, v) ((l)->t.c_cc[v])

/* A character matches control character V unless V is disabled (_POSIX_VDISABLE, 0). */
static bool is_cc(const struct tty_ldisc *l, uint8_t c, int v)
{
	return CC(l, v) != 0 && c == CC(l, v);
}

/* --- output ----------------------------------------------------------------------------------- */

static size_t out_room(const struct tty_ldisc *l)
{
	return l->out.cap - l->out.len;
}

/* One byte through output processing; false (nothing written) if its expansion does not fit. */
static bool output_char(struct tty_ldisc *l, uint8_t c)
{
	if (O(l, OPOST)) {
		if (c == '\n' && O(l, ONLCR)) {
			if (out_room(l) < 2)
				return false;
			queue_push(&l->out, '\r');
			queue_push(&l->out, '\n');
			return true;
		}
		if (c == '\r' && O(l, OCRNL))
			c = '\n';
	}
	if (out_room(l) < 1)
		return false;
	queue_push(&l->out, c);
	return true;
}

size_t tty_ldisc_write(struct tty_ldisc *l, const uint8_t *p, size_t len)
{
	size_t n = 0;

	if (l->stopped)
		return 0;
	while (n < len && output_char(l, p[n]))
		n++;
	return n;
}

size_t tty_ldisc_take_output(struct tty_ldisc *l, uint8_t *p, size_t len)
{
	size_t n = 0;

	while (n < len && l->out.len) {
		p[n++] = l->out.buf[l->out.head];
		l->out.head = (l->out.head + 1) % l->out.cap;
		l->out.len--;
	}
	if (!l->out.len)
		l->out.head = 0;
	return n;
}

/* --- echo ------------------------------------------------------------------------------------- */

/* ECHOCTL shows a control character other than tab and newline as ^X (DEL as ^?). */
static bool echoed_as_ctl(const struct tty_ldisc *l, uint8_t c)
{
	return L(l, ECHOCTL) && iscntrl(c) && c != '\t' && c != '\n';
}

static void echo_char(struct tty_ldisc *l, uint8_t c)
{
	if (echoed_as_ctl(l, c)) {
		if (out_room(l) >= 2) {
			output_char(l, '^');
			output_char(l, c ^ 0100);
		}
		return;
	}
	output_char(l, c);
}

static void echo_str(struct tty_ldisc *l, const char *s)
{
	while (*s)
		output_char(l, (uint8_t)*s++);
}

/* --- input ------------------------------------------------------------------------------------ */

static uint8_t in_at(const struct tty_ldisc *l, size_t i)
{
	return l->in.buf[qpos(&l->in, i)];
}

static void in_push(struct tty_ldisc *l, uint8_t c, uint8_t mark)
{
	l->in_mark[qpos(&l->in, l->in.len)] = mark;
	queue_push(&l->in, c);
	if (mark != TTY_MARK_DATA || !L(l, ICANON))
		l->canon_len = l->in.len;
}

/* Takes back the last byte of the line being edited, echoing its erasure. */
static void erase_one(struct tty_ldisc *l)
{
	uint8_t c = in_at(l, l->in.len - 1);

	l->in.len--;
	if (!L(l, ECHO))
		return;
	if (L(l, ECHOE)) {
		int cols = echoed_as_ctl(l, c) ? 2 : 1;
		while (cols--)
			echo_str(l, "\b \b");
	} else {
		echo_char(l, CC(l, VERASE));
	}
}

static bool is_blank(uint8_t c)
{
	return c == ' ' || c == '\t';
}

static void canon_erase(struct tty_ldisc *l, int v)
{
	bool any = l->in.len > l->canon_len;

	if (v == VKILL && L(l, ECHO) && !(L(l, ECHOK) && L(l, ECHOKE) && L(l, ECHOE))) {
		/* Linux's plain kill: the line goes, the KILL character shows, then a newline. */
		l->in.len = l->canon_len;
		echo_char(l, CC(l, VKILL));
		if (L(l, ECHOK))
			output_char(l, '\n');
		return;
	}
	if (v == VERASE && any) {
		erase_one(l);
		return;
	}
	if (v == VWERASE) {
		while (l->in.len > l->canon_len && is_blank(in_at(l, l->in.len - 1)))
			erase_one(l);
		while (l->in.len > l->canon_len && !is_blank(in_at(l, l->in.len - 1)))
			erase_one(l);
		return;
	}
	if (v == VKILL)
		while (l->in.len > l->canon_len)
			erase_one(l);
}

bool tty_ldisc_receive_room(const struct tty_ldisc *l)
{
	return l->in.len < l->in.cap;
}

/* A line that fills the queue takes only its end (Linux keeps the last byte for it). */
static bool room_for(const struct tty_ldisc *l, uint8_t mark)
{
	if (!L(l, ICANON) || mark != TTY_MARK_DATA)
		return l->in.len < l->in.cap;
	return l->in.len < l->in.cap - 1;
}

/* One byte typed. False if the queue has no room for it (it is not taken). */
static bool receive_char(struct tty_ldisc *l, uint8_t c)
{
	if (!tty_ldisc_receive_room(l))
		return false;
	if (l->lnext) {
		l->lnext = false;
		if (room_for(l, TTY_MARK_DATA)) {
			in_push(l, c, TTY_MARK_DATA);
			if (L(l, ECHO))
				echo_char(l, c);
		}
		return true;
	}
	if (I(l, ISTRIP))
		c &= 0x7f;
	if (I(l, IXON)) {
		if (is_cc(l, c, VSTART)) {
			l->stopped = false;
			return true;
		}
		if (is_cc(l, c, VSTOP)) {
			l->stopped = true;
			return true;
		}
	}
	if (L(l, ISIG)) {
		int sig = is_cc(l, c, VINTR)   ? SIGINT
			  : is_cc(l, c, VQUIT) ? SIGQUIT
			  : is_cc(l, c, VSUSP) ? SIGTSTP
					       : 0;
		if (sig) {
			if (!L(l, NOFLSH))
				tty_ldisc_flush(l, true, true);
			if (l->signal)
				l->signal(l->arg, sig);
			if (L(l, ECHO))
				echo_char(l, c);
			return true;
		}
	}
	if (c == '\r') {
		if (I(l, IGNCR))
			return true;
		if (I(l, ICRNL))
			c = '\n';
	} else if (c == '\n' && I(l, INLCR)) {
		c = '\r';
	}
	if (L(l, ICANON)) {
		if (is_cc(l, c, VERASE) || is_cc(l, c, VKILL) ||
		    (is_cc(l, c, VWERASE) && L(l, IEXTEN))) {
			canon_erase(l, is_cc(l, c, VERASE)  ? VERASE
				       : is_cc(l, c, VKILL) ? VKILL
							    : VWERASE);
			return true;
		}
		if (is_cc(l, c, VLNEXT) && L(l, IEXTEN)) {
			l->lnext = true;
			if (L(l, ECHO) && L(l, ECHOCTL))
				echo_str(l, "^\b");
			return true;
		}
		if (is_cc(l, c, VREPRINT) && L(l, ECHO) && L(l, IEXTEN)) {
			echo_char(l, c);
			output_char(l, '\n');
			for (size_t i = l->canon_len; i < l->in.len; i++)
				echo_char(l, in_at(l, i));
			return true;
		}
		if (c == '\n' || is_cc(l, c, VEOL) || is_cc(l, c, VEOL2)) {
			if (L(l, ECHO) || (c == '\n' && L(l, ECHONL)))
				echo_char(l, c);
			in_push(l, c, TTY_MARK_EOL);
			return true;
		}
		if (is_cc(l, c, VEOF)) {
			in_push(l, c, TTY_MARK_EOF);
			return true;
		}
	}
	if (!room_for(l, TTY_MARK_DATA))
		return true; /* a full line: the byte is dropped */
	if (L(l, ECHO))
		echo_char(l, c);
	in_push(l, c, TTY_MARK_DATA);
	return true;
}

size_t tty_ldisc_receive(struct tty_ldisc *l, const uint8_t *p, size_t len)
{
	size_t n = 0;

	while (n < len && receive_char(l, p[n]))
		n++;
	return n;
}

size_t tty_ldisc_readable(const struct tty_ldisc *l)
{
	return L(l, ICANON) ? l->canon_len : l->in.len;
}

size_t tty_ldisc_inq(const struct tty_ldisc *l)
{
	size_t n = tty_ldisc_readable(l);

	if (L(l, ICANON))
		for (size_t i = 0; i < l->canon_len; i++)
			n -= l->in_mark[qpos(&l->in, i)] == TTY_MARK_EOF;
	return n;
}

static uint8_t in_pop(struct tty_ldisc *l, uint8_t *mark)
{
	uint8_t c = l->in.buf[l->in.head];

	*mark = l->in_mark[l->in.head];
	l->in.head = (l->in.head + 1) % l->in.cap;
	l->in.len--;
	if (l->canon_len)
		l->canon_len--;
	return c;
}

size_t tty_ldisc_read(struct tty_ldisc *l, uint8_t *p, size_t len, bool *at_eof)
{
	bool canon = L(l, ICANON);
	size_t avail = tty_ldisc_readable(l), n = 0;
	uint8_t mark;

	*at_eof = false;
	while (avail && n < len) {
		uint8_t c = in_pop(l, &mark);
		avail--;
		if (mark == TTY_MARK_EOF) {
			if (canon) {
				*at_eof = n == 0;
				break;
			}
			continue;
		}
		p[n++] = c;
		if (canon && mark == TTY_MARK_EOL)
			break;
	}
	if (!l->in.len)
		l->in.head = 0;
	return n;
}

void tty_ldisc_set_termios(struct tty_ldisc *l, const struct tty_termios *t)
{
	bool was_canon = L(l, ICANON);

	l->t = *t;
	if (was_canon && !L(l, ICANON))
		l->canon_len = l->in.len;
	else if (!was_canon && L(l, ICANON) && l->in.len) {
		/* What was typed is pushed as a line of its own, as Linux's n_tty does. */
		l->in_mark[qpos(&l->in, l->in.len - 1)] = TTY_MARK_EOL;
		l->canon_len = l->in.len;
	}
	if (!I(l, IXON))
		l->stopped = false;
	l->lnext = false;
}

void tty_ldisc_flush(struct tty_ldisc *l, bool in, bool out)
{
	if (in) {
		l->in.head = l->in.len = 0;
		l->canon_len = 0;
		l->lnext = false;
	}
	if (out)
		l->out.head = l->out.len = 0;
}
