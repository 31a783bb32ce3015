# minisentry as an OCI runtime, driven as an engine drives runc, with hand-made bundles
# (sourced by run.sh, which provides ms, expect_status, fail and $WORK). The engines
# themselves are in engines.sh.

# bundle NAME CONFIG_JSON: a bundle $WORK/NAME whose rootfs is $ROOTFS.
bundle() {
  rm -rf "${WORK:?}/$1"
  mkdir -p "$WORK/$1"
  ln -s "$ROOTFS" "$WORK/$1/rootfs"
  printf '%s\n' "$2" >"$WORK/$1/config.json"
}

# oci ARGS...: the runtime with its own root under $WORK.
oci() { ms --root "$WORK/oci-root" "$@"; }

# A config with PROCESS_ARGS (a JSON array) and EXTRA top-level members.
config() {
  printf '{"ociVersion":"1.0.2","process":{"args":%s,"env":["PATH=/usr/bin:/bin"],"cwd":"/"},"root":{"path":"rootfs"},"linux":{"namespaces":[{"type":"pid"},{"type":"network"},{"type":"mount"}]}%s}' "$1" "${2:-}"
}

# state_status ID: the container's status in $st (and the whole state in $out).
state_status() {
  oci state "$1"
  st=$(sed -n 's/.*"status":"\([a-z]*\)".*/\1/p' <<<"$out")
}

# create, state, start, state, delete as runc does them: created with the pid of a waiting
# process (also in --pid-file), running once started, stopped when its command is done (it
# waits for a file to appear in a bind mount).
oci_lifecycle_goes_created_running_stopped() {
  rm -rf "$WORK/life-ctl" && mkdir -p "$WORK/life-ctl"
  bundle life "$(config '["/bin/sh","-c","while [ ! -e /ctl/go ]; do sleep 0.05; done"]' \
    ',"mounts":[{"destination":"/ctl","type":"bind","source":"'"$WORK/life-ctl"'","options":["rbind","ro"]}]')"
  oci create --bundle "$WORK/life" --pid-file "$WORK/life.pid" life1
  expect_status 0 || return
  local st
  state_status life1
  [ "$st" = created ] || fail "state after create: '$st' ($out)" || return
  grep -q "\"pid\":$(cat "$WORK/life.pid")," <<<"$out" ||
    fail "pid-file $(cat "$WORK/life.pid") is not the state's pid: $out" || return
  oci start life1
  expect_status 0 || return
  state_status life1
  [ "$st" = running ] || fail "state after start: '$st'" || return
  oci start life1
  [ "$status" -ne 0 ] || fail "a second start succeeded" || return
  touch "$WORK/life-ctl/go"
  local i
  for ((i = 0; i < 100; i++)); do
    state_status life1
    [ "$st" = stopped ] && break
    sleep 0.1
  done
  [ "$st" = stopped ] || fail "state once the command is done: '$st'" || return
  grep -q '"pid":0,' <<<"$out" || fail "a stopped container with a pid: $out" || return
  oci delete life1
  expect_status 0 || return
  oci state life1
  [ "$status" -ne 0 ] && grep -q "does not exist" <<<"$err" || fail "state after delete: $status $err"
}

# `run` is create + start + wait: the guest's exit status, with the process, the user, the
# environment, the working directory, the host name, rlimits and mounts of config.json.
oci_run_takes_process_user_env_cwd_hostname_rlimits_and_mounts() {
  mkdir -p "$WORK/oci-data" && echo "bound" >"$WORK/oci-data/f" && chmod 777 "$WORK/oci-data"
  bundle runcfg "$(config '["/bin/sh","-c","echo $(id -u):$(id -g):$(id -G) $FOO $(pwd) $(hostname) $(ulimit -n); cat /data/f; echo w >/data/f2; grep -c \" /proc \" /proc/mounts; grep NoNewPrivs /proc/self/status; exit 3"]' \
    ',"hostname":"ocibox","mounts":[{"destination":"/proc","type":"proc","source":"proc"},{"destination":"/dev","type":"tmpfs","source":"tmpfs"},{"destination":"/data","type":"bind","source":"'"$WORK/oci-data"'","options":["rbind","rw"]},{"destination":"/dev/mqueue","type":"mqueue","source":"mqueue"}]')"
  # The process fields the helper leaves out.
  sed -i 's|"env":\["PATH=/usr/bin:/bin"\],"cwd":"/"|"env":["PATH=/usr/bin:/bin","FOO=bar"],"cwd":"/tmp","user":{"uid":1000,"gid":100,"additionalGids":[10]},"rlimits":[{"type":"RLIMIT_NOFILE","soft":256,"hard":512}],"noNewPrivileges":true|' "$WORK/runcfg/config.json"
  oci run --bundle "$WORK/runcfg" run1
  expect_status 3 || return
  expect_stdout $'1000:100:100 10 bar /tmp ocibox 256\nbound\n1\nNoNewPrivs:\t1' || return
  [ "$(cat "$WORK/oci-data/f2")" = w ] || fail "the rw bind mount's write did not reach the host"
}

