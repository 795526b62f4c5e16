import csv
import math
import random
import re
from collections import Counter

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence
from torch.utils.data import DataLoader, Dataset, Sampler

CONFIG = {
    "train_csv": "data/ag_news/train.csv",
    "test_csv": "data/ag_news/test.csv",
    "max_vocab": 40000,
    "max_len": 120,
    "emb_dim": 200,
    "hidden": 256,
    "batch_size": 64,
    "eval_batch_size": 256,
    "bucket_width": 8,
    "shuffle": True,
    "workers": 2,
    "epochs": 5,
    "lr": 2e-3,
    "seed": 13,
}

TOKEN = re.compile(r"[a-z0-9']+")


def tokenize(text):
    return TOKEN.findall(text.lower())


def read_rows(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return [(int(r[0]) - 1, r[1] + " " + r[2]) for r in csv.reader(fh)]


def build_vocab(rows, max_vocab):
    counts = Counter(tok for _, text in rows for tok in tokenize(text))
    itos = ["<pad>", "<unk>"] + [w for w, _ in counts.most_common(max_vocab - 2)]
    return {w: i for i, w in enumerate(itos)}


class Headlines(Dataset):
    def __init__(self, rows, vocab, max_len):
        self.labels = [label for label, _ in rows]
        self.ids = [[vocab.get(t, 1) for t in tokenize(text)][:max_len] or [1] for _, text in rows]
        self.lengths = [len(x) for x in self.ids]

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, idx):
        return torch.tensor(self.ids[idx]), self.labels[idx]


class BucketBatchSampler(Sampler):
    def __init__(self, lengths, batch_size, width, seed):
        self.lengths = lengths
        self.batch_size = batch_size
        self.width = width
        self.rng = random.Random(seed)

    def __iter__(self):
        order = sorted(range(len(self.lengths)), key=lambda i: self.lengths[i] // self.width + self.rng.random())
        batches = [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        self.rng.shuffle(batches)
        yield from batches

    def __len__(self):
        return math.ceil(len(self.lengths) / self.batch_size)


def pad_collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=0)
    return padded, lengths, torch.tensor(labels)


def make_loader(dataset, cfg, train):
    if train:
        batches = BucketBatchSampler(dataset.lengths, cfg["batch_size"], cfg["bucket_width"], cfg["seed"])
        return DataLoader(dataset, batch_sampler=batches, shuffle=cfg["shuffle"],
                          collate_fn=pad_collate, num_workers=cfg["workers"])
    return DataLoader(dataset, batch_size=cfg["eval_batch_size"], collate_fn=pad_collate)


class TopicGRU(nn.Module):
    def __init__(self, vocab_size, emb_dim, hidden, classes):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, emb_dim, padding_idx=0)
        self.rnn = nn.GRU(emb_dim, hidden, batch_first=True, bidirectional=True)
        self.drop = nn.Dropout(0.3)
        self.out = nn.Linear(2 * hidden, classes)

    def forward(self, ids, lengths):
        packed = pack_padded_sequence(self.embed(ids), lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, h = self.rnn(packed)
        summary = torch.cat([h[-2], h[-1]], dim=1)
        return self.out(self.drop(summary))


def run_epoch(model, loader, optimizer, device):
    model.train()
    total, count = 0.0, 0
    for ids, lengths, labels in loader:
        ids, labels = ids.to(device), labels.to(device)
        loss = F.cross_entropy(model(ids, lengths), labels)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        total += loss.item() * labels.numel()
        count += labels.numel()
    return total / count


@torch.no_grad()
def accuracy(model, loader, device):
    model.eval()
    hits, seen = 0, 0
    for ids, lengths, labels in loader:
        pred = model(ids.to(device), lengths).argmax(dim=1).cpu()
        hits += (pred == labels).sum().item()
        seen += labels.numel()
    return hits / seen


def main(cfg=CONFIG):
    torch.manual_seed(cfg["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_rows, test_rows = read_rows(cfg["train_csv"]), read_rows(cfg["test_csv"])
    vocab = build_vocab(train_rows, cfg["max_vocab"])
    train_set = Headlines(train_rows, vocab, cfg["max_len"])
    test_set = Headlines(test_rows, vocab, cfg["max_len"])
    train_loader = make_loader(train_set, cfg, train=True)
    test_loader = make_loader(test_set, cfg, train=False)
    classes = max(train_set.labels) + 1
    model = TopicGRU(len(vocab), cfg["emb_dim"], cfg["hidden"], classes).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    for epoch in range(cfg["epochs"]):
        loss = run_epoch(model, train_loader, optimizer, device)
        print(f"epoch {epoch}: loss {loss:.4f} test acc {accuracy(model, test_loader, device):.4f}")
    torch.save({"model": model.state_dict(), "vocab": vocab}, "topic_gru.pt")


if __name__ == "__main__":
    main()
