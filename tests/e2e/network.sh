# Network scenarios (sourced by run.sh): real servers and clients on the sandbox's private
# loopback network (busybox httpd, wget and nc in the rootfs; Python's http.server, urllib and
# socketserver with the host's root as ROOTFS), the tools that describe it (ip, netstat, ss),
# its privacy from the host's own loopback, and a TCP conversation that continues across
# checkpoint and restore.

# need_host_python: the host root has the Python these scenarios run.
need_host_python() {
  [ -x /usr/bin/python3 ] || skip "no /usr/bin/python3 on the host"
}

# busybox httpd serves wget, by address and by the name the rootfs's /etc/hosts gives it.
busybox_httpd_serves_wget_over_loopback() {
  ms run "$ROOTFS" -- /bin/sh -c 'mkdir -p /tmp/www && echo "hello over loopback" >/tmp/www/index.html &&
    httpd -p 8080 -h /tmp/www && i=0 &&
    until wget -q -O - http://127.0.0.1:8080/index.html; do i=$((i+1)); [ $i -lt 20 ] || exit 9; sleep 0.1; done &&
    wget -q -O - http://localhost:8080/index.html'
  expect_status 0 && expect_stdout "hello over loopback
hello over loopback"
}

nc_carries_a_line_from_client_to_listener() {
  ms run "$ROOTFS" -- /bin/sh -c 'nc -l -p 9000 >/tmp/got & i=0;
    until echo "hello nc" | nc 127.0.0.1 9000 2>/dev/null; do i=$((i+1)); [ $i -lt 20 ] || exit 9; sleep 0.1; done;
    wait; cat /tmp/got'
  expect_status 0 && expect_stdout "hello nc"
}

# `ip addr` (busybox, over NETLINK_ROUTE) shows lo with its two addresses, and nothing else.
ip_addr_shows_lo_alone() {
  ms run "$ROOTFS" -- /bin/sh -c 'ip addr; ip -o link | wc -l'
  expect_status 0 || return
  expect_stdout_line "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue qlen 1000" || return
  expect_stdout_line "    inet 127.0.0.1/8 scope host lo" || return
  grep -q '^    inet6 ::1/128 scope host' <<<"$out" || fail "no ::1 in $(out_hint)" || return
  [ "$(tail -n1 <<<"$out")" = 1 ] || fail "ip -o link lists $(tail -n1 <<<"$out") links, want 1"
}

busybox_netstat_lists_a_listener() {
  ms run "$ROOTFS" -- /bin/sh -c 'httpd -p 127.0.0.1:8081 -h /tmp && netstat -tln | grep 8081'
  expect_status 0 || return
  grep -qE '^tcp +0 +[0-9]+ 127\.0\.0\.1:8081 +0\.0\.0\.0:\* +LISTEN' <<<"$out" ||
    fail "netstat -tln: $(out_hint)"
}

