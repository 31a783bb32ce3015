# Container engines with minisentry as their OCI runtime, each scenario run the same way with
# runc too, so that what is checked is the engine's behaviour, not only ours (sourced by
# run.sh, which provides ms, fail, skip and $WORK). A scenario SKIPs, saying why, when the
# engine is not installed or cannot run here; scripts/install-deps.sh installs podman and runc.

# The limits runc sets come from the engine (podman's default RLIMIT_NOFILE is 1048576); where
# the caller may not raise its own limits that far (no CAP_SYS_RESOURCE, as in a container),
# runc fails, so both runtimes get limits any caller may set.
ENGINE_LIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

# podman_ready: SKIPs (returns 2) unless podman runs here.
podman_ready() {
  command -v podman >/dev/null || { skip "podman is not installed (scripts/install-deps.sh)"; return; }
  timeout 60 podman info >/dev/null 2>&1 || { skip "podman is installed but cannot run here ('podman info' fails)"; return; }
  podman_rootfs
}

# podman_rootfs: a private copy of the rootfs in $PODMAN_ROOTFS, made once per run: podman
# writes into a --rootfs tree (an /etc/mtab link, mountpoints such as /run/.containerenv for
# runc), which the other scenarios' tree must never get.
podman_rootfs() {
  PODMAN_ROOTFS=$WORK/podman-rootfs
  [ -d "$PODMAN_ROOTFS" ] || cp -a "$ROOTFS" "$PODMAN_ROOTFS"
}

# runtimes: minisentry, and runc where it is installed.
runtimes() {
  echo "$MS"
  command -v runc || true
}

# pm RUNTIME ARGS...: podman with RUNTIME under the time limit; $status, $out, $err as ms sets.
pm() {
  local rt=$1
  shift
  step "podman --runtime $rt $*"
  { timeout -k 5 "$TIMEOUT" podman --runtime "$rt" "$@" </dev/null >"$WORK/out" 2>"$WORK/err"; } 2>/dev/null
  status=$?
  out=$(<"$WORK/out")
  err=$(<"$WORK/err")
}

podman_run_of_a_rootfs_prints_hi() {
  podman_ready || return
  local rt
  for rt in $(runtimes); do
    pm "$rt" run --rm "${ENGINE_LIMITS[@]}" --rootfs "$PODMAN_ROOTFS" /bin/echo hi
    [ "$status" -eq 0 ] && [ "$out" = hi ] || fail "with $rt: status $status, stdout $(out_hint)$(err_hint)" || return
  done
}

# podman's default seccomp profile filters the container as under runc: the process has a
# filter, and a syscall the profile denies by a rule (swapon, errnoRet 1) fails with EPERM
# (without the filter the sandbox answers ENOSYS: it has no swap).
podman_default_seccomp_profile_as_runc_applies_it() {
  podman_ready || return
  local rt first=
  for rt in $(runtimes); do
    pm "$rt" run --rm "${ENGINE_LIMITS[@]}" --rootfs "$PODMAN_ROOTFS" /bin/sh -c \
      'grep ^Seccomp: /proc/self/status; dd if=/dev/zero of=/tmp/sw bs=4096 count=16 2>/dev/null; mkswap /tmp/sw >/dev/null; swapon /tmp/sw 2>&1; echo $?'
    [ "$status" -eq 0 ] || fail "with $rt: status $status$(err_hint)" || return
    grep -q $'^Seccomp:\t2$' <<<"$out" && grep -q "Operation not permitted" <<<"$out" ||
      fail "with $rt: $(out_hint)" || return
    [ -z "$first" ] && first=$out
    [ "$out" = "$first" ] || fail "$rt differs: $(out_hint) against '$first'" || return
  done
}

