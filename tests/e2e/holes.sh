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

scenarios+=(
  reopened_stdin_is_not_writable
)
