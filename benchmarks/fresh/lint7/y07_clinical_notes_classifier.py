"""Assign discharge summaries to one of 12 specialty services (multi-class, one label each).

Bi-GRU over word ids with packed sequences; a linear warm-up then linear decay, defined per
optimizer step. Writes per-note class probabilities for the review dashboard.
"""
import json
import math
from dataclasses import dataclass

import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset


@dataclass
class Hparams:
    vocab_json: str = "artifacts/notes_vocab.json"
    train_csv: str = "data/notes_train.csv"
    test_csv: str = "data/notes_test.csv"
    emb_dim: int = 200
    hidden: int = 256
    max_tokens: int = 600
    batch_size: int = 32
    lr: float = 2e-3
    weight_decay: float = 0.01
    warmup_steps: int = 500
    epochs: int = 6


class NotesDataset(Dataset):
    def __init__(self, frame, vocab, max_tokens):
        self.ids = [[vocab.get(w, 1) for w in str(t).lower().split()][:max_tokens] or [1] for t in frame["text"]]
        self.labels = frame["service_id"].astype(int).tolist()

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return torch.tensor(self.ids[i], dtype=torch.long), self.labels[i]


def collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    return pad_sequence(seqs, batch_first=True, padding_value=0), lengths, torch.tensor(labels)


class NoteClassifier(nn.Module):
    def __init__(self, vocab_size, hp, n_classes):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, hp.emb_dim, padding_idx=0)
        self.rnn = nn.GRU(hp.emb_dim, hp.hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hp.hidden, n_classes)

    def forward(self, ids, lengths):
        packed = pack_padded_sequence(self.emb(ids), lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, h_n = self.rnn(packed)
        summary = torch.cat([h_n[-2], h_n[-1]], dim=-1)
        return self.out(summary)

    @torch.no_grad()
    def predict_proba(self, ids, lengths):
        return F.softmax(self.forward(ids, lengths), dim=-1)


def warmup_linear(warmup, total):
    def factor(step):
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total - step) / max(1, total - warmup))
    return factor


def param_groups(model, wd):
    matrices = [p for n, p in model.named_parameters() if p.ndim >= 2 and not n.startswith("emb.")]
    others = [p for n, p in model.named_parameters() if p.ndim < 2 or n.startswith("emb.")]
    return [{"params": matrices, "weight_decay": wd}, {"params": others, "weight_decay": 0.0}]


def main(hp: Hparams):
    with open(hp.vocab_json) as f:
        vocab = json.load(f)
    train_df, test_df = pd.read_csv(hp.train_csv), pd.read_csv(hp.test_csv)
    n_classes = int(train_df["service_id"].max()) + 1
    train_dl = DataLoader(NotesDataset(train_df, vocab, hp.max_tokens), batch_size=hp.batch_size,
                          shuffle=True, collate_fn=collate)
    test_dl = DataLoader(NotesDataset(test_df, vocab, hp.max_tokens), batch_size=64, collate_fn=collate)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = NoteClassifier(len(vocab), hp, n_classes).to(device)
    optimizer = torch.optim.AdamW(param_groups(model, hp.weight_decay), lr=hp.lr)
    total_steps = hp.epochs * math.ceil(len(train_dl.dataset) / hp.batch_size)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_linear(hp.warmup_steps, total_steps))

    for epoch in range(hp.epochs):
        model.train()
        loss_sum, n = 0.0, 0
        for ids, lengths, labels in train_dl:
            ids, labels = ids.to(device), labels.to(device)
            logits = model(ids, lengths)
            loss = F.cross_entropy(logits, labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
            scheduler.step()
            loss_sum += loss.item() * labels.size(0)
            n += labels.size(0)
        print(f"epoch {epoch}: train loss {loss_sum / n:.4f}")

    model.eval()
    rows, correct = [], 0
    for ids, lengths, labels in test_dl:
        probs = model.predict_proba(ids.to(device), lengths).cpu()
        correct += (probs.argmax(dim=1) == labels).sum().item()
        rows.extend(probs.tolist())
    print(f"test accuracy {correct / len(test_df):.4f}")
    pd.DataFrame(rows).add_prefix("p_service_").to_csv("notes_test_probs.csv", index=False)


if __name__ == "__main__":
    main(Hparams())
