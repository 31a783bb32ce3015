# Golden images, deltas against them and slots (issue 12; docs/checkpoint.md, "Golden images").
# Sourced by run.sh after checkpoint.sh, whose helpers (ms_bg, wait_line, checkpoint...) it uses.

# golden_sandbox NAME OUT: runs memfill (32 MiB random, then 4 MiB rewritten) as NAME and
# writes $WORK/golden once it is ready; the sandbox goes on (its pid in $p).
golden_sandbox() {
  local id=$1 o=$2
  rm -rf "$WORK/golden"
  ms_bg "$o" run --id "$id" "$ROOTFS" -- /usr/local/bin/memfill random 32 3 4
  p=$bg_pid
  wait_line "$o" '^ready$' || { kill "$p" 2>/dev/null; return 1; }
  checkpoint "$id" "$WORK/golden" --leave-running --golden || { kill "$p" 2>/dev/null; return 1; }
}

# checkpoint --golden writes the mappable form (one sparse pages.0, every page at its memory
# offset); --base of the same sandbox after a change holds only the change and names the
# golden image; both restore whole, and inspect says what they are.
golden_image_and_delta_restore_whole() {
  need_in_rootfs /usr/local/bin/memfill || return
  local id="e2e-$$-golden" o=$WORK/golden.out d=$WORK/golden-delta p
  rm -rf "$d"
  golden_sandbox "$id" "$o" || return
  wait_line "$o" '^ready2$' || { kill "$p" 2>/dev/null; return 1; }
  checkpoint "$id" "$d" --base "$WORK/golden" || { kill "$p" 2>/dev/null; return 1; }
  bg_status "$p"
  [ "$status" -eq 0 ] || fail "the run exited with $status" || return
  local bytes refs
  bytes=$(sed -n 's/.*: \([0-9]*\) bytes,.*/\1/p' "$WORK/ck.out")
  refs=$(sed -n 's/.*, \([0-9]*\) pages in the base.*/\1/p' "$WORK/ck.out")
  # 4 of 32 MiB changed: the delta holds those 4 MiB (random: stored raw) and refers to 28.
  [ "$bytes" -gt $((4 << 20)) ] && [ "$bytes" -lt $((5 << 20)) ] && [ "$refs" -ge 7168 ] ||
    fail "4 MiB changed: $(cat "$WORK/ck.out")" || return
  [ "$(ls "$WORK/golden" | grep -c '^pages\.')" -eq 1 ] || fail "golden: not one data file" || return
  local alloc size
  alloc=$(du -k "$WORK/golden/pages.0" | cut -f1)
  size=$(stat -c %s "$WORK/golden/pages.0")
  [ $((alloc * 1024)) -lt "$size" ] || fail "golden pages.0 is not sparse ($alloc KiB of $size)" || return
  ms inspect "$WORK/golden"
  grep -q 'golden: mappable' <<<"$out" || fail "inspect golden: $(out_hint)" || return
  ms inspect "$d"
  grep -qE 'delta: 10[0-9][0-9] changed pages in [0-9]+ extents, [0-9]+ pages from the base '"$WORK/golden" <<<"$out" ||
    fail "inspect delta: $(grep delta <<<"$out")" || return
  local want got
  want=$(sed -n 's/^sum //p' "$o" | tail -n1)
  ms restore --image "$d"
  expect_status 0 || { why="restore of the delta: $why"; return 1; }
  got=$(sed -n 's/^sum //p' <<<"$out" | tail -n1)
  [ "$got" = "$want" ] || fail "restore of the delta: checksum $got, want $want" || return
  # The golden image restores as any image (and goes on to make the same change).
  ms restore --image "$WORK/golden"
  expect_status 0 || { why="restore of the golden image: $why"; return 1; }
  got=$(sed -n 's/^sum //p' <<<"$out" | tail -n1)
  [ "$got" = "$want" ] || fail "restore of the golden image: checksum $got, want $want"
}

# A sandbox that was not started from the golden image has a delta against it too (more pages
# differ); it restores whole.
delta_of_a_sandbox_not_from_the_golden_image() {
  [ -d "$WORK/golden" ] || skip "needs golden_image_and_delta_restore_whole" || return
  local id="e2e-$$-golden-other" o=$WORK/golden-other.out d=$WORK/golden-other
  rm -rf "$d"
  ms_bg "$o" run --id "$id" "$ROOTFS" -- /usr/local/bin/memfill pattern 8 3
  local p=$bg_pid
  wait_line "$o" '^ready$' || { kill "$p" 2>/dev/null; return 1; }
  checkpoint "$id" "$d" --base "$WORK/golden" || { kill "$p" 2>/dev/null; return 1; }
  bg_status "$p"
  local want got
  want=$(sed -n 's/^sum //p' "$o" | tail -n1)
  ms restore --image "$d"
  expect_status 0 || return
  got=$(sed -n 's/^sum //p' <<<"$out" | tail -n1)
  [ "$got" = "$want" ] || fail "checksum $got, want $want"
}

# A sandbox restored from the golden image with its writes tracked (confined: the stub sends
# its userfaultfd): its delta is found without comparing, holds the change only, and restores
# whole.
tracked_delta_of_a_restored_golden_image() {
  [ -d "$WORK/golden" ] || skip "needs golden_image_and_delta_restore_whole" || return
  local id="e2e-$$-golden-t" o=$WORK/golden-t.out d=$WORK/golden-t
  rm -rf "$d"
  ms_bg "$o" restore --id "$id" --image "$WORK/golden"
  local p=$bg_pid
  wait_line "$o" '^ready2$' || { kill "$p" 2>/dev/null; return 1; }
  checkpoint "$id" "$d" --base "$WORK/golden" || { kill "$p" 2>/dev/null; return 1; }
  bg_status "$p"
  local bytes
  bytes=$(sed -n 's/.*: \([0-9]*\) bytes,.*/\1/p' "$WORK/ck.out")
  [ "$bytes" -gt $((4 << 20)) ] && [ "$bytes" -lt $((5 << 20)) ] || fail "4 MiB changed: $(cat "$WORK/ck.out")" || return
  local want got
  want=$(sed -n 's/^sum //p' "$o" | tail -n1)
  ms restore --image "$d"
  expect_status 0 || return
  got=$(sed -n 's/^sum //p' <<<"$out" | tail -n1)
  [ "$got" = "$want" ] || fail "checksum $got, want $want"
}

