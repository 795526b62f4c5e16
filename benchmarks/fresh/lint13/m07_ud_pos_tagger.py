"""Universal Dependencies POS tagging with stacked residual BiLSTM blocks.

A small trainer with callbacks; one callback watches the gradient that reaches each block's
input, to decide how deep the stack can go before the lower blocks stop learning.
Data: CoNLL-U files converted to JSON lines {"words": [...], "upos": [...]}.
"""
import json
import random
from collections import Counter

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

PAD, UNK = 0, 1
SETTINGS = dict(train="data/ud/en_ewt-train.jsonl", dev="data/ud/en_ewt-dev.jsonl", emb=128, hidden=128,
                blocks=4, dropout=0.3, lr=2e-3, epochs=20, batch_size=32, clip=5.0, seed=3)


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def build_vocab(sentences, key, min_count=1, specials=("<pad>", "<unk>")):
    counts = Counter(tok for s in sentences for tok in s[key])
    itos = list(specials) + sorted(t for t, c in counts.items() if c >= min_count)
    return {t: i for i, t in enumerate(itos)}


def batches(data, words, tags, batch_size, shuffle):
    order = list(range(len(data)))
    if shuffle:
        random.shuffle(order)
    for i in range(0, len(order), batch_size):
        chunk = [data[j] for j in order[i:i + batch_size]]
        lengths = torch.tensor([len(s["words"]) for s in chunk])
        x = torch.full((len(chunk), int(lengths.max())), PAD, dtype=torch.long)
        y = torch.full_like(x, -100)
        for r, s in enumerate(chunk):
            x[r, :len(s["words"])] = torch.tensor([words.get(w.lower(), UNK) for w in s["words"]])
            y[r, :len(s["upos"])] = torch.tensor([tags[t] for t in s["upos"]])
        yield x, y, lengths


class ResidualBiLSTM(nn.Module):
    def __init__(self, dim, hidden, dropout):
        super().__init__()
        self.rnn = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)
        self.proj = nn.Linear(2 * hidden, dim)
        self.norm = nn.LayerNorm(dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        return self.norm(x + self.drop(self.proj(out)))


class Tagger(nn.Module):
    def __init__(self, n_words, n_tags, cfg):
        super().__init__()
        self.embed = nn.Embedding(n_words, cfg["emb"], padding_idx=PAD)
        self.blocks = nn.ModuleList(ResidualBiLSTM(cfg["emb"], cfg["hidden"], cfg["dropout"])
                                    for _ in range(cfg["blocks"]))
        self.out = nn.Linear(cfg["emb"], n_tags)

    def forward(self, x, lengths):
        h = self.embed(x)
        for block in self.blocks:
            h = block(h, lengths)
        return self.out(h)


class GradientFlowCallback:
    def __init__(self):
        self.norms = {}

    def on_train_start(self, trainer):
        for i, block in enumerate(trainer.model.blocks):
            block.register_backward_hook(self._hook(f"block{i}"))

    def _hook(self, name):
        def record(module, grad_input, grad_output):
            if grad_input[0] is not None:
                self.norms.setdefault(name, []).append(grad_input[0].norm().item())
        return record

    def on_epoch_end(self, trainer, epoch):
        summary = {k: sum(v) / len(v) for k, v in self.norms.items()}
        print("  grad at block inputs: " + "  ".join(f"{k}={v:.2e}" for k, v in summary.items()))
        self.norms.clear()


class Trainer:
    def __init__(self, model, cfg, callbacks=()):
        self.model, self.cfg, self.callbacks = model, cfg, list(callbacks)
        self.optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    def _emit(self, event, *args):
        for cb in self.callbacks:
            getattr(cb, event, lambda *a: None)(self, *args)

    def fit(self, train, dev, words, tags):
        self._emit("on_train_start")
        for epoch in range(self.cfg["epochs"]):
            self.model.train()
            total, count = 0.0, 0
            for x, y, lengths in batches(train, words, tags, self.cfg["batch_size"], shuffle=True):
                logits = self.model(x, lengths)
                loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), ignore_index=-100)
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg["clip"])
                self.optimizer.step()
                total += loss.item() * int(lengths.sum())
                count += int(lengths.sum())
            acc = self.evaluate(dev, words, tags)
            print(f"epoch {epoch:2d}  loss {total / count:.4f}  dev acc {acc:.4f}")
            self._emit("on_epoch_end", epoch)

    @torch.no_grad()
    def evaluate(self, data, words, tags):
        self.model.eval()
        hit = n = 0
        for x, y, lengths in batches(data, words, tags, 256, shuffle=False):
            pred = self.model(x, lengths).argmax(-1)
            keep = y != -100
            hit += (pred[keep] == y[keep]).sum().item()
            n += keep.sum().item()
        return hit / n


if __name__ == "__main__":
    random.seed(SETTINGS["seed"])
    torch.manual_seed(SETTINGS["seed"])
    train, dev = read_jsonl(SETTINGS["train"]), read_jsonl(SETTINGS["dev"])
    words = build_vocab([{"w": [w.lower() for w in s["words"]]} for s in train], "w", min_count=2)
    tags = build_vocab(train, "upos", specials=())
    model = Tagger(len(words), len(tags), SETTINGS)
    Trainer(model, SETTINGS, callbacks=[GradientFlowCallback()]).fit(train, dev, words, tags)
