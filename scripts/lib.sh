# lib.sh: what scripts/clients.sh, openai.sh, page.sh and load.sh share:
# the temporary directory, the processes started and their cleanup on exit,
# the PASS/FAIL checks and their summary, building specd, starting
# `specd serve` and reading its addresses, /health, the pinned npm packages
# and the SIGTERM check. Sourced, not run:
#
#   source "$(dirname "$0")/lib.sh"   (cds to the repository root)
#   need go curl timeout              (FAIL setup and exit 1 if one is missing)
#   lib_init NAME                     ($tmp, the traps)
#   … pass/fail …
#   finish                            (the summary line; exit 0, or 1 if a check failed)
#
# Every wait here is bounded. The scripts set -uo pipefail themselves.

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
start_s=$SECONDS
specd_drain=2s # --drain-timeout of the specd serve processes start_specd starts

# need CMD…: prints FAIL setup and exits 1 unless every CMD is on PATH.
need() {
  local c
  for c in "$@"; do
    if ! command -v "$c" >/dev/null; then
      echo "FAIL setup: $c is not on PATH"
      exit 1
    fi
  done
}

# lib_init NAME: makes $tmp (specd-NAME.XXXXXX under TMPDIR or /tmp),
# empties the process lists and the check counters, and sets the traps:
# on exit cleanup runs; SIGINT exits 130, SIGTERM and SIGHUP 143.
lib_init() {
  lib_name=$1
  tmp="$(mktemp -d "${TMPDIR:-/tmp}/specd-$1.XXXXXX")"
  pids=()   # started here and not yet reaped: stopped on exit
  groups=() # process groups started here: killed on exit
  checks=0
  fails=0
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM HUP
}

# cleanup: SIGTERM to the process groups and the processes started here,
# up to 5 s for them to drain, then SIGKILL; then the script's own
# cleanup_more if it defines one; last removes $tmp.
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
  if declare -F cleanup_more >/dev/null; then cleanup_more; fi
  rm -rf "$tmp"
}

# forget PID…: drops reaped processes from pids.
forget() {
  local p q keep=()
  for p in "${pids[@]}"; do
    for q in "$@"; do [[ $p == "$q" ]] && continue 2; done
    keep+=("$p")
  done
  pids=("${keep[@]}")
}

# pass NAME [WHAT]: one passed check.
pass() {
  checks=$((checks + 1))
  echo "PASS $1${2:+ — $2}"
}

# fail NAME WHY [FILE]: one failed check; FILE's last lines are shown.
fail() {
  checks=$((checks + 1))
  fails=$((fails + 1))
  echo "FAIL $1${2:+ — $2}"
  if [[ -n ${3:-} && -f $3 ]]; then
    tail -n 30 "$3" | sed 's/^/    | /'
  fi
}

# relay PREFIX FILE: counts the PASS and FAIL lines that a client script
# wrote into FILE ("PASS NAME — WHAT") as checks "PREFIX NAME"; sets n to
# how many there were.
relay() {
  local l
  n=0
  while IFS= read -r l; do
    case $l in
    "PASS "*)
      n=$((n + 1))
      l=${l#PASS }
      pass "$1 ${l%% — *}" "${l#* — }"
      ;;
    "FAIL "*)
      n=$((n + 1))
      l=${l#FAIL }
      fail "$1 ${l%% — *}" "${l#* — }"
      ;;
    esac
  done <"$2"
}

# finish: prints "NAME: N checks, F failed, S s" and exits 0, or 1 if a
# check failed.
finish() {
  echo "$lib_name: $checks checks, $fails failed, $((SECONDS - start_s)) s"
  exit $((fails > 0))
}