# A delta whose base is missing, another image, or damaged, and a damaged delta, are refused in
# one line (naming the base it wants); a delta is no base.
bad_bases_and_deltas_are_refused_with_one_line() {
  [ -d "$WORK/golden-delta" ] || skip "needs golden_image_and_delta_restore_whole" || return
  local g=$WORK/golden d=$WORK/golden-delta bad=$WORK/golden-bad
  mv "$g" "$g.moved"
  ms restore --image "$d"
  expect_one_line_error || { why="missing base: $why"; mv "$g.moved" "$g"; return 1; }
  grep -qF "needs image '$g'" <<<"$err" || { mv "$g.moved" "$g"; fail "missing base: '$err'"; return 1; }
  # Another golden image in its place.
  local id="e2e-$$-golden-2" o=$WORK/golden2.out
  ms_bg "$o" run --id "$id" "$ROOTFS" -- /usr/local/bin/memfill random 1 60
  local p=$bg_pid
  wait_line "$o" '^ready$' || { kill "$p" 2>/dev/null; mv "$g.moved" "$g"; return 1; }
  checkpoint "$id" "$g" --golden || { kill "$p" 2>/dev/null; mv "$g.moved" "$g"; return 1; }
  bg_status "$p"
  ms restore --image "$d"
  expect_one_line_error || { why="another base: $why"; rm -rf "$g"; mv "$g.moved" "$g"; return 1; }
  grep -qF "another image" <<<"$err" || { rm -rf "$g"; mv "$g.moved" "$g"; fail "another base: '$err'"; return 1; }
  rm -rf "$g"
  mv "$g.moved" "$g"
  # A damaged base: a byte of its pages changed, or the file cut short.
  rm -rf "$bad" && cp -a "$g" "$bad"
  local off
  off=$(($(stat -c %s "$g/pages.0") - 4096))
  printf 'X' | dd of="$g/pages.0" bs=1 seek="$off" conv=notrunc status=none
  ms restore --image "$d"
  expect_one_line_error || { why="damaged base: $why"; rm -rf "$g"; mv "$bad" "$g"; return 1; }
  grep -qE "corrupt|checksum" <<<"$err" || { rm -rf "$g"; mv "$bad" "$g"; fail "damaged base: '$err'"; return 1; }
  truncate -s -4096 "$g/pages.0"
  ms restore --image "$d"
  expect_one_line_error || { why="truncated base: $why"; rm -rf "$g"; mv "$bad" "$g"; return 1; }
  rm -rf "$g"
  mv "$bad" "$g"
  # A damaged delta.
  cp -a "$d" "$bad"
  truncate -s -1 "$bad/pages.0"
  ms restore --image "$bad"
  expect_one_line_error || { why="truncated delta: $why"; return 1; }
  grep -qF truncated <<<"$err" || fail "truncated delta: '$err'" || return
  rm -rf "$bad"
  # A delta as the base of another: refused, in one line.
  ms_bg "$o" run --id "$id" "$ROOTFS" -- /usr/local/bin/memfill random 1 60
  p=$bg_pid
  wait_line "$o" '^ready$' || { kill "$p" 2>/dev/null; return 1; }
  if timeout -k 5 "$TIMEOUT" "$MS" checkpoint --base "$d" --image "$bad" "$id" >"$WORK/ck.out" 2>"$WORK/ck.err"; then
    kill "$p" 2>/dev/null
    fail "a delta was taken as a base"
    return 1
  fi
  kill "$p" 2>/dev/null
  wait "$p" 2>/dev/null
  [ "$(grep -c '' "$WORK/ck.err")" -eq 1 ] && grep -qF "must be a full image" "$WORK/ck.err" ||
    fail "a delta as base: '$(cat "$WORK/ck.err")'"
}

scenarios+=(
  golden_image_and_delta_restore_whole
  delta_of_a_sandbox_not_from_the_golden_image
  tracked_delta_of_a_restored_golden_image
  bad_bases_and_deltas_are_refused_with_one_line
)

# --- slots -------------------------------------------------------------------------------------

# slot_sums OUT: the checksums memfill printed, as one line.
slot_sums() { sed -n 's/^sum //p' "$1" | tr '\n' ' '; }

# slot_equals_golden SLOT [GOLDEN]: the slot file holds exactly the golden image's pages and
# nothing beyond them.
slot_equals_golden() {
  python3 - "$1" "${2:-$WORK/golden}/pages.0" <<'PY' || fail "$(basename "$1") is not the golden image again"
import os, sys
f = os.open(sys.argv[1], os.O_RDONLY); g = os.open(sys.argv[2], os.O_RDONLY)
n = os.fstat(g).st_size
if os.pread(f, n, 0) != os.pread(g, n, 0):
    sys.exit(1)
try:
    os.lseek(f, n, os.SEEK_DATA)
    sys.exit(1)
except OSError:
    pass
PY
}

# A restore from a slot goes on exactly as a plain one, for the golden image itself and for a
# delta; the slot is made the golden image again afterwards (by tracking when the Sentry may
# track writes, by comparison when confined), and the slots are private.
slot_restore_is_a_plain_restore() {
  [ -d "$WORK/golden-delta" ] || skip "needs golden_image_and_delta_restore_whole" || return
  local s=/dev/shm/minisentry-e2e-$$-slots want img mode got
  rm -rf "$s"
  ms slots --base "$WORK/golden" --count 2 "$s"
  expect_status 0 || return
  [ "$(stat -c %a "$s")" = 700 ] && [ "$(stat -c %a "$s/slot.0")" = 600 ] ||
    { rm -rf "$s"; fail "slots are not private: $(stat -c '%a %n' "$s" "$s"/*)"; return 1; }
  for img in "$WORK/golden" "$WORK/golden-delta"; do
    ms restore --image "$img"
    want=$(sed -n 's/^sum //p' <<<"$out" | tr '\n' ' ')
    for mode in "" --unsafe-no-confine; do
      # shellcheck disable=SC2086
      ms restore --stats $mode --image "$img" --slots "$s"
      expect_status 0 || { why="slot restore $mode of $img: $why"; rm -rf "$s"; return 1; }
      got=$(sed -n 's/^sum //p' <<<"$out" | tr '\n' ' ')
      [ "$got" = "$want" ] || { rm -rf "$s"; fail "slot restore $mode of $img: sums $got, want $want"; return 1; }
      grep -q 'stats: slot: reset .* pages' <<<"$err" || { rm -rf "$s"; fail "no reset: $(err_hint)"; return 1; }
    done
  done
  # Confined or not, writes are tracked: the reset follows them, not the slot's 8201 pages.
  local pages
  for mode in "" --unsafe-no-confine; do
    # shellcheck disable=SC2086
    ms restore --stats $mode --image "$WORK/golden-delta" --slots "$s"
    expect_status 0 || { why="slot restore $mode: $why"; rm -rf "$s"; return 1; }
    pages=$(sed -n 's/.*slot: reset \([0-9]*\) pages (tracked).*/\1/p' <<<"$err")
    if [ -z "$pages" ] || [ "$pages" -ge 4000 ]; then
      rm -rf "$s"
      fail "slot restore $mode: not a tracked reset of the pages written: $(grep 'slot:' <<<"$err")"
      return 1
    fi
  done
  slot_equals_golden "$s/slot.0" && slot_equals_golden "$s/slot.1" || { rm -rf "$s"; return 1; }
  # An image that is not a delta of the slots' golden image is refused in one line.
  local id="e2e-$$-slot-full" o=$WORK/slot-full.out full=$WORK/slot-full
  rm -rf "$full"
  ms_bg "$o" run --id "$id" "$ROOTFS" -- /usr/local/bin/memfill random 1 60
  local p=$bg_pid
  wait_line "$o" '^ready$' || { kill "$p" 2>/dev/null; rm -rf "$s"; return 1; }
  checkpoint "$id" "$full" || { kill "$p" 2>/dev/null; rm -rf "$s"; return 1; }
  bg_status "$p"
  ms restore --image "$full" --slots "$s"
  expect_one_line_error || { rm -rf "$s"; return 1; }
  grep -qF "not a delta of the slots' golden image" <<<"$err" || { rm -rf "$s"; fail "'$err'"; return 1; }
  slot_equals_golden "$s/slot.0" || { rm -rf "$s"; return 1; }
  rm -rf "$s"
}

