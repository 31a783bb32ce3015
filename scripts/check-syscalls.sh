#!/usr/bin/env bash
# Checks the syscall table of sentry/syscall.c against the code and the docs: every row's
# handler is defined under its own full name in sentry/ (a line starting
# `long sys_NAME(struct task *t, `), so that `grep -rn 'sys_NAME\b' sentry/` lands on it, and
# docs/syscalls.md is what `MINISENTRY --syscall-table` writes from the table.
#
#   check-syscalls.sh MINISENTRY
set -uo pipefail

if [ $# -ne 1 ]; then
	echo "usage: $0 MINISENTRY" >&2
	exit 2
fi
bin=$1
top=$(cd "$(dirname "$0")/.." && pwd)
fail=0

# The rows between `table[SYSCALL_MAX] = {` and `};`, one string (clang-format may break a
# row after its opening parenthesis).
rows=$(sed -n '/ table\[SYSCALL_MAX\] = {/,/^};/p' "$top/sentry/syscall.c" | tr '\n\t' '  ')
names=$(grep -oE '\b(ROWX?|PARTIALX?|NOSYS)\( *[a-z0-9_]+ *,' <<<"$rows" |
	sed -E 's/.*\( *([a-z0-9_]+) *,/\1/')
if [ -z "$names" ]; then
	echo "check-syscalls: no rows found in sentry/syscall.c" >&2
	exit 1
fi

# How many files of sentry/ define each handler, from one grep (not one per name).
declare -A defs=()
while read -r name; do
	defs[$name]=$((${defs[$name]:-0} + 1))
done < <(grep -oE '^long sys_[a-z0-9_]+\(struct task \*t, ' "$top"/sentry/*.c /dev/null |
	sed -E 's/^(.*):long sys_([a-z0-9_]+)\(.*/\1 \2/' | sort -u | cut -d' ' -f2)
for name in $names; do
	if [ "${defs[$name]:-0}" -ne 1 ]; then
		echo "check-syscalls: '$name' is in the table but 'long sys_$name(struct task *t, ...)'" \
			"is defined in ${defs[$name]:-0} files of sentry/ (want 1)" >&2
		fail=1
	fi
done

table=$("$bin" --syscall-table) || {
	echo "check-syscalls: '$bin --syscall-table' failed" >&2
	exit 1
}
listed=$(grep -cE '^\| [0-9]+ \|' <<<"$table")
if [ "$listed" -ne "$(wc -w <<<"$names")" ]; then
	echo "check-syscalls: the table has $listed rows but $(wc -w <<<"$names") were read" \
		"from sentry/syscall.c" >&2
	fail=1
fi
if ! diff -u "$top/docs/syscalls.md" - <<<"$table" >/dev/null; then
	echo "check-syscalls: docs/syscalls.md differs from the table;" \
		"run: $bin --syscall-table > docs/syscalls.md" >&2
	fail=1
fi

[ $fail = 0 ] && echo "check-syscalls: $(wc -w <<<"$names") handlers named, docs/syscalls.md current"
exit $fail
