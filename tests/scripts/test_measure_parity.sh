#!/usr/bin/env bash
# Parity first: sha256, allclose (.npy fixtures written by tests/programs/npywrite,
# figures computed by hand), --parity-command, --deterministic, and the
# failure paths (wrong output blocked after the smoke run with zero timed
# runs, pattern matching nothing, malformed .npy, shape/dtype mismatch, allclose
# given two outputs, an output the run did not write). Needs jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
P=${BENCHGATE_BUILD:?}/tests/programs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
M=("$B" measure -q -w 1 -r 3 --json)

# sha256 of one output
good=$(printf 'hello\n' | sha256sum | cut -d' ' -f1)
bad=$(printf 'bye\n' | sha256sum | cut -d' ' -f1)
check "sha256 pass"       test "$(rc_of "${M[@]}" --output out.txt --parity "sha256:$good" --shell -- 'echo hello >out.txt')" = 0
check "sha256 every run"  jqe '[.runs[] | select(.phase != "warmup") | .parity.result] == ["pass","pass","pass","pass"]' out
check "sha256 recorded"   jqe --arg h "$good" '.runs[0].outputs == [{"path":"out.txt","sha256":$h}] and .parity.result == "pass"' out
check "wrong output: exit 1" test "$(rc_of "${M[@]}" --output out.txt --parity "sha256:$bad" --shell -- 'echo hello >out.txt')" = 1
check "blocked after smoke" jqe '.status == "blocked" and .counts.timed == 0 and .counts.warmup == 0 and (.runs | length) == 1' out
check "reason names parity" jqe '.reason | test("parity failed on smoke run 1: sha256 [0-9a-f]{64} differs")' out
check "stored with no timed runs" test "$(rc_of "$B" session 2 --json; jq '.runs | length' out)" = 01
# a failure on a later timed run blocks too
check "later failure"     test "$(rc_of "${M[@]}" --output out.txt --parity "sha256:$good" --shell -- '[ -e seen3 ] && echo bye >out.txt || { [ -e seen2 ] && touch seen3; [ -e seen1 ] && touch seen2; touch seen1; echo hello >out.txt; }')" = 1
check "later failure reason" jqe '.reason | test("parity failed on timed run 2 \\(#4\\)")' out
# several outputs: the sha256sum-style listing
rm -f out.txt; printf 'a\n' >a.txt; printf 'b\n' >b.txt
listing=$(sha256sum a.txt b.txt | sha256sum | cut -d' ' -f1)
check "sha256 of listing" test "$(rc_of "${M[@]}" --output '*.txt' --parity "sha256:$listing" -- touch a.txt b.txt)" = 0
# names that sha256sum escapes (a backslash, a carriage return, a line feed):
# the listing is still `sha256sum FILES | sha256sum` (the first pattern
# escapes the backslash, as a glob needs)
cr=$(printf 'e\rf.dat') lf=$(printf 'g\nh.dat')
printf 'c\n' >'c\d.dat'; printf 'e\n' >"$cr"; printf 'g\n' >"$lf"
escaped=$(sha256sum 'c\d.dat' "$cr" "$lf" | sha256sum | cut -d' ' -f1)
check "names sha256sum escapes: exit 0" \
	test "$(rc_of "${M[@]}" --output 'c\\d.dat' --output "$cr" --output "$lf" --parity "sha256:$escaped" -- touch 'c\d.dat' "$cr" "$lf")" = 0
check "... as sha256sum lists them"  jqe '.status == "ok"' out
rm -f 'c\d.dat' "$cr" "$lf"

