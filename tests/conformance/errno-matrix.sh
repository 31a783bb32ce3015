#!/usr/bin/env bash
# The errno matrix: tests/conformance/errno_matrix.c run natively (chroot into ROOTFS, its
# scratch directory on a fresh tmpfs as the sandbox's /tmp is) and under `minisentry run`,
# line by line compared. Prints every (syscall, case) pair whose result differs and one
# closing line: `errno matrix: N pairs, M match`. Exits non-zero when a pair differs that is
# not listed in tests/conformance/errno-matrix.known (known differences, with the reason).
#   errno-matrix.sh MINISENTRY ROOTFS
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ms=$(realpath "$1")
rootfs=$(realpath "$2")
work=$(mktemp -d /tmp/errno-matrix.XXXXXX)
trap 'umount "$rootfs/tmp/errno-native" 2>/dev/null; rmdir "$rootfs/tmp/errno-native" 2>/dev/null; rm -rf "$work"' EXIT

mkdir -p "$rootfs/opt/conformance"
# Built when the source or this script is newer than the binary (make-like).
bin=$rootfs/opt/conformance/errno_matrix
if ! [ "$bin" -nt "$here/errno_matrix.c" ] || ! [ "$bin" -nt "$here/errno-matrix.sh" ]; then
  gcc -static -O2 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -o "$bin.tmp" \
    "$here/errno_matrix.c" && mv -f "$bin.tmp" "$bin" ||
    { rm -f "$bin" "$bin.tmp"; echo "errno matrix: build failed"; exit 1; }
fi

if [ "$(id -u)" -eq 0 ]; then
  mkdir -p "$rootfs/tmp/errno-native"
  timeout 60 unshare -m sh -c "mount -t tmpfs none '$rootfs/tmp/errno-native' &&
    chroot '$rootfs' /opt/conformance/errno_matrix /tmp/errno-native" >"$work/native" 2>&1
else
  echo "errno matrix: SKIP (natively needs root for chroot and a tmpfs)"
  exit 0
fi
timeout 60 "$ms" run "$rootfs" -- /bin/sh -c \
  'mkdir -p /tmp/errno-sandbox && exec /opt/conformance/errno_matrix /tmp/errno-sandbox' \
  >"$work/sandbox" 2>"$work/sandbox.err"

# Pairs are keyed by their first two fields; devnull rows exist only where /dev/null does. One
# awk compares them all (one process per pair took most of a minute on a loaded VM): a pair
# that differs is known when a line of errno-matrix.known holds "CALL KIND " (its note the
# text after '#').
awk -v known="$here/errno-matrix.known" '
  BEGIN { while ((getline line <known) > 0) kn[++nk] = line }
  FILENAME == ARGV[1] { k = $1 SUBSEP $2; if (!(k in got)) got[k] = $3; next }
  {
    call = $1; kind = $2; want = $0
    sub(/^[ \t]*[^ \t]*[ \t]*[^ \t]*[ \t]*/, "", want); sub(/[ \t]+$/, "", want)
    total++
    k = call SUBSEP kind; g = (k in got) ? got[k] : ""
    if (g == want) { match_++; next }
    note = ""
    for (i = 1; i <= nk; i++) if (index(kn[i], call " " kind " ")) { note = kn[i]; break }
    if (index(note, "#")) note = substr(note, index(note, "#") + 1)
    if (note != "") {
      print "differs (known): " call " " kind ": Linux " want ", sandbox " (g == "" ? "nothing" : g) " --" note
    } else {
      print "DIFFERS: " call " " kind ": Linux " want ", sandbox " (g == "" ? "nothing" : g)
      unknown++
    }
  }
  END {
    printf "errno matrix: %d pairs, %d match (%d unexplained)\n", total, match_, unknown
    exit (unknown > 0)
  }' "$work/sandbox" "$work/native"