# A tracked reset counts what was written, wherever the guest ran and however the sandbox ended:
# with the guest on another CPU than the Sentry's its stub can be gone (exit_group, a SIGTERM to
# the Sentry) before the Sentry reads what it wrote, and the reset then took every page the stub
# had mapped (11,622 for this slot of 8,201). The delta changed 4 MiB (1,024 pages); a few
# hundred more are the guest's stack and libraries.
tracked_reset_counts_the_written_pages_wherever_the_guest_runs() {
  [ -d "$WORK/golden-delta" ] || skip "needs golden_image_and_delta_restore_whole" || return
  local s=/dev/shm/minisentry-e2e-$$-counts plat pages o=$WORK/slot-term.out p i
  rm -rf "$s"
  ms slots --base "$WORK/golden" --count 1 "$s"
  expect_status 0 || return
  for plat in $(platforms); do
    for i in 1 2; do
      ms restore --stats --platform "$plat" --placement other \
        --image "$WORK/golden-delta" --slots "$s"
      expect_status 0 || { why="$plat: $why"; rm -rf "$s"; return 1; }
      pages=$(sed -n 's/.*slot: reset \([0-9]*\) pages (tracked).*/\1/p' <<<"$err")
      [ -n "$pages" ] && [ "$pages" -lt 1600 ] ||
        { rm -rf "$s"; fail "$plat, exit: a tracked reset of '$pages' pages for 4 MiB changed"; return 1; }
    done
    # Ended by a SIGTERM to the Sentry while the guest sleeps: its stubs are killed at teardown.
    ms_bg "$o" restore --stats --platform "$plat" --placement other \
      --image "$WORK/golden-delta" --slots "$s"
    p=$bg_pid
    wait_line "$o.err" 'memory loaded' || { kill "$p" 2>/dev/null; rm -rf "$s"; return 1; }
    sleep 0.3
    kill -TERM "$p"
    bg_status "$p"
    pages=$(sed -n 's/.*slot: reset \([0-9]*\) pages (tracked).*/\1/p' "$o.err")
    [ -n "$pages" ] && [ "$pages" -lt 1600 ] ||
      { rm -rf "$s"; fail "$plat, SIGTERM: a tracked reset of '$pages' pages: $(tail -n1 "$o.err")"; return 1; }
  done
  slot_equals_golden "$s/slot.0" || { rm -rf "$s"; return 1; }
  rm -rf "$s"
  # A guest that was running when checkpointed runs at once when restored: its writes are
  # tracked too (tracking starts before any restored task runs), and it is stopped before
  # its stub is killed at the SIGTERM, so that what it wrote last is read.
  local id="e2e-$$-busy" g=$WORK/busy-golden
  rm -rf "$g"
  ms_bg "$o" run --id "$id" "$ROOTFS" -- /bin/sh -c 'echo ready; x=0; while :; do x=$((x+1)); done'
  p=$bg_pid
  wait_line "$o" '^ready$' || { kill "$p" 2>/dev/null; return 1; }
  checkpoint "$id" "$g" --golden || { kill "$p" 2>/dev/null; return 1; }
  bg_status "$p"
  ms slots --base "$g" --count 1 "$s"
  expect_status 0 || return
  for plat in $(platforms); do
    ms_bg "$o" restore --stats --platform "$plat" --placement other \
      --image "$g" --slots "$s"
    p=$bg_pid
    wait_line "$o.err" 'memory loaded' || { kill "$p" 2>/dev/null; rm -rf "$s"; return 1; }
    sleep 0.3
    kill -TERM "$p"
    bg_status "$p"
    grep -q 'slot: reset [0-9]* pages (tracked)' "$o.err" ||
      { rm -rf "$s"; fail "$plat, a running guest: $(grep 'slot:' "$o.err" | tail -n1)"; return 1; }
  done
  rm -rf "$s"
}

# Two sandboxes restored at once from two slots of one pool: each keeps what it was given.
two_slot_restores_at_once_keep_their_own_memory() {
  local id="e2e-$$-slot-iso" o=$WORK/slot-iso.out g=$WORK/slot-iso-golden s=/dev/shm/minisentry-e2e-$$-iso
  rm -rf "$g" "$s"
  # The shell's variable lives in its heap: guest memory, in the slot.
  # Its stdin stays open and empty, so that it waits in read when checkpointed.
  { sleep "$TIMEOUT" | timeout -k 5 "$TIMEOUT" "$MS" run --id "$id" "$ROOTFS" -- \
    /bin/sh -c 'echo ready; read x; sleep 2; echo "got $x"' >"$o" 2>"$o.err"; } &
  local p=$!
  wait_line "$o" '^ready$' || { kill "$p" 2>/dev/null; return 1; }
  sleep 0.3
  checkpoint "$id" "$g" --golden || { kill "$p" 2>/dev/null; return 1; }
  pkill -P "$p" sleep 2>/dev/null
  wait "$p" 2>/dev/null || true
  ms slots --base "$g" --count 2 "$s"
  expect_status 0 || return
  local a b
  echo first-sandbox-line | timeout -k 5 "$TIMEOUT" "$MS" restore --stats --image "$g" --slots "$s" >"$WORK/iso.a" 2>"$WORK/iso.a.err" &
  a=$!
  echo second-one | timeout -k 5 "$TIMEOUT" "$MS" restore --stats --image "$g" --slots "$s" >"$WORK/iso.b" 2>"$WORK/iso.b.err" &
  b=$!
  wait "$a"; local sa=$?
  wait "$b"; local sb=$?
  [ "$sa" -eq 0 ] && [ "$sb" -eq 0 ] || { rm -rf "$s"; fail "statuses $sa $sb: $(head -n1 "$WORK/iso.a.err") $(head -n1 "$WORK/iso.b.err")"; return 1; }
  grep -qx 'got first-sandbox-line' "$WORK/iso.a" && grep -qx 'got second-one' "$WORK/iso.b" ||
    { rm -rf "$s"; fail "outputs '$(tr '\n' '|' <"$WORK/iso.a")' and '$(tr '\n' '|' <"$WORK/iso.b")'"; return 1; }
  local sl_a sl_b
  sl_a=$(sed -n 's/.*claimed \(slot\.[0-9]*\).*/\1/p' "$WORK/iso.a.err")
  sl_b=$(sed -n 's/.*claimed \(slot\.[0-9]*\).*/\1/p' "$WORK/iso.b.err")
  [ -n "$sl_a" ] && [ "$sl_a" != "$sl_b" ] || { rm -rf "$s"; fail "slots '$sl_a' and '$sl_b'"; return 1; }
  # A third while both are busy: refused in one line.
  echo x | timeout -k 5 "$TIMEOUT" "$MS" restore --image "$g" --slots "$s" >"$WORK/iso.c" 2>"$WORK/iso.c.err" &
  a=$!
  echo y | timeout -k 5 "$TIMEOUT" "$MS" restore --image "$g" --slots "$s" >"$WORK/iso.d" 2>"$WORK/iso.d.err" &
  b=$!
  sleep 0.5
  ms restore --image "$g" --slots "$s"
  wait "$a" "$b"
  expect_one_line_error || { rm -rf "$s"; return 1; }
  grep -qF "all 2 slots are in use" <<<"$err" || { rm -rf "$s"; fail "'$err'"; return 1; }
  rm -rf "$s"
}

