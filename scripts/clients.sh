#!/usr/bin/env bash
# clients.sh: clients that this project did not write talk to `specd serve`
# over loopback, each as its own process: the nats command-line tool
# (natscli, written against v0.5.0) and the NATS JavaScript client
# (@nats-io/transport-node, pinned in scripts/js/package-lock.json).
#
#   bash scripts/clients.sh
#
# It builds specd into a temporary directory and starts
#   A  specd serve --nats-listen 127.0.0.1:-1   (embedded nats-server; the
#      port the server picked is read from A's "serving" log line)
# then runs natscli checks (micro ls/stats/info, a streamed generate, a
# session over nats sub + nats pub, a bad request) and the JavaScript
# checks (scripts/js/session.mjs, generate.mjs, after npm ci). Last it
# starts a second trio of processes, A2 (embedded server) and workers B, C
# (specd serve --nats URL --slots 1), sends 12 concurrent generate requests
# with natscli and checks that they all stream to done with the same greedy
# text and that more than one process served them.
#
# Every wait is bounded; the processes it started are stopped on exit.
# It prints PASS or FAIL per check and exits 1 if any check failed.
# Needs go, nats, node, npm and timeout on PATH (.ci/run installs them).
set -uo pipefail
source "$(dirname "$0")/lib.sh" # cds to the repository root

# The nats tool must talk to the servers started here, not to a context or
# environment of the machine.
unset NATS_URL NATS_CONTEXT NATS_USER NATS_PASSWORD NATS_TOKEN NATS_CREDS NATS_NKEY \
  NATS_JWT NATS_SEED NATS_CERT NATS_KEY NATS_CA NATS_TIMEOUT NATS_SOCKS_PROXY

need go nats node npm timeout
if [[ "$(nats --version 2>&1)" != "v0.5.0" ]]; then
  echo "clients: note: nats $(nats --version 2>&1) (these checks use natscli v0.5.0's flags)" >&2
fi

lib_init clients

# wait_micro URL N: waits up to 20 s until nats micro ls lists N instances
# of the service specd.
wait_micro() {
  local i n
  for ((i = 0; i < 40; i++)); do
    n="$(timeout 5 nats --no-context -s "$1" micro ls --json 2>/dev/null | grep -c '"name": "specd"')"
    ((n >= $2)) && return 0
    sleep 0.25
  done
  return 1
}

# streams FILE STREAM=STATUS…: checks the specd reply streams natscli
# printed into FILE (scripts/js/natscli-streams.mjs); its lines go to
# $tmp/streams.txt.
streams() {
  node scripts/js/natscli-streams.mjs "$@" >"$tmp/streams.txt" 2>&1
}

# joined FILE: FILE's lines on one line, " / " between them.
joined() { awk 'NR > 1 { printf " / " } { printf "%s", $0 } END { print "" }' "$1"; }

N() { timeout 30 nats --no-context -s "$url" "$@"; }

# --- 1. build and start -------------------------------------------------
build_specd
if start_specd A --nats-listen 127.0.0.1:-1 && wait_micro "$url" 1; then
  pass "start A" "specd serve --nats-listen 127.0.0.1:-1 serves on $url; nats micro ls lists specd"
else
  fail "start A" "specd serve did not come up (or nats micro ls never listed specd)" "$tmp/A.log"
  exit 1
fi

# --- 2. natscli -------------------------------------------------------------
if N micro ls >"$tmp/ls.txt" 2>&1 && grep -Eq 'specd .* 1\.0\.0 ' "$tmp/ls.txt"; then
  pass "nats micro ls" "lists specd 1.0.0"
else
  fail "nats micro ls" "no specd 1.0.0 in the list" "$tmp/ls.txt"
fi

if N micro stats specd >"$tmp/stats.txt" 2>&1 && grep -Eq 'generate .* specd ' "$tmp/stats.txt"; then
  pass "nats micro stats specd" "shows the endpoint generate in queue group specd"
else
  fail "nats micro stats specd" "no generate endpoint in queue group specd" "$tmp/stats.txt"
fi

