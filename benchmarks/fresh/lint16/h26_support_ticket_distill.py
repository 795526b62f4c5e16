"""Support-ticket routing: distil a large teacher into a student whose embedding table is frozen."""
import argparse
import json
import math
import os
import random
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

QUEUES = ["billing", "login", "shipping", "returns", "technical", "account", "other"]


def token_ids(text, vocab, max_len):
    ids = [1 + zlib.crc32(w.encode()) % (vocab - 1) for w in text.lower().split()][:max_len]
    return ids + [0] * (max_len - len(ids))


class Tickets(Dataset):
    def __init__(self, path, vocab, max_len):
        with open(path) as fh:
            rows = [json.loads(l) for l in fh if l.strip()]
        self.x = torch.tensor([token_ids(r["subject"] + " " + r["body"], vocab, max_len) for r in rows])
        self.y = torch.tensor([QUEUES.index(r["queue"]) for r in rows])

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class BagClassifier(nn.Module):
    def __init__(self, vocab, dim, hidden):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim, padding_idx=0)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(0.1))
        self.head = nn.Linear(hidden, len(QUEUES))

    def forward(self, ids):
        keep = (ids != 0).unsqueeze(-1).float()
        pooled = (self.embedding(ids) * keep).sum(1) / keep.sum(1).clamp_min(1.0)
        return self.head(self.mlp(pooled))


def distill_loss(student_logits, teacher_logits, labels, t, alpha):
    soft = F.kl_div(F.log_softmax(student_logits / t, dim=-1), F.softmax(teacher_logits / t, dim=-1),
                    reduction="batchmean") * t * t
    return alpha * soft + (1 - alpha) * F.cross_entropy(student_logits, labels)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/tickets/train.jsonl")
    ap.add_argument("--val", default="data/tickets/val.jsonl")
    ap.add_argument("--teacher", default="checkpoints/ticket_teacher.pt")
    ap.add_argument("--embeddings", default="checkpoints/ticket_embeddings.pt")
    ap.add_argument("--vocab", type=int, default=40000)
    ap.add_argument("--max-len", type=int, default=200)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--temperature", type=float, default=3.0)
    ap.add_argument("--alpha", type=float, default=0.5)
    ap.add_argument("--out", default="checkpoints/ticket_student.pt")
    args = ap.parse_args()

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    train_dl = DataLoader(Tickets(args.train, args.vocab, args.max_len), batch_size=64, shuffle=True)
    val_dl = DataLoader(Tickets(args.val, args.vocab, args.max_len), batch_size=256)

    teacher = BagClassifier(args.vocab, 300, 512)
    teacher.load_state_dict(torch.load(args.teacher, map_location="cpu", weights_only=True))
    teacher.eval().requires_grad_(False)

    student = BagClassifier(args.vocab, 300, 64)
    student.embedding.load_state_dict(torch.load(args.embeddings, map_location="cpu", weights_only=True))
    student.embedding.requires_grad_(False)
    trainable = [(n, p) for n, p in student.named_parameters() if p.requires_grad]
    assert trainable and all(not n.startswith("embedding.") for n, _ in trainable)
    optimizer = torch.optim.Adam([p for _, p in trainable], lr=args.lr)

    best_acc = 0.0
    for epoch in range(args.epochs):
        student.train()
        worst = 0.0
        for ids, y in train_dl:
            with torch.no_grad():
                t_logits = teacher(ids)
            loss = distill_loss(student(ids), t_logits, y, args.temperature, args.alpha)
            optimizer.zero_grad()
            loss.backward()
            worst = max(worst, nn.utils.clip_grad_norm_([p for _, p in trainable], 5.0, norm_type=math.inf).item())
            optimizer.step()
        student.eval()
        correct = n = 0
        with torch.no_grad():
            for ids, y in val_dl:
                correct += (student(ids).argmax(1) == y).sum().item()
                n += y.numel()
        acc = correct / max(n, 1)
        print(f"epoch {epoch}: val acc {acc:.3f}  largest |grad| {worst:.2e}")
        if acc > best_acc:
            best_acc = acc
            os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
            torch.save(student.state_dict(), args.out)


if __name__ == "__main__":
    main()
