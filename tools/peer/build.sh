#!/usr/bin/env bash
# build.sh builds the llama.cpp tools that specd's conformance and speed
# checks compare against, CPU only, into .cache/llama.cpp/build/bin/:
#   llama-quantize llama-bench llama-completion llama-speculative-simple
#   llama-tokenize, and llamaref (tools/peer/llamaref.c: greedy ids and
#   first-step logits through llama.h, without llama.cpp's samplers).
# It runs fetch.sh first, installs cmake and ninja with apt-get if missing,
# and is quick when everything is already built. JOBS (default 2) sets the
# build parallelism.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
src="$root/.cache/llama.cpp"
build="$src/build"
bin="$build/bin"
jobs="${JOBS:-2}"

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
echo "peer: llama.cpp tools in $bin" >&2
