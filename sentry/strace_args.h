/* The argument decoders of --strace (strace_args.c), for strace.c, which makes the lines. */
#ifndef SENTRY_STRACE_ARGS_H
#define SENTRY_STRACE_ARGS_H

#include <stdbool.h>
#include <stdio.h>

struct task;

#define STRACE_STR 32  /* characters of a string shown, as strace's -s default */
#define STRACE_ARGV 32 /* elements of an argv shown */

/* Which part of NAME(ARGS) to print: on ENTRY the name and the arguments the call reads (each
 * followed by ", " when more follow); on EXIT those it writes, then the ")". */
enum strace_part { STRACE_ENTRY = 1, STRACE_EXIT = 2, STRACE_WHOLE = 3 };

/* PART of T's current syscall, RET its result (what it wrote is shown only if it succeeded). */
void strace_print_call(FILE *out, struct task *t, long ret, enum strace_part part);

/* LEN bytes of BUF quoted as strace does; HEX: every byte as \xNN. */
void strace_quote(FILE *out, const unsigned char *buf, int len, bool hex);
/* SIG's name as strace has it (SIGRTMIN, SIGRT_N) into BUF; returns BUF. */
const char *strace_signal_name(long sig, char *buf, size_t size);
void strace_print_signal(FILE *out, long sig);
void strace_print_open_flags(FILE *out, unsigned long f);
/* poll's N fds at ADDR: the events asked for, or (REVENTS) those found, of the fds with some. */
void strace_print_pollfds(FILE *out, struct task *t, unsigned long addr, unsigned long n,
			  bool revents);

/* The result RET of T's call with what strace adds to it (select's "1 (in [3], left {...})");
 * false if the call has nothing to add. */
bool strace_print_detail(FILE *out, struct task *t, long ret);

#endif
