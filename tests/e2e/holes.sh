# Regression scenarios for holes a security review found in the boundary between the guest
# and the host (issue 11): each one asserts that what the guest tried had no effect outside.
# Sourced by run.sh.

# A host descriptor reopened through /proc/self/fd/N gets no more access than the sandbox was
# handed: a read-only stdin cannot be reopened for writing or truncated.
reopened_stdin_is_not_writable() {
  local f="$WORK/readonly-in.txt"
  echo original >"$f"
  chmod 0444 "$f"
  { timeout -k 5 "$TIMEOUT" "$MS" run "$ROOTFS" -- /bin/sh -c '
      echo PWNED > /proc/self/fd/0 && echo LEAK1
      echo PWNED >> /dev/stdin && echo LEAK2
      cat /dev/null > /dev/fd/0 && echo LEAK3
      cat /proc/self/fd/0' <"$f" >"$WORK/out" 2>"$WORK/err"; } 2>/dev/null
  status=$?
  out=$(<"$WORK/out")
  err=$(<"$WORK/err")
  local now
  now=$(<"$f")
  rm -f "$f"
  [ "$now" = original ] || fail "the host file now holds '$now'" || return
  expect_status 0 && expect_stdout original
}

# Rename races over a bind mount (tests/conformance/t_escape_rename.c, raced in the bound
# directory and in /tmp): on the host, nothing beside the bound directory appears or changes,
# the bound directory is left as empty as it was given, and nothing in the rootfs changes.
rename_races_touch_nothing_outside_the_sandbox() {
  command -v gcc >/dev/null || { skip "host gcc not found"; return; }
  local top host="$WORK/race-host" bin="$WORK/race-bin"
  top=$(cd "$(dirname "$SELF")/../.." && pwd)
  rm -rf "$host" "$bin"
  mkdir -p "$host/vol" "$host/sibling" "$bin"
  echo outside >"$host/secret"
  gcc -static -O2 -std=gnu11 -D_GNU_SOURCE -pthread -I"$top/tests/conformance" \
    "$top/tests/conformance/t_escape_rename.c" -o "$bin/t_escape_rename" ||
    fail "cannot build t_escape_rename.c" || return
  touch -d '-2 seconds' "$WORK/race-stamp"
  touch -d '-1 minute' "$host/secret" "$host/sibling"
  ms run -v "$host/vol:/vol" -v "$bin:/xbin:ro" --env RACE_DIRS=/vol:/tmp \
    --env CONF_MODE=sandbox "$ROOTFS" -- /xbin/t_escape_rename
  expect_status 0 || return
  grep -qx 'ok t_escape_rename' <<<"$out" || fail "the race failed inside: $(tail -n 3 <<<"$out")" || return
  local names changed
  names=$(ls -A "$host" | tr '\n' ' ')
  [ "$names" = "secret sibling vol " ] || fail "beside the bound directory now: $names" || return
  [ "$(<"$host/secret")" = outside ] || fail "the file beside it changed" || return
  [ -z "$(find "$host/secret" "$host/sibling" -newer "$WORK/race-stamp")" ] ||
    fail "the files beside it were touched" || return
  [ -z "$(ls -A "$host/vol")" ] || fail "left in the bound directory: $(ls -A "$host/vol")" || return
  changed=$(find "$ROOTFS" -xdev -newer "$WORK/race-stamp" -not -path "$ROOTFS/opt/*" | head -n 3)
  [ -z "$changed" ] || fail "changed in the rootfs: $changed"
}

# A guest thread in 32-bit code (a far jump to the compatibility code segment) that the Sentry
# must drive: a copy-on-write break injects an mmap through it (tests/e2e/compat32.c). The ptrace
# platform's injections once ran the stub's gadget with the guest's 32-bit code segment and
# retried the fault forever; the seccomp platform's handler always runs in 64-bit mode. Under
# each platform.
compat_mode_thread_does_not_hang_the_sentry() {
  command -v gcc >/dev/null || { skip "host gcc not found"; return; }
  local bin="$WORK/compat-bin" TIMEOUT=10
  mkdir -p "$bin"
  gcc -static -O2 -o "$bin/compat32" "$(dirname "$SELF")/compat32.c" ||
    fail "cannot build compat32.c" || return
  # A host without IA-32 emulation may have no 32-bit code segment: the far jump faults
  # natively, and no platform can offer the mode.
  "$bin/compat32" >/dev/null 2>&1
  [ $? -eq 139 ] && { skip "this host has no 32-bit code segment (compat32 faults natively)"; return; }
  local p
  for p in $(platforms); do
    step "--platform $p"
    ms run --platform "$p" -v "$bin:/xbin:ro" "$ROOTFS" -- /xbin/compat32
    expect_status 0 && expect_stdout "done 42" || { why="--platform $p: $why"; return 1; }
  done
}

scenarios+=(
  reopened_stdin_is_not_writable
  rename_races_touch_nothing_outside_the_sandbox
  compat_mode_thread_does_not_hang_the_sentry
)
