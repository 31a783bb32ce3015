# The Sentry's confinement (docs/security.md), sourced by run.sh: what a compromised Sentry
# would try is refused, the Sentry and its stubs hold nothing when seen from the host, an
# ordinary user runs and checkpoints sandboxes, and signals reach the sandbox through the
# launcher as they reached the Sentry.

# proc_field PID FIELD: a field of /proc/PID/status, tabs as spaces.
proc_field() { awk -v f="$2:" '$1 == f { $1 = ""; sub(/^ /, ""); print; exit }' "/proc/$1/status" 2>/dev/null; }

# The locked Sentry attempts each of these itself (--selftest-confinement): every one must be
# refused, or stop the Sentry at once through its seccomp allowlist (SIGSYS, which the
# launcher reports). Signals are signal 0, and the marker file is only ever opened to read.
compromised_sentry_is_refused_host_paths_signals_sockets_ptrace_mounts() {
  local probe killed=0
  echo marker >"$WORK/host-marker"
  for probe in open kill inet ptrace mount unshare caps exec; do
    MINISENTRY_SELFTEST_PATH="$WORK/host-marker" ms run --selftest-confinement="$probe" "$ROOTFS"
    if [ "$status" -eq 0 ]; then
      grep -q "^selftest: $probe: refused" <<<"$out" ||
        { fail "$probe: exit 0 without a refusal: $(out_hint)"; return; }
    elif [ "$status" -eq $((128 + 31)) ]; then
      grep -q "seccomp allowlist" <<<"$err" ||
        { fail "$probe: SIGSYS without the launcher's line$(err_hint)"; return; }
      killed=$((killed + 1))
    else
      fail "$probe: exit status $status: $(out_hint)$(err_hint)"
      return
    fi
  done
  # The socket, mount, unshare and exec attempts are not in the allowlist at all.
  [ "$killed" -ge 4 ] || fail "only $killed attempts were stopped by the seccomp allowlist"
}

# With --debug-host-syscalls the allowlist names what it refuses and goes on: every attempt is
# refused in one run, and stderr names the host syscalls.
debug_host_syscalls_names_each_refused_call() {
  echo marker >"$WORK/host-marker"
  MINISENTRY_SELFTEST_PATH="$WORK/host-marker" ms run --debug-host-syscalls \
    --selftest-confinement=all "$ROOTFS"
  expect_status 0 || return
  [ "$(grep -c ': refused' <<<"$out")" -eq 8 ] || fail "not 8 refusals: $(out_hint)" || return
  local name
  for name in socket mount unshare execve; do
    grep -q "host syscall [0-9]* ($name) is not in the Sentry's seccomp allowlist" <<<"$err" ||
      fail "stderr does not name $name$(err_hint)" || return
  done
}

# Seen from the host: no capability in any set, no_new_privs, a seccomp filter, namespaces of
# its own and an empty root for the Sentry; the same for a stub, which runs as nobody when we
# are root. Under each platform.
sentry_and_stubs_hold_no_privilege_seen_from_the_host() {
  local p
  for p in $(platforms); do no_privilege_under "$p" || return; done
}

no_privilege_under() {
  local platform=$1 pid sentry factory stub ns f p
  step "--platform $platform"
  # The guest outlives the checks (killed after them): on a loaded host they took over 5 s.
  "$MS" run --platform "$platform" "$ROOTFS" -- /bin/sh -c 'echo ready; sleep 60' </dev/null >"$WORK/priv.out" 2>&1 &
  pid=$!
  for _ in $(seq 400); do grep -q ready "$WORK/priv.out" && break; sleep 0.05; done
  sentry=$(sentry_of "$pid")
  factory=$(factory_of "$sentry")
  stub=$(stub_of "$sentry")
  local bad=""
  if [ -z "$stub" ] || [ -z "$factory" ] || [ "$sentry" = "$pid" ]; then
    bad="no Sentry child of the launcher, or no stub factory or stub (launcher $pid, Sentry $sentry, factory $factory)"
  fi
  # The stub factory holds what every stub inherits; a stub is traced by the Sentry from birth
  # (the seccomp platform lets it go once set up: then nothing traces it).
  local tracer=$sentry
  [ "$platform" = seccomp ] && tracer=0
  if [ -z "$bad" ] && [ "$(proc_field "$stub" TracerPid)" != "$tracer" ]; then
    bad="the stub is traced by '$(proc_field "$stub" TracerPid)', not $tracer"
  fi
  for p in $sentry $factory $stub; do
    [ -n "$bad" ] && break
    for f in CapInh CapPrm CapEff CapBnd CapAmb; do
      [ "$(proc_field "$p" "$f")" = 0000000000000000 ] || bad="$p: $f $(proc_field "$p" "$f")"
    done
    [ "$(proc_field "$p" NoNewPrivs)" = 1 ] || bad="$p: NoNewPrivs $(proc_field "$p" NoNewPrivs)"
    [ "$(proc_field "$p" Seccomp)" = 2 ] || bad="$p: Seccomp $(proc_field "$p" Seccomp)"
    for ns in user pid mnt net ipc uts cgroup; do
      [ "$(readlink "/proc/$p/ns/$ns")" != "$(readlink "/proc/self/ns/$ns")" ] ||
        bad="$p: in the host's $ns namespace"
    done
  done
  if [ -z "$bad" ] && [ "$(id -u)" -eq 0 ]; then
    [ "$(proc_field "$stub" Uid | awk '{ print $1 }')" != 0 ] || bad="the stub runs as root"
    [ "$(ls -A "/proc/$sentry/root")" = proc ] ||
      bad="the Sentry's root holds $(ls -A "/proc/$sentry/root" | tr '\n' ' ')"
    # Their working directories too: the empty root, not a host directory kept from the caller.
    for p in $sentry $factory $stub; do
      [ "$(ls -A "/proc/$p/cwd")" = proc ] ||
        bad="$p: its working directory holds $(ls -A "/proc/$p/cwd" | head -5 | tr '\n' ' ')"
    done
  fi
  kill "$pid"
  wait_bounded "$pid"
  [ -z "$bad" ] || fail "--platform $platform: $bad"
}

