#!/usr/bin/env bash
# openai.sh: clients that this project did not write talk to the
# OpenAI-compatible HTTP API of `specd serve` over loopback: the official
# OpenAI JavaScript client (npm openai, pinned in scripts/js/package-lock.json)
# and curl.
#
#   bash scripts/openai.sh
#
# It builds specd into a temporary directory and starts
#   specd serve --nats-listen 127.0.0.1:-1 --http 127.0.0.1:0 -k 4
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
source "$(dirname "$0")/lib.sh" # cds to the repository root

need go node npm curl timeout

lib_init openai

# --- build, npm, start ---------------------------------------------------------
build_specd
npm_ready openai "openai client"
start_http

# --- the OpenAI JavaScript client -------------------------------------------------
timeout 120 node scripts/js/openai.mjs "$base/v1" >"$tmp/openai.txt" 2>&1
rc=$?
relay openai "$tmp/openai.txt"
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
stop_specd 10 specd

finish
