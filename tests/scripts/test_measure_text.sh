#!/usr/bin/env bash
# Outside text that is not UTF-8 (arguments, output and eviction paths,
# environment names and values, the working directory, messages quoting
# them) stays in the session document as text with \xNN for each byte that
# is not UTF-8: never a member or an array element that silently vanishes.
# Needs jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
printf '{"schema_version": 1}\n' >benchgate.json
bad=$(printf 'a\377b')

# an argument: in command and provenance.argv, in its place
check "argument: exit 0" test "$(rc_of "$B" measure -q -r 1 -w 0 --json -- /bin/echo "$bad" x)" = 0
check "argument in command" jqe '.command == ["/bin/echo", "a\\xffb", "x"]' out
check "argument in argv" jqe '.provenance.argv[-3:] == ["/bin/echo", "a\\xffb", "x"]' out
"$B" session "$(jq .id out)" --json >stored.json
# the runs table ends each line at its last word (an empty flags column adds no spaces)
check "session: no trailing spaces" bash -c '"$1" session "$2" >shown && grep -q "^  1 " shown && ! grep -q " $" shown' _ "$B" "$(jq .id out)"
check "stored as printed" jqe --slurpfile o out '(del(.runs) == ($o[0] | del(.runs))) and .id > 0' stored.json

# environment: a name and a --env value
check "environment: exit 0" test "$(rc_of env "$(printf 'BG_N\377')=1" "BG_V=$bad" "$B" measure -q -r 1 -w 0 --json --env BG_V -- true)" = 0
check "name kept" jqe '.provenance.environment | has("BG_N\\xff")' out
check "value kept" jqe '.provenance.environment.BG_V == "a\\xffb"' out

# the working directory
mkdir "$bad"
check "cwd: exit 0" test "$(cd "$bad" && rc_of "$B" measure -q -r 1 -w 0 --json -- true)" = 0
check "cwd kept" jqe '.provenance.cwd == "a\\xffb"' out

# an output path, its pattern, and a blocked session's reason quoting a path
check "output: exit 0" test "$(rc_of "$B" measure -q -r 1 -w 0 --json --output 'res*' -- touch "$(printf 'res\377')")" = 0
check "output path kept" jqe '[.runs[].outputs[0].path] == ["res\\xff", "res\\xff"] and (.runs[0].outputs[0].sha256 | length) == 64' out
check "pattern kept" test "$(rc_of "$B" measure -q -r 1 -w 0 --json --output "$(printf 'nope\377*')" -- true)" = 1
check "pattern in options" jqe '.options.outputs == ["nope\\xff*"]' out
check "reason kept" jqe '.reason == "smoke run 1: output pattern '"'nope\\\\xff*'"' matched no file"' out
check "reason on stderr" grep -qF "blocked: smoke run 1: output pattern 'nope\\xff*' matched no file" err
check "no (null) on stderr" bash -c "! grep -q '(null)' '$work/err'"
# outputs_error of a run record: a stale output named by bytes that are not UTF-8
touch "$(printf 'old\377')"
check "stale: exit 1" test "$(rc_of "$B" measure -q -r 1 -w 0 --json --output 'old*' -- true)" = 1
check "outputs_error kept" jqe '.runs[0].outputs_error | test("^output .old\\\\xff. was not written by the run")' out

# an evicted file and a shell command
printf 'x' >"$(printf 'ev\377')"
check "evict: exit 0" test "$(rc_of "$B" measure -q -r 1 -w 0 --json --evict "$(printf 'ev\377')" --shell -- true "$bad")" = 0
check "evict path kept" jqe '.options.evict == ["ev\\xff"] and .runs[0].cache.files[0].path == "ev\\xff"' out
check "shell words kept" jqe '.command == ["true", "a\\xffb"]' out

# a home folder whose name is not UTF-8 is still written "~"
mkdir "h$bad"
check "home: exit 0" test "$(HOME="$work/h$bad" rc_of "$B" measure -q -r 1 -w 0 --json -- /bin/echo "$work/h$bad/x")" = 0
check "home scrubbed" jqe '.command == ["/bin/echo", "~/x"]' out

# every line of the store's JSON export parses
check "export: exit 0" test "$(rc_of "$B" measure -q -r 1 -w 0 --export-jsonl runs.jsonl --output 'res*' -- touch "$(printf 'res\377')")" = 0
check "export parses" test "$(jq -s '[.[].outputs[0].path] == ["res\\xff", "res\\xff"]' runs.jsonl)" = true

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
