#!/usr/bin/env bash
# speed.sh compares specd's model engine with llama.cpp on the reference
# random llama of docs (dim 512, 8 layers, 8 heads, 4 KV heads, FFN 1536,
# vocab 32000: ~58M parameters) in F32, F16, Q8_0, Q4_0 and Q4_K_M, and on
# a width-896 version of it (dim 896, 8 layers, 14 heads, 2 KV heads as in
# Qwen2.5-0.5B, FFN 2560, vocab 32000: ~127M parameters) in Q4_K_M, Q5_K_M
# and Q3_K_M, rows "Q4_K_M/896" and so on. 896 is not a multiple of 256, so
# llama-quantize stores the matrices whose rows are 896 wide in its fallback
# types (Q4_K as Q5_0, Q5_K as Q5_1, Q3_K as Q4_0, Q6_K as Q8_0), as in the
# Qwen2.5-0.5B files people download; ffn_down (rows 2560 wide) keeps its
# K-quant.
#
#   scripts/speed.sh              # threads 1,2; 3 repetitions
#   THREADS=2 REPS=5 scripts/speed.sh
#   FORMATS="Q8_0 Q4_0" scripts/speed.sh   # only those weight formats
#   FORMATS="Q4_K_M/896" scripts/speed.sh  # only the width-896 Q4_K_M
#
# F32 and F16 are written by tools/peer/mkmodel; the others are made from
# the F32 file of their model by llama-quantize (with its usual tensor
# mixtures), all cached in .cache/speed/ (the width-896 files only once
# measured). Each file is measured in REPS interleaved rounds, each running
#   llama-bench -m FILE -t THREADS -p 64 -n 64 -r 1
# and tools/peer/specdbench with the same tests (pp64: one 64-token forward
# pass; tg64: 64 single-token passes from an empty cache), in an order that
# flips every round. The table gives each side's median tokens/second and
# the median of the rounds' specd/llama.cpp ratios. It takes minutes and
# uses every core it is given: quote it from an otherwise idle machine (the
# interleaving keeps the ratios fair on a busy one, not the absolute rates).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
threads="${THREADS:-1,2}"
reps="${REPS:-3}"
bash tools/peer/build.sh
bin="$root/.cache/llama.cpp/build/bin"
dir="$root/.cache/speed"
mkdir -p "$dir"
go build -o "$dir/mkmodel" ./tools/peer/mkmodel
go build -o "$dir/specdbench" ./tools/peer/specdbench

shape=(-arch llama -dim 512 -layers 8 -heads 8 -kv-heads 4 -ffn 1536 -vocab 32000 -seed 1)
shape896=(-arch llama -dim 896 -layers 8 -heads 14 -kv-heads 2 -ffn 2560 -vocab 32000 -seed 1)
formats=(F32 F16 Q8_0 Q4_0 Q4_K_M Q4_K_M/896 Q5_K_M/896 Q3_K_M/896)

# model_file FORMAT: the model file of a row of the table ("Q4_K_M", "Q4_K_M/896").
model_file() {
  case $1 in
    */896) echo "$dir/llama896-${1%/896}.gguf" ;;
    *) echo "$dir/llama58m-$1.gguf" ;;
  esac
}

# make_file FORMAT writes model_file FORMAT unless it exists.
make_file() {
  local f=${1%/896} out base
  out=$(model_file "$1")
  [[ -s $out ]] && return 0
  local -a sh=("${shape[@]}")
  [[ $1 == */896 ]] && sh=("${shape896[@]}")
  case $f in
    F32|F16) "$dir/mkmodel" -o "$out.tmp" -type "$f" "${sh[@]}" ;;
    *) base=$(model_file "F32${1#"$f"}")
       [[ -s $base ]] || { "$dir/mkmodel" -o "$base.tmp" -type F32 "${sh[@]}" && mv "$base.tmp" "$base"; }
       "$bin/llama-quantize" "$base" "$out.tmp" "$f" >/dev/null 2>&1 ;;
  esac
  mv "$out.tmp" "$out"
}