# An interactive shell on a terminal (-it: the runtime's --console-socket), driven by a
# script through script(1)'s pseudo-terminal: what it types runs, and its exit status is
# podman's.
podman_interactive_shell_in_a_terminal() {
  podman_ready || return
  command -v script >/dev/null || { skip "no script(1)"; return; }
  local rt
  for rt in $(runtimes); do
    step "podman --runtime $rt run -it"
    { sleep 2; printf 'echo in-$((6 * 7)); [ -t 0 ] && echo tty-yes; exit 4\n'; sleep 8; } |
      timeout -k 5 "$TIMEOUT" script -qec "podman --runtime $rt run -it --rm ${ENGINE_LIMITS[*]} --rootfs $PODMAN_ROOTFS /bin/sh" /dev/null >"$WORK/out" 2>&1
    status=$?
    grep -q '^in-42' "$WORK/out" && grep -q '^tty-yes' "$WORK/out" ||
      fail "with $rt: the shell's output: '$(tr -d '\r' <"$WORK/out" | tr '\n' '|' | cut -c1-300)'" || return
    [ "$status" -eq 4 ] || fail "with $rt: exit status $status, want 4" || return
  done
}

# An image made from the rootfs with `podman import` (there is no registry): run with -e and a
# bind mount (-v), whose write reaches the host.
podman_run_of_an_imported_image_with_env_and_a_bind_mount() {
  podman_ready || return
  local image=localhost/minisentry-e2e-alpine:latest rt
  if ! timeout 60 podman image exists "$image"; then
    step "podman import"
    tar -C "$ROOTFS" -c . | timeout 120 podman import - "$image" >/dev/null 2>"$WORK/err" ||
      { fail "podman import: $(head -n1 "$WORK/err")"; return; }
  fi
  for rt in $(runtimes); do
    rm -rf "$WORK/vol" && mkdir -p "$WORK/vol" && echo from-host >"$WORK/vol/in"
    pm "$rt" run --rm "${ENGINE_LIMITS[@]}" -e GREETING=hello -v "$WORK/vol:/vol" "$image" \
      /bin/sh -c 'echo $GREETING $(cat /vol/in); echo from-guest >/vol/out'
    [ "$status" -eq 0 ] && [ "$out" = "hello from-host" ] ||
      fail "with $rt: status $status, stdout $(out_hint)$(err_hint)" || return
    [ "$(cat "$WORK/vol/out" 2>/dev/null)" = from-guest ] || fail "with $rt: the write did not reach the host" || return
  done
}

# podman stop: the stop signal, then SIGKILL after -t seconds. The container is gone either
# way well within the time limit (under runc a shell as pid 1 ignores SIGTERM and is killed;
# in minisentry SIGTERM ends the sandbox at once).
podman_stop_ends_the_container() {
  podman_ready || return
  local rt id t0 t1
  for rt in $(runtimes); do
    pm "$rt" run -d "${ENGINE_LIMITS[@]}" --rootfs "$PODMAN_ROOTFS" /bin/sh -c 'echo up; sleep 100'
    [ "$status" -eq 0 ] || fail "with $rt: run -d: $status$(err_hint)" || return
    id=$out
    t0=$(date +%s)
    pm "$rt" stop -t 3 "$id"
    t1=$(date +%s)
    [ "$status" -eq 0 ] || { timeout 30 podman rm -f "$id" >/dev/null 2>&1; fail "with $rt: stop: $status$(err_hint)"; return; }
    pm "$rt" inspect --format '{{.State.Status}}' "$id"
    local state=$out
    pm "$rt" logs "$id"
    local logs=$out
    timeout 30 podman rm -f "$id" >/dev/null 2>&1
    [ "$state" = exited ] || fail "with $rt: state '$state' after stop" || return
    [ "$logs" = up ] || fail "with $rt: logs '$logs'" || return
    [ $((t1 - t0)) -le 10 ] || fail "with $rt: stop took $((t1 - t0)) s" || return
  done
}

