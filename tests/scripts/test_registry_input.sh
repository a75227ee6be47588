#!/usr/bin/env bash
# How the registry verbs read their JSON files (bg_file_view in
# src/core/fsutil.c): files of 32 KiB or more are mapped, smaller ones and
# non-regular files are read. Both ways must give the same values and the
# same error messages; a mapped file that ends exactly on a page boundary
# still parses; the render check compares with a mapped document as with a
# read one; render streams the document into its file, a failed render
# leaves nothing (not even folders made before mkdir -p failed), and a
# replaced document keeps its permissions (whatever the umask); --config from a subfolder
# keeps the root found upwards; a file that is not regular (a FIFO) is read,
# up to 256 MiB (/dev/zero is not read forever); and the program
# turns SIGBUS (a mapped file truncated by another process) into a clean
# I/O failure, exit 4. A removed working directory stops benchgate with a
# message that says what to do, unless an absolute -C DIR makes it unneeded.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
SRC=${BENCHGATE_SOURCE:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
reg=benchmarks/benchmark_registry.json

cp -R "$SRC/tests/cli/trees/mini" small
chmod -R u+w small
# a string with every kind of escape and non-ASCII text, in a gate that show prints
sed -i '0,/"next_gate": ""/s||"next_gate": "caf\\u00e9 \\"q\\" tab\\tend \\ud83d\\ude00 ü \\/ \\\\"|' small/$reg
check "the escapes are in the registry" grep -qF 'tab\tend \ud83d\ude00 ü \/ \\"' small/$reg
cp -R small big
printf '%*s\n' 40000 '' >>big/$reg # trailing whitespace: now over 32 KiB, so mapped
check "the padded registry is over 32 KiB" test "$(wc -c <big/$reg)" -gt 32768

gate=bin.cpu.test-box.bin1.warm
check "show: read" test "$(rc_of "$B" -C small show $gate)" = 0
cp out small.show
check "show: mapped" test "$(rc_of "$B" -C big show $gate)" = 0
cp out big.show
check "show: same output both ways" cmp small.show big.show
check "show: escapes decoded, dumped as Python does" \
	grep -qF '"next_gate": "caf\u00e9 \"q\" tab\tend \ud83d\ude00 \u00fc / \\"' big.show
for verb in list next; do
	"$B" -C small $verb >small.$verb 2>&1
	"$B" -C big $verb >big.$verb 2>&1
	check "$verb: output at all" test -s small.$verb
	check "$verb: same output both ways" cmp small.$verb big.$verb
done

# the text ends exactly at the end of a page: the byte after it is still readable and '\0'
cp -R small edge
size=$(wc -c <edge/$reg)
printf '%*s' $((65536 - size)) '' >>edge/$reg
check "the registry is exactly 64 KiB" test "$(wc -c <edge/$reg)" = 65536
check "show: a registry ending on a page boundary" test "$(rc_of "$B" -C edge show $gate)" = 0
check "show: page-boundary output the same" cmp small.show out

# malformed: the same message (file, line, column, token) both ways
for t in small big; do
	sed -i '0,/"owner"/s//"own\\er"/' $t/$reg
done
check "malformed, read: exit 1" test "$(rc_of "$B" -C small list)" = 1
cp err small.err
check "malformed, mapped: exit 1" test "$(rc_of "$B" -C big list)" = 1
check "malformed: same message both ways" bash -c "test -s small.err && cmp small.err err"
check "malformed: names file, line, column and token" \
	grep -qE "benchmarks/benchmark_registry.json:[0-9]+:[0-9]+: invalid JSON: invalid escape near '\"own\\\\e'" err

# the render check compares with the document's view (mapped when big):
# CRLF line ends still match, one byte less or more is stale
awk -v n=100 -v dir="$work/gen" -f "$SRC/bench/gen-registry.awk"
"$B" -C gen render >/dev/null
doc=gen/docs/_generated/benchmark_coverage.md
check "the generated document is over 32 KiB" test "$(wc -c <$doc)" -gt 32768
check "validate: a mapped document that matches" test "$(rc_of "$B" -C gen validate)" = 0
cp $doc doc.orig
sed -i 's/$/\r/' $doc
check "validate: CRLF line ends match" test "$(rc_of "$B" -C gen validate)" = 0
cp doc.orig $doc
truncate -s -1 $doc
check "validate: one byte short is stale" test "$(rc_of "$B" -C gen validate)" = 1
check "validate: stale names the fix" grep -qF "generated benchmark coverage is stale; run benchgate render" out
cp doc.orig $doc
echo >>$doc
check "validate: one byte more is stale" test "$(rc_of "$B" -C gen validate)" = 1
rm $doc
check "validate: a missing document is stale" test "$(rc_of "$B" -C gen validate)" = 1

# render writes the document as it is produced: the same bytes every time,
# validate agrees; a render that fails writes nothing (no file, no
# temporary file, no directory it would have made, the old document kept)
check "render --output: exit 0" test "$(rc_of "$B" -C gen render --output again.md)" = 0
check "render --output: the same bytes as the first render" cmp doc.orig gen/again.md
"$B" -C gen render >/dev/null
check "render: the same bytes again" cmp $doc gen/again.md
check "validate after render" test "$(rc_of "$B" -C gen validate)" = 0
cp -R small bad
sed -i 's/"state": "blocked"/"state": "done"/' bad/$reg
cp bad/docs/_generated/benchmark_coverage.md before.md
check "a failing render: exit 1" test "$(rc_of "$B" -C bad render --output new/deeper/cov.md)" = 1
check "a failing render: no directory made" test ! -e bad/new
check "a failing render into the default path: exit 1" test "$(rc_of "$B" -C bad render)" = 1
check "a failing render: the old document kept" cmp before.md bad/docs/_generated/benchmark_coverage.md
check "a failing render: no temporary file left" test -z "$(ls bad/docs/_generated | grep tmp)"
# folders made before mkdir -p failed (a name too long) are removed too
long=$(printf 'x%.0s' $(seq 300))
check "render into a path it cannot make: exit 4" \
	test "$(rc_of "$B" -C gen render --output "newA/newB/$long/x.md")" = 4
check "render into a path it cannot make: the folders it made removed" test ! -e gen/newA
check "render with stdout unwritable: exit 4" test "$(rc_of sh -c "'$B' -C gen render >/dev/full")" = 4
# --output /dev/stdout into a pipe: a link through /proc to a pipe, not "a link to nothing"
"$B" -C gen render --output /dev/stdout 2>"$work/err" | cat >/dev/null
rc=${PIPESTATUS[0]}
check "render --output /dev/stdout into a pipe: exit 4" test "$rc" = 4
check "render --output /dev/stdout into a pipe: said" \
	grep -qx "benchgate: /dev/stdout: cannot write: it leads to something that is not a regular file (a pipe, a terminal or a device); name a file" "$work/err"
chmod 600 $doc
"$B" -C gen render >/dev/null
check "render keeps the document's permissions" test "$(stat -c %a $doc)" = 600
# whatever the umask: a document others may read stays readable to them
chmod 644 $doc
(umask 077 && "$B" -C gen render >/dev/null)
check "render keeps 644 under umask 077" test "$(stat -c %a $doc)" = 644
chmod 664 $doc
(umask 077 && "$B" -C gen render >/dev/null)
check "render keeps 664 under umask 077" test "$(stat -c %a $doc)" = 664
rm $doc
(umask 077 && "$B" -C gen render >/dev/null)
check "a new document follows the umask" test "$(stat -c %a $doc)" = 600

# --config names the file; the root is still found upwards from a subfolder
cp -R "$SRC/tests/cli/trees/mini" sub
check "--config from a subfolder: exit 0" \
	test "$(rc_of sh -c "cd sub/benchmarks && '$B' --config ../benchgate.json check")" = 0
check "--config from a subfolder: the project checked" grep -q "OK -- 4 platform" out

# a FIFO is read, not mapped
cp -R edge fifo
mv fifo/$reg fifo/registry.data
mkfifo fifo/$reg
timeout 10 cat fifo/registry.data >fifo/$reg &
check "show: a registry read from a FIFO" test "$(rc_of "$B" -C fifo show $gate)" = 0
check "show: FIFO output the same" cmp small.show out
wait
# memory exhausted (a 30 MB registry under a 20 MB address-space limit):
# said, exit 4, no abort (not under the sanitizers, which need the space)
if ! ldd "$B" 2>/dev/null | grep -q libasan; then
	cp -R small oom
	{ printf '{"pad": "'; head -c 30000000 /dev/zero | tr '\0' a; printf '", '; tail -c +2 small/$reg; } >oom/$reg
	check "out of memory: exit 4" test "$(rc_of sh -c "ulimit -v 20000; exec '$B' -C oom validate")" = 4
	check "out of memory: said" grep -q "^benchgate: out of memory (allocating [0-9]* bytes)$" err
	rm -rf oom
fi
# an endless device named as a project file: read up to 256 MiB, then exit 4
check "a registry that never ends: exit 4" \
	test "$(rc_of timeout 60 "$B" --config /dev/zero -C fifo show $gate)" = 4
check "a registry that never ends: said" \
	grep -qx "benchgate: /dev/zero: cannot read: more than 256 MiB from a file that is not a regular file (a device or a pipe); name a regular file" err

# SIGBUS: benchgate blocks opening a FIFO with no writer, then gets the signal
"$B" -C fifo show $gate >out 2>err &
pid=$!
for _ in $(seq 100); do # until it waits in open() for a writer
	grep -q partner /proc/$pid/wchan 2>/dev/null && break
	sleep 0.05
done
kill -BUS $pid
wait $pid
check "SIGBUS: exit 4" test $? = 4
check "SIGBUS: a message a person can act on" grep -qF "benchgate: bus error (SIGBUS)" err

# a working directory that was removed: without -C (or with a relative one)
# nothing can be found, and the message says what to do; an absolute -C DIR
# does not need it
mkdir gone
cp -R "$SRC/tests/cli/trees/mini" intact
chmod -R u+w intact
(cd gone && rmdir "$work/gone" &&
	{ "$B" list >"$work/gone.out" 2>"$work/gone.err"; echo $? >"$work/gone.rc"
	  "$B" -C "$work/intact" list >"$work/gone-c.out" 2>"$work/gone-c.err"; echo $? >"$work/gone-c.rc"; })
check "working directory removed: exit 4" test "$(cat gone.rc)" = 4
check "working directory removed: says what to do" grep -qxF \
	"benchgate: cannot determine the working directory: No such file or directory; change to the project's folder, or name it with -C DIR" gone.err
check "working directory removed, absolute -C: exit 0" test "$(cat gone-c.rc)" = 0
check "working directory removed, absolute -C: the gates" grep -qF "$gate" gone-c.out

echo "$fails failed"
[ "$fails" = 0 ]
