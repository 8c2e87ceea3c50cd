"""model: a llama-architecture transformer whose arithmetic is llama.cpp's.

    x = token_embd[tok]
    for each layer:
        h = rmsnorm(x) * attn_norm
        q, k, v = wq h, wk h, wv h          # per head, head_dim each
        q, k = rope(q), rope(k)             # NORM layout: pairs (2i, 2i+1)
        x = x + wo softmax(q k^T / sqrt(head_dim), causal) v
        h = rmsnorm(x) * ffn_norm
        x = x + w_down(silu(w_gate h) * w_up h)
    logits = output(rmsnorm(x) * output_norm)   # output = token_embd (tied)

rmsnorm(x) = x / sqrt(mean(x^2) + eps). RoPE rotates adjacent pairs
(x[2i], x[2i+1]) by pos * base^(-2i/head_dim), which is ggml's rope mode 0
(LLAMA_ROPE_TYPE_NORM), so the Q/K weights export to GGUF without any row
permutation. Query head h reads KV head h // (heads / kv_heads), as in
llama.cpp's grouped-query attention.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Config:
    def __init__(self, vocab, dim, layers, heads, kv_heads, ffn, ctx, rope_base=10000.0, eps=1e-5):
        self.vocab = vocab
        self.dim = dim
        self.layers = layers
        self.heads = heads
        self.kv_heads = kv_heads
        self.ffn = ffn
        self.ctx = ctx
        self.rope_base = rope_base
        self.eps = eps
        assert dim % heads == 0 and heads % kv_heads == 0
        self.head_dim = dim // heads


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(head_dim, ctx, base):
    """Returns cos, sin of shape (ctx, head_dim/2)."""
    i = torch.arange(0, head_dim // 2, dtype=torch.float64)
    inv = base ** (-2.0 * i / head_dim)
    pos = torch.arange(ctx, dtype=torch.float64)
    ang = torch.outer(pos, inv)
    return torch.cos(ang).float(), torch.sin(ang).float()


def rope(x, cos, sin):
    # x: (B, T, H, D); rotate adjacent pairs.
    B, T, H, D = x.shape
    xr = x.view(B, T, H, D // 2, 2)
    x0, x1 = xr[..., 0], xr[..., 1]
    c = cos[:T].view(1, T, 1, D // 2)
    s = sin[:T].view(1, T, 1, D // 2)
    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).view(B, T, H, D)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        hd = cfg.head_dim
        self.attn_norm = RMSNorm(cfg.dim, cfg.eps)
        self.wq = nn.Linear(cfg.dim, cfg.heads * hd, bias=False)  # (dim, dim)
        self.wk = nn.Linear(cfg.dim, cfg.kv_heads * hd, bias=False)  # (kv_heads*hd, dim)
        self.wv = nn.Linear(cfg.dim, cfg.kv_heads * hd, bias=False)  # (kv_heads*hd, dim)
        self.wo = nn.Linear(cfg.heads * hd, cfg.dim, bias=False)  # (dim, dim)
        self.ffn_norm = RMSNorm(cfg.dim, cfg.eps)
        self.w_gate = nn.Linear(cfg.dim, cfg.ffn, bias=False)  # (ffn, dim)
        self.w_up = nn.Linear(cfg.dim, cfg.ffn, bias=False)  # (ffn, dim)
        self.w_down = nn.Linear(cfg.ffn, cfg.dim, bias=False)  # (dim, ffn)

    def forward(self, x, cos, sin, mask):
        cfg = self.cfg
        B, T, _ = x.shape
        hd = cfg.head_dim
        h = self.attn_norm(x)
        q = rope(self.wq(h).view(B, T, cfg.heads, hd), cos, sin)
        k = rope(self.wk(h).view(B, T, cfg.kv_heads, hd), cos, sin)
        v = self.wv(h).view(B, T, cfg.kv_heads, hd)
        g = cfg.heads // cfg.kv_heads
        if g > 1:
            k = k.repeat_interleave(g, dim=2)
            v = v.repeat_interleave(g, dim=2)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # (B, H, T, hd)
        att = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(hd))
        att = att.masked_fill(mask[:T, :T], float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, cfg.heads * hd)
        x = x + self.wo(y)
        h = self.ffn_norm(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


class Llama(nn.Module):
    def __init__(self, cfg, embd=None):
        """embd, if given, is a shared (tied) token embedding / output matrix."""
        super().__init__()
        self.cfg = cfg
        self.embd = embd if embd is not None else nn.Parameter(torch.randn(cfg.vocab, cfg.dim) * 0.02)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = RMSNorm(cfg.dim, cfg.eps)
        cos, sin = rope_tables(cfg.head_dim, cfg.ctx, cfg.rope_base)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        self.register_buffer("mask", torch.triu(torch.ones(cfg.ctx, cfg.ctx, dtype=torch.bool), 1),
                             persistent=False)
        for name, p in self.named_parameters():
            if p.dim() == 2 and name != "embd":
                nn.init.normal_(p, std=0.02)
                if name.endswith("wo.weight") or name.endswith("w_down.weight"):
                    p.data.mul_(1.0 / math.sqrt(2 * cfg.layers))

    def hidden(self, tokens):
        x = F.embedding(tokens, self.embd)
        for b in self.blocks:
            x = b(x, self.cos, self.sin, self.mask)
        return self.norm(x)

    def forward(self, tokens):
        return self.hidden(tokens) @ self.embd.t()