# linux.resources.memory.limit is the sandbox's memory bound: /proc/meminfo shows it, and a
# process that wants more is killed by the sandbox's OOM killer.
oci_memory_limit_bounds_the_sandbox() {
  bundle memlim "$(config '["/bin/sh","-c","grep MemTotal: /proc/meminfo; dd if=/dev/zero of=/dev/null bs=100M count=1 2>/dev/null; echo survived"]')"
  sed -i 's|"linux":{|"linux":{"resources":{"memory":{"limit":67108864}},|' "$WORK/memlim/config.json"
  oci run --bundle "$WORK/memlim" memlim1
  grep -qE '^MemTotal: +65536 kB$' <<<"$out" || fail "meminfo: $(out_hint)$(err_hint)" || return
  grep -q '^survived$' <<<"$out" || fail "the shell did not go on after its child was killed: $(out_hint)" || return
  grep -qi 'out of memory' <<<"$err" || fail "no OOM line on stderr$(err_hint)"
}

oci_readonly_root_refuses_writes_but_tmp_is_writable() {
  bundle ro "$(config '["/bin/sh","-c","echo x >/etc/new || echo refused; echo y >/tmp/ok && cat /tmp/ok"]' \
    ',"mounts":[{"destination":"/tmp","type":"tmpfs","source":"tmpfs"}]')"
  sed -i 's|"root":{"path":"rootfs"}|"root":{"path":"rootfs","readonly":true}|' "$WORK/ro/config.json"
  oci run --bundle "$WORK/ro" ro1
  expect_status 0 && expect_stdout $'refused\ny' || return
  grep -q "Read-only file system" <<<"$err" || fail "stderr: $err"
}

# kill delivers the signal: SIGTERM ends the sandbox (128+15 for whoever waits on its pid),
# and a running container is deleted only with --force.
oci_kill_and_delete_of_a_running_container() {
  bundle k "$(config '["/bin/sleep","60"]')"
  oci create --bundle "$WORK/k" --pid-file "$WORK/k.pid" k1 || return
  oci start k1
  local st
  state_status k1
  [ "$st" = running ] || fail "not running: $out" || return
  oci delete k1
  [ "$status" -ne 0 ] && grep -q "running" <<<"$err" || fail "delete of a running container: $status $err" || return
  oci kill k1 TERM
  expect_status 0 || return
  local i
  for ((i = 0; i < 50; i++)); do
    state_status k1
    [ "$st" = stopped ] && break
    sleep 0.1
  done
  [ "$st" = stopped ] || fail "still '$st' after kill TERM" || return
  oci kill k1 KILL
  [ "$status" -ne 0 ] || fail "kill of a stopped container succeeded" || return
  oci delete k1
  expect_status 0 || return
  # --force kills one that runs.
  oci create --bundle "$WORK/k" k2 && oci start k2 && oci delete --force k2
  expect_status 0 || return
  oci state k2
  [ "$status" -ne 0 ] || fail "k2 still there after delete --force"
}

# terminal: true: the runtime makes a pseudo-terminal and sends its master to the
# --console-socket, as conmon and the containerd shim expect; the guest's stdio is the slave.
oci_console_socket_receives_the_terminal() {
  command -v python3 >/dev/null || { skip "no python3 for the console socket's receiver"; return; }
  bundle tty "$(config '["/bin/sh","-c","[ -t 0 ] && [ -t 1 ] && echo on a terminal"]')"
  sed -i 's|"process":{|"process":{"terminal":true,|' "$WORK/tty/config.json"
  cat >"$WORK/recv.py" <<'EOF'
import array, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1); s.settimeout(20)
print("listening", flush=True)
c, _ = s.accept()
msg, anc, _, _ = c.recvmsg(256, socket.CMSG_LEN(4))
fds = array.array("i")
for level, kind, data in anc:
    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
        fds.frombytes(data[:4])