# An ordinary user runs a sandbox (unprivileged user namespaces) and checkpoints and restores
# it; its stubs run as that user.
ordinary_user_runs_checkpoints_and_restores() {
  [ "$(id -u)" -eq 0 ] || { skip "needs root to become another user"; return; }
  command -v setpriv >/dev/null || { skip "setpriv not installed"; return; }
  local uid=4242 dir id="e2e-$$-user" p
  as_user() { setpriv --reuid=$uid --regid=$uid --clear-groups env -u XDG_RUNTIME_DIR "$@"; }
  dir=$(mktemp -d /tmp/minisentry-e2e-user.XXXXXX)
  chmod 755 "$dir"
  chown $uid:$uid "$dir"
  as_user timeout -k 5 "$TIMEOUT" "$MS" run "$ROOTFS" -- /bin/sh -c \
    'echo hi | tr a-z A-Z; head -1 /etc/passwd' </dev/null >"$dir/out" 2>"$dir/err"
  status=$?
  out=$(<"$dir/out") err=$(<"$dir/err")
  expect_status 0 && expect_stdout "HI
$(head -1 "$ROOTFS/etc/passwd")" || { rm -rf "$dir"; return 1; }
  as_user timeout -k 5 "$TIMEOUT" "$MS" run --id "$id" "$ROOTFS" -- /bin/sh -c \
    'i=0; while [ $i -lt 40 ]; do echo $i; i=$((i+1)); sleep 0.1; done' \
    </dev/null >"$dir/run.out" 2>"$dir/run.err" &
  p=$!
  for _ in $(seq 100); do grep -q '^3$' "$dir/run.out" && break; sleep 0.05; done
  local stub
  stub=$(stub_of "$(sentry_of "$p")")
  [ "$(proc_field "$stub" Uid | awk '{ print $1 }')" = $uid ] ||
    { kill "$p"; rm -rf "$dir"; fail "the stub runs as uid $(proc_field "$stub" Uid)"; return; }
  if ! as_user timeout -k 5 "$TIMEOUT" "$MS" checkpoint --image "$dir/img" "$id" \
    >"$dir/ck.out" 2>"$dir/ck.err"; then
    kill "$p"
    fail "checkpoint as uid $uid: $(head -1 "$dir/ck.err")"
    rm -rf "$dir" "/tmp/minisentry-$uid"
    return
  fi
  wait_bounded "$p"
  as_user timeout -k 5 "$TIMEOUT" "$MS" restore --image "$dir/img" </dev/null >"$dir/rs.out" \
    2>"$dir/rs.err"
  status=$?
  out=$(tail -1 "$dir/rs.out") err=$(<"$dir/rs.err")
  rm -rf "$dir" "/tmp/minisentry-$uid"
  expect_status 0 && expect_stdout 39
}

# Root of a user namespace that is not the host's (as in a container: `unshare -r`) runs a
# sandbox too, as an ordinary user would.
root_of_a_user_namespace_runs_a_sandbox() {
  command -v unshare >/dev/null || { skip "unshare not installed"; return; }
  unshare -Ur true 2>/dev/null || { skip "no user namespaces"; return; }
  [ -f "$WORK/in" ] || : >"$WORK/in"
  { timeout -k 5 "$TIMEOUT" unshare -Ur "$MS" run "$ROOTFS" -- /bin/sh -c 'echo hi | tr a-z A-Z' \
    <"$WORK/in" >"$WORK/out" 2>"$WORK/err"; } 2>/dev/null
  status=$?
  out=$(<"$WORK/out") err=$(<"$WORK/err")
  expect_status 0 && expect_stdout HI
}

# minisentry is still one process to whoever started it: a signal the Sentry handles reaches
# it (SIGTERM ends the sandbox with 128+15), one it does not kills the command as it used to.
signals_reach_the_sentry_through_the_launcher() {
  local pid sig
  for sig in TERM USR1; do
    "$MS" run "$ROOTFS" -- /bin/sh -c 'echo ready; sleep 30' </dev/null >"$WORK/sig.out" 2>&1 &
    pid=$!
    for _ in $(seq 100); do grep -q ready "$WORK/sig.out" && break; sleep 0.05; done
    kill -"$sig" "$pid"
    wait_bounded "$pid"
    local want=$((128 + $(kill -l "$sig")))
    [ "$status" -eq "$want" ] || { fail "SIG$sig: exit status $status, want $want"; return; }
  done
}

scenarios+=(
  compromised_sentry_is_refused_host_paths_signals_sockets_ptrace_mounts
  debug_host_syscalls_names_each_refused_call
  sentry_and_stubs_hold_no_privilege_seen_from_the_host
  ordinary_user_runs_checkpoints_and_restores
  root_of_a_user_namespace_runs_a_sandbox
  signals_reach_the_sentry_through_the_launcher
)