# podman exec into a running container, with its exit status, and -it through a terminal.
podman_exec_runs_in_a_running_container() {
  podman_ready || return
  local rt id
  for rt in $(runtimes); do
    pm "$rt" run -d "${ENGINE_LIMITS[@]}" --rootfs "$PODMAN_ROOTFS" /bin/sh -c 'echo up >/tmp/up; sleep 100'
    [ "$status" -eq 0 ] || fail "with $rt: run -d: $status$(err_hint)" || return
    id=$out
    local i
    for ((i = 0; i < 50; i++)); do
      pm "$rt" exec "$id" /bin/cat /tmp/up
      [ "$out" = up ] && break
      sleep 0.1
    done
    pm "$rt" exec "$id" /bin/sh -c 'echo exec-$(cat /tmp/up); exit 3'
    local st=$status o=$out
    step "podman --runtime $rt exec -it"
    { sleep 2; printf 'echo it-$((2 * 21)); exit 0\n'; sleep 5; } |
      timeout -k 5 "$TIMEOUT" script -qec "podman --runtime $rt exec -it $id /bin/sh" /dev/null >"$WORK/it.out" 2>&1
    timeout 30 podman rm -f "$id" >/dev/null 2>&1
    [ "$st" -eq 3 ] && [ "$o" = exec-up ] || fail "with $rt: exec: status $st, stdout '$o'" || return
    grep -q '^it-42' <(tr -d '\r' <"$WORK/it.out") ||
      fail "with $rt: exec -it: '$(tr -d '\r' <"$WORK/it.out" | tr '\n' '|' | cut -c1-200)'" || return
  done
}

# The capability sets and groups a container's processes get (process.capabilities and
# additionalGids of config.json and of exec's process file) are the ones runc gives them:
# podman's default set, a root process with all dropped but one, an ordinary user with one
# added (runc raises it into the ambient set), for run and for exec.
podman_capabilities_and_groups_as_runc_gives_them() {
  podman_ready || return
  local rt id caps
  # Groups are shown only as "in 27" (the one added): which others podman adds depends on what
  # earlier runs wrote into the shared --rootfs tree's /etc/passwd and /etc/group.
  local show='grep ^Cap /proc/self/status; echo uid=$(id -u) gid=$(id -g); id -G | tr " " "\n" | grep -qx 27 && echo in 27; true'
  declare -A seen
  for rt in $(runtimes); do
    caps=""
    pm "$rt" run --rm "${ENGINE_LIMITS[@]}" --rootfs "$PODMAN_ROOTFS" /bin/sh -c "$show"
    [ "$status" -eq 0 ] || fail "with $rt: run: $status$(err_hint)" || return
    caps+="default: $out"$'\n'
    pm "$rt" run --rm --user 1000 --group-add 27 --cap-add=net_raw "${ENGINE_LIMITS[@]}" --rootfs "$PODMAN_ROOTFS" /bin/sh -c "$show"
    [ "$status" -eq 0 ] || fail "with $rt: run --user: $status$(err_hint)" || return
    caps+="user: $out"$'\n'
    pm "$rt" run -d --cap-drop=all --cap-add=chown "${ENGINE_LIMITS[@]}" --rootfs "$PODMAN_ROOTFS" /bin/sleep 100
    [ "$status" -eq 0 ] || fail "with $rt: run -d: $status$(err_hint)" || return
    id=$out
    pm "$rt" exec "$id" /bin/sh -c "$show"
    caps+="exec: $out"$'\n'
    pm "$rt" exec --user 1000 "$id" /bin/sh -c "$show"
    caps+="exec --user: $out"$'\n'
    timeout 30 podman rm -f -t 0 "$id" >/dev/null 2>&1
    grep -q $'^CapBnd:\t0000000000000001' <<<"$caps" && grep -q $'^CapAmb:\t0000000000002000' <<<"$caps" &&
      grep -q '^in 27$' <<<"$caps" ||
      fail "with $rt: $(tr '\n\t' '| ' <<<"$caps" | cut -c1-400)" || return
    seen[$rt]=$caps
  done
  local rc
  rc=$(command -v runc) || return 0
  [ "${seen[$MS]}" = "${seen[$rc]}" ] ||
    fail "minisentry and runc differ: $(diff <(echo "${seen[$MS]}") <(echo "${seen[$rc]}") | tr '\n\t' '| ' | cut -c1-400)"
}

