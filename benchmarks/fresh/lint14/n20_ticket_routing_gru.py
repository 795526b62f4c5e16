import csv
import random
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader

TOKEN = re.compile(r"[a-z0-9_]+|[^\sa-z0-9_]")


@dataclass
class RoutingConfig:
    train_csv: str = "data/helpdesk/train.csv"
    valid_csv: str = "data/helpdesk/valid.csv"
    vectors: str = "data/vectors/cc.en.300.subset.vec"
    max_tokens: int = 200
    min_count: int = 2
    emb_dim: int = 300
    hidden: int = 192
    batch_size: int = 64
    epochs: int = 12
    lr: float = 2e-3
    embedding_lr: float = 2e-4
    seed: int = 4
    out: str = "runs/ticket_routing"


def read_tickets(path, max_tokens):
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return [(TOKEN.findall((r["subject"] + " " + r["body"]).lower())[:max_tokens], r["queue"]) for r in rows]


def encode(tickets, vocab, queues):
    return [(torch.tensor([vocab.get(t, 1) for t in toks] or [1]), queues.index(q)) for toks, q in tickets]


def collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    return pad_sequence(seqs, batch_first=True, padding_value=0), lengths, torch.tensor(labels)


class TicketRouter(nn.Module):
    def __init__(self, vocab_size, emb_dim, hidden, queues):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=0)
        self.rnn = nn.GRU(emb_dim, hidden, batch_first=True, bidirectional=True)
        self.dropout = nn.Dropout(0.3)
        self.classifier = nn.Linear(2 * hidden, queues)

    def forward(self, ids, lengths):
        packed = pack_padded_sequence(self.embedding(ids), lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, h_n = self.rnn(packed)
        return self.classifier(self.dropout(torch.cat([h_n[-2], h_n[-1]], dim=1)))


def build_optimizer(model, cfg):
    emb = [model.embedding.weight]
    rest = [p for n, p in model.named_parameters() if not n.startswith("embedding.")]
    return torch.optim.Adam([{"params": emb, "lr": cfg.embedding_lr}, {"params": rest, "lr": cfg.lr}])


def attach_pretrained(model, vocab, path, dim):
    matrix = np.random.normal(0.0, 0.1, (len(vocab), dim)).astype(np.float32)
    matrix[0] = 0.0
    found = 0
    with open(path, encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            word, *values = line.rstrip().split(" ")
            if word in vocab and len(values) == dim:
                matrix[vocab[word]] = np.asarray(values, dtype=np.float32)
                found += 1
    model.embedding.weight = nn.Parameter(torch.from_numpy(matrix))
    return found


def run_epoch(model, loader, device, optimizer=None):
    model.train(optimizer is not None)
    loss_sum, hits, count = 0.0, 0, 0
    with torch.set_grad_enabled(optimizer is not None):
        for ids, lengths, labels in loader:
            ids, labels = ids.to(device), labels.to(device)
            logits = model(ids, lengths)
            loss = F.cross_entropy(logits, labels)
            if optimizer is not None:
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 5.0)
                optimizer.step()
            loss_sum += loss.item() * labels.numel()
            hits += (logits.argmax(1) == labels).sum().item()
            count += labels.numel()
    return loss_sum / count, hits / count


def main(cfg=RoutingConfig()):
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    train, valid = read_tickets(cfg.train_csv, cfg.max_tokens), read_tickets(cfg.valid_csv, cfg.max_tokens)
    counts = Counter(t for toks, _ in train for t in toks)
    vocab = {"<pad>": 0, "<unk>": 1}
    for word in sorted(w for w, c in counts.items() if c >= cfg.min_count):
        vocab[word] = len(vocab)
    queues = sorted({q for _, q in train})
    train_loader = DataLoader(encode(train, vocab, queues), batch_size=cfg.batch_size, shuffle=True, collate_fn=collate)
    valid_loader = DataLoader(encode(valid, vocab, queues), batch_size=256, collate_fn=collate)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = TicketRouter(len(vocab), cfg.emb_dim, cfg.hidden, len(queues))
    optimizer = build_optimizer(model, cfg)
    if Path(cfg.vectors).exists():
        print(f"pretrained vectors for {attach_pretrained(model, vocab, cfg.vectors, cfg.emb_dim)} words")
    model.to(device)
    best = 0.0
    for epoch in range(cfg.epochs):
        train_loss, train_acc = run_epoch(model, train_loader, device, optimizer)
        valid_loss, valid_acc = run_epoch(model, valid_loader, device)
        print(f"epoch {epoch:02d} train {train_loss:.3f}/{train_acc:.3f} valid {valid_loss:.3f}/{valid_acc:.3f}")
        if valid_acc > best:
            best = valid_acc
            Path(cfg.out).mkdir(parents=True, exist_ok=True)
            torch.save({"model": model.state_dict(), "vocab": vocab, "queues": queues}, Path(cfg.out) / "best.pt")


if __name__ == "__main__":
    main()
