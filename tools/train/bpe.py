"""bpe: a byte-level BPE tokenizer in the GPT-2 style.

Text is split into pre-tokens with GPT-2's pattern

    's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+

which is what llama.cpp runs for tokenizer.ggml.pre = "gpt-2". Python's re has
no \\p{L}, so the letter, number and whitespace classes are built explicitly:
letters are the code points whose Unicode category starts with L, numbers those
starting with N, and whitespace is llama.cpp's whitespace set (which differs
from Python's \\s). A code point in none of the classes that is unassigned
(category Cn) becomes a pre-token of its own, as in llama.cpp.

Each pre-token's UTF-8 bytes are mapped to printable characters with GPT-2's
byte<->unicode table; merges are learned on those symbols and applied by rank
(lowest first, left to right), the way llama.cpp applies tokenizer.ggml.merges.
"""

import heapq
import re
import sys
import unicodedata

# WHITESPACE is llama.cpp's whitespace set (unicode_set_whitespace).
WHITESPACE = [
    0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680,
    0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007,
    0x2008, 0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
]


def bytes_to_unicode():
    """Returns GPT-2's map from byte value to a printable character."""
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("\u00a1"), ord("\u00ac") + 1))
          + list(range(ord("\u00ae"), ord("\u00ff") + 1)))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def _ranges(pred):
    out = []
    start = None
    for cp in range(sys.maxunicode + 1):
        if pred(cp):
            if start is None:
                start = cp
        elif start is not None:
            out.append((start, cp - 1))
            start = None
    if start is not None:
        out.append((start, sys.maxunicode))
    return out


def _class(ranges):
    parts = []
    for a, b in ranges:
        if a == b:
            parts.append(re.escape(chr(a)))
        else:
            parts.append(re.escape(chr(a)) + "-" + re.escape(chr(b)))
    return "[" + "".join(parts) + "]"


def _build_pattern():
    ws = set(WHITESPACE)
    cats = [unicodedata.category(chr(cp)) if not (0xD800 <= cp <= 0xDFFF) else "Cs"
            for cp in range(sys.maxunicode + 1)]
    letter = _class(_ranges(lambda cp: cats[cp][0] == "L"))
    number = _class(_ranges(lambda cp: cats[cp][0] == "N"))
    space = _class(_ranges(lambda cp: cp in ws))
    other = _class(_ranges(lambda cp: cp not in ws and cats[cp][0] not in "LN" and cats[cp] != "Cn"))
    pat = ("'s|'t|'re|'ve|'m|'ll|'d"
           "| ?" + letter + "+"
           "| ?" + number + "+"
           "| ?" + other + "+"
           "|" + space + "+(?!" + "[^" + space[1:] + ")"
           "|" + space + "+"
           "|.")
    return re.compile(pat, re.DOTALL)


_PATTERN = None


def pretokenize(text):
    """Splits text into GPT-2 pre-tokens (a list of str)."""
    global _PATTERN
    if _PATTERN is None:
        _PATTERN = _build_pattern()
    return _PATTERN.findall(text)