# a file matched twice (listed twice, or by overlapping patterns) is one
# output, where first matched
check "listed twice: exit 0" test "$(rc_of "${M[@]}" --output a.txt --output a.txt --parity "sha256:$(sha256sum a.txt | cut -d' ' -f1)" -- touch a.txt)" = 0
check "listed twice: once" jqe '[.runs[].outputs | length] == [1, 1, 1, 1, 1]' out
listing_ba=$(sha256sum b.txt a.txt | sha256sum | cut -d' ' -f1)
check "overlapping patterns: exit 0" test "$(rc_of "${M[@]}" --output b.txt --output '*.txt' --parity "sha256:$listing_ba" -- touch a.txt b.txt)" = 0
check "overlapping patterns: first-seen order" jqe '[.runs[0].outputs[].path] == ["b.txt", "a.txt"]' out

# an output the run did not write is stale, whatever it holds: a file left by
# an earlier run never passes parity, and a command that skips its work when
# its output exists is not timed as a no-op
touch -d '2020-01-02 03:04:05.678901234' a.txt
check "stale output: exit 1" test "$(rc_of "${M[@]}" --output '*.txt' --parity "sha256:$listing" -- touch b.txt)" = 1
check "stale output: reason" jqe '.reason == "parity failed on smoke run 1: output '"'a.txt'"' was not written by the run: it is the file that was there before (stale)" and .counts.timed == 0' out
check "stale output: its time put back" test "$(stat -c %y a.txt)" = "2020-01-02 03:04:05.678901234 +0000"
check "stale without parity: exit 1" test "$(rc_of "${M[@]}" --output a.txt -- true)" = 1
check "stale without parity: reason" jqe '.reason | test("smoke run 1: output .a.txt. was not written by the run")' out
check "skips when present: exit 1" test "$(rc_of "${M[@]}" --output c.txt --parity "sha256:$good" --shell -- '[ -e c.txt ] || echo hello >c.txt')" = 1
check "skips when present: blocked at the warmup" jqe '.reason | test("^warmup run 1 \\(#2\\): output .c.txt. was not written by the run")' out
check "rewritten, same bytes: ok" test "$(rc_of "${M[@]}" --output c.txt --parity "sha256:$good" --shell -- 'echo hello >c.txt')" = 0
check "replaced by rename: ok" test "$(rc_of "${M[@]}" --output c.txt --parity "sha256:$good" --shell -- 'echo hello >c.new && mv c.new c.txt')" = 0
# a file that already holds the sentinel (left by a benchgate killed with
# SIGKILL during a run, or copied with its times) is checked all the same:
# it was exempt for good, and a command that skips its work passed parity
touch -d '1970-01-01 00:00:01.123456789 UTC' c.txt
check "left marked: exit 1" test "$(rc_of "${M[@]}" --output c.txt --parity "sha256:$good" --shell -- '[ -e c.txt ] || echo hello >c.txt')" = 1
check "left marked: stale" jqe '.reason | test("output .c.txt. was not written by the run")' out
rm -f a.txt b.txt c.txt out.txt

# pattern matching no file
check "no match: exit 1"  test "$(rc_of "${M[@]}" --output 'nothing-*.bin' --parity "sha256:$good" -- true)" = 1
check "no match message"  jqe '.reason | test("output pattern .nothing-\\*\\.bin. matched no file")' out
check "no match without parity" test "$(rc_of "${M[@]}" --output 'nothing-*.bin' -- true)" = 1
# a folder the pattern cannot read (a loop of links) is said so, not "no file"
ln -s loopdir loopdir
check "unreadable folder in a pattern" test "$(rc_of "${M[@]}" --output 'loopdir/*.bin' -- true)" = 1
check "unreadable folder: said" jqe '.reason | test("output pattern .loopdir/\\*\\.bin.: a folder on its path cannot be read \\(loopdir\\): Too many levels of symbolic links")' out
rm loopdir

