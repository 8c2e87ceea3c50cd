#!/usr/bin/env bash
# openai.sh: clients that this project did not write talk to the
# OpenAI-compatible HTTP API of `specd serve` over loopback: the official
# OpenAI JavaScript client (npm openai, pinned in scripts/js/package-lock.json)
# and curl.
#
#   bash scripts/openai.sh
#
# It builds specd into a temporary directory and starts
#   specd serve --nats-listen 127.0.0.1:-1 --http 127.0.0.1:0
# (the ports it picked are read from its "serving" log line), then checks
#   - GET /health says ok
#   - scripts/js/openai.mjs: models.list(); a streamed chat completion with
#     stream_options.include_usage (content deltas, a finish_reason, a usage
#     chunk with completion_tokens > 0, specd.draft + specd.target = each
#     delta); completions.create with max_tokens 16 (text, usage adds up);
#     greedy chat whole = streamed; an unknown model -> NotFoundError 404
#   - curl -N of a streamed completion: text/event-stream, only "data: "
#     lines, several chunks, the last "data: [DONE]"
#   - curl of /metrics: specd:spec_decode_num_draft_tokens_total > 0,
#     generation tokens and requests counted
#   - SIGTERM: specd drains and exits 0, no error in its log
#
# Every wait is bounded; the processes it started are stopped on exit.
# It prints PASS or FAIL per check and exits 1 if any check failed.
# Needs go, node, npm, curl and timeout on PATH (.ci/run installs them).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
start_s=$SECONDS

for c in go node npm curl timeout; do
  if ! command -v "$c" >/dev/null; then
    echo "FAIL setup: $c is not on PATH"
    exit 1
  fi
done

tmp="$(mktemp -d "${TMPDIR:-/tmp}/specd-openai.XXXXXX")"
pids=() # started here: stopped on exit
checks=0
fails=0

cleanup() {
  local p i alive
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for ((i = 0; i < 50; i++)); do # up to 5 s for a graceful drain
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
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
pinned="$(node -p 'require("./scripts/js/package-lock.json").packages["node_modules/openai"].version')"
have="$(node -p 'require("./scripts/js/node_modules/openai/package.json").version' 2>/dev/null)"
if [[ $have != "$pinned" ]]; then
  if ! (cd scripts/js && PUPPETEER_SKIP_DOWNLOAD=1 timeout 300 npm ci --no-audit --no-fund --loglevel=error) >"$tmp/npm.txt" 2>&1; then
    fail "npm ci" "scripts/js" "$tmp/npm.txt"
    exit 1
  fi
  have="$(node -p 'require("./scripts/js/node_modules/openai/package.json").version' 2>/dev/null)"
fi
if [[ $have == "$pinned" ]]; then
  pass "openai client" "npm openai $have (as scripts/js/package-lock.json pins it)"
else
  fail "openai client" "scripts/js/node_modules has openai ${have:-none}, the lock file pins $pinned"
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

# --- the OpenAI JavaScript client -------------------------------------------------
timeout 120 node scripts/js/openai.mjs "$base/v1" >"$tmp/openai.txt" 2>&1
rc=$?
n=0
while IFS= read -r l; do
  case $l in
  "PASS "*)
    n=$((n + 1))
    l=${l#PASS }
    pass "openai ${l%% — *}" "${l#* — }"
    ;;
  "FAIL "*)
    n=$((n + 1))
    l=${l#FAIL }
    fail "openai ${l%% — *}" "${l#* — }"
    ;;
  esac
done <"$tmp/openai.txt"
if ((rc != 0 && fails == 0)) || ((n < 5)); then
  fail "openai.mjs" "exit status $rc, $n of 5 checks reported" "$tmp/openai.txt"
fi

# --- curl -N: the raw SSE stream --------------------------------------------------
if timeout 60 curl -sS -N --max-time 50 -D "$tmp/sse.h" -H 'Content-Type: application/json' \
  -d '{"model":"specd-target","prompt":"The jury said","max_tokens":24,"temperature":0,"stream":true,"stream_options":{"include_usage":true}}' \
  "$base/v1/completions" >"$tmp/sse.txt" 2>&1; then
  ndata="$(grep -c '^data: ' "$tmp/sse.txt")"
  nother="$(grep -v '^data: ' "$tmp/sse.txt" | grep -vc '^$')"
  last="$(grep -v '^$' "$tmp/sse.txt" | tail -n 1)"
  ndone="$(grep -c '^data: \[DONE\]$' "$tmp/sse.txt")"
  if grep -qi '^content-type: text/event-stream' "$tmp/sse.h" && ((ndata >= 3 && nother == 0 && ndone == 1)) &&
    [[ $last == "data: [DONE]" ]] && grep -q '"finish_reason":"length"' "$tmp/sse.txt" &&
    grep -q '"usage":{"prompt_tokens":[0-9]*,"completion_tokens":24,' "$tmp/sse.txt"; then
    pass "curl -N SSE" "Content-Type text/event-stream; $ndata data: lines (chunks with specd draft/target, finish_reason length, usage with 24 completion tokens), nothing else, the last data: [DONE]"
  else
    fail "curl -N SSE" "want only data: lines (got $ndata, and $nother others), one data: [DONE] and it last (last: ${last:0:80}), finish_reason length, usage with 24 completion tokens" "$tmp/sse.txt"
  fi
else
  fail "curl -N SSE" "curl failed" "$tmp/sse.txt"
fi

# --- /metrics ------------------------------------------------------------------------
# metric NAME: the value of NAME{model_name="specd-target"} in the scrape.
metric() { awk -v n="$1" '$1 == n "{model_name=\"specd-target\"}" { print $2 }' "$tmp/metrics.txt"; }
if timeout 20 curl -sS --max-time 10 "$base/metrics" >"$tmp/metrics.txt" 2>&1; then
  dt="$(metric specd:spec_decode_num_draft_tokens_total)"
  acc="$(metric specd:spec_decode_num_accepted_tokens_total)"
  gen="$(metric specd:generation_tokens_total)"
  req="$(metric specd:num_requests_total)"
  # openai.mjs made 3 generations (stream, completion, greedy), curl 1.
  if awk -v d="${dt:-0}" -v a="${acc:-0}" -v g="${gen:-0}" -v r="${req:-0}" 'BEGIN { exit !(d > 0 && a >= 0 && a <= d && g >= 32 + 16 + 32 + 24 && r >= 4) }'; then
    pass "curl /metrics" "specd:spec_decode_num_draft_tokens_total $dt, accepted $acc, generation_tokens_total $gen, num_requests_total $req"
  else
    fail "curl /metrics" "want draft tokens > 0, accepted <= drafted, generation tokens >= 104, requests >= 4; got drafted ${dt:-none}, accepted ${acc:-none}, generated ${gen:-none}, requests ${req:-none}" "$tmp/metrics.txt"
  fi
else
  fail "curl /metrics" "curl failed" "$tmp/metrics.txt"
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

echo "openai: $checks checks, $fails failed, $((SECONDS - start_s)) s"
((fails == 0))