# A slot whose Sentry was SIGKILLed (after its guest dirtied memory) is never handed out
# dirty: the next claimer resets it fully, and its sandbox sees the golden memory.
killed_sandboxs_slot_is_recovered_not_reused_dirty() {
  [ -d "$WORK/golden" ] || skip "needs golden_image_and_delta_restore_whole" || return
  local s=/dev/shm/minisentry-e2e-$$-kill o=$WORK/slot-kill.out
  rm -rf "$s"
  ms slots --base "$WORK/golden" --count 1 "$s"
  expect_status 0 || return
  ms restore --image "$WORK/golden"
  local want
  want=$(sed -n 's/^sum //p' <<<"$out" | tr '\n' ' ')
  # The golden sandbox rewrites 4 MiB, says ready2, and sleeps: killed there.
  ms_bg "$o" restore --image "$WORK/golden" --slots "$s"
  local p=$bg_pid
  wait_line "$o" '^ready2$' || { kill "$p" 2>/dev/null; rm -rf "$s"; return 1; }
  pkill -KILL -P "$p" 2>/dev/null
  kill -KILL "$p" 2>/dev/null
  wait "$p" 2>/dev/null
  # Every process of that sandbox is gone once its slot's lock is free: wait for that.
  local i
  for ((i = 0; i < 100; i++)); do
    python3 -c "
import fcntl, os, sys
fd = os.open('$s/pool', os.O_RDWR)
try:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 4136)
except OSError:
    sys.exit(1)
" && break
    sleep 0.1
  done
  ms restore --stats --image "$WORK/golden" --slots "$s"
  expect_status 0 || { rm -rf "$s"; return 1; }
  grep -q 'recovered' <<<"$err" || { rm -rf "$s"; fail "the claim did not recover the slot: $(err_hint)"; return 1; }
  local got
  got=$(sed -n 's/^sum //p' <<<"$out" | tr '\n' ' ')
  [ "$got" = "$want" ] || { rm -rf "$s"; fail "sums $got, want $want"; return 1; }
  slot_equals_golden "$s/slot.0" || { rm -rf "$s"; return 1; }
  rm -rf "$s"
}