# allclose: ref = [1, 2, 3, 0], out = [1, 2.00001, 3.1, 0] (float64)
"$P/npywrite" ref.npy '<f8' 4 1 2 3 0
"$P/npywrite" close.npy '<f8' 4 1 2.00001 3.0 0
check "allclose pass"     test "$(rc_of "${M[@]}" --output out.npy --parity allclose:ref.npy --shell -- 'cp close.npy out.npy')" = 0
check "allclose figures"  jqe '.runs[0].parity | .result == "pass" and .beyond_tolerance == 0 and .elements == 4 and (.max_abs_error - 1e-5 | fabs) < 1e-12' out
"$P/npywrite" far.npy '<f8' 4 1 2.00001 3.1 0
check "allclose fail"     test "$(rc_of "${M[@]}" --output out.npy --parity allclose:ref.npy --shell -- 'cp far.npy out.npy')" = 1
# by hand: |3.1-3| = 0.1 beyond 1e-8 + 1e-5*3; max rel 0.1/3; rel L2 sqrt(1e-10 + 0.01)/sqrt(14)
check "allclose fail figures" jqe '.runs[0].parity | .beyond_tolerance == 1 and (.max_abs_error - 0.1 | fabs) < 1e-9 and (.max_rel_error - 0.1/3 | fabs) < 1e-9 and (.rel_l2_error - ((1e-10 + 0.01) | sqrt) / (14 | sqrt) | fabs) < 1e-9' out
check "allclose fail reason" jqe '.reason | test("1 of 4 elements of out.npy beyond rtol=1e-05 atol=1e-08")' out
check "allclose fail: the first element named" jqe '.reason | test("; the first at \\[2\\]: 3.1 against ref.npy.s 3$")' out
check "allclose with rtol" test "$(rc_of "${M[@]}" --output out.npy --parity allclose:ref.npy,rtol=0.05 --shell -- 'cp far.npy out.npy')" = 0
check "allclose with atol" test "$(rc_of "${M[@]}" --output out.npy --parity allclose:ref.npy,rtol=0,atol=0.2 --shell -- 'cp far.npy out.npy')" = 0
# Fortran order float32 2x2 vs C order reference of the same logical values
"$P/npywrite" ref2.npy '<f4' 2,2 1 2 3 4
"$P/npywrite" f2.npy '>f4' 2,2 -F -V 2 1 3 2 4
check "fortran vs C order" test "$(rc_of "${M[@]}" --output out.npy --parity allclose:ref2.npy --shell -- 'cp f2.npy out.npy')" = 0
# complex128 with a NaN: never passes
"$P/npywrite" cref.npy '<c16' 2 1 1 2 2
"$P/npywrite" cnan.npy '<c16' 2 1 1 nan 2
check "nan fails"          test "$(rc_of "${M[@]}" --output out.npy --parity allclose:cref.npy --shell -- 'cp cnan.npy out.npy')" = 1
# all NaN: no error figure is invented (null, never 0), and the NaNs are counted
"$P/npywrite" allnan.npy '<f8' 4 nan nan nan nan
check "all NaN fails"      test "$(rc_of "${M[@]}" --output out.npy --parity allclose:ref.npy --shell -- 'cp allnan.npy out.npy')" = 1
check "all NaN figures"    jqe '.runs[0].parity | .beyond_tolerance == 4 and .nonfinite_mismatches == 4 and .max_abs_error == null and .max_rel_error == null and .rel_l2_error == null and has("max_abs_error") and has("max_rel_error")' out
check "all NaN reason"     jqe '.reason | test("4 of 4 elements of out.npy beyond rtol=1e-05 atol=1e-08 \\(max abs error n/a; 4 of them NaN or infinite\\); the first at \\[0\\]: nan against ref.npy.s 1$")' out
# an error beyond the range of a double: null, present, and "inf" in the
# reason; the relative figures, from halves, are still there
"$P/npywrite" huge.npy '<f8' 4 1 2 -1.7e308 0
"$P/npywrite" hugeref.npy '<f8' 4 1 2 1.7e308 0
check "overflow fails"     test "$(rc_of "${M[@]}" --output out.npy --parity allclose:hugeref.npy --shell -- 'cp huge.npy out.npy')" = 1
check "overflow figures"   jqe '.runs[0].parity | .beyond_tolerance == 1 and .nonfinite_mismatches == 0 and has("max_abs_error") and .max_abs_error == null and .max_rel_error == 2 and .rel_l2_error == 2' out
check "overflow reason"    jqe '.reason | test("\\(max abs error inf\\); the first at \\[2\\]: -1.7e\\+308 against hugeref.npy.s 1.7e\\+308$")' out
# mismatches name both
"$P/npywrite" short.npy '<f8' 3 1 2 3
check "shape mismatch"    test "$(rc_of "${M[@]}" --output out.npy --parity allclose:ref.npy --shell -- 'cp short.npy out.npy')" = 1
check "shape message"     jqe '.reason | test("shape mismatch: output is \\(3,\\), reference is \\(4,\\)")' out
"$P/npywrite" ints.npy '<i8' 4 1 2 3 0
check "dtype mismatch"    test "$(rc_of "${M[@]}" --output out.npy --parity allclose:ref.npy --shell -- 'cp ints.npy out.npy')" = 1
check "dtype message"     jqe '.reason | test("dtype mismatch: output is int64, reference is float64")' out
printf 'not numpy' >junk.npy
check "malformed npy"     test "$(rc_of "${M[@]}" --output out.npy --parity allclose:ref.npy --shell -- 'cp junk.npy out.npy')" = 1
check "malformed message" jqe '.reason | test("out.npy: not a valid .npy file: missing the")' out
check "missing reference" test "$(rc_of "${M[@]}" --output out.npy --parity allclose:nope.npy --shell -- 'cp ref.npy out.npy')" = 1
check "reference message" jqe '.reason | test("nope.npy")' out
check "missing reference: nothing run" jqe '.runs == []' out
# the reference is read before the first run: a run that rewrites it, or
# an output that is the reference itself, proves nothing; a FIFO is
# refused, never waited on; its bytes are recorded
cp ref.npy ref-keep.npy
check "reference rewritten by the run: blocked" test "$(rc_of "${M[@]}" --output out.npy --parity allclose:ref.npy --shell -- 'cp far.npy ref.npy; cp far.npy out.npy')" = 1
check "reference rewritten: said" jqe '.reason | test("the reference .ref.npy. changed during the session")' out
cp ref-keep.npy ref.npy
check "reference made by the run: blocked" test "$(rc_of "${M[@]}" --output out.npy --parity allclose:made.npy --shell -- 'cp ref.npy made.npy; cp ref.npy out.npy')" = 1
check "reference made by the run: said" jqe '.reason | test("parity cannot be checked: the allclose reference: made.npy: cannot read")' out
rm -f made.npy
check "output is the reference: blocked" test "$(rc_of "${M[@]}" --output ref.npy --parity allclose:ref.npy --shell -- 'touch ref.npy')" = 1
check "output is the reference: said" jqe '.reason | test("the output .ref.npy. is the reference file itself")' out
check "reference only touched: still the reference" test "$(rc_of "${M[@]}" --output out.npy --parity allclose:ref.npy --shell -- 'cp close.npy out.npy; touch ref.npy')" = 0
check "the reference's SHA-256 recorded" jqe --arg h "$(sha256sum ref.npy | cut -c1-64)" '.options.parity.reference_sha256 == $h' out
# the reference as it is after the run decides: one written anew where the
# output is (its bytes the same) is the output itself; one moved away is
# no longer there, whatever the output's inode number
check "reference rewritten as the output: blocked" test "$(rc_of "$B" measure -q -w 0 -r 1 --json --output ref.npy --parity allclose:ref.npy --shell -- 'cp ref.npy t.npy; mv t.npy ref.npy')" = 1
check "... said" jqe '.reason | test("the output .ref.npy. is the reference file itself")' out
check "reference moved to the output: blocked" test "$(rc_of "${M[@]}" --output out.npy --parity allclose:ref.npy --shell -- 'rm -f out.npy; mv ref.npy out.npy')" = 1
check "... no longer there" jqe '.reason | test("the reference, read before the runs, is no longer there to compare with \\(ref.npy: cannot read: No such file or directory\\)")' out
cp ref-keep.npy ref.npy
check "a setting twice: exit 2" test "$(rc_of "$B" measure -q --output out.npy --parity allclose:ref.npy,rtol=1,rtol=2 -- true)" = 2
check "... said" grep -q "allclose setting 'rtol' is given twice; give it once" err
# a reference is read and checked before it is copied: 1 TB that is no
# array, or an array beyond the memory free, is refused at once
"$P/npywrite" vast.npy '|u1' 1099511627776,
if truncate -s $(($(stat -c %s vast.npy) + 1099511627776)) vast.npy 2>/dev/null &&
	truncate -s 1099511627776 vastjunk.npy 2>/dev/null; then
	check "1 TB of junk as the reference: exit 1" test "$(rc_of timeout 20 "${M[@]}" --output out.npy --parity allclose:vastjunk.npy -- true)" = 1
	check "... refused as no array" jqe '.reason | test("vastjunk.npy: not a valid .npy file: missing the")' out
	check "a 1 TB reference: exit 1" test "$(rc_of timeout 20 "${M[@]}" --output out.npy --parity allclose:vast.npy -- true)" = 1
	check "... beyond the memory free" jqe '.reason | test("vast.npy: cannot keep a copy of its 1099511627904 bytes \\(1048576.0 MiB\\) in memory: [0-9.]+ MiB is free; run where more memory is free")' out