python_http_server_answers_urllib() {
  # Its run (the host's Python, started in the sandbox) may take 60 s, not 30: a loaded 2-CPU
  # VM took over 30 (the limit stays: a hang is still a named failure).
  local TIMEOUT=60
  need_host_python || return
  # One client that retries until the server listens (a new interpreter per try made a loaded
  # host slower still: the run took 25 s of its 30).
  ms run / -- /bin/sh -c 'cd /etc && python3 -m http.server --bind 127.0.0.1 8000 >/dev/null 2>&1 &
    python3 -c "
import sys, time, urllib.request
for i in range(100):
    try:
        print(urllib.request.urlopen(\"http://127.0.0.1:8000/hostname\").read().decode().strip())
        sys.exit(0)
    except OSError:
        time.sleep(0.2)
sys.exit(9)" 2>/dev/null'
  expect_status 0 && expect_stdout "$(cat /etc/hostname)"
}

python_socketserver_udp_echo_answers() {
  # Its run (the host's Python, started in the sandbox) may take 60 s, not 30: a loaded 2-CPU
  # VM took over 30 (the limit stays: a hang is still a named failure).
  local TIMEOUT=60
  need_host_python || return
  ms run / -- python3 -c '
import socket, socketserver, threading
class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        data, sock = self.request
        sock.sendto(data.upper(), self.client_address)
srv = socketserver.UDPServer(("127.0.0.1", 0), Echo)
threading.Thread(target=srv.serve_forever, daemon=True).start()
c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
c.settimeout(10)
for word in ("alpha", "beta"):
    c.sendto(word.encode(), srv.server_address)
    print(c.recvfrom(100)[0].decode())
srv.shutdown()'
  expect_status 0 && expect_stdout "ALPHA
BETA"
}

# iproute2's ss lists a listener (over NETLINK_SOCK_DIAG), and says nothing on stderr.
ss_tln_shows_a_listener() {
  # Its run (the host's Python, started in the sandbox) may take 60 s, not 30: a loaded 2-CPU
  # VM took over 30 (the limit stays: a hang is still a named failure).
  local TIMEOUT=60
  need_host_python || return
  command -v ss >/dev/null || { skip "no ss on the host"; return; }
  ms run / -- /bin/sh -c 'python3 -c "
import socket, time
s = socket.socket(); s.bind((\"127.0.0.1\", 8765)); s.listen(7); print(\"up\", flush=True); time.sleep(30)" &
    py=$!; for i in $(seq 50); do ss -tln 2>/dev/null | grep -q 8765 && break; sleep 0.2; done
    ss -tln; kill $py'
  expect_status 0 || return
  grep -qE '^LISTEN +0 +7 +127\.0\.0\.1:8765 ' <<<"$out" || fail "ss -tln: $(out_hint)" || return
  ! grep -qi netlink <<<"$err" || fail "ss complained$(err_hint)"
}

# The sandbox's loopback is its own: a host listener is not reachable from inside, and a
# sandbox listener is not reachable from the host.
loopback_is_private_to_the_sandbox() {
  need_host_python || return
  local port=$((20000 + RANDOM % 20000))
  python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $port)); s.listen(1); time.sleep(8)" &
  local host_srv=$!
  sleep 0.5
  ms run "$ROOTFS" -- /bin/sh -c "nc -w 2 127.0.0.1 $port </dev/null; echo rc=\$?"
  kill "$host_srv" 2>/dev/null
  wait "$host_srv" 2>/dev/null
  expect_status 0 || return
  expect_stdout_line "rc=1" || return
  # And the other way: a listener inside, a client on the host.
  ms_bg "$WORK/priv.out" run "$ROOTFS" -- /bin/sh -c "nc -l -p $port & echo listening; sleep 3; kill \$!"
  local p=$bg_pid
  wait_line "$WORK/priv.out" '^listening$' || { kill "$p"; return 1; }
  sleep 0.3
  if python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), timeout=1)" 2>/dev/null; then
    kill "$p" 2>/dev/null
    fail "the host reached a listener inside the sandbox"
    return
  fi
  wait "$p"
}

# A client and a server keep talking over TCP while the sandbox is checkpointed and restored
# (twice, and the first image restored again); a second connection with bytes queued both ways
# and a UDP datagram waiting on a bound socket are there after each restore.
tcp_conversation_continues_across_checkpoint() {
  need_in_rootfs /usr/local/bin/scene || return
  cycle '^ready$' '' '' /usr/local/bin/scene net 2 || return
  both_restores_end_with 2 "client 60 answers right, then the end server got pending and datagram "
}

# --network none is the private loopback too: servers inside work, the host's do not answer.
network_none_has_only_the_private_loopback() {
  ms run --network none "$ROOTFS" -- /bin/sh -c 'httpd -p 127.0.0.1:8080 -h /etc && i=0 &&
    until wget -q -O - http://127.0.0.1:8080/hostname >/dev/null; do i=$((i+1)); [ $i -lt 20 ] || exit 9; sleep 0.1; done;
    ip -o link | wc -l'
  expect_status 0 && expect_stdout 1
}