# build_specd [PKG…]: go build of ./cmd/specd into $bin ($tmp/specd), and
# of each PKG into $tmp/(its last element); the check build. Exits 1 if a
# build fails.
build_specd() {
  local p ok=1 what
  bin="$tmp/specd"
  timeout 600 go build -o "$bin" ./cmd/specd >"$tmp/build.log" 2>&1 || ok=0
  for p in "$@"; do
    ((ok)) || break
    timeout 300 go build -o "$tmp/${p##*/}" "$p" >>"$tmp/build.log" 2>&1 || ok=0
  done
  if ((ok)); then
    what="go build -o $bin ./cmd/specd"
    (($#)) && what="go build ./cmd/specd $*"
    pass build "$what"
  else
    fail build "go build failed" "$tmp/build.log"
    exit 1
  fi
}

# start_specd NAME ARGS…: starts $bin serve --log-format json
# --drain-timeout $specd_drain --http 127.0.0.1:0 ARGS… in the background
# (stdout in $tmp/NAME.out, log in $tmp/NAME.log; its pid in pid and
# pid_NAME, and in pids), waits up to 30 s for its "serving" log line and
# sets url to the NATS URL and http to the HOST:PORT of the HTTP gateway
# that line names. Returns 1 if it exits or hangs, or the line names no
# NATS URL. The gateway listens on a free port, not on the default 8080
# that several processes would all want (an --http in ARGS overrides it).
start_specd() {
  local name=$1 i line
  shift
  url=""
  http=""
  "$bin" serve --log-format json --drain-timeout "$specd_drain" --http 127.0.0.1:0 "$@" \
    >"$tmp/$name.out" 2>"$tmp/$name.log" &
  pid=$!
  pids+=("$pid")
  printf -v "pid_$name" %s "$pid"
  for ((i = 0; i < 300; i++)); do
    line="$(grep -m1 '"message":"serving"' "$tmp/$name.log" 2>/dev/null)"
    if [[ -n $line ]]; then
      url="$(grep -o '"nats":"[^"]*"' <<<"$line" | grep -o 'nats://[^"]*')"
      http="$(grep -o '"http":"[^"]*"' <<<"$line" | sed 's/^"http":"//; s/"$//')"
      [[ -n $url ]]
      return
    fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# wait_health URL: waits up to about 5 s for GET URL/health to say
# "status":"ok"; health is the last answer. Returns 1 if it never did.
wait_health() {
  local i
  health=""
  for ((i = 0; i < 50; i++)); do
    health="$(curl -s --max-time 2 "$1/health")"
    [[ $health == *'"status":"ok"'* ]] && return 0
    sleep 0.1
  done
  return 1
}

# start_http: what openai.sh and page.sh start: start_specd specd
# --nats-listen 127.0.0.1:-1 -k 4, then /health; sets base to its HTTP URL; the
# check start. Exits 1 if it did not come up.
start_http() {
  # A fixed draft length: the checks read drafted and accepted text, which
  # the default (-k auto) may not draft on this pair.
  start_specd specd --nats-listen 127.0.0.1:-1 -k 4
  if [[ -z $http ]]; then
    fail "start" "specd serve did not log \"serving\" with an http address within 30 s" "$tmp/specd.log"
    exit 1
  fi
  base="http://$http"
  if wait_health "$base"; then
    pass "start" "specd serve --http 127.0.0.1:0 serves on $base; GET /health: $health"
  else
    fail "start" "GET $base/health: ${health:-no answer}" "$tmp/specd.log"
    exit 1
  fi
}

# npm_ci SECONDS: npm ci in scripts/js (no browser download), output in
# $tmp/npm.txt, within SECONDS.
npm_ci() {
  (cd scripts/js && PUPPETEER_SKIP_DOWNLOAD=1 timeout "$1" npm ci --no-audit --no-fund --loglevel=error) >"$tmp/npm.txt" 2>&1
}

# npm_ready PKG CHECK [NOTE]: the check CHECK that scripts/js/node_modules
# has PKG at the version scripts/js/package-lock.json pins (.ci/run runs
# npm ci; it is run here only if that was not done); NOTE is added to the
# PASS line. Exits 1 if not.
npm_ready() {
  local pinned have
  pinned="$(node -p "require(\"./scripts/js/package-lock.json\").packages[\"node_modules/$1\"].version")"
  have="$(node -p "require(\"./scripts/js/node_modules/$1/package.json\").version" 2>/dev/null)"
  if [[ $have != "$pinned" ]]; then
    if ! npm_ci 300; then
      fail "npm ci" "scripts/js" "$tmp/npm.txt"
      exit 1
    fi
    have="$(node -p "require(\"./scripts/js/node_modules/$1/package.json\").version" 2>/dev/null)"
  fi
  if [[ $have == "$pinned" ]]; then
    pass "$2" "npm $1 $have (as scripts/js/package-lock.json pins it${3:+; $3})"
  else
    fail "$2" "scripts/js/node_modules has $1 ${have:-none}, the lock file pins $pinned"
    exit 1
  fi
}

# stop_specd SECONDS NAME…: SIGTERM to the specd serve processes
# start_specd started as NAME…, then for each the check SIGTERM NAME
# (SIGTERM alone for one named specd): it drained and exited 0 within
# SECONDS, and its log has no error or panic.
stop_specd() {
  local secs=$1 w p i rc check who
  shift
  for w in "$@"; do
    p="pid_$w"
    [[ -n ${!p:-} ]] && kill -TERM "${!p}" 2>/dev/null
  done
  for w in "$@"; do
    p="pid_$w"
    [[ -n ${!p:-} ]] || continue
    check="SIGTERM $w"
    who=""
    if [[ $w == specd ]]; then
      check=SIGTERM
      who="specd "
    fi
    for ((i = 0; i < secs * 10; i++)); do
      kill -0 "${!p}" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "${!p}" 2>/dev/null; then
      fail "$check" "${who}still running $secs s after SIGTERM" "$tmp/$w.log"
      continue
    fi
    wait "${!p}"
    rc=$?
    forget "${!p}"
    if ((rc != 0)); then
      fail "$check" "exit status $rc" "$tmp/$w.log"
    elif grep -q '"level":"error"\|^panic\|fatal error' "$tmp/$w.log"; then
      fail "$check" "exit status 0, but errors or a panic in the log" "$tmp/$w.log"
    else
      pass "$check" "drained and exited 0, no error in the log"
    fi
  done
}