# last_count: the last line of $out that is a number (a counter's logs), or -1.
last_count() { grep -E '^[0-9]+$' <<<"$out" | tail -n1 || true; }

# podman pause and unpause of a counter (the runtime's pause and resume): paused, the count
# stands still; unpaused, it goes on.
podman_pause_and_unpause_a_counter() {
  podman_ready || return
  local rt id a b c state
  for rt in $(runtimes); do
    pm "$rt" run -d "${ENGINE_LIMITS[@]}" --rootfs "$PODMAN_ROOTFS" /bin/sh -c 'i=0; while :; do echo $i; i=$((i+1)); sleep 0.1; done'
    [ "$status" -eq 0 ] || fail "with $rt: run -d: $status$(err_hint)" || return
    id=$out
    sleep 1
    pm "$rt" pause "$id"
    [ "$status" -eq 0 ] || { timeout 30 podman rm -f "$id" >/dev/null 2>&1; fail "with $rt: pause: $status$(err_hint)"; return; }
    pm "$rt" inspect --format '{{.State.Status}}' "$id"
    state=$out
    pm "$rt" logs "$id"
    a=$(last_count)
    sleep 1
    pm "$rt" logs "$id"
    b=$(last_count)
    pm "$rt" unpause "$id"
    local st=$status e=$err
    sleep 1
    pm "$rt" logs "$id"
    c=$(last_count)
    timeout 30 podman rm -f -t 0 "$id" >/dev/null 2>&1
    [ "$state" = paused ] || fail "with $rt: state '$state' after pause" || return
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "with $rt: counted on while paused: '$a', then '$b'" || return
    [ "$st" -eq 0 ] || fail "with $rt: unpause: $st; stderr: $(head -n1 <<<"$e")" || return
    [ -n "$c" ] && [ "$c" -gt "$b" ] || fail "with $rt: did not count on after unpause: '$b', then '$c'" || return
  done
}

# podman update --memory of a running container (the runtime's update, with the resources in
# a file): it succeeds with either runtime; in minisentry the guest's MemTotal is the new bound.
podman_update_changes_the_memory_limit() {
  podman_ready || return
  local rt id
  for rt in $(runtimes); do
    pm "$rt" run -d "${ENGINE_LIMITS[@]}" --memory 64m --rootfs "$PODMAN_ROOTFS" /bin/sleep 100
    [ "$status" -eq 0 ] || fail "with $rt: run -d: $status$(err_hint)" || return
    id=$out
    pm "$rt" update --memory 96m "$id"
    local st=$status e=$err
    pm "$rt" exec "$id" /bin/grep MemTotal: /proc/meminfo
    local mem=$out
    timeout 30 podman rm -f -t 0 "$id" >/dev/null 2>&1
    [ "$st" -eq 0 ] || fail "with $rt: update: $st; stderr: $(head -n1 <<<"$e")" || return
    if [ "$rt" = "$MS" ]; then
      grep -qE '^MemTotal: +98304 kB$' <<<"$mem" || fail "with $rt: after update: '$mem'" || return
    fi
  done
}