else
	echo "skipped: this file system holds no 1 TB sparse file"
fi
rm -f vast.npy vastjunk.npy
mkfifo fifo.npy
check "FIFO reference: blocked, not waited on" test "$(rc_of timeout 20 "${M[@]}" --output out.npy --parity allclose:fifo.npy --shell -- 'cp ref.npy out.npy')" = 1
check "FIFO reference: said" jqe '.reason | test("fifo.npy: cannot read: not a regular file \\(a FIFO\\)")' out
rm -f fifo.npy
# Arrays are compared a block at a time, never converted whole into doubles,
# and the reference is kept in a memory file, not benchgate's own memory:
# two 48 MiB uint8 arrays within a 60 MB address space (9 bytes an element,
# 900 MB, before), and no run inherits a peak they made. A Fortran-ordered
# output against a C-ordered reference is read whole: beyond the memory
# allowed, the reason names the file, its size and what to do.
big=$((48 * 1048576))
"$P/npywrite" bigref.npy '|u1' 6144,8192 -Z "$big"
"$P/npywrite" bigf.npy '|u1' 6144,8192 -F -Z "$big"
M1=("$B" measure -q -w 0 -r 1 --json --output out.npy --parity allclose:bigref.npy --)
if ldd "$B" 2>/dev/null | grep -q libasan; then
	echo "skipped: an address-space limit and AddressSanitizer do not mix"
