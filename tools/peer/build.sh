#!/usr/bin/env bash
# build.sh builds the llama.cpp tools that specd's conformance and speed
# checks compare against, CPU only, into .cache/llama.cpp/build/bin/:
#   llama-quantize llama-bench llama-completion llama-speculative-simple
#   llama-tokenize, and llamaref (tools/peer/llamaref.c: greedy ids and
#   first-step logits through llama.h, without llama.cpp's samplers).
# It runs fetch.sh first, installs cmake and ninja with apt-get if missing,
# and is quick when everything is already built. JOBS (default: the CPUs,
# nproc) sets the build parallelism.
#
# The tools use ggml's CPU code for this machine (GGML_NATIVE: AVX-512 where
# the CPU has it). With SPECD_PEER_CPU=avx2 it also builds ggml's CPU library
# for AVX2/FMA/F16C only (no AVX-512) into .cache/llama.cpp/build-avx2/bin;
# the conformance test then runs llamaref against that library instead
# (same llama.cpp, the other set of SIMD kernels and their summation orders).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
src="$root/.cache/llama.cpp"
build="$src/build"
bin="$build/bin"
jobs="${JOBS:-$(nproc)}"

bash "$root/tools/peer/fetch.sh"

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v cc >/dev/null || need+=(build-essential)
if ((${#need[@]})); then
  echo "peer: installing ${need[*]}" >&2
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo=sudo
  $sudo apt-get update -q
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
fi

targets=(llama-quantize llama-bench llama-completion llama-speculative-simple llama-tokenize)

if [[ ! -f "$build/build.ninja" ]]; then
  echo "peer: configuring llama.cpp (CPU, Release)" >&2
  cmake -S "$src" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=ON \
    -DGGML_NATIVE=ON \
    -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_EXAMPLES=ON \
    -Wno-dev >&2
fi

stale=0
for t in "${targets[@]}"; do [[ -x "$bin/$t" ]] || stale=1; done
if ((stale)); then
  echo "peer: building ${targets[*]} with -j$jobs (several minutes)" >&2
fi
# ninja is a no-op when nothing changed, so always ask it.
cmake --build "$build" -j "$jobs" --target "${targets[@]}" >&2

ref="$root/tools/peer/llamaref.c"
if [[ ! -x "$bin/llamaref" || "$ref" -nt "$bin/llamaref" || "$bin/libllama.so" -nt "$bin/llamaref" ]]; then
  echo "peer: building llamaref" >&2
  cc -O2 -std=c11 -Wall -Wextra -o "$bin/llamaref" "$ref" \
    -I"$src/include" -I"$src/ggml/include" \
    -L"$bin" -lllama -lggml -lggml-base -lm \
    -Wl,-rpath,"$bin"
fi
if [[ ${SPECD_PEER_CPU:-native} == avx2 ]]; then
  avx2="$src/build-avx2"
  if [[ ! -f "$avx2/build.ninja" ]]; then
    echo "peer: configuring ggml's CPU library for AVX2 (no AVX-512)" >&2
    cmake -S "$src" -B "$avx2" -G Ninja \
      -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DGGML_NATIVE=OFF \
      -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
      -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
      -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
      -Wno-dev >&2
  fi
  cmake --build "$avx2" -j "$jobs" --target ggml-cpu >&2
  echo "peer: AVX2 ggml CPU library in $avx2/bin" >&2
fi
echo "peer: llama.cpp tools in $bin" >&2
