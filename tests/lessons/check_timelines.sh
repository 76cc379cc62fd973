#!/usr/bin/env bash
# CTest label `lessons`: the lesson timelines as a learner opens them, in headless Chromium.
#   usage: check_timelines.sh STAGECRAFT_CLI OUT_DIR
# For a correct pipeline (lesson 07), a deadlock (01 no_arrive) and a race (01 no_wait): the page
# renders with no console error, the expected elements exist after its script ran (lanes, the
# controls, the diagnostics list with the failing op for the twins), and a screenshot is kept in
# OUT_DIR. The check for console errors is itself checked on a page with a planted error.
# Exits 77 (CTest's skip) when Chromium is not installed (scripts/setup.sh installs it with
# STAGECRAFT_WITH_CHROMIUM=1; CI does).
set -uo pipefail
cli=$1
out=$2
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  echo "skipped: no Chromium on this machine (install it with STAGECRAFT_WITH_CHROMIUM=1 scripts/setup.sh)"
  exit 77
fi
mkdir -p "$out"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# render NAME HTML: screenshot, DOM after the scripts ran, and the browser's console.
render() {
  local name=$1 page=$2
  timeout 90 "$browser" --headless=new --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0 \
    --window-size=1400,800 --virtual-time-budget=3000 --screenshot="$out/$name.png" "file://$page" 2>"$out/$name.console.log" >/dev/null
  timeout 90 "$browser" --headless=new --no-sandbox --disable-gpu --enable-logging=stderr --v=0 --virtual-time-budget=3000 \
    --dump-dom "file://$page" >"$out/$name.dom.html" 2>>"$out/$name.console.log"
}
console_errors() { grep -E 'CONSOLE|Uncaught' "$1" | grep -Ei 'error|uncaught|exception' || true; }

check() {  # NAME HTML WANT_DIAGNOSTIC(0/1) KIND_REGEX
  local name=$1 page=$2 want_diag=$3 kind=$4
  render "$name" "$page"
  [ -s "$out/$name.png" ] && echo "ok: $name.png ($(stat -c %s "$out/$name.png") bytes)" || fail "$name: no screenshot"
  local errs
  errs=$(console_errors "$out/$name.console.log")
  [ -z "$errs" ] && echo "ok: $name: no console errors" || fail "$name: console errors: $errs"
  local dom=$out/$name.dom.html
  for id in expand-all zoom-in zoom-out zoom-fit; do grep -q "id=\"$id\"" "$dom" || fail "$name: no #$id control"; done
  grep -q '<canvas' "$dom" || fail "$name: no canvas"
  for lane in wg0 'tma load' barriers; do grep -q "$lane" "$page" || fail "$name: no '$lane' lane in the data"; done
  if [ "$want_diag" = 1 ]; then
    grep -Eq "$kind" "$dom" && echo "ok: $name: the diagnostic ($kind) is listed" || fail "$name: the diagnostic ($kind) is not in the page"
  fi
}

"$cli" lesson 07 --timeline "$out/pipeline.html" >/dev/null || fail "lesson 07 failed"
"$cli" lesson 01 --buggy=no_arrive --timeline "$out/deadlock.html" >/dev/null || fail "lesson 01 no_arrive failed"
"$cli" lesson 01 --buggy=no_wait --timeline "$out/race.html" >/dev/null || fail "lesson 01 no_wait failed"
check pipeline "$out/pipeline.html" 0 ""
check deadlock "$out/deadlock.html" 1 "deadlock"
check race "$out/race.html" 1 "data-race"

# Replay (the slider and step buttons): the controls exist, and a page opened at #step=N shows
# step N with what started there, the rest veiled (the screenshot); at the last stop of a
# twin's page the diagnostic is what happened.
replay() {  # NAME HTML STEP REGEX
  local name=$1 page=$2 step=$3 want=$4
  render "$name" "$page#step=$step"
  local dom=$out/$name.dom.html errs
  for id in step-back step-fwd replay-slider replay-all; do grep -q "id=\"$id\"" "$dom" || fail "$name: no #$id control"; done
  tr '\n' ' ' <"$dom" | grep -Eq "id=\"replay-now\"[^>]*>$want" && echo "ok: $name: the page replays to $want" || fail "$name: the replay readout is not '$want'"
  errs=$(console_errors "$out/$name.console.log")
  [ -z "$errs" ] && [ -s "$out/$name.png" ] && echo "ok: $name.png, no console errors" || fail "$name: console errors or no screenshot: $errs"
}
replay pipeline-step20 "$out/pipeline.html" 20 'step 20 \([0-9]+ of [0-9]+\): CTA 0 '
replay race-last "$out/race.html" 100000 'step [0-9]+ \(([0-9]+) of \1\): .*data-race'
replay pipeline-whole "$out/pipeline.html" "" 'whole run'

# The console check can fail: the same page with an error planted in its script must trip it.
sed 's|(function () {|(function () { null.planted_error();|' "$out/race.html" >"$out/planted.html"
render planted "$out/planted.html"
[ -n "$(console_errors "$out/planted.console.log")" ] && echo "ok: a planted script error is caught" \
  || fail "a planted script error went unnoticed: the console check proves nothing"

[ $fails -eq 0 ] && { echo "timelines: all checks passed; screenshots in $out"; exit 0; }
echo "timelines: $fails check(s) failed"
exit 1
