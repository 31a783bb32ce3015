#!/usr/bin/env bash
# Container start-to-exit time of /bin/true under podman with each OCI runtime there is — runc,
# crun and minisentry — from `podman run --rm` to its exit, medians of BENCH_ENGINE_RUNS (10)
# runs after one warm-up, on a private copy of the rootfs (podman writes into a --rootfs tree).
# Prints a table; skips (exit 0) with a line when podman cannot run here. A peer runtime that
# is installed but cannot run on this host gets a row saying so, with its error.
# On a host with hybrid cgroups (v1 hierarchies plus a cgroup2 one at /sys/fs/cgroup/unified
# that holds a controller), crun refuses to run. Every runtime then runs in a private mount
# namespace where that cgroup2 mount is hidden: the host's cgroups are unchanged, and the
# three runtimes see the same pure v1 layout.
# Usage: bench/engines.sh MINISENTRY ROOTFS
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: bench/engines.sh MINISENTRY ROOTFS" >&2
  exit 2
fi
MS=$(realpath -m "$1")
ROOTFS=$(realpath -m "$2")
RUNS=${BENCH_ENGINE_RUNS:-10}

if ! command -v podman >/dev/null || ! timeout 60 podman info >/dev/null 2>&1; then
  echo "engines: SKIP: podman is not installed or cannot run here"
  exit 0
fi
WORK=$(mktemp -d /tmp/minisentry-bench-engines.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp -a "$ROOTFS" "$WORK/rootfs"
# Limits any caller may set (runc and crun fail on podman's default NOFILE without
# CAP_SYS_RESOURCE); the same for every runtime.
limits=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
wrap=()
if grep -qs . /sys/fs/cgroup/unified/cgroup.controllers && [ "$(id -u)" = 0 ] &&
  unshare -m --propagation private umount /sys/fs/cgroup/unified 2>/dev/null; then
  wrap=(unshare -m --propagation private sh -c 'umount /sys/fs/cgroup/unified && exec "$@"' sh)
  echo "engines: hybrid cgroups here: every runtime runs with /sys/fs/cgroup/unified hidden"
fi

median() {
  sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) exit 1
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# one RUNTIME: the wall time of one run in ms, or nothing if it failed.
one() {
  local t0 t1
  t0=$(date +%s%N)
  "${wrap[@]}" timeout 60 podman --runtime "$1" run --rm "${limits[@]}" --rootfs "$WORK/rootfs" /bin/true \
    >/dev/null 2>"$WORK/err" || return 1
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000)) | awk '{ printf "%.1f\n", $1 / 1000 }'
}

printf '%-12s %14s\n' "runtime" "podman run --rm /bin/true (median ms)"
bad=0
for rt in runc crun minisentry; do
  path=$([ "$rt" = minisentry ] && echo "$MS" || command -v "$rt")
  if [ -z "$path" ]; then
    printf '%-12s %14s\n' "$rt" "not installed"
    continue
  fi
  if ! one "$path" >/dev/null; then
    if [ "$rt" = minisentry ]; then
      printf '%-12s %14s\n' "$rt" "fails: $(head -c 60 "$WORK/err" | tr '\n' ' ')"
      bad=1
    else
      # A peer that cannot run on this host (crun with hybrid cgroups): its own reason,
      # without podman's prefix ("Error: OCI runtime error: /usr/bin/crun: ").
      printf '%-12s %s\n' "$rt" "$rt: not runnable here ($(head -n1 "$WORK/err" |
        sed -e 's/^Error: //' -e 's/^OCI runtime error: //' -e "s|^$path: ||" | cut -c1-100))"
    fi
    continue
  fi
  times=()
  for ((i = 0; i < RUNS; i++)); do
    t=$(one "$path") && times+=("$t")
  done
  printf '%-12s %14s\n' "$rt" "$(printf '%s\n' "${times[@]}" | median)"
done
exit $bad