# podman container checkpoint / restore of a counter, in place and (exported, imported) into a
# new container: the count goes on from where the checkpoint left it. RUNTIME is the runtime.
podman_counter_checkpoint_restore() {
  local rt=$1 image=localhost/minisentry-e2e-alpine:latest id before after
  podman_ready || return
  if ! timeout 60 podman image exists "$image"; then
    tar -C "$ROOTFS" -c . | timeout 120 podman import - "$image" >/dev/null 2>"$WORK/err" ||
      { fail "podman import: $(head -n1 "$WORK/err")"; return; }
  fi
  timeout 30 podman rm -f ms-e2e-ck1 ms-e2e-ck2 >/dev/null 2>&1
  pm "$rt" run -d --name ms-e2e-ck1 "${ENGINE_LIMITS[@]}" "$image" /bin/sh -c 'i=0; while :; do echo $i; i=$((i+1)); sleep 0.1; done'
  [ "$status" -eq 0 ] || fail "run -d: $status$(err_hint)" || return
  id=$out
  sleep 1
  pm "$rt" container checkpoint "$id"
  if [ "$status" -ne 0 ]; then
    timeout 30 podman rm -f "$id" >/dev/null 2>&1
    grep -q "criu failed" <<<"$err" && { skip "$rt: CRIU cannot checkpoint here: $(grep -o 'criu failed[^"]*' <<<"$err" | head -1)"; return; }
    fail "checkpoint: $status$(err_hint)"
    return
  fi
  pm "$rt" logs "$id"
  before=$(tail -n1 <<<"$out")
  pm "$rt" container restore "$id"
  [ "$status" -eq 0 ] || { timeout 30 podman rm -f "$id" >/dev/null 2>&1; fail "restore: $status$(err_hint)"; return 1; }
  sleep 1
  pm "$rt" logs "$id"
  after=$(tail -n1 <<<"$out")
  [ "$after" -gt "$before" ] && grep -qx "$((before + 1))" <<<"$out" ||
    { timeout 30 podman rm -f "$id" >/dev/null 2>&1; fail "in place: $before, then '$(tr '\n' ' ' <<<"$out" | cut -c1-120)'"; return 1; }
  # Exported and restored as a new container (another name, another id, new files).
  pm "$rt" container checkpoint --export "$WORK/ck.tar.gz" "$id"
  [ "$status" -eq 0 ] || { timeout 30 podman rm -f "$id" >/dev/null 2>&1; fail "checkpoint --export: $status$(err_hint)"; return 1; }
  pm "$rt" logs "$id"
  before=$(tail -n1 <<<"$out")
  pm "$rt" container restore --import "$WORK/ck.tar.gz" --name ms-e2e-ck2
  local st=$status e=$err
  sleep 1
  pm "$rt" logs ms-e2e-ck2
  after=$(tail -n1 <<<"$out")
  timeout 30 podman rm -f "$id" ms-e2e-ck2 >/dev/null 2>&1
  [ "$st" -eq 0 ] || fail "restore --import: $st; stderr: $(head -n1 <<<"$e")" || return
  [ -n "$after" ] && [ "$after" -gt "$before" ] || fail "the new container counts '$after' after $before"
}

podman_checkpoint_and_restore_of_a_counter() { podman_counter_checkpoint_restore "$MS"; }
podman_checkpoint_and_restore_of_a_counter_with_runc() {
  command -v runc >/dev/null || { skip "runc is not installed"; return; }
  podman_counter_checkpoint_restore "$(command -v runc)"
}

# --- containerd and Docker: private daemons of the scenario's own ----------------------------

# containerd_up: a containerd of this scenario's own (state, root and socket under $WORK), its
# socket in $CTD_SOCK; SKIPs without containerd. containerd_down stops it.
containerd_up() {
  command -v containerd >/dev/null && command -v ctr >/dev/null ||
    { skip "containerd is not installed (scripts/install-deps.sh)"; return; }
  local d=$WORK/ctd i
  rm -rf "$d" && mkdir -p "$d"
  CTD_SOCK=$d/containerd.sock
  printf 'version = 2\nroot = "%s/root"\nstate = "%s/state"\n[grpc]\n  address = "%s"\n' \
    "$d" "$d" "$CTD_SOCK" >"$d/config.toml"
  step "starting containerd"
  containerd --config "$d/config.toml" >"$d/log" 2>&1 &
  CTD_PID=$!
  for ((i = 0; i < 100; i++)); do
    timeout 5 ctr --address "$CTD_SOCK" version >/dev/null 2>&1 && return 0
    kill -0 "$CTD_PID" 2>/dev/null || break
    sleep 0.2
  done
  containerd_down
  skip "containerd cannot run here: $(tail -n1 "$d/log")"
}