print("name", msg.decode(), flush=True)
out = b""
while True:
    try:
        b = os.read(fds[0], 4096)
    except OSError:
        break
    if not b:
        break
    out += b
sys.stdout.write(out.decode(errors="replace"))
EOF
  rm -f "$WORK/console.sock"
  timeout "$TIMEOUT" python3 "$WORK/recv.py" "$WORK/console.sock" >"$WORK/recv.out" 2>&1 &
  local rpid=$! i
  for ((i = 0; i < 50; i++)); do grep -q listening "$WORK/recv.out" && break; sleep 0.1; done
  oci create --bundle "$WORK/tty" --console-socket "$WORK/console.sock" tty1
  [ "$status" -eq 0 ] || { kill "$rpid"; fail "create: $err"; return 1; }
  oci start tty1
  wait_bounded "$rpid"
  oci delete --force tty1
  grep -q '^name /dev/pts/[0-9]*$' "$WORK/recv.out" || fail "no terminal name: $(tr '\n' '|' <"$WORK/recv.out")" || return
  grep -q 'on a terminal' "$WORK/recv.out" || fail "the guest did not see a terminal: $(tr '\n' '|' <"$WORK/recv.out")"
}

# What cannot be honoured is refused at create, in one line, and recorded as JSON in --log.
oci_unsupported_config_is_refused_in_one_line_and_logged() {
  bundle bad "$(config '["/bin/true"]')"
  sed -i 's|{"type":"pid"}|{"type":"pid","path":"/proc/1/ns/pid"}|' "$WORK/bad/config.json"
  rm -f "$WORK/oci.log"
  oci --log "$WORK/oci.log" --log-format json create --bundle "$WORK/bad" bad1
  expect_one_line_error || return
  grep -q 'joining the pid namespace' <<<"$err" || fail "stderr: $err" || return
  grep -q '^{"level":"error","msg":"linux.namespaces: joining the pid namespace' "$WORK/oci.log" ||
    fail "log: $(cat "$WORK/oci.log")" || return
  oci state bad1
  [ "$status" -ne 0 ] || fail "a refused container exists"
}

oci_malformed_config_json_is_a_one_line_error() {
  bundle badjson '{"ociVersion":"1.0.2","process":{"args":["/bin/true"],"cwd":"/"},"root":{"path":"rootfs"},}'
  oci create --bundle "$WORK/badjson" bj1
  expect_one_line_error || return
  grep -q 'config.json: expected a member name at byte' <<<"$err" || fail "stderr: $err"
}

# exec starts a new process in a running container: it sees the container's files, has no
# parent there (getppid() 0, as after setns), runs as the user and in the directory asked for,
# and its exit status is exec's; --process takes a process.json, --detach returns at once with
# the waiting process's pid in --pid-file.
oci_exec_runs_a_process_in_a_running_container() {
  bundle ex "$(config '["/bin/sh","-c","echo main >/tmp/m; sleep 60"]')"
  oci create --bundle "$WORK/ex" ex1 && oci start ex1
  [ "$status" -eq 0 ] || fail "start: $err" || return
  local i
  for ((i = 0; i < 50; i++)); do
    oci exec ex1 /bin/cat /tmp/m
    [ "$out" = main ] && break
    sleep 0.1
  done
  oci exec ex1 /bin/sh -c 'echo $(cat /tmp/m) $PPID; exit 7'
  [ "$status" -eq 7 ] && [ "$out" = "main 0" ] || { oci delete --force ex1; fail "exec: $status $(out_hint)$(err_hint)"; return 1; }
  oci exec --user 1000:100 --cwd /etc --env FOO=bar ex1 /bin/sh -c 'echo $(id -u):$(id -g) $(pwd) $FOO'
  [ "$out" = "1000:100 /etc bar" ] || { oci delete --force ex1; fail "exec with options: $(out_hint)$(err_hint)"; return 1; }
  printf '{"args":["/bin/sh","-c","echo from process.json $V >/tmp/pj"],"env":["V=1","PATH=/bin"],"cwd":"/"}' >"$WORK/p.json"
  oci exec --process "$WORK/p.json" --detach --pid-file "$WORK/ex.pid" ex1
  [ "$status" -eq 0 ] && [ -s "$WORK/ex.pid" ] || { oci delete --force ex1; fail "exec --detach: $status$(err_hint)"; return 1; }
  for ((i = 0; i < 50; i++)); do
    oci exec ex1 /bin/cat /tmp/pj
    [ "$out" = "from process.json 1" ] && break
    sleep 0.1
  done
  [ "$out" = "from process.json 1" ] || { oci delete --force ex1; fail "the detached process did not run: $(out_hint)"; return 1; }
  oci exec ex1 /no/such/program
  local st=$status e=$err
  oci delete --force ex1
  [ "$st" -eq 126 ] && grep -q "No such file" <<<"$e" || fail "exec of a missing program: $st $e"
}

