"""Binary sentiment on product reviews with a bidirectional GRU encoder.

reviews.jsonl holds one {"text": ..., "stars": 1-5} object per line; 1-2 stars are negative,
4-5 positive, 3 is dropped.
"""

import json
import random
import re
from collections import Counter

import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset

PAD, UNK = 0, 1
TOKEN = re.compile(r"[a-z0-9']+")


def tokenize(text):
    return TOKEN.findall(text.lower())


class Reviews(Dataset):
    def __init__(self, rows, vocab, max_len=200):
        self.items = []
        for row in rows:
            ids = [vocab.get(tok, UNK) for tok in tokenize(row["text"])][:max_len] or [UNK]
            self.items.append((torch.tensor(ids), float(row["stars"] >= 4)))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def collate(batch):
    ids, labels = zip(*batch)
    return pad_sequence(list(ids), batch_first=True, padding_value=PAD), torch.tensor(labels)


class GRUClassifier(nn.Module):
    def __init__(self, vocab_size, emb=128, hidden=192):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, emb, padding_idx=PAD)
        self.drop = nn.Dropout(0.3)
        self.rnn = nn.GRU(emb, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, 1)

    def forward(self, tokens):
        x = self.drop(self.embed(tokens))
        _, h_n = self.rnn(x)
        summary = torch.cat([h_n[-2], h_n[-1]], dim=1)
        return self.out(self.drop(summary)).squeeze(1)


def evaluate(model, loader):
    model.eval()
    correct = n = 0
    with torch.no_grad():
        for tokens, labels in loader:
            pred = (model(tokens) > 0).float()
            correct += (pred == labels).sum().item()
            n += len(labels)
    return correct / n


def main(path="reviews.jsonl", epochs=6, eval_every=500, seed=13):
    random.seed(seed)
    torch.manual_seed(seed)
    rows = [r for r in map(json.loads, open(path)) if r["stars"] != 3]
    random.shuffle(rows)
    cut = int(0.9 * len(rows))
    counts = Counter(tok for r in rows[:cut] for tok in tokenize(r["text"]))
    vocab = {tok: i + 2 for i, (tok, c) in enumerate(counts.most_common(30000)) if c >= 2}

    train_dl = DataLoader(Reviews(rows[:cut], vocab), batch_size=64, shuffle=True, collate_fn=collate)
    val_dl = DataLoader(Reviews(rows[cut:], vocab), batch_size=256, collate_fn=collate)

    model = GRUClassifier(len(vocab) + 2)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    loss_fn = nn.BCEWithLogitsLoss()

    step, best = 0, 0.0
    for epoch in range(epochs):
        model.train()
        total, seen = 0.0, 0
        for tokens, labels in train_dl:
            opt.zero_grad()
            loss = loss_fn(model(tokens), labels)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            total += loss.item() * len(labels)
            seen += len(labels)
            step += 1
            if step % eval_every == 0:
                acc = evaluate(model, val_dl)
                print(f"step {step}: train loss {total / seen:.4f}, val acc {acc:.3f}")
                if acc > best:
                    best = acc
                    torch.save(model.state_dict(), "sentiment_gru.pt")

    print(f"best val acc {best:.3f}")


if __name__ == "__main__":
    main()
