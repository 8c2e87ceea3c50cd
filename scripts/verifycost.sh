#!/usr/bin/env bash
# verifycost.sh compares what a 5-token forward pass costs against a 1-token
# pass in llama.cpp and in specd, on the 58M reference model of
# scripts/speed.sh (same files, in .cache/speed/), in prompt shape: both
# engines compute logits for the last token only (llama-bench's pp1 and
# pp5; tools/peer/specdbench -p 1 and -p 5). Verification needs logits for
# all 5 tokens, which costs specd more (5 output projections): that figure
# is BenchmarkPassCost's ratio (go test -run '^$' -bench PassCost ./model).
#
#   scripts/verifycost.sh                  # 2 threads, 5 repetitions
#   THREADS=1 REPS=10 scripts/verifycost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
threads="${THREADS:-2}"
reps="${REPS:-5}"
MODELS_ONLY=1 bash scripts/speed.sh # the model files and the two benchmark programs
bin=.cache/llama.cpp/build/bin
dir=.cache/speed
echo "| weights | threads | llama.cpp pp1 ms | llama.cpp pp5 ms | llama.cpp pp5/pp1 | specd pp1 ms | specd pp5 ms | specd pp5/pp1 |"
echo "|---|---|---|---|---|---|---|---|"
for f in F16 Q8_0 Q4_0 Q4_K_M; do
  m="$dir/llama58m-$f.gguf"
  read -r l1 l5 < <("$bin/llama-bench" -m "$m" -t "$threads" -p 1,5 -n 0 -r "$reps" -o jsonl 2>/dev/null |
    jq -r '"\(.n_prompt) \(.avg_ns / 1e6)"' | sort -n | awk '{printf "%s ", $2} END {print ""}')
  s1=$("$dir/specdbench" -m "$m" -t "$threads" -p 1 -n 0 -r "$reps" 2>/dev/null | awk '{print 1000 / $3}')
  s5=$("$dir/specdbench" -m "$m" -t "$threads" -p 5 -n 0 -r "$reps" 2>/dev/null | awk '{print 5000 / $3}')
  awk -v f="$f" -v t="$threads" -v l1="$l1" -v l5="$l5" -v s1="$s1" -v s5="$s5" \
    'BEGIN { printf "| %s | %s | %.3f | %.3f | %.2f | %.3f | %.3f | %.2f |\n", f, t, l1, l5, l5 / l1, s1, s5, s5 / s1 }'
done