oci_exec_in_a_stopped_container_is_refused() {
  bundle exs "$(config '["/bin/true"]')"
  oci run --bundle "$WORK/exs" --detach exs1
  local i
  for ((i = 0; i < 50; i++)); do
    state_status exs1
    [ "$st" = stopped ] && break
    sleep 0.1
  done
  oci exec exs1 /bin/true
  [ "$status" -ne 0 ] && grep -q "not running" <<<"$err" || fail "exec: $status $err"
  oci delete exs1
}

# runc's checkpoint and restore: the container ends at its checkpoint, and its image restores
# as a new container under another runtime root (standing for another host), whose bundle
# gives the bind mount a new host directory: the counter goes on there.
oci_checkpoint_and_restore_into_a_new_container_under_another_root() {
  rm -rf "$WORK/ckA" "$WORK/ckB" "$WORK/oci-img" && mkdir -p "$WORK/ckA" "$WORK/ckB"
  local counter='["/bin/sh","-c","i=0; while :; do echo $i >>/out/log; i=$((i+1)); sleep 0.05; done"]'
  bundle cka "$(config "$counter" ',"mounts":[{"destination":"/out","type":"bind","source":"'"$WORK/ckA"'","options":["rbind"]}]')"
  bundle ckb "$(config "$counter" ',"mounts":[{"destination":"/out","type":"bind","source":"'"$WORK/ckB"'","options":["rbind"]}]')"
  oci create --bundle "$WORK/cka" cka1 && oci start cka1
  [ "$status" -eq 0 ] || fail "start: $err" || return
  local i
  for ((i = 0; i < 100; i++)); do [ "$(counter_lines "$WORK/ckA/log")" -ge 5 ] && break; sleep 0.05; done
  oci checkpoint --lazy-pages cka1
  [ "$status" -ne 0 ] && grep -q "not supported" <<<"$err" || { oci delete --force cka1; fail "--lazy-pages: $status $err"; return 1; }
  oci checkpoint --image-path "$WORK/oci-img" --work-path "$WORK" --tcp-established --file-locks cka1
  [ "$status" -eq 0 ] || { oci delete --force cka1; fail "checkpoint: $err"; return 1; }
  state_status cka1
  [ "$st" = stopped ] || fail "after the checkpoint: '$st'" || return
  oci delete cka1
  local last
  last=$(tail -n1 "$WORK/ckA/log")
  ms --root "$WORK/oci-root2" restore --image-path "$WORK/oci-img" --bundle "$WORK/ckb" --detach --pid-file "$WORK/ckb.pid" ckb1
  [ "$status" -eq 0 ] || fail "restore: $err" || return
  for ((i = 0; i < 100; i++)); do [ -s "$WORK/ckB/log" ] && break; sleep 0.05; done
  ms --root "$WORK/oci-root2" delete --force ckb1
  [ "$(head -n1 "$WORK/ckB/log")" = "$((last + 1))" ] ||
    fail "the restored counter wrote '$(head -n1 "$WORK/ckB/log")' first, after $last"
}

# counter_lines FILE: how many lines a counter has written to FILE so far.
counter_lines() { { wc -l <"$1"; } 2>/dev/null || echo 0; }

# wait_count FILE N: waits (up to 10 s) until FILE has at least N lines.
wait_count() {
  local i
  for ((i = 0; i < 200; i++)); do
    [ "$(counter_lines "$1")" -ge "$2" ] && return 0
    sleep 0.05
  done
  fail "$(basename "$1") has $(counter_lines "$1") lines, not $2"
}

