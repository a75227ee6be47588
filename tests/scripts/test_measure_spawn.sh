#!/usr/bin/env bash
# How benchgate measure starts a run (src/measure/spawn.c): the program is
# found on PATH as execvp finds it, after the setup, a missing or non-executable program is a
# clean "cannot start", and the child starts with no blocked signal, the
# job-control signals at their defaults, other ignored signals still ignored,
# its own process group, stdin and stdout on /dev/null and stderr inherited;
# a run that stops is killed rather than waited for, and on a terminal the
# run never gets the terminal's foreground while Ctrl-Z suspends it with
# benchgate (script(1), where there is one). Needs jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
work=$(mktemp -d)
trap 'pkill -f "bg-tty-$$"; rm -rf "$work"' EXIT
cd "$work" || exit 1

# PATH search: a non-executable file and a directory of the same name are passed over
mkdir -p a b c/tool
printf '#!/bin/sh\necho a >>"%s/ran"\n' "$work" >a/tool
printf '#!/bin/sh\necho b >>"%s/ran"\n' "$work" >b/tool
chmod 644 a/tool
chmod 755 b/tool
check "found past a non-executable file and a directory" \
	test "$(PATH="$work/c:$work/a:$work/b:/usr/bin:/bin" rc_of "$B" measure -q -r 2 -- tool)" = 0
check "the executable one ran each time" test "$(sort -u ran)" = b
check "smoke + warmup + 2 runs" test "$(wc -l <ran)" = 4
check "missing program: exit 4" test "$(PATH="$work/none" rc_of "$B" measure -q -r 1 -- tool)" = 4
check "missing program: named, no such file" \
	grep -qF "'tool': cannot start: No such file or directory; check the command name and PATH" err
check "only non-executable: exit 4" test "$(PATH="$work/a" rc_of "$B" measure -q -r 1 -- tool)" = 4
check "only non-executable: permission denied" grep -qF "'tool': cannot start: Permission denied" err
check "a path with a slash is not searched" test "$(PATH="$work/b" rc_of "$B" measure -q -r 1 -- ./tool)" = 4
check "empty PATH element is the working directory" \
	test "$(cd b && PATH=":/usr/bin:/bin" rc_of "$B" measure -q -r 1 -- tool)" = 0
check "a directory on PATH: permission denied" \
	test "$(PATH="$work/c" rc_of "$B" measure -q -r 1 -- tool)$(grep -c "Permission denied" err)" = 41
# a path that cannot start says why, and what to do
printf 'echo hi\n' >noshebang && chmod 755 noshebang
printf '#!%s/no-interpreter\n' "$work" >badinterp && chmod 755 badinterp
for c in "c/tool:it is a folder, not a program" \
	"a/tool:it is not executable (chmod +x it, or run it through its interpreter)" \
	"noshebang:it is not a program this system can run (a script needs a #! line" \
	"badinterp:check the path (and, for a script, the interpreter its #! line names)"; do
	check "./${c%%:*}: exit 4" test "$(rc_of "$B" measure -q -r 1 -- "./${c%%:*}")" = 4
	check "./${c%%:*}: ${c#*:}" grep -qF "'./${c%%:*}': cannot start: " err
	check "./${c%%:*}: what to do" grep -qF "${c#*:}" err
done
check "a non-executable file found on PATH: what to do" \
	bash -c 'PATH="$1/a" "$2" measure -q -r 1 -- tool 2>&1 | grep -qF "a file of that name on PATH is a folder or not executable"' _ "$work" "$B"
# a limit of benchgate's, not the command's: said as such (not "check the
# command name"), where it ran out (starting the command, or before it,
# looking for NVML: test_open_files.sh goes through the limits)
check "too many open files: exit 4" test "$(rc_of sh -c 'ulimit -n 7; exec "$0" measure -q -r 1 -- true' "$B")" = 4
check "too many open files: what to do" \
	grep -qF ": Too many open files; benchgate has as many files open as its limit allows; raise the limit (ulimit -n) and run it again" err