containerd_down() {
  [ -n "${DOCKERD_PID:-}" ] && { kill "$DOCKERD_PID"; wait "$DOCKERD_PID"; } 2>/dev/null
  DOCKERD_PID=""
  [ -n "${CTD_PID:-}" ] && { kill "$CTD_PID"; wait "$CTD_PID"; } 2>/dev/null
  CTD_PID=""
}

# engine_image_tar: an OCI archive of the rootfs image (made with podman, which imports the
# rootfs), in $IMAGE_TAR.
engine_image_tar() {
  IMAGE_TAR=$WORK/image.tar
  [ -s "$IMAGE_TAR" ] && return 0
  podman_ready || return
  local image=localhost/minisentry-e2e-alpine:latest
  if ! timeout 60 podman image exists "$image"; then
    tar -C "$ROOTFS" -c . | timeout 120 podman import - "$image" >/dev/null 2>"$WORK/err" ||
      { fail "podman import: $(head -n1 "$WORK/err")"; return; }
  fi
  step "podman save"
  timeout 120 podman save --format oci-archive -o "$IMAGE_TAR" "$image" >/dev/null 2>"$WORK/err" ||
    fail "podman save: $(head -n1 "$WORK/err")"
}

# ctr run through containerd's runc shim, the runtime given as its runc binary (the
# BinaryName of a RuntimeClass), with an environment variable, a read-only bind mount and an
# exit status.
ctr_run_through_the_runc_shim() {
  engine_image_tar || return
  containerd_up || return
  local c=(ctr --address "$CTD_SOCK") rt n=0 image=localhost/minisentry-e2e-alpine:latest
  step "ctr images import"
  timeout 120 "${c[@]}" images import --base-name localhost/minisentry-e2e-alpine "$IMAGE_TAR" >/dev/null 2>"$WORK/err" ||
    { containerd_down; fail "ctr images import: $(head -n1 "$WORK/err")"; return; }
  mkdir -p "$WORK/ctr-vol" && echo from-host >"$WORK/ctr-vol/f"
  for rt in $(runtimes); do
    n=$((n + 1))
    step "ctr run --runc-binary $rt"
    { timeout -k 5 "$TIMEOUT" "${c[@]}" run --rm --runc-binary "$rt" --env GREETING=hello \
      --mount "type=bind,src=$WORK/ctr-vol,dst=/vol,options=rbind:ro" "$image" "ms-e2e-$$-$n" \
      /bin/sh -c 'echo $GREETING $(cat /vol/f); echo x >/vol/g || echo read-only; exit 4' \
      </dev/null >"$WORK/out" 2>"$WORK/err"; } 2>/dev/null
    status=$?
    out=$(<"$WORK/out")
    err=$(<"$WORK/err")
    [ "$status" -eq 4 ] && [ "$out" = $'hello from-host\nread-only' ] ||
      { containerd_down; fail "with $rt: status $status, stdout $(out_hint)$(err_hint)"; return; }
  done
  containerd_down
}

