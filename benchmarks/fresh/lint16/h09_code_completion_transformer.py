"""Byte-level decoder-only transformer for Python code completion."""
import argparse
import glob
import json
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class ByteCorpus(Dataset):
    def __init__(self, files, block):
        parts = []
        for f in files:
            with open(f, "rb") as fh:
                parts.append(fh.read())
        data = b"\n\n".join(parts)
        self.data = torch.tensor(list(data), dtype=torch.long)
        self.block = block

    def __len__(self):
        return max(0, (len(self.data) - 1) // self.block)

    def __getitem__(self, i):
        chunk = self.data[i * self.block: i * self.block + self.block + 1]
        return chunk[:-1], chunk[1:]


class Block(nn.Module):
    def __init__(self, dim, heads, max_len, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, dropout=dropout, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim),
                                 nn.Dropout(dropout))
        future = torch.triu(torch.ones(max_len, max_len), diagonal=1).to(torch.uint8)
        self.register_buffer("future", future, persistent=False)

    def forward(self, x):
        T = x.size(1)
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, attn_mask=self.future[:T, :T], need_weights=False)
        x = x + a
        return x + self.mlp(self.ln2(x))


class CodeLM(nn.Module):
    def __init__(self, vocab=256, dim=256, heads=8, layers=6, max_len=512, dropout=0.1):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList([Block(dim, heads, max_len, dropout) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.tok.weight

    def forward(self, idx):
        pos = torch.arange(idx.size(1), device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.lm_head(self.ln_f(x))


class Trainer:
    def __init__(self, model, optimizer, scheduler, device, clip=1.0):
        self.model, self.optimizer, self.scheduler = model, optimizer, scheduler
        self.device, self.clip = device, clip
        self.train_losses = []
        self.val_losses = []

    def train_epoch(self, loader):
        self.model.train()
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            logits = self.model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
            self.optimizer.step()
            self.scheduler.step()
            self.train_losses.append(loss)

    @torch.no_grad()
    def validate(self, loader):
        self.model.eval()
        total, tokens = 0.0, 0
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            logits = self.model(x)
            total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1),
                                     reduction="sum").item()
            tokens += y.numel()
        self.val_losses.append(total / max(tokens, 1))
        return self.val_losses[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default="data/py_corpus")
    ap.add_argument("--block", type=int, default=256)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--out", default="runs/code_lm")
    args = ap.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    files = sorted(glob.glob(os.path.join(args.src, "**", "*.py"), recursive=True))
    n_val = max(1, len(files) // 20)
    train_dl = DataLoader(ByteCorpus(files[n_val:], args.block), batch_size=args.batch_size,
                          shuffle=True, drop_last=True)
    val_dl = DataLoader(ByteCorpus(files[:n_val], args.block), batch_size=args.batch_size)

    model = CodeLM(max_len=args.block).to(device)
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "pos" not in n]
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2 or "pos" in n]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=args.lr,
                                  betas=(0.9, 0.95))
    total_steps = args.epochs * len(train_dl)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / 200) * 0.5 * (1 + math.cos(math.pi * min(s, total_steps) / total_steps)))
    trainer = Trainer(model, optimizer, scheduler, device)

    os.makedirs(args.out, exist_ok=True)
    for epoch in range(args.epochs):
        trainer.train_epoch(train_dl)
        val = trainer.validate(val_dl)
        print(f"epoch {epoch}  val loss {val:.4f}  bits/byte {val / math.log(2):.3f}")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "epoch": epoch},
                   os.path.join(args.out, "last.pt"))

    with open(os.path.join(args.out, "curves.json"), "w") as fh:
        json.dump({"train": [float(l) for l in trainer.train_losses], "val": trainer.val_losses}, fh)


if __name__ == "__main__":
    main()