# Writes after a slot restore are tracked lazily (docs/checkpoint.md, "Write tracking that
# starts lazily"): nothing is protected up front but the golden image's holes, and the stub's
# pages come in protected on first touch. Whatever the guest writes (the golden image's pages,
# its holes, pages it dropped before touching them, memory unmapped and mapped again), confined
# or not, a checkpoint --parent taken while it runs has every page changed since the last one,
# the sandbox ends as a plain restore does, and the slot is the golden image again afterwards.
lazily_tracked_slot_keeps_every_write() {
  local id="e2e-$$-lazyw" o=$WORK/lazyw.out g=$WORK/lazyw-golden p1=$WORK/lazyw-1 p2=$WORK/lazyw-2
  local s=/dev/shm/minisentry-e2e-$$-lazyw in=$WORK/lazyw.in mode p want got sums last
  rm -rf "$g" "$s"
  { sleep "$TIMEOUT" | timeout -k 5 "$TIMEOUT" "$MS" run --id "$id" "$ROOTFS" -- \
    /usr/local/bin/touchmem 6 6 >"$o" 2>"$o.err"; } &
  p=$!
  wait_line "$o" '^ready$' || { kill "$p" 2>/dev/null; return 1; }
  checkpoint "$id" "$g" --golden || { kill "$p" 2>/dev/null; return 1; }
  pkill -P "$p" sleep 2>/dev/null
  wait "$p" 2>/dev/null || true
  ms slots --base "$g" --count 1 "$s"
  expect_status 0 || return
  # Pauses long enough for a checkpoint on a busy host (the second starts at the pause).
  printf 'd 2\nW 2\nR 6\ns\np 2\nw 3\nW 6\ns\np 4\nu\nw 1\ns\n' >"$in"
  cp "$in" "$WORK/in"
  ms restore --image "$g"
  : >"$WORK/in"
  expect_status 0 || return
  want=$(sed -n 's/^sum //p' <<<"$out" | tr '\n' ' ')
  last=${want% }
  last=${last##* }
  for mode in "" --unsafe-no-confine; do
    rm -rf "$p1" "$p2"
    # shellcheck disable=SC2086
    timeout -k 5 "$TIMEOUT" "$MS" restore --stats $mode --id "$id" --image "$g" --slots "$s" \
      <"$in" >"$o" 2>"$o.err" &
    p=$!
    wait_line "$o" '^pause$' || { kill "$p" 2>/dev/null; rm -rf "$s"; return 1; }
    checkpoint "$id" "$p1" --leave-running || { kill "$p" 2>/dev/null; rm -rf "$s"; return 1; }
    local i
    for ((i = 0; i < TIMEOUT * 20 && $(grep -c '^pause$' "$o") < 2; i++)); do sleep 0.05; done
    checkpoint "$id" "$p2" --leave-running --parent "$p1" ||
      { kill "$p" 2>/dev/null; rm -rf "$s"; return 1; }
    grep -q 'pages in the parent' "$WORK/ck.out" ||
      { kill "$p" 2>/dev/null; rm -rf "$s"; fail "$mode: no tracked --parent: $(cat "$WORK/ck.out")"; return 1; }
    bg_status "$p"
    expect_status 0 || { why="slot restore $mode: $why"; rm -rf "$s"; return 1; }
    got=$(sed -n 's/^sum //p' "$o" | tr '\n' ' ')
    [ "$got" = "$want" ] || { rm -rf "$s"; fail "slot restore $mode: sums $got, want $want"; return 1; }
    grep -q 'slot: reset [0-9]* pages (tracked)' "$o.err" ||
      { rm -rf "$s"; fail "slot restore $mode: $(grep 'slot:' "$o.err" | tail -n1)"; return 1; }
    slot_equals_golden "$s/slot.0" "$g" || { why="slot restore $mode: $why"; rm -rf "$s"; return 1; }
    # The --parent image holds what the guest had written by its pause: restored, the guest
    # goes on with the commands it had read (its stdio buffer) to the same last sum, and then
    # sums once more what it reads now.
    echo s >"$WORK/in"
    ms restore --image "$p2"
    : >"$WORK/in"
    expect_status 0 || { why="restore of the --parent image $mode: $why"; rm -rf "$s"; return 1; }
    sums=$(sed -n 's/^sum //p' <<<"$out" | tr '\n' ' ')
    [ "$sums" = "$last $last " ] ||
      { rm -rf "$s"; fail "the --parent image taken while it ran $mode: sums '$sums', want '$last $last '"; return 1; }
  done
  rm -rf "$s"
}

scenarios+=(
  slot_restore_is_a_plain_restore
  tracked_reset_counts_the_written_pages_wherever_the_guest_runs
  two_slot_restores_at_once_keep_their_own_memory
  killed_sandboxs_slot_is_recovered_not_reused_dirty
  lazily_tracked_slot_keeps_every_write
)

# The use case (README): a Python interpreter warmed up (modules imported) and waiting for a
# request is the golden image; each request is served by a sandbox restored from a slot. The
# answer is the same as from a cold run, and comes sooner.
python_requests_are_served_from_slots() {
  [ -x /usr/bin/python3 ] || skip "no /usr/bin/python3 on the host" || return
  local id="e2e-$$-py" o=$WORK/py.out g=$WORK/py-golden s=/dev/shm/minisentry-e2e-$$-py
  local prog='import sys, json, re, decimal, fractions, statistics
print("ready", flush=True)
req = sys.stdin.readline().strip()
print(json.dumps({"req": req, "sum": str(sum(decimal.Decimal(x) for x in re.findall(r"[0-9.]+", req)))}), flush=True)'
  rm -rf "$g" "$s"
  { sleep "$TIMEOUT" | timeout -k 5 "$TIMEOUT" "$MS" run --id "$id" / -- /usr/bin/python3 -c "$prog" >"$o" 2>"$o.err"; } &
  local p=$!
  wait_line "$o" '^ready$' || { pkill -P "$p" sleep; return 1; }
  sleep 0.2
  checkpoint "$id" "$g" --golden || { pkill -P "$p" sleep; return 1; }
  pkill -P "$p" sleep 2>/dev/null
  wait "$p" 2>/dev/null || true
  ms slots --base "$g" --count 2 "$s"
  expect_status 0 || return
  local want='{"req": "1.5 and 2.25", "sum": "3.75"}' got t0 t1 i
  for i in 1 2 3; do
    t0=$(date +%s%N)
    # The host root changes under us (/tmp): --force restores onto it anyway.
    got=$(echo "1.5 and 2.25" | timeout -k 5 "$TIMEOUT" "$MS" restore --force --image "$g" --slots "$s" 2>"$WORK/py.err")
    t1=$(date +%s%N)
    [ "$got" = "$want" ] || { rm -rf "$s"; fail "slot answer '$got', want '$want'$(head -n1 "$WORK/py.err")"; return 1; }
  done
  local slot_ms=$(((t1 - t0) / 1000000))
  t0=$(date +%s%N)
  got=$(echo "1.5 and 2.25" | timeout -k 5 "$TIMEOUT" "$MS" run / -- /usr/bin/python3 -c "$prog" | tail -n1)
  t1=$(date +%s%N)
  [ "$got" = "$want" ] || { rm -rf "$s"; fail "cold answer '$got'"; return 1; }
  local cold_ms=$(((t1 - t0) / 1000000))
  echo "  python request: slot restore ${slot_ms} ms, cold run ${cold_ms} ms" >&2
  rm -rf "$s"
}

scenarios+=(python_requests_are_served_from_slots)

# --- warm slots (docs/checkpoint.md, "Warm slots") -----------------------------------------------

# warm_pids POOL: the processes of POOL's waiting Sentries (launchers and Sentries).
warm_pids() { pgrep -f -- "--serve-slot [0-9]* $1\$"; }

# warm_gone POOL: removes POOL and waits (bounded) until its waiting Sentries have gone.
warm_gone() {
  local i
  rm -rf "$1"
  for ((i = 0; i < 100; i++)); do
    [ -z "$(warm_pids "$1")" ] && return 0
    sleep 0.05
  done
  fail "waiting Sentries of $1 outlived it: $(warm_pids "$1" | tr '\n' ' ')"
}

# warm_waiting POOL N: waits (bounded) until N Sentries wait in POOL (two processes each).
warm_waiting() {
  local i
  for ((i = 0; i < 200; i++)); do
    [ "$(warm_pids "$1" | grep -c '')" -eq $((2 * $2)) ] && [ "$(ls "$1" | grep -c '^warm\.[0-9]*\.sock$')" -ge "$2" ] && return 0
    sleep 0.05
  done
  fail "not $2 waiting Sentries in $1: $(warm_pids "$1" | tr '\n' ' ')"
}

# A restore through a waiting Sentry goes on exactly as a cold one, golden image and delta;
# its slot is the golden image again afterwards, a new Sentry waits for it, and the socket is
# private.
warm_slot_restore_answers_like_a_cold_one() {
  [ -d "$WORK/golden-delta" ] || skip "needs golden_image_and_delta_restore_whole" || return
  local s=/dev/shm/minisentry-e2e-$$-warm cold=/dev/shm/minisentry-e2e-$$-cold img want got i
  rm -rf "$s" "$cold"
  ms slots --base "$WORK/golden" --count 2 --warm "$s"
  expect_status 0 || { warm_gone "$s"; return 1; }
  [ "$(stat -c %a "$s/warm.0.sock")" = 600 ] || { warm_gone "$s"; fail "socket mode $(stat -c %a "$s/warm.0.sock")"; return 1; }
  ms slots --base "$WORK/golden" --count 1 "$cold"
  expect_status 0 || { warm_gone "$s"; rm -rf "$cold"; return 1; }
  for img in "$WORK/golden" "$WORK/golden-delta"; do
    ms restore --stats --image "$img" --slots "$cold"
    expect_status 0 || { why="cold slot restore of $img: $why"; warm_gone "$s"; rm -rf "$cold"; return 1; }
    grep -q 'by its waiting Sentry' <<<"$err" && { warm_gone "$s"; rm -rf "$cold"; fail "a pool without --warm was served warm"; return 1; }
    want=$(sed -n 's/^sum //p' <<<"$out" | tr '\n' ' ')
    for i in 1 2 3; do
      ms restore --stats --image "$img" --slots "$s"
      expect_status 0 || { why="warm restore $i of $img: $why"; warm_gone "$s"; rm -rf "$cold"; return 1; }
      got=$(sed -n 's/^sum //p' <<<"$out" | tr '\n' ' ')
      [ "$got" = "$want" ] || { warm_gone "$s"; rm -rf "$cold"; fail "warm restore $i of $img: sums $got, want $want"; return 1; }
      grep -q 'claimed slot\.[0-9] by its waiting Sentry' <<<"$err" && grep -q 'stats: restore: wall' <<<"$err" &&
        grep -q 'slot: reset .* (tracked)' <<<"$err" ||
        { warm_gone "$s"; rm -rf "$cold"; fail "warm restore $i of $img: $(grep -E 'slot|wall' <<<"$err" | tr '\n' '|')"; return 1; }
      # The next restore of the same slot needs its new Sentry.
      warm_waiting "$s" 2 || { warm_gone "$s"; rm -rf "$cold"; return 1; }
    done
  done
  rm -rf "$cold"
  slot_equals_golden "$s/slot.0" && slot_equals_golden "$s/slot.1" || { warm_gone "$s"; return 1; }
  # An image that is not a delta of the golden image: the same one-line refusal.
  if [ -d "$WORK/slot-full" ]; then
    ms restore --image "$WORK/slot-full" --slots "$s"
    expect_one_line_error || { warm_gone "$s"; return 1; }
    grep -qF "not a delta of the slots' golden image" <<<"$err" || { warm_gone "$s"; fail "'$err'"; return 1; }
    warm_waiting "$s" 2 || { warm_gone "$s"; return 1; }
    slot_equals_golden "$s/slot.0" && slot_equals_golden "$s/slot.1" || { warm_gone "$s"; return 1; }
  fi
  # Requests that are not one (a short message, a long one with descriptors it does not
  # expect, a connection that says nothing) are dropped: the Sentries wait on and serve.
  python3 - "$s" <<'PY' || { warm_gone "$s"; fail "hostile requests: could not send them"; return 1; }
import os, socket, sys, time
for i in (0, 1):
    path = f"{sys.argv[1]}/warm.{i}.sock"
    a = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); a.connect(path); a.send(b"hello")
    b = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); b.connect(path)
    r, w = os.pipe()
    socket.send_fds(b, [b"MSWARM01" + b"\xff" * 8000], [r, w, r, w, r, w, r])
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); c.connect(path)
    time.sleep(0.1)
    for s in (a, b, c):
        s.close()