if N micro info specd >"$tmp/info.txt" 2>&1 &&
  grep -q 'Subject: specd.v1.generate' "$tmp/info.txt" &&
  grep -q 'Version: 1.0.0' "$tmp/info.txt" &&
  grep -q '"slots": 4' "$tmp/info.txt"; then
  pass "nats micro info specd" "version 1.0.0, endpoint subject specd.v1.generate, endpoint stats (slots 4)"
else
  fail "nats micro info specd" "want Version 1.0.0, Subject specd.v1.generate and the stats data" "$tmp/info.txt"
fi

# --wait-for-empty: natscli reads replies until the empty end-of-stream
# message (--replies 0 alone would wait out the whole --timeout).
if N req specd.v1.generate '{"prompt":"The jury said","max_tokens":16}' --wait-for-empty --timeout 20s >"$tmp/req.txt" 2>&1 &&
  streams "$tmp/req.txt" req=done; then
  pass "nats req specd.v1.generate" "$(cat "$tmp/streams.txt")"
else
  fail "nats req specd.v1.generate" "$(cat "$tmp/streams.txt" 2>/dev/null)" "$tmp/req.txt"
fi
greedy="$(sed -n 's/^req: ok .*; text //p' "$tmp/streams.txt")"

# A session: nats sub on all of the session's subjects, then nats pub of a
# plain-text prompt. The subscription is live once a probe published after
# it has come back.
timeout 60 nats --no-context -s "$url" sub 'specd.v1.session.car1.>' >"$tmp/sub.txt" 2>&1 &
subpid=$!
pids+=("$subpid")
live=0
for ((i = 0; i < 50; i++)); do
  N pub specd.v1.session.car1.probe "probe $i" >/dev/null 2>&1
  if grep -q 'Received on "specd.v1.session.car1.probe"' "$tmp/sub.txt"; then
    live=1
    break
  fi
  sleep 0.1
done
if ((live)) && N pub specd.v1.session.car1.prompt 'The jury said' >"$tmp/pub.txt" 2>&1; then
  # Both streams (tokens, speech) end with an empty message: wait for two.
  for ((i = 0; i < 300; i++)); do
    (($(grep -c '^nil body' "$tmp/sub.txt") >= 2)) && break
    kill -0 "$subpid" 2>/dev/null || break
    sleep 0.1
  done
  sleep 0.2 # anything after the end would be a protocol error: let it show
  kill -TERM "$subpid" 2>/dev/null
  wait "$subpid" 2>/dev/null
  forget "$subpid"
  if streams "$tmp/sub.txt" specd.v1.session.car1.tokens=done specd.v1.session.car1.speech=done &&
    grep -q '^Specd-Session: car1' "$tmp/sub.txt"; then
    pass "nats sub + nats pub session car1" "$(sed 's/; text .*//' "$tmp/streams.txt" | joined /dev/stdin); speech segments concatenate to the same text"
  else
    fail "nats sub + nats pub session car1" "$(cat "$tmp/streams.txt")" "$tmp/sub.txt"
  fi
else
  kill -TERM "$subpid" 2>/dev/null
  wait "$subpid" 2>/dev/null
  forget "$subpid"
  fail "nats sub + nats pub session car1" "the subscription never went live, or nats pub failed" "$tmp/sub.txt"
fi

if N req specd.v1.generate '{"prompt": 5}' --wait-for-empty --timeout 10s >"$tmp/bad.txt" 2>&1 &&
  streams "$tmp/bad.txt" req=error &&
  grep -q 'Nats-Service-Error-Code: 400' "$tmp/bad.txt" &&
  grep -q 'Nats-Service-Error: field "prompt"' "$tmp/bad.txt"; then
  pass "nats req bad request" "$(cat "$tmp/streams.txt"); Nats-Service-Error names field \"prompt\""
else
  fail "nats req bad request" "want one error naming the field \"prompt\" with code 400, then the empty message" "$tmp/bad.txt"
fi

# --- 3. NATS JavaScript client ------------------------------------------------
if npm_ci 180; then
  pass "npm ci" "scripts/js: @nats-io/transport-node $(node -p 'require("./scripts/js/node_modules/@nats-io/transport-node/package.json").version')"
  for js in session generate; do
    if timeout 60 node "scripts/js/$js.mjs" "$url" >"$tmp/$js.txt" 2>&1; then
      pass "js $js.mjs" "$(joined "$tmp/$js.txt")"
    else
      fail "js $js.mjs" "" "$tmp/$js.txt"
    fi
  done
