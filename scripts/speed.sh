#!/usr/bin/env bash
# speed.sh compares specd's model engine with llama.cpp on the reference
# random llama of docs (dim 512, 8 layers, 8 heads, 4 KV heads, FFN 1536,
# vocab 32000: ~58M parameters) in F32, F16, Q8_0, Q4_0 and Q4_K_M.
#
#   scripts/speed.sh              # threads 1,2; 3 repetitions
#   THREADS=2 REPS=5 scripts/speed.sh
#   FORMATS="Q8_0 Q4_0" scripts/speed.sh   # only those weight formats
#
# F32 and F16 are written by tools/peer/mkmodel; Q8_0, Q4_0 and Q4_K_M are
# made from the F32 file by llama-quantize (with its usual tensor mixtures),
# all cached in .cache/speed/. Each file is measured by
#   llama-bench -m FILE -t THREADS -p 64 -n 64 -r REPS
# and by tools/peer/specdbench with the same tests (pp64: one 64-token
# forward pass; tg64: 64 single-token passes from an empty cache). The table
# gives tokens/second and specd's ratio to llama.cpp. It takes minutes and
# uses every core it is given: run it on an otherwise idle machine.
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
formats=(F32 F16 Q8_0 Q4_0 Q4_K_M)
for f in "${formats[@]}"; do # every file, for scripts/verifycost.sh too
  out="$dir/llama58m-$f.gguf"
  [[ -s $out ]] && continue
  case $f in
    F32|F16) "$dir/mkmodel" -o "$out.tmp" -type "$f" "${shape[@]}" ;;
    *) [[ -s $dir/llama58m-F32.gguf ]] || "$dir/mkmodel" -o "$dir/llama58m-F32.gguf" -type F32 "${shape[@]}"
       "$bin/llama-quantize" "$dir/llama58m-F32.gguf" "$out.tmp" "$f" >/dev/null 2>&1 ;;
  esac
  mv "$out.tmp" "$out"
done

[[ ${MODELS_ONLY:-} == 1 ]] && exit 0 # scripts/verifycost.sh: just the files

load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "speed: load average before: $(load) on $(nproc) cores" >&2
if awk -v l="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN { exit !(l > 0.5) }'; then
  echo "speed: WARNING: the machine is busy; llama.cpp's spinning threads suffer most when" >&2
  echo "speed: fewer cores are free than threads asked for, so multi-thread ratios will mislead" >&2
fi
results="$dir/results.txt"
: >"$results"
read -r -a measured <<<"${FORMATS:-${formats[*]}}"
for f in "${measured[@]}"; do
  m="$dir/llama58m-$f.gguf"
  echo "speed: $f: llama-bench" >&2
  "$bin/llama-bench" -m "$m" -t "$threads" -p 64 -n 64 -r "$reps" -o jsonl 2>/dev/null |
    jq -r --arg f "$f" '"\($f) \(if .n_prompt > 0 then "pp\(.n_prompt)" else "tg\(.n_gen)" end) \(.n_threads) llama \(.avg_ts)"' >>"$results"
  echo "speed: $f: specd" >&2
  if ! "$dir/specdbench" -m "$m" -t "$threads" -p 64 -n 64 -r "$reps" 2>"$dir/specd-$f.err" |
    awk -v f="$f" '{print f, $1, $2, "specd", $3}' >>"$results"; then
    echo "speed: specd could not run $f: $(tail -1 "$dir/specd-$f.err")" >&2
  fi
done

echo "speed: load average after: $(load) (figures are only comparable on an otherwise idle machine)" >&2

# One row per (format, test, threads): llama.cpp, specd, ratio.
awk '
  { key = $1 " " $2 " " $3; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    v[key, $4] = $5 }
  END {
    printf "| weights | test | threads | llama.cpp tok/s | specd tok/s | specd / llama.cpp |\n"
    printf "|---|---|---|---|---|---|\n"
    for (i = 1; i <= n; i++) {
      k = order[i]; split(k, p, " ")
      l = v[k, "llama"]; s = v[k, "specd"]
      r = (l != "" && s != "") ? sprintf("%.2f", s / l) : "n/a"
      printf "| %s | %s | %s | %s | %s | %s |\n", p[1], p[2], p[3], (l != "" ? sprintf("%.1f", l) : "n/a"), (s != "" ? sprintf("%.1f", s) : "n/a"), r
    }
  }' "$results"