PY
  for i in 1 2; do
    ms restore --stats --image "$WORK/golden-delta" --slots "$s"
    expect_status 0 || { why="after hostile requests: $why"; warm_gone "$s"; return 1; }
    grep -q 'by its waiting Sentry' <<<"$err" || { warm_gone "$s"; fail "after hostile requests, not served warm: $(err_hint)"; return 1; }
    warm_waiting "$s" 2 || { warm_gone "$s"; return 1; }
  done
  warm_gone "$s"
}

# warm_shell_golden IMAGE: a golden image of a shell that waits to read a line, then sleeps
# if it read "wait", says what it read and exits with status 7.
warm_shell_golden() {
  local id="e2e-$$-warm-sh" o=$WORK/warm-sh.out p
  rm -rf "$1"
  { sleep "$TIMEOUT" | timeout -k 5 "$TIMEOUT" "$MS" run --id "$id" "$ROOTFS" -- \
    /bin/sh -c 'echo ready; read x; [ "$x" = wait ] && sleep 30; echo "got $x"; exit 7' >"$o" 2>"$o.err"; } &
  p=$!
  wait_line "$o" '^ready$' || { kill "$p" 2>/dev/null; return 1; }
  sleep 0.3
  checkpoint "$id" "$1" --golden || { kill "$p" 2>/dev/null; return 1; }
  pkill -P "$p" sleep 2>/dev/null
  wait "$p" 2>/dev/null || true
}

# The client of a warm restore exits as a direct restore would: with the guest's status, 128+N
# when a signal the Sentry takes (SIGTERM) ends the sandbox, and of the signal itself when it
# is one whose default is to kill (the sandbox is killed with it, its slot recovered later).
warm_restore_exit_status_and_signals() {
  local g=$WORK/warm-sh s=/dev/shm/minisentry-e2e-$$-warmsig p i
  warm_shell_golden "$g" || return
  rm -rf "$s"
  ms slots --base "$g" --count 2 --warm "$s"
  expect_status 0 || { warm_gone "$s"; return 1; }
  echo hello >"$WORK/in"
  ms restore --stats --image "$g" --slots "$s"
  expect_status 7 || { warm_gone "$s"; return 1; }
  [ "$out" = "got hello" ] && grep -q 'by its waiting Sentry' <<<"$err" || { warm_gone "$s"; fail "out '$out': $(err_hint)"; return 1; }
  local sig want
  for sig in TERM USR1; do
    warm_waiting "$s" 2 || { warm_gone "$s"; return 1; }
    echo wait >"$WORK/warm-in"
    "$MS" restore --stats --image "$g" --slots "$s" <"$WORK/warm-in" >"$WORK/warm-sig.out" 2>"$WORK/warm-sig.err" &
    p=$!
    for ((i = 0; i < 600; i++)); do
      grep -q 'memory loaded' "$WORK/warm-sig.err" 2>/dev/null && break
      sleep 0.05
    done
    grep -q 'by its waiting Sentry' "$WORK/warm-sig.err" || { kill -9 "$p"; warm_gone "$s"; fail "$sig: not warm: $(head -n3 "$WORK/warm-sig.err" | tr '\n' '|')"; return 1; }
    sleep 0.3
    kill -"$sig" "$p"
    wait_bounded "$p"
    want=$((128 + $(kill -l "$sig")))
    [ "$status" -eq "$want" ] || { warm_gone "$s"; fail "$sig: status $status, want $want: $(tr '\n' '|' <"$WORK/warm-sig.err")"; return 1; }
  done
  # The slot of the killed sandbox is recovered by its next claimer, never reused dirty.
  # (Its Sentry died with it: the first restore that reserves it starts a new one and is made
  # directly on the other slot; the new one recovers it when it is reserved again.)
  local seen=0
  for ((i = 0; i < 8 && !seen; i++)); do
    [ "$i" -lt 2 ] || warm_waiting "$s" 2 || { warm_gone "$s"; return 1; }
    echo again >"$WORK/in"
    ms restore --stats --image "$g" --slots "$s"
    expect_status 7 || { warm_gone "$s"; return 1; }
    [ "$out" = "got again" ] || { warm_gone "$s"; fail "after the kill: '$out'"; return 1; }
    grep -q recovered <<<"$err" && seen=1
  done
  [ "$seen" -eq 1 ] || { warm_gone "$s"; fail "the killed sandbox's slot was not recovered"; return 1; }
  warm_gone "$s" || return
  # A client killed outright: its Sentry sees the connection go, ends the sandbox and resets
  # the slot (no new Sentry: the client did not live to start one; `slots --warm` does).
  ms slots --base "$g" --count 1 --warm "$s"
  expect_status 0 || { warm_gone "$s"; return 1; }
  echo wait >"$WORK/warm-in"
  "$MS" restore --stats --image "$g" --slots "$s" <"$WORK/warm-in" >"$WORK/warm-sig.out" 2>"$WORK/warm-sig.err" &
  p=$!
  for ((i = 0; i < 200; i++)); do
    grep -q 'memory loaded' "$WORK/warm-sig.err" 2>/dev/null && break
    sleep 0.05
  done
  sleep 0.3
  kill -KILL "$p"
  wait_bounded "$p"
  for ((i = 0; i < 200; i++)); do
    [ -z "$(warm_pids "$s")" ] && break
    sleep 0.05
  done
  [ -z "$(warm_pids "$s")" ] || { warm_gone "$s"; fail "the sandbox of a killed client goes on"; return 1; }
  ms slots --warm "$s"
  expect_status 0 || { warm_gone "$s"; return 1; }
  echo after >"$WORK/in"
  ms restore --stats --image "$g" --slots "$s"
  expect_status 7 || { warm_gone "$s"; return 1; }
  [ "$out" = "got after" ] && grep -q 'by its waiting Sentry' <<<"$err" && ! grep -q recovered <<<"$err" ||
    { warm_gone "$s"; fail "after a killed client: '$out' $(grep slot: <<<"$err" | tr '\n' '|')"; return 1; }
  warm_gone "$s"
}

