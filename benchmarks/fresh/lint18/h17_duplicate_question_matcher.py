import argparse
import json
import re

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence
from torch.utils.data import DataLoader

TOKEN = re.compile(r"[a-z0-9]+|[?!.,]")


def build_vocab(pairs, min_count=3):
    counts = {}
    for q1, q2, _ in pairs:
        for tok in TOKEN.findall(q1.lower()) + TOKEN.findall(q2.lower()):
            counts[tok] = counts.get(tok, 0) + 1
    words = sorted(w for w, c in counts.items() if c >= min_count)
    return {w: i + 2 for i, w in enumerate(words)}


def encode(text, vocab, max_len=40):
    ids = [vocab.get(t, 1) for t in TOKEN.findall(text.lower())][:max_len]
    return ids or [1]


def collate(batch, vocab):
    def pad(texts):
        ids = [encode(t, vocab) for t in texts]
        lengths = torch.tensor([len(x) for x in ids])
        out = torch.zeros(len(ids), int(lengths.max()), dtype=torch.long)
        for i, x in enumerate(ids):
            out[i, : len(x)] = torch.tensor(x)
        return out, lengths
    q1, q2, y = zip(*batch)
    return pad(q1), pad(q2), torch.tensor(y, dtype=torch.float32)


class QuestionEncoder(nn.Module):
    def __init__(self, vocab_size, dim=200, hidden=150, p_drop=0.25):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.rnn = nn.GRU(dim, hidden, batch_first=True, bidirectional=True)
        self.p_drop = p_drop

    def forward(self, ids, lengths):
        x = F.dropout(self.embed(ids), self.p_drop)
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        _, h = self.rnn(packed)
        return torch.cat([h[0], h[1]], dim=1)


class Matcher(nn.Module):
    def __init__(self, vocab_size, hidden=150):
        super().__init__()
        self.encoder = QuestionEncoder(vocab_size, hidden=hidden)
        self.score = nn.Sequential(nn.Linear(8 * hidden, 256), nn.ReLU(), nn.Linear(256, 1))

    def forward(self, q1, q2):
        a, b = self.encoder(*q1), self.encoder(*q2)
        return self.score(torch.cat([a, b, (a - b).abs(), a * b], dim=1)).squeeze(1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--train", default="data/quora_pairs_train.jsonl")
    p.add_argument("--dev", default="data/quora_pairs_dev.jsonl")
    p.add_argument("--epochs", type=int, default=8)
    args = p.parse_args()
    read = lambda path: [(r["q1"], r["q2"], r["duplicate"]) for r in map(json.loads, open(path))]
    train_pairs, dev_pairs = read(args.train), read(args.dev)
    vocab = build_vocab(train_pairs)
    train = DataLoader(train_pairs, batch_size=256, shuffle=True, collate_fn=lambda b: collate(b, vocab))
    dev = DataLoader(dev_pairs, batch_size=512, collate_fn=lambda b: collate(b, vocab))

    model = Matcher(len(vocab) + 2)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        model.train()
        for q1, q2, y in train:
            loss = F.binary_cross_entropy_with_logits(model(q1, q2), y)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for q1, q2, y in dev:
                correct += ((model(q1, q2) > 0).float() == y).sum().item()
                total += len(y)
        print(f"epoch {epoch}: dev accuracy {correct / total:.4f}")
    torch.save({"model": model.state_dict(), "vocab": vocab}, "question_matcher.pt")


if __name__ == "__main__":
    main()
