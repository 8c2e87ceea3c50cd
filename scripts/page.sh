#!/usr/bin/env bash
# page.sh: headless Chromium, driven by puppeteer-core (pinned in
# scripts/js/package-lock.json; the system's chromium, no browser
# download), uses the page that `specd serve` shows at / over loopback.
#
#   bash scripts/page.sh          (SCREENSHOT=FILE: default /tmp/specd-page.png)
#
# It builds specd into a temporary directory and starts
#   specd serve --nats-listen 127.0.0.1:-1 --http 127.0.0.1:0
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
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
start_s=$SECONDS

for c in go node npm curl timeout setsid; do
  if ! command -v "$c" >/dev/null; then
    echo "FAIL setup: $c is not on PATH"
    exit 1
  fi
done

export PUPPETEER_SKIP_DOWNLOAD=1
chromium="${CHROMIUM:-$(command -v chromium || command -v chromium-browser)}"
if [[ -z $chromium || ! -x $chromium ]]; then
  echo "FAIL setup: no chromium (set CHROMIUM, or apt-get install -y chromium)"
  exit 1
fi
shot="${SCREENSHOT:-/tmp/specd-page.png}"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/specd-page.XXXXXX")"
pids=()   # started here: stopped on exit
groups=() # process groups started here (node, in its own): killed on exit
checks=0
fails=0

# chromium_gone: kills what is left of the Chromium that page.mjs started
# (puppeteer starts it in a process group of its own; page.mjs writes its
# pid to $tmp/chromium.pid).
chromium_gone() {
  local c
  c="$(cat "$tmp/chromium.pid" 2>/dev/null)"
  [[ $c =~ ^[0-9]+$ ]] && kill -KILL -- "-$c" 2>/dev/null
  rm -f "$tmp/chromium.pid"
}

cleanup() {
  local p i alive
  for p in "${groups[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for ((i = 0; i < 50; i++)); do # up to 5 s for a graceful drain
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  for p in "${groups[@]}"; do kill -KILL -- "-$p" 2>/dev/null; done
  chromium_gone
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

pass() {
  checks=$((checks + 1))
  echo "PASS $1${2:+ — $2}"
}
# fail NAME WHY [FILE]: FILE's last lines are shown.
fail() {
  checks=$((checks + 1))
  fails=$((fails + 1))
  echo "FAIL $1${2:+ — $2}"
  if [[ -n ${3:-} && -f $3 ]]; then
    tail -n 30 "$3" | sed 's/^/    | /'
  fi
}

# --- build, npm, start ---------------------------------------------------------
bin="$tmp/specd"
if timeout 600 go build -o "$bin" ./cmd/specd >"$tmp/build.log" 2>&1; then
  pass build "go build -o $bin ./cmd/specd"
else
  fail build "go build failed" "$tmp/build.log"
  exit 1
fi

# node_modules as the lock file pins it (.ci/run runs npm ci; run it here
# only if that was not done).
pinned="$(node -p 'require("./scripts/js/package-lock.json").packages["node_modules/puppeteer-core"].version')"
have="$(node -p 'require("./scripts/js/node_modules/puppeteer-core/package.json").version' 2>/dev/null)"
if [[ $have != "$pinned" ]]; then
  if ! (cd scripts/js && PUPPETEER_SKIP_DOWNLOAD=1 timeout 300 npm ci --no-audit --no-fund --loglevel=error) >"$tmp/npm.txt" 2>&1; then
    fail "npm ci" "scripts/js" "$tmp/npm.txt"
    exit 1
  fi
  have="$(node -p 'require("./scripts/js/node_modules/puppeteer-core/package.json").version' 2>/dev/null)"
fi
if [[ $have == "$pinned" ]]; then
  pass "puppeteer-core" "npm puppeteer-core $have (as scripts/js/package-lock.json pins it; no browser download)"
else
  fail "puppeteer-core" "scripts/js/node_modules has puppeteer-core ${have:-none}, the lock file pins $pinned"
  exit 1
fi

"$bin" serve --log-format json --drain-timeout 2s --nats-listen 127.0.0.1:-1 --http 127.0.0.1:0 >"$tmp/specd.out" 2>"$tmp/specd.log" &
pid=$!
pids+=("$pid")
http=""
for ((i = 0; i < 300; i++)); do # up to 30 s
  line="$(grep -m1 '"message":"serving"' "$tmp/specd.log")"
  if [[ -n $line ]]; then
    http="$(grep -o '"http":"[^"]*"' <<<"$line" | sed 's/^"http":"//; s/"$//')"
    break
  fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [[ -z $http ]]; then
  fail "start" "specd serve did not log \"serving\" with an http address within 30 s" "$tmp/specd.log"
  exit 1
fi
base="http://$http"
health=""
for ((i = 0; i < 50; i++)); do
  health="$(curl -s --max-time 2 "$base/health")"
  [[ $health == *'"status":"ok"'* ]] && break
  sleep 0.1
done
if [[ $health == *'"status":"ok"'* ]]; then
  pass "start" "specd serve --http 127.0.0.1:0 serves on $base; GET /health: $health"
else
  fail "start" "GET $base/health: ${health:-no answer}" "$tmp/specd.log"
  exit 1
fi

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
n=0
while IFS= read -r l; do
  case $l in
  "PASS "*)
    n=$((n + 1))
    l=${l#PASS }
    pass "page ${l%% — *}" "${l#* — }"
    ;;
  "FAIL "*)
    n=$((n + 1))
    l=${l#FAIL }
    fail "page ${l%% — *}" "${l#* — }"
    ;;
  esac
done <"$tmp/page.txt"
if ((rc != 0 && fails == 0)) || ((n < 4)); then
  fail "page.mjs" "exit status $rc, $n of 4 checks reported ($version)" "$tmp/page.txt"
fi
if [[ -s $shot ]] && [[ "$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')" == 89504e470d0a1a0a ]]; then
  pass "screenshot" "$shot, a PNG of $(wc -c <"$shot") bytes ($version)"
else
  fail "screenshot" "no PNG at $shot"
fi

# --- SIGTERM -----------------------------------------------------------------------
kill -TERM "$pid" 2>/dev/null
for ((i = 0; i < 100; i++)); do
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
  fail "SIGTERM" "specd still running 10 s after SIGTERM" "$tmp/specd.log"
else
  wait "$pid"
  rc=$?
  pids=()
  if ((rc != 0)); then
    fail "SIGTERM" "exit status $rc" "$tmp/specd.log"
  elif grep -q '"level":"error"\|^panic\|fatal error' "$tmp/specd.log"; then
    fail "SIGTERM" "exit status 0, but errors or a panic in the log" "$tmp/specd.log"
  else
    pass "SIGTERM" "drained and exited 0, no error in the log"
  fi
fi

echo "page: $checks checks, $fails failed, $((SECONDS - start_s)) s"
((fails == 0))
