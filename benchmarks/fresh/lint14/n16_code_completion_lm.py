import math
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

PAD, BOS, EOS = 256, 257, 258
VOCAB = 259


@dataclass
class LMConfig:
    snippets: str = "data/py_snippets/train.txt"
    val_snippets: str = "data/py_snippets/valid.txt"
    max_len: int = 384
    d_model: int = 384
    heads: int = 6
    layers: int = 6
    batch_size: int = 24
    accum: int = 4
    lr: float = 6e-4
    warmup: int = 500
    steps: int = 20000
    seed: int = 1234
    ckpt: str = "runs/code_lm/state.pt"


class Snippets(Dataset):
    def __init__(self, path, max_len):
        text = Path(path).read_text(encoding="utf-8")
        self.items = [s.encode("utf-8")[: max_len - 2] for s in text.split("\n\n\n") if s.strip()]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        return torch.tensor([BOS] + list(self.items[index]) + [EOS])


def pad_batch(batch):
    out = torch.full((len(batch), max(len(b) for b in batch)), PAD, dtype=torch.long)
    for i, b in enumerate(batch):
        out[i, : len(b)] = b
    return out


class CodeLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, cfg.d_model)
        self.pos = nn.Embedding(cfg.max_len, cfg.d_model)
        layer = nn.TransformerEncoderLayer(cfg.d_model, cfg.heads, 4 * cfg.d_model, dropout=0.1,
                                           batch_first=True, norm_first=True, activation="gelu")
        self.blocks = nn.TransformerEncoder(layer, cfg.layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(cfg.d_model)
        self.out = nn.Linear(cfg.d_model, VOCAB, bias=False)
        self.out.weight = self.tok.weight

    def forward(self, ids):
        t = ids.size(1)
        causal = torch.triu(torch.ones(t, t, dtype=torch.bool, device=ids.device), diagonal=1)
        padding = ids == PAD
        h = self.tok(ids) + self.pos(torch.arange(t, device=ids.device))
        h = self.blocks(h, mask=causal, src_key_padding_mask=padding)
        return self.out(self.norm(h))


def lm_loss(model, ids):
    logits = model(ids[:, :-1])
    return F.cross_entropy(logits.reshape(-1, VOCAB), ids[:, 1:].reshape(-1), ignore_index=PAD)


def param_groups(model, decay=0.1):
    groups = defaultdict(list)
    for name, p in model.named_parameters():
        groups["decay" if p.ndim == 2 and "tok" not in name and "pos" not in name else "plain"].append(p)
    return [{"params": groups["decay"], "weight_decay": decay}, {"params": groups["plain"], "weight_decay": 0.0}]


def schedule(cfg):
    def factor(step):
        if step < cfg.warmup:
            return (step + 1) / cfg.warmup
        progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
        return 0.1 + 0.45 * (1 + math.cos(math.pi * min(progress, 1.0)))
    return factor


def validate(model, loader, device):
    model.eval()
    total, tokens = 0.0, 0
    with torch.no_grad():
        for ids in loader:
            ids = ids.to(device)
            n = (ids[:, 1:] != PAD).sum().item()
            total += lm_loss(model, ids).item() * n
            tokens += n
    model.train()
    return total / tokens


def main(cfg=LMConfig()):
    random.seed(cfg.seed); np.random.seed(cfg.seed); torch.manual_seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train = DataLoader(Snippets(cfg.snippets, cfg.max_len), batch_size=cfg.batch_size, shuffle=True,
                       collate_fn=pad_batch, drop_last=True)
    valid = DataLoader(Snippets(cfg.val_snippets, cfg.max_len), batch_size=64, collate_fn=pad_batch)
    model = CodeLM(cfg).to(device)
    optimizer = torch.optim.AdamW(param_groups(model), lr=cfg.lr, betas=(0.9, 0.95))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule(cfg))
    step, history = 0, defaultdict(list)
    if Path(cfg.ckpt).exists():
        state = torch.load(cfg.ckpt, map_location=device, weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        step = state["step"]
    model.train()
    while step < cfg.steps:
        optimizer.zero_grad(set_to_none=True)
        for i, ids in enumerate(train):
            loss = lm_loss(model, ids.to(device)) / cfg.accum
            loss.backward()
            history["train"].append(loss.item() * cfg.accum)
            if (i + 1) % cfg.accum:
                continue
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            if step % 500 == 0:
                val = validate(model, valid, device)
                print(f"step {step} train {np.mean(history['train'][-500:]):.3f} valid {val:.3f} ppl {math.exp(val):.1f}")
                Path(cfg.ckpt).parent.mkdir(parents=True, exist_ok=True)
                torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                            "scheduler": scheduler.state_dict(), "step": step}, cfg.ckpt)
            if step >= cfg.steps:
                break


if __name__ == "__main__":
    main()
