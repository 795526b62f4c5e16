"""German->English transformer (base-ish, 6+6 layers) on pre-tokenised IWSLT14 (joint BPE 10k).

Effective batch ~ 4 x 4096 tokens via gradient accumulation; inverse-sqrt schedule per update.
"""
import json
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset

PAD, BOS, EOS = 0, 1, 2


@dataclass
class TrainCfg:
    train_file: str = "data/iwslt14.de-en.train.jsonl"
    vocab_size: int = 10000
    d_model: int = 512
    layers: int = 6
    heads: int = 8
    ff: int = 2048
    dropout: float = 0.3
    smoothing: float = 0.1
    batch_size: int = 64
    accum_steps: int = 4
    warmup: int = 4000
    peak_lr: float = 7e-4
    max_updates: int = 60000


class ParallelIds(Dataset):
    def __init__(self, path):
        with open(path) as f:
            self.pairs = [json.loads(line) for line in f]

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        p = self.pairs[i]
        return torch.tensor(p["src"][:254]), torch.tensor([BOS] + p["tgt"][:254] + [EOS])


def collate(batch):
    src, tgt = zip(*batch)
    return pad_sequence(src, batch_first=True, padding_value=PAD), pad_sequence(tgt, batch_first=True, padding_value=PAD)


class Seq2Seq(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model, padding_idx=PAD)
        self.pos = nn.Embedding(512, cfg.d_model)
        self.core = nn.Transformer(cfg.d_model, cfg.heads, cfg.layers, cfg.layers, cfg.ff, cfg.dropout, batch_first=True)
        self.proj = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.proj.weight = self.embed.weight
        self.scale = math.sqrt(cfg.d_model)

    def _emb(self, ids):
        return self.embed(ids) * self.scale + self.pos(torch.arange(ids.size(1), device=ids.device))

    def forward(self, src, tgt_in):
        causal = torch.triu(torch.ones(tgt_in.size(1), tgt_in.size(1), dtype=torch.bool, device=src.device), 1)
        h = self.core(self._emb(src), self._emb(tgt_in), tgt_mask=causal,
                      src_key_padding_mask=src == PAD, tgt_key_padding_mask=tgt_in == PAD,
                      memory_key_padding_mask=src == PAD)
        return self.proj(h)


class SmoothedNLL(nn.Module):
    def __init__(self, eps, ignore_index=PAD):
        super().__init__()
        self.eps, self.ignore_index = eps, ignore_index

    def forward(self, logits, target):
        log_probs = torch.log(torch.softmax(logits, dim=-1))
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -log_probs.mean(dim=-1)
        loss = (1 - self.eps) * nll + self.eps * smooth
        keep = target != self.ignore_index
        return loss[keep].mean()


def inverse_sqrt(warmup):
    return lambda step: min((step + 1) / warmup, math.sqrt(warmup / (step + 1)))


def train(cfg: TrainCfg):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = DataLoader(ParallelIds(cfg.train_file), batch_size=cfg.batch_size, shuffle=True,
                        collate_fn=collate, num_workers=2)
    model = Seq2Seq(cfg).to(device)
    criterion = SmoothedNLL(cfg.smoothing)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.peak_lr, betas=(0.9, 0.98), eps=1e-9)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, inverse_sqrt(cfg.warmup))

    updates, micro = 0, 0
    model.train()
    opt.zero_grad()
    while updates < cfg.max_updates:
        for src, tgt in loader:
            src, tgt = src.to(device), tgt.to(device)
            logits = model(src, tgt[:, :-1])
            loss = criterion(logits, tgt[:, 1:])
            loss.backward()
            micro += 1
            if micro % cfg.accum_steps == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                sched.step()
                opt.zero_grad()
                updates += 1
                if updates % 500 == 0:
                    print(f"update {updates} lr {sched.get_last_lr()[0]:.2e} loss {loss.item():.3f}")
                if updates % 5000 == 0:
                    torch.save({"model": model.state_dict(), "updates": updates}, f"ckpt_deen_{updates}.pt")
                if updates >= cfg.max_updates:
                    break


if __name__ == "__main__":
    train(TrainCfg())