# pause freezes the guest as runc's freezer does: state says paused, the counter stands still,
# exec and delete are refused, a TERM waits for resume (runc's kill of a paused container);
# resume lets it count on. delete --force ends a paused container.
oci_pause_stops_a_counter_and_resume_lets_it_go_on() {
  rm -rf "$WORK/pz" && mkdir -p "$WORK/pz"
  bundle pz "$(config '["/bin/sh","-c","i=0; while :; do echo $i >>/out/log; i=$((i+1)); sleep 0.02; done"]' \
    ',"mounts":[{"destination":"/out","type":"bind","source":"'"$WORK/pz"'","options":["rbind"]}]')"
  oci create --bundle "$WORK/pz" pz1 && oci start pz1
  [ "$status" -eq 0 ] || fail "start: $err" || return
  wait_count "$WORK/pz/log" 5 || { oci delete --force pz1; return 1; }
  oci pause pz1
  [ "$status" -eq 0 ] || { fail "pause: $status $err"; oci delete --force pz1; return 1; }
  local st a b
  state_status pz1
  [ "$st" = paused ] || { fail "state after pause: '$st'"; oci delete --force pz1; return 1; }
  a=$(counter_lines "$WORK/pz/log")
  sleep 1
  b=$(counter_lines "$WORK/pz/log")
  [ "$a" = "$b" ] || { fail "the counter went on while paused: $a, then $b"; oci delete --force pz1; return 1; }
  oci pause pz1
  [ "$status" -ne 0 ] && grep -q "it is paused" <<<"$err" || { fail "a second pause: $status $err"; oci delete --force pz1; return 1; }
  oci exec pz1 /bin/true
  [ "$status" -ne 0 ] && grep -q "paused" <<<"$err" || { fail "exec in a paused container: $status $err"; oci delete --force pz1; return 1; }
  oci delete pz1
  [ "$status" -ne 0 ] && grep -q "paused" <<<"$err" || { fail "delete of a paused container: $status $err"; oci delete --force pz1; return 1; }
  oci resume pz1
  [ "$status" -eq 0 ] || { fail "resume: $status $err"; oci delete --force pz1; return 1; }
  state_status pz1
  [ "$st" = running ] || { fail "state after resume: '$st'"; oci delete --force pz1; return 1; }
  wait_count "$WORK/pz/log" $((b + 5)) || { oci delete --force pz1; return 1; }
  oci resume pz1
  [ "$status" -ne 0 ] && grep -q "not paused" <<<"$err" || { fail "resume of a running container: $status $err"; oci delete --force pz1; return 1; }
  # A TERM to a paused container takes effect at resume.
  oci pause pz1 && oci kill pz1 TERM
  [ "$status" -eq 0 ] || { fail "kill of a paused container: $status $err"; oci delete --force pz1; return 1; }
  sleep 0.5
  state_status pz1
  [ "$st" = paused ] || { fail "after kill TERM while paused: '$st'"; oci delete --force pz1; return 1; }
  oci resume pz1
  local i
  for ((i = 0; i < 50; i++)); do
    state_status pz1
    [ "$st" = stopped ] && break
    sleep 0.1
  done
  [ "$st" = stopped ] || { fail "the TERM was not acted on at resume: '$st'"; oci delete --force pz1; return 1; }
  oci delete pz1
  # delete --force of a paused one.
  oci create --bundle "$WORK/pz" pz2 && oci start pz2 && oci pause pz2
  [ "$status" -eq 0 ] || { fail "pause pz2: status $status$(err_hint)"; oci delete --force pz2; return 1; }
  oci delete --force pz2
  expect_status 0 || return
  oci state pz2
  [ "$status" -ne 0 ] || fail "pz2 still there after delete --force"
}

# A paused container can be checkpointed; the image restores running.
oci_checkpoint_of_a_paused_container_restores_running() {
  rm -rf "$WORK/pzc" "$WORK/pzc-img" && mkdir -p "$WORK/pzc"
  bundle pzc "$(config '["/bin/sh","-c","i=0; while :; do echo $i >>/out/log; i=$((i+1)); sleep 0.05; done"]' \
    ',"mounts":[{"destination":"/out","type":"bind","source":"'"$WORK/pzc"'","options":["rbind"]}]')"
  oci create --bundle "$WORK/pzc" pzc1 && oci start pzc1 || { fail "start: $err"; return; }
  wait_count "$WORK/pzc/log" 3 || { oci delete --force pzc1; return 1; }
  oci pause pzc1 && oci checkpoint --image-path "$WORK/pzc-img" pzc1
  [ "$status" -eq 0 ] || { fail "checkpoint of a paused container: $status $err"; oci delete --force pzc1; return 1; }
  oci delete pzc1
  local n
  n=$(counter_lines "$WORK/pzc/log")
  oci restore --image-path "$WORK/pzc-img" --bundle "$WORK/pzc" --detach pzc2
  [ "$status" -eq 0 ] || fail "restore: $err" || return
  wait_count "$WORK/pzc/log" $((n + 3))
  local r=$?
  oci delete --force pzc2
  return $r
}

