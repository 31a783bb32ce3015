#!/usr/bin/env bash
# Checks a built vDSO (the Makefile runs it on vdso/vdso.so): what glibc and musl assume of the
# object they find at AT_SYSINFO_EHDR, and what minisentry's mapping of it needs. The image is
# mapped as its bytes, one page of them read-and-execute, so it must have exactly one PT_LOAD,
# from file offset 0 at address 0, that is not writable; no relocations (glibc applies none to
# the vDSO); no writable section; and each function under the version LINUX_2.6.
# Usage: scripts/check-vdso.sh VDSO.so
set -euo pipefail

so=$1
fail() {
  echo "check-vdso: $so: $*" >&2
  exit 1
}

loads=$(readelf -lW "$so" | awk '$1 == "LOAD"')
[ "$(printf '%s\n' "$loads" | grep -c .)" = 1 ] || fail "not exactly one PT_LOAD"
read -r _ off vaddr _ _ _ flags _ <<<"$(printf '%s\n' "$loads" | sed 's/ R E / R_E /')"
[ "$((off))" = 0 ] && [ "$((vaddr))" = 0 ] || fail "its PT_LOAD is not at offset and address 0"
[ "$flags" = R_E ] || fail "its PT_LOAD is not read-and-execute only ($flags)"
readelf -rW "$so" | grep -q 'There are no relocations' || fail "it has relocations"
readelf -SW "$so" | awk '$2 ~ /^\.(data|bss|got)/ { bad = 1 } END { exit bad }' ||
  fail "it has a writable section"
syms=$(readelf --dyn-syms -W "$so")
for f in clock_gettime gettimeofday time clock_getres getcpu; do
  for name in "$f" "__vdso_$f"; do
    printf '%s\n' "$syms" | grep -Eq "FUNC .* $name@@LINUX_2\.6\$" || fail "$name@@LINUX_2.6 missing"
  done
done
size=$(stat -c %s "$so")
[ "$size" -le 61440 ] || fail "larger than the pages minisentry keeps for it"
