import json
import math
import random
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

PAD, BOS, EOS = 0, 1, 2
SETTINGS = {"songs": "data/lyrics/songs.jsonl", "vocab_size": 8000, "d_model": 320, "heads": 8, "layers": 6,
            "max_len": 256, "batch_size": 32, "epochs": 20, "lr": 4e-4, "seed": 10, "out": "runs/lyrics_lm"}


def causal_mask(size, device):
    return torch.triu(torch.full((size, size), float("-inf"), device=device), diagonal=1)


class DecoderBlock(nn.Module):
    def __init__(self, d_model, heads, dropout=0.1):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, heads, dropout=dropout, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model),
                                nn.Dropout(dropout))

    def forward(self, x, mask, pad):
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, attn_mask=mask, key_padding_mask=pad, need_weights=False)
        x = x + a
        return x + self.ff(self.ln2(x))


class LyricsLM(nn.Module):
    def __init__(self, vocab, d_model, heads, layers, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model, padding_idx=PAD)
        self.pos = nn.Parameter(torch.zeros(1, max_len, d_model))
        nn.init.normal_(self.pos, std=0.02)
        self.blocks = nn.ModuleList([DecoderBlock(d_model, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, ids):
        t = ids.size(1)
        mask, pad = causal_mask(t, ids.device), ids == PAD
        x = self.tok(ids) + self.pos[:, :t]
        for block in self.blocks:
            x = block(x, mask, pad)
        return self.lm_head(self.ln(x))


def load_songs(path, max_len):
    songs = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        ids = json.loads(line)["token_ids"][: max_len - 2]
        songs.append(torch.tensor([BOS] + ids + [EOS]))
    return songs


class LMTrainer:
    def __init__(self, model, optimizer, device):
        self.model, self.optimizer, self.device = model, optimizer, device
        self.history = defaultdict(list)

    def step(self, ids):
        ids = ids.to(self.device)
        logits = self.model(ids[:, :-1])
        loss = F.cross_entropy(logits.transpose(1, 2), ids[:, 1:], ignore_index=PAD)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()
        self.history["train"].append(loss)

    def epoch_summary(self, start):
        losses = self.history["train"][start:]
        return torch.stack(losses).mean().item()

    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        total, tokens = 0.0, 0
        for ids in loader:
            ids = ids.to(self.device)
            target = ids[:, 1:]
            loss = F.cross_entropy(self.model(ids[:, :-1]).transpose(1, 2), target, ignore_index=PAD, reduction="sum")
            total += loss.item()
            tokens += (target != PAD).sum().item()
        self.model.train()
        return total / tokens

    @torch.no_grad()
    def sample(self, length=60, temperature=0.9):
        self.model.eval()
        ids = torch.tensor([[BOS]], device=self.device)
        for _ in range(length):
            logits = self.model(ids)[:, -1] / temperature
            nxt = torch.multinomial(F.softmax(logits, dim=-1), 1)
            ids = torch.cat([ids, nxt], dim=1)
            if nxt.item() == EOS:
                break
        self.model.train()
        return ids[0, 1:].tolist()


def main(s=SETTINGS):
    random.seed(s["seed"]); np.random.seed(s["seed"]); torch.manual_seed(s["seed"])
    songs = load_songs(s["songs"], s["max_len"])
    random.shuffle(songs)
    cut = int(0.95 * len(songs))
    collate = lambda batch: pad_sequence(batch, batch_first=True, padding_value=PAD)
    train = DataLoader(songs[:cut], batch_size=s["batch_size"], shuffle=True, collate_fn=collate, drop_last=True)
    valid = DataLoader(songs[cut:], batch_size=64, collate_fn=collate)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = LyricsLM(s["vocab_size"], s["d_model"], s["heads"], s["layers"], s["max_len"]).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=s["lr"], weight_decay=0.0)
    trainer = LMTrainer(model, optimizer, device)
    model.train()
    for epoch in range(s["epochs"]):
        start = len(trainer.history["train"])
        for ids in train:
            trainer.step(ids)
        val = trainer.evaluate(valid)
        print(f"epoch {epoch:02d} train {trainer.epoch_summary(start):.3f} valid ppl {math.exp(val):.1f}")
        print("sample:", trainer.sample()[:30])
        Path(s["out"]).mkdir(parents=True, exist_ok=True)
        torch.save({"model": model.state_dict(), "epoch": epoch}, Path(s["out"]) / "last.pt")


if __name__ == "__main__":
    main()