# update changes the memory bound (the guest's MemTotal follows) and the pids bound (fork fails
# past it) of a running container, from options and from a resources file; what cannot change
# live is refused in one line, and so is a memory bound below what the guest uses.
oci_update_changes_memory_and_pids_limits_live() {
  bundle upd "$(config '["/bin/sh","-c","sleep 60"]')"
  sed -i 's|"linux":{|"linux":{"resources":{"memory":{"limit":67108864}},|' "$WORK/upd/config.json"
  oci create --bundle "$WORK/upd" upd1 && oci start upd1 || { fail "start: $err"; return; }
  local i
  for ((i = 0; i < 50; i++)); do
    oci exec upd1 /bin/sh -c 'grep MemTotal: /proc/meminfo'
    grep -qE '^MemTotal: +65536 kB$' <<<"$out" && break
    sleep 0.1
  done
  grep -qE '^MemTotal: +65536 kB$' <<<"$out" || { fail "before: $(out_hint)$(err_hint)"; oci delete --force upd1; return 1; }
  oci update --memory 128m upd1
  [ "$status" -eq 0 ] || { fail "update --memory: $status $err"; oci delete --force upd1; return 1; }
  oci exec upd1 /bin/sh -c 'grep MemTotal: /proc/meminfo'
  grep -qE '^MemTotal: +131072 kB$' <<<"$out" || { fail "after update --memory: $(out_hint)"; oci delete --force upd1; return 1; }
  # The guest holds 40 MiB in a tmpfs file: a 32 MiB bound is refused, 96 MiB is taken.
  oci exec upd1 /bin/sh -c 'dd if=/dev/zero of=/tmp/fill bs=1M count=40 2>/dev/null; echo filled'
  [ "$out" = filled ] || { fail "fill: $(out_hint)$(err_hint)"; oci delete --force upd1; return 1; }
  printf '{"memory":{"limit":33554432,"swap":67108864}}' >"$WORK/upd-res.json"
  oci update --resources "$WORK/upd-res.json" upd1
  [ "$status" -ne 0 ] && grep -q "more than 32 MiB" <<<"$err" && [ "$(grep -c '' <<<"$err")" = 1 ] ||
    { fail "a bound below the guest's use: $status $err"; oci delete --force upd1; return 1; }
  printf '{"memory":{"limit":100663296,"swap":201326592},"cpu":{"shares":0},"pids":{"limit":4}}' >"$WORK/upd-res.json"
  oci update -r "$WORK/upd-res.json" upd1
  [ "$status" -eq 0 ] || { fail "update -r: $status $err"; oci delete --force upd1; return 1; }
  oci exec upd1 /bin/sh -c 'grep MemTotal: /proc/meminfo; for i in 1 2 3; do sleep 1 & done; wait'
  grep -qE '^MemTotal: +98304 kB$' <<<"$out" && grep -q "can't fork" <<<"$err" ||
    { fail "after update -r: $(out_hint)$(err_hint)"; oci delete --force upd1; return 1; }
  # What a sandbox cannot change, from an option or from the file (stdin here).
  oci update --cpu-share 512 upd1
  local e1=$status m1=$err
  printf '{"cpu":{"quota":50000,"period":100000}}' >"$WORK/in"
  oci update -r - upd1
  local e2=$status m2=$err
  oci delete --force upd1
  [ "$e1" -ne 0 ] && [ "$(grep -c '' <<<"$m1")" = 1 ] && grep -q 'cpu-share cannot be changed' <<<"$m1" ||
    fail "--cpu-share: $e1 $m1" || return
  [ "$e2" -ne 0 ] && [ "$(grep -c '' <<<"$m2")" = 1 ] && grep -q 'cpu.quota cannot be changed' <<<"$m2" ||
    fail "cpu.quota from stdin: $e2 $m2"
}

