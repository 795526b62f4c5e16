"""ABC-notation folk-tune generator: a small causal transformer with gradient accumulation."""
import argparse
import math
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.data import DataLoader, Dataset


class TuneChunks(Dataset):
    def __init__(self, path, block, stoi=None):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        self.stoi = stoi or {c: i for i, c in enumerate(sorted(set(text)))}
        self.data = torch.tensor([self.stoi.get(c, 0) for c in text], dtype=torch.long)
        self.block = block

    def __len__(self):
        return (len(self.data) - 1) // self.block

    def __getitem__(self, i):
        s = i * self.block
        return self.data[s: s + self.block], self.data[s + 1: s + self.block + 1]


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads, dropout):
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                               dropout_p=self.dropout if self.training else 0.0)
        return self.proj(y.transpose(1, 2).reshape(B, T, D))


class Block(nn.Module):
    def __init__(self, dim, heads, dropout):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, dropout)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim), nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.n1(x))
        return x + self.ff(self.n2(x))


class TuneLM(nn.Module):
    def __init__(self, vocab, block, dim=192, heads=6, layers=6, dropout=0.1):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(block, dim)
        self.blocks = nn.Sequential(*[Block(dim, heads, dropout) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.size(1), device=idx.device))
        return self.head(self.norm(self.blocks(x)))


@torch.no_grad()
def sample(model, stoi, prompt, length, block, temperature=0.9):
    model.eval()
    itos = {i: c for c, i in stoi.items()}
    idx = torch.tensor([[stoi.get(c, 0) for c in prompt]])
    for _ in range(length):
        logits = model(idx[:, -block:])[:, -1] / temperature
        idx = torch.cat([idx, torch.multinomial(F.softmax(logits, dim=-1), 1)], dim=1)
    return "".join(itos[i] for i in idx[0].tolist())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/abc/train.abc")
    ap.add_argument("--val", default="data/abc/val.abc")
    ap.add_argument("--block", type=int, default=256)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--accum", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--lr", type=float, default=6e-4)
    ap.add_argument("--out", default="checkpoints/tune_lm.pt")
    args = ap.parse_args()

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    train_ds = TuneChunks(args.train, args.block)
    val_ds = TuneChunks(args.val, args.block, stoi=train_ds.stoi)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=args.batch_size)
    model = TuneLM(len(train_ds.stoi), args.block)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=args.lr)

    history = []
    for epoch in range(args.epochs):
        model.train()
        optimizer.zero_grad()
        running, seen = 0.0, 0
        for step, (x, y) in enumerate(train_dl):
            logits = model(x)
            loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
            (loss / args.accum).backward()
            running += loss.item() * x.size(0)
            seen += x.size(0)
            if (step + 1) % args.accum == 0:
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
        model.eval()
        val_loss, n = 0.0, 0
        with torch.no_grad():
            for x, y in val_dl:
                val_loss += F.cross_entropy(model(x).flatten(0, 1), y.flatten(), reduction="sum").item()
                n += y.numel()
        history.append((running / max(seen, 1), val_loss / max(n, 1)))
        print(f"epoch {epoch}: train {history[-1][0]:.4f}  val {history[-1][1]:.4f}  "
              f"ppl {math.exp(history[-1][1]):.2f}")
    print(sample(model, train_ds.stoi, "X:1\nT:", 200, args.block))
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    torch.save({"model": model.state_dict(), "stoi": train_ds.stoi, "history": history}, args.out)


if __name__ == "__main__":
    main()
