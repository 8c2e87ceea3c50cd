#!/usr/bin/env bash
# tmux.sh: `specd chat` in a real terminal. It builds specd, starts
#   specd chat --show-draft -n 24 --threads 1 -k 4
# on the bundled model pair in a detached tmux session (its own server
# socket under a temporary directory, 200×50), types as a person would and
# checks the screen (tmux capture-pane):
#   - the one-line help and the "> " prompt
#   - two messages, each answered on the line below it, the answers those
#     that the same messages piped into specd chat get (greedy: the
#     terminal changes nothing but the display), the second seeing the first
#   - accepted draft text highlighted in colour (--show-draft on a terminal)
#   - /stats: turns 2, history 4 messages, tok/s and acceptance
#   - Ctrl-C at the prompt: the hint to press it again; then /exit ends the
#     chat with status 0
#   - TERM=dumb: the same chat, and no colour
#
# Every wait polls the screen up to a deadline; the tmux server and
# everything in it are killed on exit. It prints PASS or FAIL per check and
# exits 1 if any check failed. Needs go, tmux and timeout on PATH (.ci/run
# installs tmux).
set -uo pipefail
source "$(dirname "$0")/lib.sh" # cds to the repository root

need go tmux timeout

lib_init tmux
sock="$tmp/tmux.sock"
T() { tmux -S "$sock" "$@"; }
cleanup_more() { T kill-server 2>/dev/null; }

# screen [-e]: the pane's text (wrapped lines joined; -e keeps colours).
screen() { T capture-pane -p -J "$@" -t chat; }

# wait_for WHAT REGEX SECONDS: polls the screen until a line matches REGEX
# (grep -E) or the deadline passes; fails the check WHAT then.
wait_for() {
  local deadline=$((SECONDS + $3))
  while ((SECONDS < deadline)); do
    screen >"$tmp/screen.txt" 2>/dev/null
    grep -Eq -- "$2" "$tmp/screen.txt" && return 0
    sleep 0.1
  done
  fail "$1" "no line matching /$2/ on the screen within $3 s" "$tmp/screen.txt"
  return 1
}

# prompts: how many "> " prompts the screen shows.
prompts() { screen | grep -c '^> '; }

# wait_prompts WHAT N SECONDS: waits until the screen shows N prompts.
wait_prompts() {
  local deadline=$((SECONDS + $3))
  while ((SECONDS < deadline)); do
    (($(prompts) >= $2)) && return 0
    sleep 0.1
  done
  screen >"$tmp/screen.txt"
  fail "$1" "fewer than $2 prompts on the screen within $3 s" "$tmp/screen.txt"
  return 1
}

# say TEXT: types TEXT and Enter.
say() { T send-keys -t chat -l "$1" && T send-keys -t chat Enter; }

# answer_to MSG: the screen line after the prompt line "> MSG".
answer_to() { screen | awk -v m="> $1" '$0 == m { getline; print; exit }'; }

# start_chat TERM: a fresh session running specd chat with TERM, the pane
# kept after it exits; the chat's exit status is written to
# $tmp/chat.status by the shell that runs it (tmux 3.3a does not always
# report a dead pane's status: #{pane_dead_status} stays empty in about
# one exit in three, whatever the program).
start_chat() {
  rm -f "$tmp/chat.status"
  T kill-session -t chat 2>/dev/null
  T new-session -d -s chat -x 200 -y 50 "cat" &&
    T set-option -t chat remain-on-exit on >/dev/null &&
    T respawn-pane -k -t chat "env TERM=$1 $bin chat --show-draft -n 24 --threads 1 -k 4; echo \$? >$tmp/chat.status"
}

build_specd
m1="The jury said"
m2="She went to the"
printf '%s\n%s\n' "$m1" "$m2" | timeout 60 "$bin" chat --show-draft -n 24 --threads 1 -k 4 >"$tmp/piped.txt" 2>"$tmp/piped.err"
want1="$(sed -n 1p "$tmp/piped.txt")"
want2="$(sed -n 2p "$tmp/piped.txt")"
if [[ -n $want1 && -n $want2 && $want1 != *$'\e'* ]]; then
  pass "piped chat" "two answers, no colour on a pipe: \"$want1\" / \"$want2\""
else
  fail "piped chat" "want two plain answers" "$tmp/piped.err"
fi

# --- a colour terminal ----------------------------------------------------------
if start_chat xterm-256color && wait_for "start" '^chat template raw; /stats, /reset, /exit' 60 && wait_prompts "start" 1 10; then
  pass "start" "the help line and the \"> \" prompt"
fi
say "$m1"
if wait_prompts "first answer" 2 60; then
  got="$(answer_to "$m1")"
  if [[ $got == "$want1" ]]; then pass "first answer" "\"$got\""; else fail "first answer" "\"$got\", piped \"$want1\""; fi
fi
say "$m2"
if wait_prompts "second answer" 3 60; then
  got="$(answer_to "$m2")"
  if [[ $got == "$want2" ]]; then pass "second answer" "\"$got\" (after the first turn)"; else fail "second answer" "\"$got\", piped \"$want2\""; fi
fi
screen -e >"$tmp/colour.txt"
if grep -q $'\e\\[36m' "$tmp/colour.txt"; then
  pass "--show-draft" "accepted draft text in colour 36 (cyan)"
else
  fail "--show-draft" "no ESC[36m in the captured screen (capture-pane -e)" "$tmp/colour.txt"
fi
say "/stats"
if wait_for "/stats" '^turns 2, history 4 messages, chat template raw$' 30 && wait_for "/stats" 'tok/s' 5 &&
  wait_for "/stats" 'mean accepted length' 5; then
  pass "/stats" "$(grep -E '^(turns|generated|draft tokens)' "$tmp/screen.txt" | tr '\n' ';')"
fi
T send-keys -t chat C-c
if wait_for "Ctrl-C" '^\(Ctrl-C again or /exit to quit\)$' 10; then
  pass "Ctrl-C" "at the prompt: the hint to press it again"
fi
say "/exit"
deadline=$((SECONDS + 20))
status=""
while ((SECONDS < deadline)); do
  status="$(cat "$tmp/chat.status" 2>/dev/null)"
  [[ -n $status ]] && break
  sleep 0.1
done
if [[ $status == "0" ]]; then pass "/exit" "specd chat exited 0"; else fail "/exit" "exit status \"$status\", want 0 (empty: still running after 20 s)"; fi

# --- a dumb terminal ---------------------------------------------------------------
if start_chat dumb && wait_prompts "TERM=dumb" 1 60; then
  say "$m1"
  if wait_prompts "TERM=dumb" 2 60; then
    got="$(answer_to "$m1")"
    screen -e >"$tmp/dumb.txt"
    if [[ $got == "$want1" ]] && ! grep -q $'\e\\[36m' "$tmp/dumb.txt"; then
      pass "TERM=dumb" "the same answer, no colour"
    else
      fail "TERM=dumb" "answer \"$got\" (want \"$want1\"), or colour on a dumb terminal" "$tmp/dumb.txt"
    fi
  fi
fi

finish