# dockerd_up: a dockerd of this scenario's own on the private containerd (no bridge, no
# iptables: nothing of the host's network changes), with runtime "minisentry"; $DOCKER_SOCK.
dockerd_up() {
  command -v dockerd >/dev/null && command -v docker >/dev/null ||
    { skip "docker is not installed (scripts/install-deps.sh)"; return; }
  containerd_up || return
  local d=$WORK/dk i
  rm -rf "$d" && mkdir -p "$d"
  DOCKER_SOCK=$d/docker.sock
  step "starting dockerd"
  dockerd --data-root "$d/data" --exec-root "$d/exec" --pidfile "$d/docker.pid" \
    -H "unix://$DOCKER_SOCK" --containerd "$CTD_SOCK" --bridge=none --iptables=false \
    --ip6tables=false --ip-masq=false --storage-driver vfs --add-runtime "minisentry=$MS" \
    >"$d/log" 2>&1 &
  DOCKERD_PID=$!
  for ((i = 0; i < 150; i++)); do
    timeout 5 docker -H "unix://$DOCKER_SOCK" version >/dev/null 2>&1 && return 0
    kill -0 "$DOCKERD_PID" 2>/dev/null || break
    sleep 0.2
  done
  containerd_down
  skip "dockerd cannot run here: $(tail -n1 "$d/log")"
}

# dk RUNTIME-LESS ARGS...: docker on the private daemon; $status, $out, $err.
dk() {
  step "docker $*"
  { timeout -k 5 "$TIMEOUT" docker -H "unix://$DOCKER_SOCK" "$@" </dev/null >"$WORK/out" 2>"$WORK/err"; } 2>/dev/null
  status=$?
  out=$(<"$WORK/out")
  err=$(<"$WORK/err")
}

# docker run --runtime minisentry (and runc) of an image made with docker import from the
# rootfs, with -e and a bind mount; docker exec; docker stop.
docker_run_exec_and_stop_with_minisentry_and_runc() {
  dockerd_up || return
  local image=minisentry-e2e-alpine:latest rt id
  step "docker import"
  tar -C "$ROOTFS" -c . | timeout 120 docker -H "unix://$DOCKER_SOCK" import - "$image" >/dev/null 2>"$WORK/err" ||
    { containerd_down; fail "docker import: $(head -n1 "$WORK/err")"; return; }
  for rt in minisentry runc; do
    [ "$rt" = runc ] && ! command -v runc >/dev/null && continue
    rm -rf "$WORK/dvol" && mkdir -p "$WORK/dvol" && echo from-host >"$WORK/dvol/in"
    dk run --rm --runtime "$rt" -e GREETING=hello -v "$WORK/dvol:/vol" "$image" \
      /bin/sh -c 'echo $GREETING $(cat /vol/in); echo from-guest >/vol/out'
    [ "$status" -eq 0 ] && [ "$out" = "hello from-host" ] && [ "$(cat "$WORK/dvol/out")" = from-guest ] ||
      { containerd_down; fail "with $rt: run: status $status, stdout $(out_hint)$(err_hint)"; return; }
    dk run -d --runtime "$rt" "$image" /bin/sh -c 'echo up >/tmp/up; echo up; sleep 100'
    id=$out
    local i
    for ((i = 0; i < 50; i++)); do
      dk exec "$id" cat /tmp/up
      [ "$out" = up ] && break
      sleep 0.1
    done
    [ "$out" = up ] || { containerd_down; fail "with $rt: exec: $(out_hint)$(err_hint)"; return; }
    dk stop -t 3 "$id"
    dk inspect -f '{{.State.Status}}' "$id"
    local state=$out
    dk rm -f "$id"
    [ "$state" = exited ] || { containerd_down; fail "with $rt: '$state' after stop"; return; }
  done
  containerd_down
}

