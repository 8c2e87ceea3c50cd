#!/usr/bin/env bash
# page.sh: headless Chromium, driven by puppeteer-core (pinned in
# scripts/js/package-lock.json; the system's chromium, no browser
# download), uses the page that `specd serve` shows at / over loopback.
#
#   bash scripts/page.sh          (SCREENSHOT=FILE: default /tmp/specd-page.png)
#
# It builds specd into a temporary directory and starts
#   specd serve --nats-listen 127.0.0.1:-1 --http 127.0.0.1:0 -k 4
# then runs scripts/js/page.mjs against it: the page loads; a prompt typed
# into the box and sent with Send streams to body[data-state=done], leaves
# .draft and .target spans with text in #out, a percentage in #acc, a rate
# in #tps, the token count in #ntok and text equal to the greedy
# completion of the same request (then the screenshot is saved); the same
# as a chat; ?prompt=...&autorun=1 sends at once. No script errors or
# failed requests on the page. Last, SIGTERM: specd exits 0.
#
# Chromium runs headless with --no-sandbox (CI runs as root). CHROMIUM
# names the binary (default: chromium on PATH; .ci/run installs Debian's).
# Every wait is bounded; the processes it started (specd; node in a process
# group of its own; Chromium, in the one puppeteer gives it) are stopped on
# exit. It prints
# PASS or FAIL per check and exits 1 if any check failed.
# Needs go, node, npm, curl, timeout, setsid and chromium.
set -uo pipefail
source "$(dirname "$0")/lib.sh" # cds to the repository root

need go node npm curl timeout setsid

export PUPPETEER_SKIP_DOWNLOAD=1
chromium="${CHROMIUM:-$(command -v chromium || command -v chromium-browser)}"
if [[ -z $chromium || ! -x $chromium ]]; then
  echo "FAIL setup: no chromium (set CHROMIUM, or apt-get install -y chromium)"
  exit 1
fi
shot="${SCREENSHOT:-/tmp/specd-page.png}"

lib_init page

# chromium_gone: kills what is left of the Chromium that page.mjs started
# (puppeteer starts it in a process group of its own; page.mjs writes its
# pid to $tmp/chromium.pid).
chromium_gone() {
  local c
  c="$(cat "$tmp/chromium.pid" 2>/dev/null)"
  [[ $c =~ ^[0-9]+$ ]] && kill -KILL -- "-$c" 2>/dev/null
  rm -f "$tmp/chromium.pid"
}

# cleanup_more: lib.sh's cleanup calls it on exit, after it has stopped
# the processes and process groups started here.
cleanup_more() { chromium_gone; }

# --- build, npm, start ---------------------------------------------------------
build_specd
npm_ready puppeteer-core puppeteer-core "no browser download"
start_http

# --- the page in headless Chromium --------------------------------------------
version="$(timeout 20 "$chromium" --version 2>/dev/null | head -n 1)"
rm -f "$shot"
# Its own process group (setsid): node and what it starts there
# can be stopped together.
CHROMIUM="$chromium" SCREENSHOT="$shot" PROFILE_DIR="$tmp/profile" BROWSER_PID_FILE="$tmp/chromium.pid" \
  setsid timeout -k 5 180 node scripts/js/page.mjs "$base" >"$tmp/page.txt" 2>&1 &
npid=$!
groups+=("$npid")
wait "$npid"
rc=$?
kill -KILL -- "-$npid" 2>/dev/null # anything that outlived node
groups=()
chromium_gone
relay page "$tmp/page.txt"
if ((rc != 0 && fails == 0)) || ((n < 4)); then
  fail "page.mjs" "exit status $rc, $n of 4 checks reported ($version)" "$tmp/page.txt"
fi
if [[ -s $shot ]] && [[ "$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')" == 89504e470d0a1a0a ]]; then
  pass "screenshot" "$shot, a PNG of $(wc -c <"$shot") bytes ($version)"
else
  fail "screenshot" "no PNG at $shot"
fi

# --- SIGTERM -----------------------------------------------------------------------
stop_specd 10 specd

finish
