"""check_llama.py: checks the exported pair against llama.cpp's own tools.

    bash tools/peer/build.sh                 # builds llama.cpp's tools
    python3 tools/train/check_llama.py

1. Tokenizer: llama-tokenize on held-out paragraphs and on awkward strings
   (runs of spaces, newlines, digits, contractions, non-ASCII) must give the
   same ids as tools/train/bpe.py (BOS first).
2. Forward pass: llamaref's greedy ids for the prompts in
   models/testdata/golden.json must equal the PyTorch model's.
3. Generation: llama-completion (greedy, 24 tokens) loads each file and
   continues "The jury said"; the texts are recorded.
4. Speculative decoding: llama-speculative-simple, greedy, draft length 4, on
   the acceptance prompts of train.py's eval stage (BOS + the first 31 tokens
   of each held-out file, 64 tokens); sums n_drafted and n_accept.

Results go to models/llama_check.json and models/train.log. Needs
.cache/train/ from train.py (its data stage alone recreates the tokenizer).
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import train  # noqa: E402

BIN = os.path.join(train.ROOT, ".cache", "llama.cpp", "build", "bin")
TARGET = os.path.join(train.OUT, "specd-target.gguf")
DRAFT = os.path.join(train.OUT, "specd-draft.gguf")



def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


def check_tokenizer(tok, held_texts):
    texts = train.AWKWARD + held_texts
    bos = tok.special_id(train.EOT)
    bad = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.txt")
        for t in texts:
            with open(path, "w", encoding="utf-8") as f:
                f.write(t)
            r = run([os.path.join(BIN, "llama-tokenize"), "-m", TARGET, "-f", path, "--ids", "--log-disable"])
            if r.returncode != 0:
                raise SystemExit("check: llama-tokenize failed: %s" % r.stderr[-2000:])
            got = json.loads(r.stdout.strip().splitlines()[-1])
            want = [bos] + tok.encode(t)
            if got != want:
                bad.append({"text": t, "llama": got, "python": want})
    return len(texts), bad


def check_greedy():
    with open(os.path.join(train.OUT, "testdata", "golden.json")) as f:
        cases = json.load(f)["cases"]
    out = []
    for c in cases:
        n = len(c["target_greedy"])
        r = run([os.path.join(BIN, "llamaref"), "-m", TARGET, "--ids", ",".join(map(str, c["ids"])),
                 "-n", str(n), "--threads", "1"])
        if r.returncode != 0:
            raise SystemExit("check: llamaref failed: %s" % r.stderr[-2000:])
        got = [int(x) for x in r.stdout.split()]
        out.append({"prompt": c["prompt"], "llama": got, "python": c["target_greedy"], "equal": got == c["target_greedy"]})
    return out


def check_completion():
    out = {}
    for path in (TARGET, DRAFT):
        r = run([os.path.join(BIN, "llama-completion"), "-m", path, "-p", "The jury said", "-n", "24", "--temp", "0",
                 "-t", "1", "-c", "256", "--no-warmup"], stdin=subprocess.DEVNULL)
        text = r.stdout.strip()
        if r.returncode != 0 or not text.startswith("The jury said") or len(text) <= len("The jury said"):
            raise SystemExit("check: llama-completion on %s failed (rc %d): %s" % (path, r.returncode, (r.stdout + r.stderr)[-2000:]))
        out[os.path.basename(path)] = text
    return out


def check_speculative(tok, held, held_starts):
    drafted = accepted = 0
    runs = 0
    for s in held_starts:
        ids = held[s + 1:s + train.ACC_PROMPT].tolist()
        prompt = tok.decode(ids)
        r = run([os.path.join(BIN, "llama-speculative-simple"), "-m", TARGET, "-md", DRAFT, "-p", prompt,
                 "-n", str(train.ACC_GEN), "--temp", "0", "--top-k", "1", "--spec-type", "draft-simple", "--spec-draft-n-max", str(train.ACC_K),
                 "--spec-draft-n-min", "0", "--spec-draft-p-min", "0", "-t", "1", "-td", "1", "-c", "256",
                 "--seed", "1"])
        text = r.stdout + r.stderr
        md = re.search(r"n_drafted\s*=\s*(\d+)", text)
        ma = re.search(r"n_accept\s*=\s*(\d+)", text)
        if r.returncode != 0 or not md or not ma:
            raise SystemExit("check: llama-speculative-simple failed (rc %d): %s" % (r.returncode, text[-3000:]))
        drafted += int(md.group(1))
        accepted += int(ma.group(1))
        runs += 1
    return runs, drafted, accepted


def main():
    for b in ("llama-tokenize", "llamaref", "llama-completion", "llama-speculative-simple"):
        if not os.access(os.path.join(BIN, b), os.X_OK):
            raise SystemExit("check: %s missing; run: bash tools/peer/build.sh" % os.path.join(BIN, b))
    t0 = time.time()
    tok = train.load_tokenizer()
    _, held, held_starts = train.load_data()
    # Held-out paragraphs, as text, for the tokenizer comparison.
    import corpus
    _, held_docs = corpus.load(train.CORPUS)
    paras = [p for _, t in held_docs for p in t.split("\n")][:300]
    res = {}
    n, bad = check_tokenizer(tok, paras)
    res["tokenizer"] = {"texts": n, "mismatches": bad}
    train.log("llama.cpp: llama-tokenize agrees with bpe.py on %d of %d texts" % (n - len(bad), n))
    for b in bad[:5]:
        train.log("llama.cpp: tokenizer mismatch on %r: llama %s python %s" % (b["text"][:80], b["llama"][:20], b["python"][:20]))
    g = check_greedy()
    res["greedy"] = g
    train.log("llama.cpp: llamaref greedy ids equal PyTorch's on %d of %d golden prompts" % (
        sum(c["equal"] for c in g), len(g)))
    res["completion"] = check_completion()
    for name, text in res["completion"].items():
        train.log("llama.cpp: llama-completion %s: %r" % (name, text))
    runs, d, a = check_speculative(tok, held, held_starts)
    res["speculative"] = {"runs": runs, "n_drafted": d, "n_accept": a, "accept": a / max(1, d),
                          "setup": "llama-speculative-simple --spec-type draft-simple --temp 0 --top-k 1 --spec-draft-n-max %d -n %d, %d held-out prompts" % (
                              train.ACC_K, train.ACC_GEN, runs)}
    train.log("llama.cpp: llama-speculative-simple greedy k=%d over %d prompts: n_drafted %d n_accept %d accept %.3f" % (
        train.ACC_K, runs, d, a, a / max(1, d)))
    with open(os.path.join(train.OUT, "llama_check.json"), "w") as f:
        json.dump(res, f, indent=2)
    train.log("llama.cpp: checks done in %.0fs" % (time.time() - t0))


if __name__ == "__main__":
    main()