# Two warm restores at once get two slots and do not see each other's memory; a killed
# waiting Sentry leaves its slot clean: the restore that finds it gone is made directly, and a
# new Sentry waits for the slot afterwards.
warm_restores_at_once_and_a_killed_waiting_sentry() {
  local g=$WORK/warm-sh s=/dev/shm/minisentry-e2e-$$-warm2 a b sa sb
  [ -d "$g" ] || warm_shell_golden "$g" || return
  rm -rf "$s"
  ms slots --base "$g" --count 2 --warm "$s"
  expect_status 0 || { warm_gone "$s"; return 1; }
  echo first-sandbox-line | timeout -k 5 "$TIMEOUT" "$MS" restore --stats --image "$g" --slots "$s" >"$WORK/wiso.a" 2>"$WORK/wiso.a.err" &
  a=$!
  echo second-one | timeout -k 5 "$TIMEOUT" "$MS" restore --stats --image "$g" --slots "$s" >"$WORK/wiso.b" 2>"$WORK/wiso.b.err" &
  b=$!
  wait "$a"; sa=$?
  wait "$b"; sb=$?
  [ "$sa" -eq 7 ] && [ "$sb" -eq 7 ] || { warm_gone "$s"; fail "statuses $sa $sb: $(head -n1 "$WORK/wiso.a.err") $(head -n1 "$WORK/wiso.b.err")"; return 1; }
  grep -qx 'got first-sandbox-line' "$WORK/wiso.a" && grep -qx 'got second-one' "$WORK/wiso.b" ||
    { warm_gone "$s"; fail "outputs '$(tr '\n' '|' <"$WORK/wiso.a")' and '$(tr '\n' '|' <"$WORK/wiso.b")'"; return 1; }
  local sl_a sl_b
  sl_a=$(sed -n 's/.*claimed \(slot\.[0-9]*\) by its waiting Sentry.*/\1/p' "$WORK/wiso.a.err")
  sl_b=$(sed -n 's/.*claimed \(slot\.[0-9]*\) by its waiting Sentry.*/\1/p' "$WORK/wiso.b.err")
  [ -n "$sl_a" ] && [ -n "$sl_b" ] && [ "$sl_a" != "$sl_b" ] || { warm_gone "$s"; fail "slots '$sl_a' and '$sl_b'"; return 1; }
  # Every waiting Sentry killed: each restore is made directly, right, on a clean slot.
  warm_waiting "$s" 2 || { warm_gone "$s"; return 1; }
  # shellcheck disable=SC2046
  kill -KILL $(warm_pids "$s")
  local i
  for ((i = 0; i < 100; i++)); do
    [ -z "$(warm_pids "$s")" ] && break
    sleep 0.05
  done
  echo after-kill >"$WORK/in"
  ms restore --stats --image "$g" --slots "$s"
  expect_status 7 || { warm_gone "$s"; return 1; }
  [ "$out" = "got after-kill" ] || { warm_gone "$s"; fail "after the kill: '$out'"; return 1; }
  grep -q 'by its waiting Sentry' <<<"$err" && { warm_gone "$s"; fail "served by a killed Sentry?"; return 1; }
  grep -q recovered <<<"$err" && { warm_gone "$s"; fail "a killed waiting Sentry left its slot dirty"; return 1; }
  # The restore that found its Sentry gone started a new one.
  for ((i = 0; i < 200; i++)); do
    [ -n "$(warm_pids "$s")" ] && break
    sleep 0.05
  done
  [ -n "$(warm_pids "$s")" ] || { warm_gone "$s"; fail "no new waiting Sentry"; return 1; }
  python3 - "$s/slot.0" "$s/slot.1" "$g/pages.0" <<'PY' || { warm_gone "$s"; fail "a slot is not the golden image"; return 1; }
import os, sys
g = os.open(sys.argv[3], os.O_RDONLY)
n = os.fstat(g).st_size
for p in sys.argv[1:3]:
    f = os.open(p, os.O_RDONLY)
    if os.pread(f, n, 0) != os.pread(g, n, 0):
        sys.exit(1)
    try:
        os.lseek(f, n, os.SEEK_DATA)
        sys.exit(1)
    except OSError:
        pass
PY
  warm_gone "$s"
}

