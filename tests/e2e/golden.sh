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
  ms_bg "$o" run --id "$id" "$ROOTFS" -- /usr/local/bin/memfill random 1 3
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
  ms_bg "$o" run --id "$id" "$ROOTFS" -- /usr/local/bin/memfill random 1 3
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
  bad_bases_and_deltas_are_refused_with_one_line
)
