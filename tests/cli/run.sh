#!/usr/bin/env bash
# CLI golden cases: one folder per case under tests/cli/cases/.
#   tree          name of a folder under tests/cli/trees/ copied as the project
#                 (absent: an empty project folder)
#   setup         optional shell script run in the copy before the command
#   args          benchgate's arguments, one per line
#   expect.rc     the exit status
#   expect.stdout optional: stdout exactly
#   expect.stderr optional: stderr exactly
#   expect.mention optional: lines that must each appear in stdout+stderr
#   expect.files/ optional: files that must equal those in the copy
#   expect.absent optional: paths, one per line, that must not be in the copy
# Outputs show the scratch folder as SCRATCH (the machine lease's lock,
# $BENCHGATE_MACHINE_LOCK, is SCRATCH/machine.lock).
# Adding a case needs no code. Ends with "N passed, N failed".
#   tests/cli/run.sh BENCHGATE [CASE-GLOB]
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: run.sh BENCHGATE [CASE-GLOB]}
case "$bin" in /*) ;; *) bin="$(pwd)/$bin" ;; esac
glob=${2:-*}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# the machine lease of the cases' runs; outputs show it as SCRATCH/machine.lock
export BENCHGATE_MACHINE_LOCK="$scratch/machine.lock"
passed=0
failed=0
fail() { failed=$((failed + 1)); echo "FAIL $1: $2"; [ -n "${3:-}" ] && [ -s "$3" ] && head -n 30 "$3" | sed 's/^/    /'; }
for dir in "$here"/cases/$glob; do
	[ -d "$dir" ] || continue
	name=$(basename "$dir")
	root="$scratch/root"
	rm -rf "$root" "$BENCHGATE_MACHINE_LOCK"
	if [ -f "$dir/tree" ]; then
		cp -R "$here/trees/$(cat "$dir/tree")" "$root"
	else
		mkdir -p "$root"
	fi
	if [ -f "$dir/setup" ] && ! (cd "$root" && bash "$dir/setup" >"$scratch/setup.log" 2>&1); then
		fail "$name" "setup failed" "$scratch/setup.log"; continue
	fi
	args=()
	[ -f "$dir/args" ] && mapfile -t args <"$dir/args"
	(cd "$root" && timeout 60 "$bin" "${args[@]}" >"$scratch/out" 2>"$scratch/err" </dev/null)
	rc=$?
	sed -i "s|$scratch/|SCRATCH/|g" "$scratch/out" "$scratch/err"
	want=$(cat "$dir/expect.rc")
	if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$scratch/err"; then
		fail "$name" "sanitizer report" "$scratch/err"; continue
	fi
	if [ "$rc" != "$want" ]; then
		cat "$scratch/out" "$scratch/err" >"$scratch/all"
		fail "$name" "exit status $rc, expected $want" "$scratch/all"; continue
	fi
	if [ -f "$dir/expect.stdout" ] && ! diff -u "$dir/expect.stdout" "$scratch/out" >"$scratch/diff"; then
		fail "$name" "stdout differs" "$scratch/diff"; continue
	fi
	if [ -f "$dir/expect.stderr" ] && ! diff -u "$dir/expect.stderr" "$scratch/err" >"$scratch/diff"; then
		fail "$name" "stderr differs" "$scratch/diff"; continue
	fi
	if [ -f "$dir/expect.mention" ]; then
		cat "$scratch/out" "$scratch/err" >"$scratch/all"
		missing=""
		while IFS= read -r word; do
			[ -n "$word" ] || continue
			grep -qF -- "$word" "$scratch/all" || missing="$missing '$word'"
		done <"$dir/expect.mention"
		if [ -n "$missing" ]; then fail "$name" "output does not mention:$missing" "$scratch/all"; continue; fi
	fi
	if [ -d "$dir/expect.files" ]; then
		bad=""
		while IFS= read -r f; do
			rel=${f#"$dir/expect.files/"}
			diff -u "$f" "$root/$rel" >"$scratch/diff" 2>&1 || { bad="$rel"; break; }
		done < <(find "$dir/expect.files" -type f | sort)
		if [ -n "$bad" ]; then fail "$name" "file $bad differs" "$scratch/diff"; continue; fi
	fi
	if [ -f "$dir/expect.absent" ]; then
		there=""
		while IFS= read -r rel; do
			[ -n "$rel" ] || continue
			[ -e "$root/$rel" ] || [ -L "$root/$rel" ] && there="$there '$rel'"
		done <"$dir/expect.absent"
		if [ -n "$there" ]; then fail "$name" "left in the project:$there"; continue; fi
	fi
	passed=$((passed + 1))
	echo "ok $name"
done
echo "${passed} passed, ${failed} failed"
[ "$failed" = 0 ]