check "too many open files: never the command's fault" bash -c '! grep -q "check the command name" "$1"' _ "$work/err"
stored=$("$B" sessions --json | jq length)
PATH="$work/none" "$B" measure -q -r 1 -- tool >/dev/null 2>&1
check "nothing stored for a program that cannot start" test "$("$B" sessions --json | jq length)" = "$stored"

# the program is looked up after --setup (and the first run's --prepare),
# which may build or install it: a program setup makes is found, and one
# setup installs ahead of an old copy on PATH is the one measured
mkdir -p late old
printf '#!/bin/sh\necho old >>"%s/late.ran"\n' "$work" >old/made
chmod 755 old/made
check "a program setup makes: exit 0" test "$(PATH="$work/late:$work/old:/usr/bin:/bin" rc_of "$B" measure -q -r 2 --json \
	--setup "printf '#!/bin/sh\\necho new >>\"$work/late.ran\"\\n' >late/made && chmod 755 late/made" -- made)" = 0
check "the new one ran every time" test "$(sort -u late.ran)" = new
check "provenance names it" test "$(jq -r .provenance.program out)" = "$work/late/made"
rm -rf late late.ran
check "a program prepare makes: exit 0" test "$(PATH="$work/late:/usr/bin:/bin" rc_of "$B" measure -q -r 1 --json \
	--prepare "mkdir -p late && cp old/made late/made" -- made)" = 0
check "prepare: provenance names it" test "$(jq -r .provenance.program out)" = "$work/late/made"
check "a blocked setup: no program" test "$(rc_of "$B" measure -q -r 1 --json --setup false -- true; jq -c .provenance.program out)" = 1null
check "--shell: the shell" test "$(rc_of "$B" measure -q -r 1 --json --shell -- true; jq -r .provenance.program out)" = 0/bin/sh
rm -rf late old late.ran

# the child's signal state (awk reading its own status, no shell between),
# then its process group and stdio
# ignore INT, TERM, USR1 (reset to default) and WINCH (stays ignored) in benchgate's parent
(trap '' INT TERM USR1 WINCH
 exec "$B" measure -q -r 1 -- awk -v out="$work/probe.out" '/^Sig(Blk|Ign):/ {print >out}' /proc/self/status) >out 2>err
cat >probe.sh <<EOF2
#!/bin/sh
echo "pgid=\$(cut -d' ' -f5 /proc/\$\$/stat) pid=\$\$" >"$work/probe2.out"
echo "stdin=\$(readlink /proc/\$\$/fd/0) stdout=\$(readlink /proc/\$\$/fd/1)" >>"$work/probe2.out"
echo to-stderr >&2
EOF2
chmod 755 probe.sh
"$B" measure -q -r 1 -- ./probe.sh >out 2>err
check "probe ran" test -s probe.out
check "no signal blocked in the child" grep -q '^SigBlk:[[:space:]]*0000000000000000$' probe.out
ign=$(awk '/^SigIgn:/ {print $2}' probe.out)
bit() { [ $(( 0x$ign >> ($1 - 1) & 1 )) = "$2" ]; }
check "SIGINT back to default" bit 2 0
check "SIGTERM back to default" bit 15 0
check "SIGUSR1 back to default" bit 10 0
check "SIGWINCH still ignored" bit 28 1
check "own process group" awk '/^pgid=/ {split($1, g, "="); split($2, p, "="); exit !(g[2] == p[2])}' probe2.out
check "stdin and stdout on /dev/null" grep -q '^stdin=/dev/null stdout=/dev/null$' probe2.out
check "stderr inherited" grep -q '^to-stderr$' err

# a run that stops (SIGSTOP: nobody would continue it) fails instead of
# being waited for forever: its tree is killed and the session blocked
check "stopped run: finishes, exit 1" test "$(rc_of timeout 20 "$B" measure -q -w 0 -r 1 --json -- sh -c 'kill -STOP $$')" = 1
check "stopped run: reason" jqe '.reason == "smoke run 1 was stopped by signal 19 (SIGSTOP: Stopped (signal)); its process tree was killed"' out
check "stopped run: recorded" jqe '.runs[0].stop_signal == 19 and .runs[0].signal == 9 and .runs[0].exit_status == null' out

