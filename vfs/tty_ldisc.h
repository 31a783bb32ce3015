/* vfs/tty_ldisc.h — the line discipline of a terminal (Linux's n_tty, man 3 termios): what
 * turns the bytes typed at a terminal into what its reader gets (input processing, canonical
 * line editing, echo, ISIG's signals) and what a program writes into what the terminal shows
 * (output processing). It is plain data with no notion of files or tasks, so a pty's two ends
 * drive it and unit tests can too. Nothing blocks here: a call that cannot proceed says so. */
#ifndef VFS_TTY_LDISC_H
#define VFS_TTY_LDISC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>

/* The kernel's struct termios (TCGETS/TCSETS), 36 bytes: no speed fields. */
#define TTY_NCCS 19
struct tty_termios {
	uint32_t c_iflag, c_oflag, c_cflag, c_lflag;
	uint8_t c_line;
	uint8_t c_cc[TTY_NCCS];
};

/* Linux's N_TTY_BUF_SIZE: the input queue; a canonical line holds one byte less. */
#define TTY_IN_SIZE 4096
/* The output queue towards the master (echoes included). */
#define TTY_OUT_SIZE 8192

struct tty_queue {
	uint8_t *buf;
	size_t cap, head, len;
};

struct tty_ldisc {
	struct tty_termios t;
	struct winsize ws;
	struct tty_queue in; /* typed and processed, for the reader */
	uint8_t *in_mark;    /* per input byte: TTY_MARK_* */
	size_t canon_len;    /* ICANON: bytes of IN in complete lines (readable) */
	struct tty_queue out;
	bool lnext;   /* IEXTEN: the next byte is taken literally (after VLNEXT) */
	bool stopped; /* IXON's VSTOP or TCOOFF: output waits */
	/* ISIG: a signal for the foreground group; the caller's to deliver. */
	void (*signal)(void *arg, int sig);
	void *arg;
};

enum { TTY_MARK_DATA, TTY_MARK_EOL, TTY_MARK_EOF };

/* A ldisc with Linux's default termios (tty_std_termios) and empty queues; -ENOMEM. */
int tty_ldisc_init(struct tty_ldisc *l);
void tty_ldisc_free(struct tty_ldisc *l);

/* Bytes typed (a master's write): processed one by one while the input queue has room.
 * Returns how many were taken (fewer than LEN when the queue filled up). */
size_t tty_ldisc_receive(struct tty_ldisc *l, const uint8_t *p, size_t len);
/* True when the input queue can take a byte now. */
bool tty_ldisc_receive_room(const struct tty_ldisc *l);

/* A reader's view of the input: how many bytes a read may take now (canonical: what
 * complete lines hold, an EOF mark counting as one), and the read itself (canonical: up to
 * the end of the first line; an EOF mark ends it without being returned). *AT_EOF is set
 * when the read met an EOF mark before any byte (the read returns 0). */
size_t tty_ldisc_readable(const struct tty_ldisc *l);
size_t tty_ldisc_read(struct tty_ldisc *l, uint8_t *p, size_t len, bool *at_eof);
/* Bytes a FIONREAD on the reader's side reports. */
size_t tty_ldisc_inq(const struct tty_ldisc *l);

/* A program's write to the terminal: output processing into the output queue. Returns the
 * bytes of P consumed, 0 when not even one fits (or output is stopped). */
size_t tty_ldisc_write(struct tty_ldisc *l, const uint8_t *p, size_t len);
/* What the terminal shows: takes up to LEN bytes of the output queue. */
size_t tty_ldisc_take_output(struct tty_ldisc *l, uint8_t *p, size_t len);

/* TCSETS*: the new termios; leaving ICANON makes the line being edited readable. */
void tty_ldisc_set_termios(struct tty_ldisc *l, const struct tty_termios *t);
/* TCFLSH: IN, OUT or both emptied. */
void tty_ldisc_flush(struct tty_ldisc *l, bool in, bool out);

/* A queue's bytes in order, for a checkpoint: copies the queue into P (its len bytes). */
void tty_queue_copy(const struct tty_queue *q, uint8_t *p);

#endif
