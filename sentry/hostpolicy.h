/* The Sentry's seccomp allowlist: its rows, compiled with libseccomp (sentry/hostpolicy_rules.c),
 * and the programs the build compiled from them, which sentry/hostpolicy.c installs. */
#ifndef SENTRY_HOSTPOLICY_H
#define SENTRY_HOSTPOLICY_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>

#include "sentry/confine.h"

/* Compiles the allowlist for mode DEBUG (not CONFINE_DEBUG_NONE), with the rows of --network
 * host and of a sanitizer build when asked, and writes its BPF program to descriptor FD. 0 or a
 * negative errno. The build runs this (scripts/gen-seccomp.c); a start does not. */
int hostpolicy_compile(enum confine_debug debug, bool host_network, bool sanitizer, int fd);

/* The program the build compiled for that mode, for this build (a sanitizer build's has the
 * sanitizer's rows), and its length in instructions; NULL for CONFINE_DEBUG_NONE. */
const struct sock_filter *hostpolicy_program(enum confine_debug debug, bool host_network,
					     size_t *len);

#endif
