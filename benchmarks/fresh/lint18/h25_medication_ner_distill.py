import argparse
import json

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from torch.utils.data import DataLoader

TAGS = ["O", "B-DRUG", "I-DRUG", "B-DOSE", "I-DOSE", "B-ROUTE", "I-ROUTE", "B-FREQ", "I-FREQ"]
IGNORE = -100


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def make_collate(vocab):
    def collate(rows):
        longest = max(len(r["tokens"]) for r in rows)
        ids = torch.zeros(len(rows), longest, dtype=torch.long)
        tags = torch.full((len(rows), longest), IGNORE, dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, : len(r["tokens"])] = torch.tensor([vocab.get(t.lower(), 1) for t in r["tokens"]])
            tags[i, : len(r["tags"])] = torch.tensor([TAGS.index(t) for t in r["tags"]])
        return ids, tags
    return collate


class Tagger(nn.Module):
    def __init__(self, vocab_size, dim, hidden, layers):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.rnn = nn.LSTM(dim, hidden, num_layers=layers, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, len(TAGS))

    def forward(self, ids):
        lengths = (ids != 0).sum(dim=1).clamp(min=1).cpu()
        packed = pack_padded_sequence(self.embed(ids), lengths, batch_first=True, enforce_sorted=False)
        h, _ = pad_packed_sequence(self.rnn(packed)[0], batch_first=True, total_length=ids.size(1))
        return self.out(h)


def distill_loss(student_logits, teacher_logits, tags, t=2.0, alpha=0.5):
    valid = tags != IGNORE
    s, te = student_logits[valid] / t, teacher_logits[valid] / t
    soft = F.kl_div(F.log_softmax(s, dim=-1), F.softmax(te, dim=-1), reduction="batchmean") * t * t
    hard = F.cross_entropy(student_logits.transpose(1, 2), tags, ignore_index=IGNORE)
    return alpha * soft + (1 - alpha) * hard


def token_f1(model, loader):
    model.eval()
    tp = fp = fn = 0
    with torch.no_grad():
        for ids, tags in loader:
            pred = model(ids).argmax(dim=-1)
            valid = tags != IGNORE
            ent_pred, ent_gold = (pred != 0) & valid, (tags > 0) & valid
            tp += (ent_pred & ent_gold & (pred == tags)).sum().item()
            fp += (ent_pred & ~(ent_gold & (pred == tags))).sum().item()
            fn += (ent_gold & ~(ent_pred & (pred == tags))).sum().item()
    return 2 * tp / max(2 * tp + fp + fn, 1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--train", default="data/med_sigs/train.jsonl")
    p.add_argument("--dev", default="data/med_sigs/dev.jsonl")
    p.add_argument("--teacher", default="checkpoints/sig_tagger_large.pt")
    p.add_argument("--epochs", type=int, default=20)
    args = p.parse_args()

    ckpt = torch.load(args.teacher, map_location="cpu", weights_only=True)
    vocab = ckpt["vocab"]
    teacher = Tagger(len(vocab) + 2, 300, 512, 2)
    teacher.load_state_dict(ckpt["model"])
    teacher.eval()
    student = Tagger(len(vocab) + 2, 100, 128, 1)
    collate = make_collate(vocab)
    train = DataLoader(read_jsonl(args.train), batch_size=32, shuffle=True, collate_fn=collate)
    dev = DataLoader(read_jsonl(args.dev), batch_size=64, collate_fn=collate)
    opt = torch.optim.Adam(student.parameters(), lr=2e-3)

    for epoch in range(args.epochs):
        student.train()
        for ids, tags in train:
            with torch.no_grad():
                teacher_logits = teacher(ids)
            loss = distill_loss(student(ids), teacher_logits, tags)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(student.parameters(), 5.0)
            opt.step()
        print(f"epoch {epoch}: dev token F1 student {token_f1(student, dev):.3f}")
    torch.save({"model": student.state_dict(), "vocab": vocab}, "sig_tagger_small.pt")


if __name__ == "__main__":
    main()
