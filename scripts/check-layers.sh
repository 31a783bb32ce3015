#!/usr/bin/env bash
# Checks the layer rules (docs/layers.md) from the #include lines of every .c and .h file in
# the subsystems: which subsystem may include which, and that no file includes a header that
# another subsystem keeps private. Prints each violation as `file:line: X may not include Y`
# and exits 1 if there is any. `make lint` (and so `make test`) runs it.
# Usage: scripts/check-layers.sh [REPO_DIR]   (default: the checkout this script is in)
set -euo pipefail

cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}"

# What each subsystem may include besides itself. The Sentry is the top and may include every
# public header; state/ is the leaf every subsystem saves its objects with; mem/ saves its
# memory objects with the codec, so it reaches state/ and nothing else.
# vdso/ is the guests' vDSO, built on its own without libc: it includes nothing of the tree,
# and the Sentry reads the clock page through its vclock.h.
declare -A may_include=(
  [sentry]="platform vfs mem fs-proc fs-sys state oci vdso"
  [fs-proc]="vfs mem state"
  [fs-sys]="vfs mem state"
  [vfs]="mem state"
  [platform]="mem state"
  [mem]="state"
  [state]=""
  [oci]=""
  [vdso]=""
)

# Each subsystem's public face: the headers other subsystems may include. Every other header
# in its folder is private to it (internal.h, the stub page's layout). fs-proc/procinfo.h is
# public on purpose: it is the contract the Sentry implements for procfs (an inverted
# dependency), so the Sentry includes it. The Sentry has no public face: nothing below it may
# include it.
declare -A public=(
  [sentry]=""
  [platform]="platform.h"
  [vfs]="vfs.h waitq.h save.h kernfs.h synth.h dirent.h inotify.h pty.h"
  [mem]="memfile.h"
  [fs-proc]="procfs.h procinfo.h"
  [fs-sys]="sysfs.h"
  [state]="codec.h image.h compress.h mac.h"
  [oci]="json.h spec.h seccomp.h"
  [vdso]="vclock.h"
)

subsystems=(sentry platform vfs mem fs-proc fs-sys state oci vdso)
is_subsystem() {
  local s
  for s in "${subsystems[@]}"; do [ "$s" = "$1" ] && return 0; done
  return 1
}
in_list() { # WORD LIST...
  local w=$1 x
  shift
  for x in "$@"; do [ "$x" = "$w" ] && return 0; done
  return 1
}

violations=0 files=0

# A subsystem the Makefile builds but these rules do not know would go unchecked.
read -ra built < <(sed -n 's/^SUBSYSTEMS[[:space:]]*:=//p' Makefile)
for s in "${built[@]}"; do
  if ! is_subsystem "$s"; then
    echo "Makefile: subsystem $s/ has no layer rules in scripts/check-layers.sh"
    violations=$((violations + 1))
  fi
done
report() { # FILE LINE FROM INCLUDED WHY
  echo "$1:$2: $3/ may not include $4 ($5)"
  violations=$((violations + 1))
}

# One awk over every file: FILE:LINE:TARGET for each #include (a fork per file would take
# seconds on a slow VM).
mapfile -d '' -t sources < <(find "${subsystems[@]}" -type f \( -name '*.c' -o -name '*.h' \) -print0 | sort -z)
files=${#sources[@]}
while IFS=: read -r file line target; do
  from=${file%%/*}
  # A name without a folder, or one starting with ./ or ../, is relative to the including
  # file's folder when it is there (a generated header such as syscall_names.h is not, and
  # belongs to no layer).
  if [[ $target != */* || $target == ./* || $target == ../* ]]; then
    [ -e "${file%/*}/$target" ] || continue
    if [[ $target == */* ]]; then
      target=$(realpath -m --relative-to=. "${file%/*}/$target")
    else
      target=${file%/*}/$target
    fi
  fi
  to=${target%%/*}
  is_subsystem "$to" || continue
  [ "$to" = "$from" ] && continue
  # shellcheck disable=SC2086
  if ! in_list "$to" ${may_include[$from]}; then
    report "$file" "$line" "$from" "$target" "$from/ does not depend on $to/"
  elif ! in_list "${target#*/}" ${public[$to]}; then
    report "$file" "$line" "$from" "$target" "private to $to/"
  fi
done < <(awk 'match($0, /^[ \t]*#[ \t]*include[ \t]*["<][^">]*[">]/) {
                s = substr($0, RSTART, RLENGTH); sub(/^[^"<]*["<]/, "", s); sub(/[">]$/, "", s)
                print FILENAME ":" FNR ":" s }' "${sources[@]}")

# common/ holds plain constants every subsystem may include (it is no subsystem, so the loop
# above lets its includes pass); it must therefore include no project header itself.
while IFS=: read -r file line target; do
  report "$file" "$line" common "$target" "common/ includes only system headers"
done < <(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' common/*.h 2>/dev/null |
         sed 's/^\([^:]*\):\([0-9]*\):.*"\([^"]*\)".*/\1:\2:\3/')

if [ "$violations" -gt 0 ]; then
  echo "layers: $violations violation(s) in $files files (rules: scripts/check-layers.sh, docs/layers.md)" >&2
  exit 1
fi
echo "layers: $files files, every include within the layer rules"