# docker pause and unpause of a counter, then docker update --memory, through containerd's runc
# shim (minisentry and runc); in minisentry the guest's MemTotal is the new bound.
docker_pause_unpause_and_update_with_minisentry_and_runc() {
  dockerd_up || return
  local image=minisentry-e2e-alpine:latest rt id a b c state
  step "docker import"
  tar -C "$ROOTFS" -c . | timeout 120 docker -H "unix://$DOCKER_SOCK" import - "$image" >/dev/null 2>"$WORK/err" ||
    { containerd_down; fail "docker import: $(head -n1 "$WORK/err")"; return; }
  for rt in minisentry runc; do
    [ "$rt" = runc ] && ! command -v runc >/dev/null && continue
    dk run -d --runtime "$rt" "$image" /bin/sh -c 'i=0; while :; do echo $i; i=$((i+1)); sleep 0.1; done'
    [ "$status" -eq 0 ] || { containerd_down; fail "with $rt: run -d: $status$(err_hint)"; return; }
    id=$out
    sleep 1
    dk pause "$id"
    [ "$status" -eq 0 ] || { dk rm -f "$id"; containerd_down; fail "with $rt: pause: $status$(err_hint)"; return; }
    dk inspect -f '{{.State.Status}}' "$id"
    state=$out
    dk logs "$id"
    a=$(last_count)
    sleep 1
    dk logs "$id"
    b=$(last_count)
    dk unpause "$id"
    local st=$status e=$err
    sleep 1
    dk logs "$id"
    c=$(last_count)
    dk update --memory 96m --memory-swap 192m "$id"
    local ust=$status ue=$err
    dk exec "$id" grep MemTotal: /proc/meminfo
    local mem=$out
    dk rm -f "$id"
    [ "$state" = paused ] || { containerd_down; fail "with $rt: state '$state' after pause"; return; }
    [ -n "$a" ] && [ "$a" = "$b" ] || { containerd_down; fail "with $rt: counted on while paused: '$a', then '$b'"; return; }
    [ "$st" -eq 0 ] || { containerd_down; fail "with $rt: unpause: $st; stderr: $(head -n1 <<<"$e")"; return; }
    [ -n "$c" ] && [ "$c" -gt "$b" ] || { containerd_down; fail "with $rt: did not count on after unpause: '$b', then '$c'"; return; }
    [ "$ust" -eq 0 ] || { containerd_down; fail "with $rt: update: $ust; stderr: $(head -n1 <<<"$ue")"; return; }
    if [ "$rt" = minisentry ]; then
      grep -qE '^MemTotal: +98304 kB$' <<<"$mem" || { containerd_down; fail "with $rt: after update: '$mem'"; return; }
    fi
  done
  containerd_down
}

scenarios+=(
  podman_run_of_a_rootfs_prints_hi
  podman_default_seccomp_profile_as_runc_applies_it
  podman_interactive_shell_in_a_terminal
  podman_run_of_an_imported_image_with_env_and_a_bind_mount
  podman_stop_ends_the_container
  podman_exec_runs_in_a_running_container
  podman_capabilities_and_groups_as_runc_gives_them
  podman_pause_and_unpause_a_counter
  podman_update_changes_the_memory_limit
  podman_checkpoint_and_restore_of_a_counter
  podman_checkpoint_and_restore_of_a_counter_with_runc
  ctr_run_through_the_runc_shim
  docker_run_exec_and_stop_with_minisentry_and_runc
  docker_pause_unpause_and_update_with_minisentry_and_runc
)
# One after another: they share podman's store, the containerd they start, and one copy of
# the rootfs.
e2e_chain podman_run_of_a_rootfs_prints_hi podman_default_seccomp_profile_as_runc_applies_it \
  podman_interactive_shell_in_a_terminal podman_run_of_an_imported_image_with_env_and_a_bind_mount \
  podman_stop_ends_the_container podman_exec_runs_in_a_running_container \
  podman_capabilities_and_groups_as_runc_gives_them podman_pause_and_unpause_a_counter \
  podman_update_changes_the_memory_limit podman_checkpoint_and_restore_of_a_counter \
  podman_checkpoint_and_restore_of_a_counter_with_runc ctr_run_through_the_runc_shim \
  docker_run_exec_and_stop_with_minisentry_and_runc docker_pause_unpause_and_update_with_minisentry_and_runc
