#!/usr/bin/env bash
# llamaspeed.sh measures, in one run, the target on llama.cpp's libllama
# (backend/llamacpp) against the target on specd's Go engine, alone and
# with speculative decoding (draft on the Go engine, draft∥verify
# overlapped), on specspeed.sh's models: the 58M reference llama of
# docs/performance.md (dim 512, 8 layers, 8 heads, 4 KV heads, FFN 1536,
# vocab 32000) in F16 and its Q8_0 copy, whose token_embd is the target's
# F16 table, as the draft.
#
#   scripts/llamaspeed.sh                  # the CPU libllama of npm's @node-llama-cpp/linux-x64@3.21.1
#   SPECD_LLAMA_LIB=/path/to/lib K=4 N=256 SEQS=4 REPS=3 scripts/llamaspeed.sh
#
# It prints a Markdown table (tools/llamaspeed explains each column). Run
# it on an otherwise idle machine: it uses two cores (one target thread,
# one draft thread, as specspeed.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
k="${K:-3}"
n="${N:-128}"
reps="${REPS:-3}"
seqs="${SEQS:-4}"
lib="${SPECD_LLAMA_LIB:-.cache/npm/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64}"
[[ -e $lib ]] || bash tools/peer/fetch.sh
dir=.cache/specspeed
mkdir -p "$dir"
go build -o "$dir/mkmodel" ./tools/peer/mkmodel
go build -o "$dir/llamaspeed" ./tools/llamaspeed
shape=(-arch llama -dim 512 -layers 8 -heads 8 -kv-heads 4 -ffn 1536 -vocab 32000 -seed 1)
[[ -s $dir/target-F16.gguf ]] || "$dir/mkmodel" -o "$dir/target-F16.gguf" -type F16 "${shape[@]}"
[[ -s $dir/draft-Q8_0.gguf ]] || "$dir/mkmodel" -o "$dir/draft-Q8_0.gguf" -type Q8_0 -embd-type F16 "${shape[@]}"
"$dir/llamaspeed" -m "$dir/target-F16.gguf" -d "$dir/draft-Q8_0.gguf" --llama-lib "$lib" \
  -n "$n" -k "$k" --seqs "$seqs" --reps "$reps" --threads 1 --draft-threads 1 ${EXTRA:-}
