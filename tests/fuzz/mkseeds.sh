#!/usr/bin/env bash
# Regenerates the checked-in seed corpora of tests/fuzz/corpus/ from real sandboxes and real
# executables (run by hand after a change to the image format; `make fuzz` only reads them):
#   restore/, image/   checkpoints of small sandboxes (an idle shell, the e2e scenes, and
#                      tests/fuzz/seedscene.c, which holds one object of every kind), by
#                      build-fuzz/seedtool
#   elf/               small executables: musl dynamic, static and static-pie, a script
# Usage: tests/fuzz/mkseeds.sh MINISENTRY ROOTFS
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 MINISENTRY ROOTFS" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
ms=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
rootfs=$(cd "$2" && pwd)
seedtool=$top/build-fuzz/seedtool
corpus=$here/corpus
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make -C "$top" --no-print-directory build-fuzz/seedtool >/dev/null
mkdir -p "$rootfs/opt/fuzz" "$corpus/restore" "$corpus/image" "$corpus/elf"
gcc -static -O2 -pthread -Wall -Wextra -Werror -Wno-unused-result "$here/seedscene.c" -o "$rootfs/opt/fuzz/seedscene"

# image NAME MODE CMD...: runs CMD in a sandbox, checkpoints it once it printed "ready" (or at
# once for an idle shell), and writes both seeds; MODE is seedtool's restore or restore-full.
image() {
	local name=$1 mode=$2 id="seed-$$-$1"
	shift 2
	"$ms" run --id "$id" "$rootfs" -- "$@" </dev/null >"$work/$name.out" 2>&1 &
	local pid=$!
	for _ in $(seq 100); do
		grep -q ready "$work/$name.out" 2>/dev/null && break
		"$ms" list 2>/dev/null | awk 'NR > 1 { print $1 }' | grep -qx "$id" &&
			[ "$name" = idle-shell ] && break
		sleep 0.1
	done
	sleep 0.3
	"$ms" checkpoint --image "$work/$name" "$id"
	wait "$pid" || true
	"$seedtool" "$mode" "$work/$name" "$corpus/restore/$name"
	"$seedtool" image "$work/$name" "$corpus/image/$name"
}

# One seed keeps its memory pages; the others' would only be bytes to mutate in vain.
image idle-shell restore-full /bin/sh -c 'sleep 3'
image pipeline restore /bin/sh -c 'cd /tmp; echo x >f; (sleep 3 | cat) & echo ready; wait'
image seedscene restore /opt/fuzz/seedscene 3
for s in threads zombie mmap socket timer; do
	image "scene-$s" restore /usr/local/bin/scene "$s" 3
done

# Executables: small ones only (the corpus stays small).
cp "$rootfs/usr/local/bin/hello" "$corpus/elf/musl-dynamic"
printf '#include <unistd.h>\nint main(void){return write(1,"hi\\n",3)!=3;}\n' >"$work/tiny.c"
musl-gcc -static -Os "$work/tiny.c" -o "$corpus/elf/musl-static"
musl-gcc -static-pie -fPIE -Os "$work/tiny.c" -o "$corpus/elf/musl-static-pie"
strip "$corpus/elf/musl-dynamic" "$corpus/elf/musl-static" "$corpus/elf/musl-static-pie"
printf '#!/bin/sh -e\necho hi\n' >"$corpus/elf/script"
du -sh "$corpus"/*