# events --stats prints one stats object in runc's shape; events streams stats every
# --interval and an "oom" event when the sandbox's OOM killer kills, and ends with the
# sandbox.
oci_events_prints_stats_and_oom_events_as_json() {
  command -v python3 >/dev/null || { skip "no python3 to parse the JSON"; return; }
  # The hog waits for /ctl/go, made once `events` is listening: on a slow host the start and
  # the first `events --stats` can take longer than any fixed sleep.
  rm -rf "$WORK/evs-ctl" && mkdir -p "$WORK/evs-ctl"
  bundle evs "$(config '["/bin/sh","-c","while [ ! -e /ctl/go ]; do sleep 0.05; done; dd if=/dev/zero of=/dev/null bs=100M count=1 2>/dev/null; sleep 1.5"]' \
    ',"mounts":[{"destination":"/ctl","type":"bind","source":"'"$WORK/evs-ctl"'","options":["rbind","ro"]}]')"
  sed -i 's|"linux":{|"linux":{"resources":{"memory":{"limit":33554432},"pids":{"limit":50}},|' "$WORK/evs/config.json"
  oci create --bundle "$WORK/evs" evs1 && oci start evs1 || { fail "start: $err"; return; }
  oci events --stats evs1
  [ "$status" -eq 0 ] || { fail "events --stats: $status $err"; oci delete --force evs1; return 1; }
  python3 -c '
import json, sys
e = json.loads(sys.stdin.read())
assert e["type"] == "stats" and e["id"] == "evs1", e
d = e["data"]
assert d["cpu"]["usage"]["total"] > 0 and d["cpu"]["usage"]["total"] == d["cpu"]["usage"]["kernel"] + d["cpu"]["usage"]["user"], d["cpu"]
assert d["memory"]["usage"]["limit"] == 33554432 and 0 < d["memory"]["usage"]["usage"] < 33554432, d["memory"]
assert d["pids"]["limit"] == 50 and d["pids"]["current"] >= 1, d["pids"]
' <<<"$out" 2>"$WORK/py.err" || { fail "events --stats: $(tail -n1 "$WORK/py.err"): $(out_hint)"; oci delete --force evs1; return 1; }
  { timeout -k 5 "$TIMEOUT" "$MS" --root "$WORK/oci-root" events --interval 300ms evs1 \
    >"$WORK/evs.out" 2>"$WORK/evs.err"; echo $? >"$WORK/evs.st"; } &
  local i
  for ((i = 0; i < 200; i++)); do [ -s "$WORK/evs.out" ] && break; sleep 0.05; done
  touch "$WORK/evs-ctl/go"
  for ((i = 0; i < TIMEOUT * 20; i++)); do [ -s "$WORK/evs.st" ] && break; sleep 0.05; done
  local st o e
  st=$(cat "$WORK/evs.st" 2>/dev/null || echo none) o=$(<"$WORK/evs.out") e=$(<"$WORK/evs.err")
  oci delete --force evs1
  [ "$st" -eq 0 ] || fail "events: status $st$(err_hint)" || return
  python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin.read().splitlines()]
assert all(e["id"] == "evs1" for e in ev), ev
stats = [e for e in ev if e["type"] == "stats"]
ooms = [e for e in ev if e["type"] == "oom"]
assert len(ooms) == 1 and len(stats) >= 5, [e["type"] for e in ev]
assert stats[-1]["data"]["memory"]["usage"]["failcnt"] == 1, stats[-1]
' <<<"$o" 2>"$WORK/py.err" || fail "events: $(tail -n1 "$WORK/py.err"): '$(head -c 200 <<<"$o")'"
}

# pause, resume, update and events reach a sandbox started with `run --id` too.
named_sandbox_pauses_resumes_and_updates() {
  local id="e2e-$$-named"
  rm -f "$WORK/named.log"
  ms_bg "$WORK/named.out" run --id "$id" -v "$WORK:/out" "$ROOTFS" -- /bin/sh -c 'i=0; while :; do echo $i >>/out/named.log; i=$((i+1)); sleep 0.02; done'
  # Once paused, a failure ends it with SIGKILL: a TERM would wait for a resume.
  local p=$bg_pid a b
  wait_count "$WORK/named.log" 5 || { kill "$p"; return 1; }
  ms pause "$id"
  [ "$status" -eq 0 ] || { kill "$p"; fail "pause: $err"; return 1; }
  ms list
  grep -qE "^$id +[0-9]+ +paused " <<<"$out" || { kill -KILL "$p"; fail "list: $(out_hint)"; return 1; }
  a=$(counter_lines "$WORK/named.log")
  sleep 1
  b=$(counter_lines "$WORK/named.log")
  [ "$a" = "$b" ] || { kill -KILL "$p"; fail "counted on while paused: $a, $b"; return 1; }
  ms update --pids-limit 100 "$id"
  [ "$status" -eq 0 ] || { kill -KILL "$p"; fail "update of a paused sandbox: $err"; return 1; }
  ms events --stats "$id"
  grep -q '"pids":{"current":[0-9]*,"limit":100}' <<<"$out" || { kill -KILL "$p"; fail "events --stats: $(out_hint)"; return 1; }
  ms resume "$id"
  [ "$status" -eq 0 ] || { kill -KILL "$p"; fail "resume: $err"; return 1; }
  wait_count "$WORK/named.log" $((b + 5)) || { kill "$p"; return 1; }
  kill "$p"
  wait_gone "$p" "$TIMEOUT" || return
  ms pause "e2e-$$-nosuch"
  expect_one_line_error
}