# A sandbox restored by a waiting Sentry is reachable by its name: listed, checkpointed (a
# tracked delta against the golden image, which ends it), and its client exits 0.
# A waiting Sentry's stub maps the golden image's mappings and has them watched ahead of time
# (docs/checkpoint.md, "Warm slots"): a delta restored onto its slot punches out golden pages
# that the delta holds nowhere (here, 2 MiB the guest had dropped), and a write there before
# the first checkpoint must still be seen: a --parent image of the delta, taken by tracking
# alone, restores to the guest's memory; the slot is the golden image again afterwards.
warm_slot_keeps_every_write() {
  local g=$WORK/lazyw-golden
  [ -d "$g" ] || skip "needs lazily_tracked_slot_keeps_every_write" || return
  local id="e2e-$$-warmw" o=$WORK/warmw.out d=$WORK/warmw-delta p1=$WORK/warmw-1
  local s=/dev/shm/minisentry-e2e-$$-warmw p want sums
  rm -rf "$d" "$p1" "$s"
  # The delta: the golden guest, its first 2 MiB dropped, checkpointed in its pause.
  { printf 'd 2\np 3\n'; sleep "$TIMEOUT"; } | timeout -k 5 "$TIMEOUT" "$MS" restore --id "$id" --image "$g" >"$o" 2>"$o.err" &
  p=$!
  wait_line "$o" '^pause$' || { kill "$p" 2>/dev/null; return 1; }
  checkpoint "$id" "$d" --base "$g" || { kill "$p" 2>/dev/null; return 1; }
  pkill -P "$p" sleep 2>/dev/null
  wait "$p" 2>/dev/null || true
  ms slots --base "$g" --count 1 --warm "$s"
  expect_status 0 || { warm_gone "$s"; return 1; }
  warm_waiting "$s" 1 || { warm_gone "$s"; return 1; }
  # Restored warm: the guest writes the dropped pages and 2 MiB of the golden image's holes,
  # sums, and pauses for a --parent image of the delta (tracked since the restore), then sums
  # again.
  { printf 'w 2\nW 2\ns\np 4\ns\n'; } | timeout -k 5 "$TIMEOUT" "$MS" restore --stats --id "$id" --image "$d" --slots "$s" >"$o" 2>"$o.err" &
  p=$!
  wait_line "$o" '^pause$' || { kill "$p" 2>/dev/null; warm_gone "$s"; return 1; }
  checkpoint "$id" "$p1" --leave-running --parent "$d" || { kill "$p" 2>/dev/null; warm_gone "$s"; return 1; }
  grep -q 'pages in the parent' "$WORK/ck.out" ||
    { kill "$p" 2>/dev/null; warm_gone "$s"; fail "no tracked --parent: $(cat "$WORK/ck.out")"; return 1; }
  bg_status "$p"
  expect_status 0 || { why="warm restore: $why"; warm_gone "$s"; return 1; }
  grep -q 'by its waiting Sentry' "$o.err" && grep -q 'slot: reset [0-9]* pages (tracked)' "$o.err" ||
    { warm_gone "$s"; fail "warm restore: $(grep -E 'slot|wall' "$o.err" | tr '\n' '|')"; return 1; }
  want=$(sed -n 's/^sum //p' "$o" | tr '\n' ' ')
  [ "$(wc -w <<<"$want")" -eq 2 ] || { warm_gone "$s"; fail "warm restore: sums '$want'"; return 1; }
  warm_waiting "$s" 1 || { warm_gone "$s"; return 1; }
  # Its content is the golden image's. (Pages past the golden image's that the guest only
  # read stay allocated, as zeros: a read of a hole of the file allocates a page, and the
  # reset follows the writes.)
  python3 - "$s/slot.0" "$g/pages.0" <<'PY' || { warm_gone "$s"; fail "slot.0 does not read as the golden image"; return 1; }
import os, sys
f = os.open(sys.argv[1], os.O_RDONLY); g = os.open(sys.argv[2], os.O_RDONLY)
n = os.fstat(g).st_size
if os.pread(f, n, 0) != os.pread(g, n, 0):
    sys.exit(1)
at = n
while True:
    try:
        a = os.lseek(f, at, os.SEEK_DATA)
    except OSError:
        break
    b = os.lseek(f, a, os.SEEK_HOLE)
    if os.pread(f, b - a, a).count(0) != b - a:
        sys.exit(1)
    at = b
PY
  warm_gone "$s"
  # The --parent image, restored: the guest ends its pause and sums what it has (its stdio
  # buffer holds the last "s"), then once more what it reads now.
  echo s >"$WORK/in"
  ms restore --image "$p1"
  : >"$WORK/in"
  expect_status 0 || { why="restore of the --parent image: $why"; return 1; }
  sums=$(sed -n 's/^sum //p' <<<"$out" | tr '\n' ' ')
  [ "$sums" = "${want#* }${want#* }" ] ||
    { fail "the --parent image of the warm restore: sums '$sums', want '${want#* }${want#* }'"; return 1; }
}

warm_restored_sandbox_checkpoints_by_its_name() {
  [ -d "$WORK/golden" ] || skip "needs golden_image_and_delta_restore_whole" || return
  local s=/dev/shm/minisentry-e2e-$$-warmck id="e2e-$$-warm-ck" o=$WORK/warm-ck.out d=$WORK/warm-ck p
  rm -rf "$s" "$d"
  ms slots --base "$WORK/golden" --count 1 --warm "$s"
  expect_status 0 || { warm_gone "$s"; return 1; }
  ms_bg "$o" restore --stats --id "$id" --image "$WORK/golden" --slots "$s"
  p=$bg_pid
  wait_line "$o" '^ready2$' || { kill "$p" 2>/dev/null; warm_gone "$s"; return 1; }
  grep -q 'by its waiting Sentry' "$o.err" || { kill "$p"; warm_gone "$s"; fail "not warm: $(head -n2 "$o.err" | tr '\n' '|')"; return 1; }
  ms list
  grep -q "^$id " <<<"$out" || { kill "$p"; warm_gone "$s"; fail "not listed: $out"; return 1; }
  checkpoint "$id" "$d" --base "$WORK/golden" || { kill "$p" 2>/dev/null; warm_gone "$s"; return 1; }
  bg_status "$p"
  [ "$status" -eq 0 ] || { warm_gone "$s"; fail "the warm restore exited with $status"; return 1; }
  grep -q 'pages in the base' "$WORK/ck.out" || { warm_gone "$s"; fail "not a delta: $(cat "$WORK/ck.out")"; return 1; }
  ms list
  ! grep -q "^$id " <<<"$out" || { warm_gone "$s"; fail "still listed after its end: $out"; return 1; }
  local want got
  want=$(sed -n 's/^sum //p' "$o" | tail -n1)
  ms restore --image "$d"
  expect_status 0 || { warm_gone "$s"; return 1; }
  got=$(sed -n 's/^sum //p' <<<"$out" | tail -n1)
  [ "$got" = "$want" ] || { warm_gone "$s"; fail "checksum $got, want $want"; return 1; }
  warm_gone "$s"
}

scenarios+=(
  warm_slot_restore_answers_like_a_cold_one
  warm_restore_exit_status_and_signals
  warm_restores_at_once_and_a_killed_waiting_sentry
  warm_restored_sandbox_checkpoints_by_its_name
  warm_slot_keeps_every_write
)
# The golden image and its delta, and the lazily tracked golden image, that the first of each
# chain leaves in $WORK for the others.
e2e_chain golden_image_and_delta_restore_whole delta_of_a_sandbox_not_from_the_golden_image \
  tracked_delta_of_a_restored_golden_image bad_bases_and_deltas_are_refused_with_one_line \
  slot_restore_is_a_plain_restore tracked_reset_counts_the_written_pages_wherever_the_guest_runs \
  killed_sandboxs_slot_is_recovered_not_reused_dirty warm_slot_restore_answers_like_a_cold_one \
  warm_restored_sandbox_checkpoints_by_its_name
e2e_chain lazily_tracked_slot_keeps_every_write warm_slot_keeps_every_write
