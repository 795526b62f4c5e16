"""Contrastive dual encoder matching patent claims to prior-art abstracts."""
import argparse
import json
import os
import random
import zlib

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CONFIG = {
    "vocab_buckets": 50000,
    "max_tokens": 128,
    "dim": 256,
    "heads": 4,
    "layers": 4,
    "temperature": 0.05,
    "sdp": {"enable_flash": False, "enable_math": True, "enable_mem_efficient": False},
}


def tokenize(text, buckets, max_tokens):
    ids = [1 + zlib.crc32(w.encode()) % (buckets - 1) for w in text.lower().split()][:max_tokens]
    return ids + [0] * (max_tokens - len(ids))


class PairSet(Dataset):
    def __init__(self, path, cfg):
        with open(path) as fh:
            self.pairs = [json.loads(line) for line in fh if line.strip()]
        self.cfg = cfg

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        p = self.pairs[i]
        tok = lambda t: torch.tensor(tokenize(t, self.cfg["vocab_buckets"], self.cfg["max_tokens"]))
        return tok(p["claim"]), tok(p["abstract"])


class SelfAttention(nn.Module):
    def __init__(self, dim, heads, sdp_flags):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.sdp_flags = sdp_flags

    def forward(self, x, keep):
        B, T, D = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
        mask = keep[:, None, None, :]
        with torch.backends.cuda.sdp_kernel(**self.sdp_flags):
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(y.transpose(1, 2).reshape(B, T, D))


class EncoderLayer(nn.Module):
    def __init__(self, dim, heads, sdp_flags):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads, sdp_flags)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, keep):
        x = x + self.attn(self.n1(x), keep)
        return x + self.ff(self.n2(x))


class TextEncoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.emb = nn.Embedding(cfg["vocab_buckets"], cfg["dim"], padding_idx=0)
        self.pos = nn.Parameter(torch.zeros(1, cfg["max_tokens"], cfg["dim"]))
        self.layers = nn.ModuleList([EncoderLayer(cfg["dim"], cfg["heads"], cfg["sdp"])
                                     for _ in range(cfg["layers"])])
        self.norm = nn.LayerNorm(cfg["dim"])

    def forward(self, ids):
        keep = ids != 0
        x = self.emb(ids) + self.pos[:, : ids.size(1)]
        for layer in self.layers:
            x = layer(x, keep)
        x = self.norm(x)
        w = keep.unsqueeze(-1).float()
        return F.normalize((x * w).sum(1) / w.sum(1).clamp_min(1.0), dim=-1)


def info_nce(a, b, temperature):
    logits = a @ b.T / temperature
    target = torch.arange(a.size(0), device=a.device)
    return 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target))


@torch.no_grad()
def recall_at_k(claim_enc, abs_enc, loader, device, k=10):
    claim_enc.eval()
    abs_enc.eval()
    qs, ds = [], []
    for c, a in loader:
        qs.append(claim_enc(c.to(device)))
        ds.append(abs_enc(a.to(device)))
    q, d = torch.cat(qs), torch.cat(ds)
    topk = (q @ d.T).topk(min(k, d.size(0)), dim=1).indices
    hits = (topk == torch.arange(q.size(0), device=device)[:, None]).any(dim=1)
    return hits.float().mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/patents/train_pairs.jsonl")
    ap.add_argument("--val", default="data/patents/val_pairs.jsonl")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--out", default="checkpoints/claim_dual_encoder.pt")
    args = ap.parse_args()

    random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl = DataLoader(PairSet(args.train, CONFIG), batch_size=args.batch_size, shuffle=True,
                          drop_last=True)
    val_dl = DataLoader(PairSet(args.val, CONFIG), batch_size=args.batch_size)
    claim_enc, abs_enc = TextEncoder(CONFIG).to(device), TextEncoder(CONFIG).to(device)
    params = list(claim_enc.parameters()) + list(abs_enc.parameters())
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)

    best = 0.0
    for epoch in range(args.epochs):
        claim_enc.train()
        abs_enc.train()
        for c, a in train_dl:
            c, a = c.to(device), a.to(device)
            loss = info_nce(claim_enc(c), abs_enc(a), CONFIG["temperature"])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
        r10 = recall_at_k(claim_enc, abs_enc, val_dl, device)
        print(f"epoch {epoch}  recall@10 {r10:.3f}")
        if r10 > best:
            best = r10
            os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
            torch.save({"claim": claim_enc.state_dict(), "abstract": abs_enc.state_dict()}, args.out)


if __name__ == "__main__":
    main()