# on a terminal the run never gets the terminal's foreground: a program
# that sets terminal modes is stopped by SIGTTOU, killed, and blocks the
# session, and the shell's group keeps the terminal (fields 5 and 8 of
# /proc/PID/stat, pgrp and tpgid); script(1) makes the terminal
if command -v script >/dev/null; then
	cat >tty.sh <<'EOF2'
"$1" measure -q -w 0 -r 1 --json -- sh -c 'stty -echo </dev/tty && stty echo </dev/tty' "bg-tty-$2" >tty.json
awk '{print $5, $8}' /proc/$$/stat >fg.txt
EOF2
	timeout 20 script -qec "sh tty.sh '$B' $$" /dev/null </dev/null >/dev/null 2>&1
	check "terminal: stty blocked by SIGTTOU" jqe '.status == "blocked" and .runs[0].stop_signal == 22' tty.json
	check "terminal: kept by the shell" awk '{exit !($1 == $2 && $1 > 0)}' fg.txt
	# Ctrl-Z goes to the terminal's foreground group, benchgate's (exec'd
	# as the session's command): benchgate stops the run and itself;
	# SIGCONT goes on with both, and the run is marked suspended
	rm -f tz.started tz.json
	# what is typed: Ctrl-Z once the run has started, then nothing until the session's end
	( for _ in $(seq 400); do [ -e tz.started ] && break; sleep 0.05; done; printf '\032'
	  for _ in $(seq 1200); do [ -s tz.json ] && break; sleep 0.05; done ) |
		timeout 60 script -qec "exec '$B' measure -q -w 0 -r 1 --json -- sh -c ': >tz.started; sleep 2' bg-tty-$$ >tz.json" /dev/null >/dev/null 2>&1 &
	tz=$!
	bgpid=
	for _ in $(seq 400); do
		for p in $(pgrep -f "measure .*bg-tty-$$"); do
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = benchgate ] && bgpid=$p
		done
		[ -n "$bgpid" ] && awk '{exit $3 != "T"}' "/proc/$bgpid/stat" && break
		sleep 0.05
	done
	check "terminal Ctrl-Z: benchgate stopped" awk '{exit $3 != "T"}' "/proc/$bgpid/stat"
	[ -n "$bgpid" ] && kill -CONT "$bgpid"
	# script (util-linux) stops itself too once it sees its child stopped,
	# as a shell would, and goes on (continuing the child) at a SIGCONT:
	# the shell's fg, here, until the session has ended
	for _ in $(seq 400); do
		kill -0 "$tz" 2>/dev/null || break
		pkill -CONT -P "$tz" 2>/dev/null
		sleep 0.05
	done
	wait "$tz"
	check "terminal Ctrl-Z: the session went on" jqe '.status == "ok" and .runs[0].suspended and .counts.timed == 1' tz.json
	# Ctrl-C reaches benchgate, not the run (which would catch it and exit
	# 0): the session is interrupted, exit 4, nothing stored
	rm -f tc.started
	n0=$("$B" sessions --json | jq length)
	( for _ in $(seq 400); do [ -e tc.started ] && break; sleep 0.05; done; printf '\003'; sleep 1 ) |
		timeout 60 script -qec "exec '$B' measure -q -w 0 -r 3 -- sh -c 'trap \"exit 0\" INT; : >tc.started; sleep 2' bg-tty-$$" /dev/null >/dev/null 2>&1 &
	wait $!
	check "terminal Ctrl-C: the session is interrupted, exit 4" test $? = 4
	check "terminal Ctrl-C: nothing stored" test "$("$B" sessions --json | jq length)" = "$n0"
else
	echo "(no script(1) here: skipping the run on a terminal)"
fi

if [ "$fails" = 0 ]; then echo "measure spawn: all checks passed"; else echo "measure spawn: $fails failed"; exit 1; fi