else
	check "48 MiB arrays within 60 MB: exit 0" \
		test "$(rc_of sh -c 'ulimit -v 60000; exec "$@"' sh "${M1[@]}" cp bigref.npy out.npy)" = 0
	check "... every element compared" jqe '.runs[1].parity | .result == "pass" and .elements == 50331648' out
	check "... no run inherits them" jqe '[.runs[].max_rss_floor_bytes] | max < 30000000' out
	check "Fortran against C order beyond memory: exit 1" \
		test "$(rc_of sh -c 'ulimit -v 60000; exec "$@"' sh "${M1[@]}" cp bigf.npy out.npy)" = 1
	check "... the file and its size named" jqe '.reason | endswith("out.npy: cannot read: stored in Fortran order and compared in C order, it is read whole, and its 50331648 bytes (48.0 MiB) do not fit in the memory this process may use; save both arrays in one order, or run where more memory is free")' out
fi
check "Fortran against C order: exit 0" test "$(rc_of "${M1[@]}" cp bigf.npy out.npy)" = 0
rm -f bigref.npy bigf.npy out.npy
cp ref.npy out2.npy
check "allclose, two outputs" test "$(rc_of "${M[@]}" --output 'out*.npy' --parity allclose:ref.npy --shell -- 'cp ref.npy out.npy; cp ref.npy out2.npy')" = 1
check "two outputs message" jqe '.reason | test("allclose needs exactly one output file, 2 matched \\(.out.npy., .out2.npy.\\); name the one file")' out
rm -f out2.npy
check "allclose, one file matched twice" test "$(rc_of "${M[@]}" --output out.npy --output 'out*.npy' --parity allclose:ref.npy --shell -- 'cp close.npy out.npy')" = 0