# linux.seccomp filters the container's process and every process exec'd into it, as under
# runc (here: mkdir refused with EPERM, the rest allowed); a profile the sandbox cannot honour
# is refused at create in one line.
oci_seccomp_profile_filters_init_and_exec() {
  local profile='"seccomp":{"defaultAction":"SCMP_ACT_ALLOW","architectures":["SCMP_ARCH_X86_64","SCMP_ARCH_X86","SCMP_ARCH_X32"],"syscalls":[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO","errnoRet":1},{"names":["not_a_syscall"],"action":"SCMP_ACT_KILL"}]}'
  bundle scmp "$(config '["/bin/sh","-c","sleep 30"]')"
  sed -i 's|"linux":{|"linux":{'"$profile"',|' "$WORK/scmp/config.json"
  oci create --bundle "$WORK/scmp" scmp1 && oci start scmp1
  [ "$status" -eq 0 ] || fail "start: $err" || return
  oci exec scmp1 /bin/sh -c 'mkdir /tmp/e 2>&1; echo $?; touch /tmp/f && echo touched'
  local st=$status o=$out
  oci delete --force scmp1
  [ "$st" -eq 0 ] && [ "$o" = $'mkdir: can\'t create directory \'/tmp/e\': Operation not permitted\n1\ntouched' ] ||
    fail "exec under the profile: $st '$o'" || return
  bundle scmp2 "$(config '["/bin/sh","-c","grep ^Seccomp /proc/self/status; mkdir /tmp/d 2>&1; echo $?"]')"
  sed -i 's|"linux":{|"linux":{'"$profile"',|' "$WORK/scmp2/config.json"
  oci run --bundle "$WORK/scmp2" scmp2
  expect_status 0 || return
  expect_stdout $'Seccomp:\t2\nSeccomp_filters:\t1\nmkdir: can\'t create directory \'/tmp/d\': Operation not permitted\n1' || return
  bundle scmp3 "$(config '["/bin/true"]')"
  sed -i 's|"linux":{|"linux":{"seccomp":{"defaultAction":"SCMP_ACT_NOTIFY"},|' "$WORK/scmp3/config.json"
  oci create --bundle "$WORK/scmp3" scmp3
  [ "$status" -ne 0 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && grep -q "SCMP_ACT_NOTIFY is not supported" <<<"$err" ||
    { oci delete --force scmp3; fail "a NOTIFY profile: $status $err"; }
}

oci_features_describes_the_runtime() {
  oci features
  expect_status 0 || return
  python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["ociVersionMax"].startswith("1."); assert "pid" in d["linux"]["namespaces"]; assert d["linux"]["seccomp"]["enabled"]' <<<"$out" ||
    fail "features: $(out_hint)"
}

scenarios+=(
  oci_lifecycle_goes_created_running_stopped
  oci_run_takes_process_user_env_cwd_hostname_rlimits_and_mounts
  oci_memory_limit_bounds_the_sandbox
  oci_readonly_root_refuses_writes_but_tmp_is_writable
  oci_kill_and_delete_of_a_running_container
  oci_console_socket_receives_the_terminal
  oci_unsupported_config_is_refused_in_one_line_and_logged
  oci_malformed_config_json_is_a_one_line_error
  oci_exec_runs_a_process_in_a_running_container
  oci_exec_in_a_stopped_container_is_refused
  oci_seccomp_profile_filters_init_and_exec
  oci_checkpoint_and_restore_into_a_new_container_under_another_root
  oci_features_describes_the_runtime
  oci_pause_stops_a_counter_and_resume_lets_it_go_on
  oci_checkpoint_of_a_paused_container_restores_running
  oci_update_changes_memory_and_pids_limits_live
  oci_events_prints_stats_and_oom_events_as_json
  named_sandbox_pauses_resumes_and_updates
)