else
  fail "npm ci" "" "$tmp/npm.txt"
fi

# --- 4. one embedded server, two joined workers, concurrent requests -----------
if start_specd A2 --nats-listen 127.0.0.1:-1; then
  urlA2=$url
  if start_specd B --nats "$urlA2" --slots 1 && start_specd C --nats "$urlA2" --slots 1 && wait_micro "$urlA2" 3; then
    pass "start A2, B, C" "A2 embedded on $urlA2; B and C joined with --nats $urlA2 --slots 1; nats micro ls lists 3 instances"
    url=$urlA2
    reqpids=()
    for i in $(seq 1 12); do
      timeout 30 nats --no-context -s "$url" req specd.v1.generate '{"prompt":"The jury said","max_tokens":16}' \
        --wait-for-empty --timeout 25s >"$tmp/c$i.txt" 2>&1 &
      reqpids+=($!)
    done
    pids+=("${reqpids[@]}")
    for p in "${reqpids[@]}"; do wait "$p"; done
    forget "${reqpids[@]}"
    bad=0
    texts=()
    for i in $(seq 1 12); do
      if streams "$tmp/c$i.txt" req=done; then
        texts+=("$(sed -n 's/^req: ok .*; text //p' "$tmp/streams.txt")")
      else
        bad=$((bad + 1))
        fail "concurrent request $i" "$(cat "$tmp/streams.txt")" "$tmp/c$i.txt"
      fi
    done
    # Greedy decoding: every process, whatever the batch, gives A's text.
    ref=${greedy:-${texts[0]:-}}
    same=0
    for t in "${texts[@]}"; do [[ $t == "$ref" ]] && same=$((same + 1)); done
    if ((bad == 0 && same == 12)); then
      pass "12 concurrent nats req" "all streamed to done and the empty message, all with the same greedy text as A's $ref"
    elif ((bad == 0)); then
      fail "12 concurrent nats req" "only $same of 12 have the greedy text $ref: $(printf '%s\n' "${texts[@]}" | sort | uniq -c | joined /dev/stdin)"
    fi
    # Who served them: each process's log (one "request" line per
    # generation) and the micro stats of each instance.
    served=()
    for w in A2 B C; do served+=("$(grep -c '"message":"request"' "$tmp/$w.log")"); done
    N micro stats specd --json >"$tmp/mstats.json" 2>&1
    per="$(node -e '
      const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      console.log(s.map((i) => i.endpoints.find((e) => e.name === "generate").num_requests).sort((a, b) => b - a).join(" "));
    ' "$tmp/mstats.json" 2>&1)"
    nonzero=0
    total=0
    for n in "${served[@]}"; do
      ((n > 0)) && nonzero=$((nonzero + 1))
      total=$((total + n))
    done
    mnonzero=0
    mtotal=0
    for n in $per; do
      [[ $n =~ ^[0-9]+$ ]] || { mtotal=-1; break; }
      ((n > 0)) && mnonzero=$((mnonzero + 1))
      mtotal=$((mtotal + n))
    done
    if ((total == 12 && nonzero >= 2 && mtotal == 12 && mnonzero >= 2)); then
      pass "load shared" "logs: A2 ${served[0]}, B ${served[1]}, C ${served[2]} requests; nats micro stats num_requests per instance: $per"
    else
      fail "load shared" "want 12 requests over at least 2 processes; logs: A2 ${served[0]}, B ${served[1]}, C ${served[2]}; micro stats num_requests: $per" "$tmp/mstats.json"
    fi
  else
    fail "start A2, B, C" "a worker did not come up, or nats micro ls did not list 3 instances" "$tmp/B.log"
    tail -n 30 "$tmp/C.log" | sed 's/^/    | C: /'
  fi
else
  fail "start A2" "specd serve did not come up" "$tmp/A2.log"
fi

# SIGTERM: every specd drains and exits 0 within 10 s (the workers
# first, then the processes with the embedded servers); no log has an
# error or a panic.
stop_specd 10 B C
stop_specd 10 A2 A

finish