# --parity-command receives the output paths as its last arguments
printf 'x\n' >o1.txt; printf 'y\n' >o2.txt
printf '#!/bin/sh\ntest "$#" = 3 && test "$1" = first && test "$2" = o1.txt && test "$3" = o2.txt\n' >check.sh
chmod +x check.sh
check "parity command pass" test "$(rc_of "${M[@]}" --output 'o*.txt' --parity-command './check.sh first' -- touch o1.txt o2.txt)" = 0
check "parity command fail" test "$(rc_of "${M[@]}" --output 'o*.txt' --parity-command 'exit 7' -- touch o1.txt o2.txt)" = 1
check "parity command reason" jqe '.reason | test("parity command exited with status 7")' out
check "parity command record" jqe '.runs[0].parity | .exit_status == 7 and .signal == null' out
check "parity command killed" test "$(rc_of "${M[@]}" --output 'o*.txt' --parity-command 'kill -KILL $$' -- touch o1.txt o2.txt)" = 1
check "parity command killed reason" jqe '.reason | test("parity command was killed by signal 9 [(]SIGKILL: Killed[)]")' out
check "parity command killed record" jqe '.runs[0].parity | .exit_status == 137 and .signal == 9' out

# an output whose name is not UTF-8 reaches parity by its real bytes: the
# parity command gets it as an argument (a wrong one fails, a right one
# passes), the sha256 listing holds its bytes as sha256sum writes them, and
# allclose reads it
printf 'good\n' >want.txt
printf '#!/bin/sh\necho "$#" >nargs; for f; do cmp -s "$f" want.txt || exit 1; done\n' >cmp.sh
chmod +x cmp.sh
check "non-UTF-8 output, wrong: exit 1" test "$(rc_of "${M[@]}" --output 'u*' --parity-command ./cmp.sh --shell -- "echo WRONG >\"\$(printf 'u\\377')\"")" = 1
check "non-UTF-8 output, wrong: given" test "$(cat nargs)" = 1
check "non-UTF-8 output, right: exit 0" test "$(rc_of "${M[@]}" --output 'u*' --parity-command ./cmp.sh --shell -- "echo good >\"\$(printf 'u\\377')\"")" = 0
check "non-UTF-8 output, right: given" test "$(cat nargs)" = 1
check "non-UTF-8 output recorded" jqe '.runs[0].outputs[0].path == "u\\xff"' out
printf 'x\n' >"$(printf 'u\377')"; printf 'y\n' >u2
listing=$(sha256sum u2 "$(printf 'u\377')" | sha256sum | cut -d' ' -f1)
check "non-UTF-8 listing: exit 0" test "$(rc_of "${M[@]}" --output 'u*' --parity "sha256:$listing" -- touch "$(printf 'u\377')" u2)" = 0
rm -f u2 "$(printf 'u\377')"
check "non-UTF-8 allclose: exit 0" test "$(rc_of "${M[@]}" --output 'v*.npy' --parity allclose:ref.npy --shell -- "cp close.npy \"\$(printf 'v\\377.npy')\"")" = 0
rm -f "$(printf 'v\377.npy')"
check "non-UTF-8 allclose wrong: exit 1" test "$(rc_of "${M[@]}" --output 'v*.npy' --parity allclose:ref.npy --shell -- "cp far.npy \"\$(printf 'v\\377.npy')\"")" = 1
check "non-UTF-8 allclose wrong: figures" jqe '.runs[0].parity.beyond_tolerance == 1 and (.reason | test("elements of v\\\\xff.npy beyond"))' out
rm -f "$(printf 'v\377.npy')" want.txt cmp.sh nargs

