#!/usr/bin/env bash
# The dashboard in a real browser: Debian's chromium, headless, no sandbox, no
# GPU and no network (a dead proxy; the page is opened as file://). The page
# built from a project with sessions of every decision must load with no
# console message (errors are logged as CONSOLE lines with
# --enable-logging=stderr; a control page proves such lines are caught), hold
# its plots (inline SVG, seen in the DOM chromium built), refer to nothing
# outside itself, be no wider than the window however long a gate id, a
# computer label or a decision's note is (in a window of 1200 or of 640
# pixels), and a screenshot is saved to
# $BENCHGATE_BUILD/test-output/dashboard.png. Everything else lives in a
# temporary folder that is removed.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
[ -n "${BG_DEBUG:-}" ] && set -x
B=${BENCHGATE:?}
SEED="${BENCHGATE_BUILD:?}/test_seedtool"
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "this test needs Debian's chromium (scripts/install-deps installs it)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
outdir="$BENCHGATE_BUILD/test-output"
mkdir -p "$outdir"
chrome() { # log-file, then chromium arguments (the page last)
	local log=$1; shift
	HOME="$work/home" timeout 120 "$browser" --headless --no-sandbox --disable-gpu \
		--proxy-server=127.0.0.1:9 --proxy-bypass-list='<-loopback>' --no-first-run \
		--disable-extensions --disable-background-networking --user-data-dir="$work/profile" \
		--enable-logging=stderr --v=0 "$@" 2>"$log"
}

cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/mini" "$work/p"
G=bin.cpu.test-box.bin2.warm
for p in 0.100 0.101 0.099 0.100 0.100 0.1005 0.150; do "$SEED" seed "$work/p" $G scheduled-profile $p >/dev/null; done
"$SEED" seed "$work/p" $G scheduled-profile 0.100 parity=fail >/dev/null
"$SEED" seed "$work/p" bin.simd.test-box.bin2.cold release-signoff 0.030 gpu=2147483648 >/dev/null
# the investigate session ran on battery: its decision's note
# (its decision document and the store's table of notes, as run stores them)
"$SEED" sql "$work/p" "UPDATE sessions SET decision_doc = json_set(decision_doc, '\$.conditions', json_array('power_source battery here, ac in 6 of the 6 baseline sessions that record it')) WHERE id = 7;
	INSERT INTO decision_notes SELECT id, json_extract(decision_doc, '\$.conditions') FROM sessions WHERE id = 7" || exit 1
check "dashboard written"    test "$("$B" -C "$work/p" dashboard --output site)" = site/index.html
page="$work/p/site/index.html"
check "default folder"       test "$("$B" -C "$work/p" dashboard)" = .benchgate/dashboard/index.html
check "no external reference" bash -c "! grep -Eo '(src|href)=\"[a-z]+:' '$page' | grep -q ."
check "no script"            bash -c "! grep -qi '<script' '$page'"

# control: a page with console errors is caught
printf '<html><body><script>console.error("control"); nope();</script></body></html>\n' >"$work/control.html"
chrome "$work/control.log" --dump-dom "file://$work/control.html" >/dev/null
check "control: console error caught" grep -q 'CONSOLE.*Uncaught ReferenceError' "$work/control.log"

chrome "$work/dom.log" --dump-dom "file://$page" >"$work/dom.html"
check "page loads (DOM dumped)" grep -q "Sessions by comparison key" "$work/dom.html"
check "no console message"   bash -c "! grep -E 'CONSOLE|Uncaught|Failed to load resource' '$work/dom.log'"
check "two keys, plots present" test "$(grep -c '<svg' "$work/dom.html")" -ge 4
check "wall-time plot"       grep -q "Wall time: p50 with p95 and maximum" "$work/dom.html"
check "memory plot"          grep -q "Memory: process-tree and accelerator peaks" "$work/dom.html"
check "envelope band"        grep -q 'class="band"' "$work/dom.html"
check "decision markers"     grep -q 'class="marker"' "$work/dom.html"
check "investigate shown"    grep -q "investigate" "$work/dom.html"
check "block shown"          grep -q "block" "$work/dom.html"
check "a decision's note under its row" grep -q '<tr class="notes out"><td></td><td colspan="10">note: power_source battery here' "$work/dom.html"
check "its marker ringed"    grep -q 'class="noted"' "$work/dom.html"

# a very long gate id and computer label (one word each, 321 characters)
# break inside their cells: the page is no wider than the window
cp -R "$work/p" "$work/long"
long=$(printf 'verylong%.0s' $(seq 40))
"$SEED" seed "$work/long" $G scheduled-profile 0.100 computer="C$long" >/dev/null
"$SEED" sql "$work/long" "UPDATE sessions SET gate_id = 'G$long' WHERE id = 2" || exit 1
"$SEED" sql "$work/long" "UPDATE sessions SET decision_doc = json_set(decision_doc, '\$.conditions', json_array('gpu 0 power_limit_watts 250 here, 300 in 5 of the 5 baseline sessions that record it', 'N$long')) WHERE id = 3;
	INSERT INTO decision_notes SELECT id, json_extract(decision_doc, '\$.conditions') FROM sessions WHERE id = 3" || exit 1
"$B" -C "$work/long" dashboard --output site >/dev/null
# the page has no script of its own: a page beside it measures it in a
# frame WIDTH pixels wide (1200: a laptop; 640: half of one, or a tablet;
# a table wider than that scrolls inside its box)
cat >"$work/long/site/probe.in" <<'EOF_PROBE'
<!DOCTYPE html><html><body style="margin:0"><iframe id="f" src="index.html" style="width:WIDTHpx;height:800px;border:0"></iframe>
<pre id="o">not measured</pre>
<script>
document.getElementById("f").onload = function () {
	var e = this.contentDocument.documentElement;
	document.getElementById("o").textContent = "width " + e.scrollWidth + " of " + e.clientWidth;
};
</script></body></html>
EOF_PROBE
for w in 1200 640; do
	sed "s/WIDTH/$w/" "$work/long/site/probe.in" >"$work/long/site/probe.html"
	chrome "$work/long.log" --allow-file-access-from-files --virtual-time-budget=5000 --dump-dom \
		"file://$work/long/site/probe.html" >"$work/long.html"
	width=$(grep -o 'width [0-9]* of [0-9]*' "$work/long.html")
	check "long names and notes, $w px: measured ($width)" test -n "$width"
	check "long names and notes, $w px: no wider than the window" test "$(echo "$width" | awk '{print ($2 <= $4)}')" = 1
done

rm -f "$outdir/dashboard.png"
chrome "$work/shot.log" --window-size=1280,2400 --hide-scrollbars --screenshot="$outdir/dashboard.png" "file://$page"
check "no console message (screenshot)" bash -c "! grep -E 'CONSOLE|Uncaught' '$work/shot.log'"
check "screenshot saved"     test -s "$outdir/dashboard.png"
check "screenshot is a PNG"  bash -c "head -c 8 '$outdir/dashboard.png' | od -An -tx1 | grep -q '89 50 4e 47'"
echo "screenshot: $outdir/dashboard.png"
echo "$fails failed"
[ "$fails" = 0 ]
