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
gcc -static -O2 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -o "$rootfs/opt/conformance/errno_matrix" \
  "$here/errno_matrix.c" || { echo "errno matrix: build failed"; exit 1; }

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

# Pairs are keyed by their first two fields; devnull rows exist only where /dev/null does.
total=0 match=0 unknown=0
known=$here/errno-matrix.known
while read -r call kind want; do
  total=$((total + 1))
  got=$(awk -v c="$call" -v k="$kind" '$1 == c && $2 == k { print $3; exit }' "$work/sandbox")
  if [ "$got" = "$want" ]; then
    match=$((match + 1))
  else
    note=$(grep -F -- "$call $kind " "$known" 2>/dev/null | head -1 | cut -d'#' -f2-)
    if [ -n "$note" ]; then
      echo "differs (known): $call $kind: Linux $want, sandbox ${got:-nothing} --$note"
    else
      echo "DIFFERS: $call $kind: Linux $want, sandbox ${got:-nothing}"
      unknown=$((unknown + 1))
    fi
  fi
done <"$work/native"
echo "errno matrix: $total pairs, $match match ($unknown unexplained)"
[ "$unknown" -eq 0 ]