# --deterministic: a timestamp differs every run
check "timestamp not deterministic" test "$(rc_of "${M[@]}" --deterministic --output stamp.txt -- "$P/stamp" stamp.txt)" = 1
check "deterministic reason" jqe '.deterministic == false and (.reason | test("outputs are not deterministic: in warmup run 1 \\(#2\\), .stamp.txt. differs from the smoke run.s \\(SHA-256 [0-9a-f]{12}[.]{3} against [0-9a-f]{12}[.]{3}\\)$"))' out
# a set of outputs that changes names the file that came or went
printf '#!/bin/sh\nn=$(cat n 2>/dev/null || echo 0); echo $((n + 1)) >n\nrm -f set*.txt; touch set$n.txt\n' >newname.sh
printf '#!/bin/sh\nn=$(cat n 2>/dev/null || echo 0); echo $((n + 1)) >n\nrm -f set*.txt; touch set2.txt; [ $n = 0 ] && touch set1.txt; exit 0\n' >gone.sh
chmod +x newname.sh gone.sh
rm -f n set*.txt
check "new output name: blocked" test "$(rc_of "${M[@]}" --deterministic --output 'set*.txt' -- ./newname.sh)" = 1
check "new output name: reason" jqe '.reason | test("outputs are not deterministic: in warmup run 1 \\(#2\\), .set1.txt. is an output the smoke run did not have$")' out
rm -f n set*.txt
check "output gone: blocked" test "$(rc_of "${M[@]}" --deterministic --output 'set*.txt' -- ./gone.sh)" = 1
check "output gone: reason" jqe '.reason | test("outputs are not deterministic: in warmup run 1 \\(#2\\), .set1.txt., an output of the smoke run, is not there$")' out
rm -f n set*.txt
check "same output deterministic" test "$(rc_of "${M[@]}" --deterministic --output same.txt --shell -- 'echo same >same.txt')" = 0
check "deterministic true" jqe '.deterministic == true' out
# blocked at its smoke run: no run was compared, so determinism is unknown
# (null, n/a in the summary), never "yes"
check "blocked at smoke: exit 1" test "$(rc_of "${M[@]}" --deterministic --output same.txt --parity "sha256:$(printf '0%.0s' {1..64})" --shell -- 'echo same >same.txt')" = 1
check "blocked at smoke: deterministic null" jqe '.deterministic == null and .counts.timed == 0' out
check "blocked at smoke: n/a said" bash -c "'$B' session \$(jq .id out) | grep -qF 'deterministic: n/a (no run after the smoke run to compare)'"

