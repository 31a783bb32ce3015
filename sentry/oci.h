/* minisentry as an OCI runtime (runtime-spec 1.x, runc's command line): create, start, state,
 * kill, delete, run, ps and features over containers kept under a runtime root
 * (sentry/oci.c, docs/oci.md). */
#ifndef SENTRY_OCI_H
#define SENTRY_OCI_H

#include <stdbool.h>

/* True if ARGV (a whole command line, ARGV[0] the program) is for the OCI runtime: it starts
 * with one of its global flags or names one of its commands (`run` only when it has a bundle
 * rather than a ROOTFS). */
bool oci_command_line(int argc, char **argv);

/* Runs the OCI command line ARGV; an exit status. */
int oci_main(int argc, char **argv);

#endif
