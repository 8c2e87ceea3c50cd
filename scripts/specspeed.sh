#!/usr/bin/env bash
# specspeed.sh measures speculative against plain decoding on the 58M
# reference model of docs/performance.md (random llama, dim 512, 8 layers,
# 8 heads, 4 KV heads, FFN 1536, vocab 32000) in F16, with a draft that
# shares its embeddings: the same model quantized to Q8_0 except
# token_embd, which stays the target's F16 table (byte for byte, so specd
# maps it once). Random models have no language to predict; a quantized
# copy is a draft whose acceptance comes from agreeing with the target, as
# a trained draft's does.
#
#   scripts/specspeed.sh                       # k = 1..4, batch 1 and 4, 1 verify + 1 draft thread
#   KS=1,2 N=512 REPS=5 BATCH=1 scripts/specspeed.sh
#   EXTRA="--pre-draft-min 0.3 --synthetic-acceptance 0.7" scripts/specspeed.sh   # more specd bench flags
#
# specd bench measures every k and batch size against plain decoding of the
# target in interleaved A/B pairs and writes .cache/specspeed/bench/report.md
# (α, c, the (k+1)-token pass cost, Leviathan et al.'s prediction beside the
# measured speedup, latency, busy and overlap), results.csv, results.json and
# the PNGs; stdout names the best configuration. Run it on an otherwise idle
# machine: it uses two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
ks="${KS:-1,2,3,4}"
n="${N:-256}"
reps="${REPS:-3}"
batch="${BATCH:-1,4}"
dir=.cache/specspeed
mkdir -p "$dir"
go build -o "$dir/mkmodel" ./tools/peer/mkmodel
go build -o "$dir/specd" ./cmd/specd
shape=(-arch llama -dim 512 -layers 8 -heads 8 -kv-heads 4 -ffn 1536 -vocab 32000 -seed 1)
[[ -s $dir/target-F16.gguf ]] || "$dir/mkmodel" -o "$dir/target-F16.gguf" -type F16 "${shape[@]}"
[[ -s $dir/draft-Q8_0.gguf ]] || "$dir/mkmodel" -o "$dir/draft-Q8_0.gguf" -type Q8_0 -embd-type F16 "${shape[@]}"
echo "specspeed: load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores" >&2
# The random models have no tokenizer: prompts as token ids.
for i in 1 2 3 4; do echo "{\"id\":\"p$i\",\"category\":\"ids\",\"ids\":[$i,$((i+1)),$((i+2)),$((i+3)),5,6,7,8]}"; done > "$dir/prompts.jsonl"
"$dir/specd" bench -m "$dir/target-F16.gguf" -d "$dir/draft-Q8_0.gguf" --prompts "$dir/prompts.jsonl" \
  -n "$n" --k "$ks" --reps "$reps" --batch "$batch" --threads 1 --draft-threads 1 --out "$dir/bench" ${EXTRA:-}
echo "specspeed: load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
