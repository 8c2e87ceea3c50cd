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
#   scripts/specspeed.sh                       # k = 1..4, 1 verify + 1 draft thread
#   KS=1,2 N=512 REPS=5 scripts/specspeed.sh
#   EXTRA="--pre-draft-min 0.3" scripts/specspeed.sh   # more specbench flags
#
# specd specbench prints, per k: α, c, the (k+1)-token pass cost, the
# speedup predicted by Leviathan et al.'s formula and the measured one
# (plain decoding on the verify threads as the baseline), with and without
# pre-drafting, then a summary table and the concurrent pipeline against
# one stage at a time on SEQS sequences. Run it on an otherwise idle
# machine: it uses two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
ks="${KS:-1,2,3,4}"
n="${N:-256}"
reps="${REPS:-3}"
seqs="${SEQS:-4}"
dir=.cache/specspeed
mkdir -p "$dir"
go build -o "$dir/mkmodel" ./tools/peer/mkmodel
go build -o "$dir/specd" ./cmd/specd
shape=(-arch llama -dim 512 -layers 8 -heads 8 -kv-heads 4 -ffn 1536 -vocab 32000 -seed 1)
[[ -s $dir/target-F16.gguf ]] || "$dir/mkmodel" -o "$dir/target-F16.gguf" -type F16 "${shape[@]}"
[[ -s $dir/draft-Q8_0.gguf ]] || "$dir/mkmodel" -o "$dir/draft-Q8_0.gguf" -type Q8_0 -embd-type F16 "${shape[@]}"
echo "specspeed: load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores" >&2
"$dir/specd" specbench -m "$dir/target-F16.gguf" -d "$dir/draft-Q8_0.gguf" \
  --prompt-ids 1,2,3,4,5,6,7,8 -n "$n" --ks "$ks" --reps "$reps" --seqs "$seqs" \
  --threads 1 --verify-threads 1 --draft-threads 1 ${EXTRA:-}
echo "specspeed: load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
