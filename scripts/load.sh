#!/usr/bin/env bash
# load.sh: many concurrent streaming clients against the OpenAI-compatible
# HTTP API of one `specd serve` process over loopback (tools/load).
#
#   bash scripts/load.sh                        (120 s, 64 clients)
#   DURATION=10 CLIENTS=16 bash scripts/load.sh (what .ci/run does)
#
# Environment: DURATION (seconds, default 120), CLIENTS (64), SLOTS (8),
# QUEUE (64), MAX_TOKENS (64), GRACE (seconds requests running at the end
# may still finish, 30), SPECD_ARGS (more flags for specd serve), LOAD_ARGS
# (more flags for tools/load, e.g. -strict).
#
# It builds specd and tools/load into a temporary directory, starts
#   specd serve --nats-listen 127.0.0.1:-1 --http 127.0.0.1:0 --slots SLOTS --queue QUEUE
# prints its resident memory (VmRSS, and the peak VmHWM, from
# /proc/PID/status), runs CLIENTS clients for DURATION (chat and text
# completions, greedy and sampled, every SSE stream checked: see
# tools/load/main.go), prints the figures tools/load printed and the
# memory again, checks that the server's /metrics counted the same
# requests and tokens, and last sends SIGTERM: specd must exit 0.
#
# Every wait is bounded; the processes it started are stopped on exit.
# It prints PASS or FAIL per check and exits 1 if any check failed.
# Needs go, curl and timeout on PATH.
set -uo pipefail
source "$(dirname "$0")/lib.sh" # cds to the repository root

duration=${DURATION:-120}
clients=${CLIENTS:-64}
slots=${SLOTS:-8}
queue=${QUEUE:-64}
maxtok=${MAX_TOKENS:-64}
grace=${GRACE:-30}
for v in duration clients slots queue maxtok grace; do
  if ! [[ ${!v} =~ ^[0-9]+$ ]] || ((${!v} < 1)); then
    echo "FAIL setup: $v=${!v}: want a positive whole number"
    exit 1
  fi
done
need go curl timeout

lib_init load

# mem PID: VmRSS and VmHWM of PID.
mem() {
  awk '/^VmRSS:|^VmHWM:/ { printf "%s%s %.1f MiB", sep, $1, $2 / 1024; sep = ", " } END { print "" }' "/proc/$1/status" 2>/dev/null
}

# --- build and start -------------------------------------------------------------
build_specd ./tools/load

specd_drain=5s
# shellcheck disable=SC2086 # SPECD_ARGS is a list of flags
start_specd specd --nats-listen 127.0.0.1:-1 --slots "$slots" --queue "$queue" ${SPECD_ARGS:-}
if [[ -n $http ]] && wait_health "http://$http"; then
  pass "start" "specd serve --slots $slots --queue $queue on http://$http (pid $pid); GET /health: $health"
else
  fail "start" "specd serve did not come up with an http address and /health ok within 35 s" "$tmp/specd.log"
  exit 1
fi
echo "load: server memory before: $(mem "$pid")"

# --- load ------------------------------------------------------------------------
echo "load: $clients clients for $duration s (+ up to $grace s for the requests still running), max_tokens $maxtok"
# shellcheck disable=SC2086 # LOAD_ARGS is a list of flags
timeout -k 5 $((duration + grace + 60)) "$tmp/load" -url "http://$http" -clients "$clients" \
  -duration "${duration}s" -grace "${grace}s" -max-tokens "$maxtok" ${LOAD_ARGS:-} >"$tmp/load.txt" 2>&1
rc=$?
grep -v '^json ' "$tmp/load.txt" | sed 's/^/    /'
echo "load: server memory after: $(mem "$pid")"
json="$(sed -n 's/^json //p' "$tmp/load.txt")"
# field NAME: a number of tools/load's JSON line.
field() { grep -o "\"$1\":[0-9.e+-]*" <<<"$json" | head -n 1 | cut -d: -f2; }
good="$(field requests)"
errs="$(field errors)"
cut="$(field cut)"
tokens="$(field tokens)"
if ((rc == 0)) && [[ -n $json ]]; then
  pass "load" "$good requests, 0 errors, $cut cut at the end, $tokens tokens, $(printf '%.1f' "$(field tokens_per_s)") tokens/s; TTFT p50 $(field ttft_p50_ms) ms p99 $(field ttft_p99_ms) ms; ITL p50 $(field itl_p50_ms) ms p99 $(field itl_p99_ms) ms"
else
  fail "load" "tools/load exit status $rc (124/137: over its time limit); ${errs:-?} errors" "$tmp/load.txt"
fi

# --- the server's own count -----------------------------------------------------------
# metric NAME: NAME's value in the scrape (summed over its series).
metric() { awk -v n="$1" 'index($1, n "{") == 1 || $1 == n { s += $2; f = 1 } END { if (f) printf "%.0f", s }' "$tmp/metrics.txt"; }
if [[ -n $json ]] && timeout 20 curl -sS --max-time 10 "http://$http/metrics" >"$tmp/metrics.txt" 2>&1; then
  sreq="$(metric specd:num_requests_total)"
  sfail="$(metric specd:num_requests_failed_total)"
  sgen="$(metric specd:generation_tokens_total)"
  running="$(metric specd:num_requests_running)"
  waiting="$(metric specd:num_requests_waiting)"
  what="server: num_requests_total $sreq, failed $sfail, generation_tokens_total $sgen, running $running, waiting $waiting; tools/load: $good good, $errs errors, $cut cut, $tokens tokens"
  if ((errs == 0 && cut == 0)); then
    if [[ $sreq == "$good" && $sfail == 0 && $sgen == "$tokens" && $running == 0 && $waiting == 0 ]]; then
      pass "server count" "$what"
    else
      fail "server count" "want the same requests and tokens, none failed, none left; $what" "$tmp/metrics.txt"
    fi
  elif ((sreq >= good && sgen >= tokens && running == 0 && waiting == 0)); then
    pass "server count" "(with errors or cut requests, not compared exactly) $what"
  else
    fail "server count" "$what" "$tmp/metrics.txt"
  fi
else
  fail "server count" "no figures from tools/load, or curl /metrics failed" "$tmp/metrics.txt"
fi

# --- SIGTERM -----------------------------------------------------------------------
stop_specd 15 specd

finish