read -r -a measured <<<"${FORMATS:-${formats[*]}}"
for f in F32 F16 Q8_0 Q4_0 Q4_K_M; do make_file "$f"; done # every 58M file, for scripts/verifycost.sh too

[[ ${MODELS_ONLY:-} == 1 ]] && exit 0 # scripts/verifycost.sh: just the files

for f in "${measured[@]}"; do make_file "$f"; done

load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "speed: load average before: $(load) on $(nproc) cores" >&2
if awk -v l="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN { exit !(l > 0.5) }'; then
  echo "speed: WARNING: the machine is busy; llama.cpp's spinning threads suffer most when" >&2
  echo "speed: fewer cores are free than threads asked for, so multi-thread ratios will mislead" >&2
fi
results="$dir/results.txt"
: >"$results"
# Interleaved rounds: each round runs llama-bench and specdbench once each
# (-r 1, after each tool's own untimed warm-up), the order flipping every
# round, so a change in the machine's load falls on both alike. The table
# gives each side's median over the rounds, and the median of the rounds'
# specd/llama.cpp ratios.
llama_round() {
  "$bin/llama-bench" -m "$1" -t "$threads" -p 64 -n 64 -r 1 -o jsonl 2>/dev/null |
    jq -r --arg f "$2" --arg r "$3" '"\($f) \(if .n_prompt > 0 then "pp\(.n_prompt)" else "tg\(.n_gen)" end) \(.n_threads) llama \($r) \(.avg_ts)"' >>"$results"
}
specd_round() {
  if ! "$dir/specdbench" -m "$1" -t "$threads" -p 64 -n 64 -r 1 2>"$dir/specd-${2//\//-}.err" |
    awk -v f="$2" -v r="$3" '{print f, $1, $2, "specd", r, $3}' >>"$results"; then
    echo "speed: specd could not run $2: $(tail -1 "$dir/specd-${2//\//-}.err")" >&2
  fi
}
for f in "${measured[@]}"; do
  m=$(model_file "$f")
  for ((r = 1; r <= reps; r++)); do
    echo "speed: $f: round $r of $reps" >&2
    if ((r % 2)); then llama_round "$m" "$f" "$r"; specd_round "$m" "$f" "$r"
    else specd_round "$m" "$f" "$r"; llama_round "$m" "$f" "$r"; fi
  done
done

echo "speed: load average after: $(load) (figures are only comparable on an otherwise idle machine)" >&2

# One row per (format, test, threads): the medians of llama.cpp's and
# specd's tok/s over the rounds, and the median of the rounds' ratios.
awk '
  function median(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n == 0 ? "" : (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2)
  }
  { key = $1 " " $2 " " $3; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    v[key, $4] = v[key, $4] " " $6; round[key, $4, $5] = $6; rounds[key] = rounds[key] " " $5 }
  END {
    printf "| weights | test | threads | llama.cpp tok/s | specd tok/s | specd / llama.cpp (median of rounds) |\n"
    printf "|---|---|---|---|---|---|\n"
    for (i = 1; i <= n; i++) {
      k = order[i]; split(k, p, " ")
      l = median(v[k, "llama"]); s = median(v[k, "specd"])
      ratios = ""; delete done
      m = split(rounds[k], rs, " ")
      for (j = 1; j <= m; j++) {
        r = rs[j]; if (r in done) continue; done[r] = 1
        if ((k, "llama", r) in round && (k, "specd", r) in round) ratios = ratios " " round[k, "specd", r] / round[k, "llama", r]
      }
      q = median(ratios)
      printf "| %s | %s | %s | %s | %s | %s |\n", p[1], p[2], p[3], (l != "" ? sprintf("%.1f", l) : "n/a"), (s != "" ? sprintf("%.1f", s) : "n/a"), (q != "" ? sprintf("%.2f", q) : "n/a")
    }
  }' "$results"