class Tokenizer:
    """A trained byte-level BPE vocabulary.

    tokens[i] is the GPT-2-mapped string of token i; merges[r] = (a, b) is the
    merge of rank r as a pair of token strings. Special tokens come last.
    """

    def __init__(self, tokens, merges, specials):
        self.tokens = tokens
        self.merges = merges
        self.specials = specials
        self.ids = {t: i for i, t in enumerate(tokens)}
        self.ranks = {m: r for r, m in enumerate(merges)}
        self.b2u = bytes_to_unicode()
        self.u2b = {c: b for b, c in self.b2u.items()}
        self._cache = {}

    def special_id(self, s):
        return self.ids[s]

    def _encode_word(self, word):
        syms = [self.b2u[b] for b in word.encode("utf-8")]
        ranks = self.ranks
        while len(syms) > 1:
            best = None
            for i in range(len(syms) - 1):
                r = ranks.get((syms[i], syms[i + 1]))
                if r is not None and (best is None or r < best):
                    best = r
            if best is None:
                break
            a, b = self.merges[best]
            out = []
            i = 0
            while i < len(syms):
                if i + 1 < len(syms) and syms[i] == a and syms[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(syms[i])
                    i += 1
            syms = out
        return [self.ids[s] for s in syms]

    def encode(self, text):
        """Returns the token ids of text (no BOS, no special-token parsing)."""
        out = []
        cache = self._cache
        for w in pretokenize(text):
            ids = cache.get(w)
            if ids is None:
                ids = self._encode_word(w)
                cache[w] = ids
            out.extend(ids)
        return out

    def decode(self, ids):
        bs = bytearray()
        for i in ids:
            t = self.tokens[i]
            if t in self.specials:
                continue
            bs.extend(self.u2b[c] for c in t)
        return bs.decode("utf-8", errors="replace")


def train(texts, vocab_size, specials, log=print):
    """Learns merges on texts until the vocabulary (256 bytes + merges +
    specials) has vocab_size entries. Ties in pair frequency go to the pair
    of smaller symbol ids, so training is deterministic."""
    b2u = bytes_to_unicode()
    counts = {}
    for t in texts:
        for w in pretokenize(t):
            counts[w] = counts.get(w, 0) + 1
    words = []
    freqs = []
    for w in sorted(counts):
        words.append([b for b in w.encode("utf-8")])
        freqs.append(counts[w])
    log("bpe: %d distinct pre-tokens" % len(words))
    sym = [b2u[b] for b in range(256)]  # symbol id -> string
    pair_count = {}
    where = {}
    for wi, w in enumerate(words):
        f = freqs[wi]
        for i in range(len(w) - 1):
            p = (w[i], w[i + 1])
            pair_count[p] = pair_count.get(p, 0) + f
            where.setdefault(p, set()).add(wi)
    heap = [(-c, p) for p, c in pair_count.items()]
    heapq.heapify(heap)
    merges = []
    sym_id = {s: i for i, s in enumerate(sym)}
    n_syms = vocab_size - len(specials)
    while len(sym) < n_syms and heap:
        negc, p = heapq.heappop(heap)
        c = pair_count.get(p, 0)
        if c <= 0 or c != -negc:
            continue  # stale entry
        a, b = p
        # Two different merges can spell the same string ("ab"+"c" and
        # "a"+"bc"); the string keeps its first id.
        s = sym[a] + sym[b]
        new = sym_id.get(s)
        if new is None:
            new = len(sym)
            sym.append(s)
            sym_id[s] = new
        merges.append((sym[a], sym[b]))
        changed = {}
        for wi in where.pop(p, ()):
            w = words[wi]
            f = freqs[wi]
            if len(w) < 2:
                continue
            out = []
            i = 0
            hit = False
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(new)
                    i += 2
                    hit = True
                else:
                    out.append(w[i])
                    i += 1
            if not hit:
                continue
            for i in range(len(w) - 1):
                q = (w[i], w[i + 1])
                changed[q] = changed.get(q, 0) - f
            for i in range(len(out) - 1):
                q = (out[i], out[i + 1])
                changed[q] = changed.get(q, 0) + f
                where.setdefault(q, set()).add(wi)
            words[wi] = out
        for q, d in changed.items():
            if d == 0:
                continue
            nc = pair_count.get(q, 0) + d
            if nc > 0:
                pair_count[q] = nc
                heapq.heappush(heap, (-nc, q))
            else:
                pair_count.pop(q, None)
        pair_count.pop(p, None)
        if len(merges) % 500 == 0:
            log("bpe: %d merges, last %r+%r (count %d)" % (len(merges), sym[a], sym[b], c))
    tokens = sym + list(specials)
    return Tokenizer(tokens, merges, set(specials))
