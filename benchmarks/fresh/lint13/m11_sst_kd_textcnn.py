"""Sentence sentiment (SST-2) with a Kim-style TextCNN student distilled from a frozen BiLSTM
teacher. Teacher logits are computed once for the training set and cached; noisy crowd labels
are down-weighted per sample by annotator agreement.
"""
import json
import random
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence


@dataclass
class KDConfig:
    train: str = "data/sst2/train.jsonl"
    dev: str = "data/sst2/dev.jsonl"
    vocab: str = "data/sst2/vocab.json"
    teacher: str = "checkpoints/bilstm_teacher.pt"
    temperature: float = 2.0
    kd_weight: float = 0.5
    batch_size: int = 64
    epochs: int = 10
    lr: float = 1e-3
    seed: int = 5


def encode(path, vocab):
    rows = [json.loads(line) for line in Path(path).read_text().splitlines()]
    ids = [torch.tensor([vocab.get(w, 1) for w in r["text"].lower().split()] or [1]) for r in rows]
    labels = torch.tensor([r["label"] for r in rows])
    agree = torch.tensor([r.get("agreement", 1.0) for r in rows], dtype=torch.float32)
    return ids, labels, agree


def collate(seqs, min_len=5):
    batch = pad_sequence(seqs, batch_first=True, padding_value=0)
    if batch.shape[1] < min_len:
        batch = F.pad(batch, (0, min_len - batch.shape[1]))
    return batch


class BiLSTMTeacher(nn.Module):
    def __init__(self, n_vocab, dim=300, hidden=512):
        super().__init__()
        self.emb = nn.Embedding(n_vocab, dim, padding_idx=0)
        self.rnn = nn.LSTM(dim, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, 2)

    def forward(self, x):
        lengths = (x != 0).sum(1).clamp_min(1)
        packed = pack_padded_sequence(self.emb(x), lengths.cpu(), batch_first=True, enforce_sorted=False)
        h, _ = pad_packed_sequence(self.rnn(packed)[0], batch_first=True, total_length=x.shape[1])
        mask = (x != 0).unsqueeze(-1).float()
        return self.out((h * mask).sum(1) / mask.sum(1).clamp_min(1.0))


class TextCNN(nn.Module):
    def __init__(self, n_vocab, dim=128, filters=100, widths=(3, 4, 5), dropout=0.5):
        super().__init__()
        self.emb = nn.Embedding(n_vocab, dim, padding_idx=0)
        self.convs = nn.ModuleList(nn.Conv1d(dim, filters, w) for w in widths)
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(filters * len(widths), 2)

    def forward(self, x):
        e = self.emb(x).transpose(1, 2)
        pooled = [F.relu(conv(e)).amax(dim=2) for conv in self.convs]
        return self.out(self.drop(torch.cat(pooled, dim=1)))


def teacher_logits(teacher, ids, device, batch_size=256):
    teacher.eval()
    cached = []
    with torch.no_grad():
        for i in range(0, len(ids), batch_size):
            cached.append(teacher(collate(ids[i:i + batch_size]).to(device)).float())
    return torch.cat(cached)


def kd_loss(student_logits, teacher_logits, labels, weights, cfg):
    t = cfg.temperature
    soft = F.kl_div(F.log_softmax(student_logits / t, dim=-1), F.log_softmax(teacher_logits / t, dim=-1),
                    reduction="batchmean", log_target=True) * t * t
    hard = (F.cross_entropy(student_logits, labels, reduction="none") * weights).mean()
    return cfg.kd_weight * soft + (1 - cfg.kd_weight) * hard


def accuracy(model, ids, labels, device):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(ids), 512):
            pred = model(collate(ids[i:i + 512]).to(device)).argmax(1).cpu()
            correct += (pred == labels[i:i + 512]).sum().item()
    return correct / len(ids)


def main(cfg=KDConfig()):
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    vocab = json.loads(Path(cfg.vocab).read_text())
    tr_ids, tr_y, tr_w = encode(cfg.train, vocab)
    dv_ids, dv_y, _ = encode(cfg.dev, vocab)

    teacher = BiLSTMTeacher(len(vocab)).to(device)
    teacher.load_state_dict(torch.load(cfg.teacher, map_location=device, weights_only=True))
    tr_t = teacher_logits(teacher, tr_ids, device)
    del teacher

    student = TextCNN(len(vocab)).to(device)
    optimizer = torch.optim.Adam(student.parameters(), lr=cfg.lr)
    order = list(range(len(tr_ids)))
    for epoch in range(cfg.epochs):
        student.train()
        random.shuffle(order)
        for i in range(0, len(order), cfg.batch_size):
            idx = order[i:i + cfg.batch_size]
            x = collate([tr_ids[j] for j in idx]).to(device)
            y, w, t = tr_y[idx].to(device), tr_w[idx].to(device), tr_t[idx]
            loss = kd_loss(student(x), t, y, w, cfg)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}  last loss {loss.item():.4f}  dev acc {accuracy(student, dv_ids, dv_y, device):.4f}")
    torch.save(student.state_dict(), "checkpoints/textcnn_student.pt")


if __name__ == "__main__":
    main()