# a timed run whose outputs fail a check is not in the statistics, nor in
# the store's wall_* columns: the run that blocks (run 5, the third timed
# run) sleeps 0.3 s and fails parity; the two timed runs before it take far less
cat >slowbad.sh <<'SH'
#!/bin/sh
n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n >count
if [ $n = 5 ]; then sleep 0.3; echo bye >out.txt; else echo hello >out.txt; fi
SH
chmod +x slowbad.sh
rm -f count
check "failed timed run: exit 1" test "$(rc_of "${M[@]}" --output out.txt --parity "sha256:$good" -- ./slowbad.sh)" = 1
check "failed timed run: blocked there" jqe '.counts.timed == 3 and (.reason | test("parity failed on timed run 3 \\(#5\\)"))' out
check "failed timed run: not counted" jqe '.statistics.wall_ns.count == 2 and .statistics.wall_ns.max < 2.5e8 and .statistics.cpu_ns.count == 2' out
id=$(jq .id out)
check "failed timed run: not in the store" test "$("$B" sessions --json | jq --argjson id "$id" '.[] | select(.id == $id) | .wall_max_ns < 2.5e8 and .timed_runs == 3')" = true
# the same for a run whose outputs differ from the smoke run's (--deterministic)
cat >slowdiff.sh <<'SH'
#!/bin/sh
n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n >count
if [ $n = 3 ]; then sleep 0.3; echo other >same.txt; else echo same >same.txt; fi
SH
chmod +x slowdiff.sh
rm -f count
check "not deterministic: exit 1" test "$(rc_of "${M[@]}" --deterministic --output same.txt -- ./slowdiff.sh)" = 1
check "not deterministic: not counted" jqe '.counts.timed == 1 and .statistics.wall_ns == null and .statistics.tree_peak_bytes == null' out
rm -f count slowbad.sh slowdiff.sh out.txt same.txt

# an output that is not a regular file is refused, never read without end
# (a link to /dev/zero) or waited on (a FIFO)
ln -s /dev/zero zero.out && mkfifo fifo.out
check "output a device: blocked" test "$(rc_of timeout -k 5 30 "${M[@]}" --output zero.out -- true)" = 1
check "output a device: reason" jqe '.reason == "smoke run 1: zero.out: cannot read: it is not a regular file"' out
check "output a FIFO: blocked" test "$(rc_of timeout -k 5 30 "${M[@]}" --output fifo.out -- true)" = 1
check "output a FIFO: reason" jqe '.reason == "smoke run 1: fifo.out: cannot read: it is not a regular file"' out
# a folder: the files in it were surely meant, and the reason says how to name them
mkdir -p outdir
check "output a folder: blocked" test "$(rc_of "${M[@]}" --output outdir -- true)" = 1
check "output a folder: reason" jqe '.reason == "smoke run 1: output '"'outdir'"' is a folder, not a file: name the files a run writes (those in it: '"'outdir/*'"')"' out
rm -f zero.out fifo.out

# a warmup's outputs are not checked by parity: with a parity check
# declared, a warmup that wrote no output, or left the smoke run's, is
# blocked as without one, and --deterministic is false (it was let
# through, stored ok and deterministic)
cat >w.sh <<'EOF'
#!/bin/sh
n=$(cat cnt 2>/dev/null || echo 0); n=$((n + 1)); echo $n >cnt
[ "$n" = 2 ] && { rm -f out.txt; exit 0; }
echo same >out.txt
EOF
chmod +x w.sh
same=$(echo same | sha256sum | cut -d' ' -f1)
for par in "--parity-command true" "--parity sha256:$same"; do
	rm -f cnt out.txt
	# shellcheck disable=SC2086
	check "warmup wrote nothing, $par: blocked (exit 1)" test "$(rc_of "$B" measure -q -w 1 -r 2 --json --output out.txt --deterministic $par -- ./w.sh)" = 1
	check "... for its output, not deterministic" jqe '.status == "blocked" and .reason == "warmup run 1 (#2): output pattern '"'out.txt'"' matched no file" and .deterministic == false' out
done
cat >keep.sh <<'EOF'
#!/bin/sh
n=$(cat cnt 2>/dev/null || echo 0); n=$((n + 1)); echo $n >cnt
[ "$n" = 2 ] && exit 0
echo same >out.txt
EOF
chmod +x keep.sh
rm -f cnt out.txt
check "warmup left the smoke run's output, parity declared: blocked" test "$(rc_of "$B" measure -q -w 1 -r 2 --json --output out.txt --parity-command true -- ./keep.sh)" = 1
check "... as stale" jqe '.status == "blocked" and (.reason | startswith("warmup run 1 (#2): output '"'out.txt'"' was not written by the run"))' out
rm -f cnt out.txt w.sh keep.sh

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