bad_network_mode_is_a_one_line_error() {
  ms run --network bridge "$ROOTFS" -- /bin/true
  expect_one_line_error
}

# --network host: guest sockets are the host's (tested on loopback addresses only). A client
# inside reaches a host listener, a host client reaches a listener inside.
network_host_reaches_host_loopback_both_ways() {
  need_host_python || return
  local port=$((20000 + RANDOM % 20000))
  python3 -c "
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $port)); s.listen(1); s.settimeout(15)
c, _ = s.accept(); c.sendall(b'from the host\n'); c.close()" &
  local host_srv=$! i
  # Until the host's server listens (python's start takes a second on a loaded machine).
  for ((i = 0; i < 100; i++)); do
    ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
    sleep 0.1
  done
  ms run --network host "$ROOTFS" -- /bin/sh -c "nc 127.0.0.1 $port </dev/null"
  kill "$host_srv" 2>/dev/null
  wait "$host_srv" 2>/dev/null
  expect_status 0 && expect_stdout "from the host" || return
  port=$((port + 1))
  ms_bg "$WORK/hostnet.out" run --network host "$ROOTFS" -- /bin/sh -c "echo listening; echo 'from the sandbox' | nc -l -p $port"
  local p=$bg_pid
  wait_line "$WORK/hostnet.out" '^listening$' || { kill "$p"; return 1; }
  local got="" i
  for i in $(seq 50); do
    got=$(python3 -c "import socket; c = socket.create_connection(('127.0.0.1', $port), timeout=2); print(c.recv(100).decode().strip())" 2>/dev/null) && break
    sleep 0.1
  done
  kill "$p" 2>/dev/null
  wait "$p" 2>/dev/null
  [ "$got" = "from the sandbox" ] || fail "the host read '$got' from the sandbox's listener"
}

# A sandbox holding host sockets refuses a checkpoint with one line naming them, and keeps
# running.
network_host_sockets_refuse_a_checkpoint() {
  local id="e2e-$$-hostnet" port=$((20000 + RANDOM % 20000))
  ms_bg "$WORK/hn.out" run --network host --id "$id" "$ROOTFS" -- /bin/sh -c "nc -l -p $port & echo ready; sleep 2; echo still running; kill \$!"
  local p=$bg_pid
  wait_line "$WORK/hn.out" '^ready$' || { kill "$p"; return 1; }
  sleep 0.3
  timeout -k 5 "$TIMEOUT" "$MS" checkpoint --image "$WORK/img-hn" "$id" >"$WORK/ck.out" 2>"$WORK/ck.err"
  local rc=$? lines
  lines=$(grep -c '' "$WORK/ck.err")
  bg_status "$p"
  [ "$rc" -ne 0 ] || fail "the checkpoint succeeded" || return
  [ "$lines" -eq 1 ] || fail "the refusal is $lines lines: $(head -c 300 "$WORK/ck.err")" || return
  grep -q "host socket.*tcp .*:$port" "$WORK/ck.err" ||
    fail "the refusal does not name the socket: $(cat "$WORK/ck.err")" || return
  [ ! -e "$WORK/img-hn/header" ] || fail "an image was written" || return
  [ "$status" -eq 0 ] && grep -qx "still running" "$WORK/hn.out" ||
    fail "the sandbox did not go on (status $status): $(tr '\n' '|' <"$WORK/hn.out")"
}

scenarios+=(
  network_none_has_only_the_private_loopback
  bad_network_mode_is_a_one_line_error
  network_host_reaches_host_loopback_both_ways
  network_host_sockets_refuse_a_checkpoint
  busybox_httpd_serves_wget_over_loopback
  nc_carries_a_line_from_client_to_listener
  ip_addr_shows_lo_alone
  busybox_netstat_lists_a_listener
  python_http_server_answers_urllib
  python_socketserver_udp_echo_answers
  ss_tln_shows_a_listener
  loopback_is_private_to_the_sandbox
  tcp_conversation_continues_across_checkpoint
)
