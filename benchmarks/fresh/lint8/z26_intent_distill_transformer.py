"""Distil a 12-layer intent classifier (banking queries, 77 intents) into a 4-layer student.

Both are small Transformer encoders trained from scratch on the same vocabulary.
"""
import re

import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

CFG = {"train_csv": "data/banking77/train.csv", "test_csv": "data/banking77/test.csv",
       "teacher_ckpt": "checkpoints/intent_teacher_l12.pt", "vocab_size": 20000, "dim": 256,
       "student_layers": 4, "teacher_layers": 12, "batch_size": 32, "accum_steps": 4, "epochs": 20,
       "lr": 3e-4, "temperature": 2.0, "alpha": 0.5, "seed": 7}
WORD = re.compile(r"[a-z0-9']+|[?!.,]")


class IntentEncoder(nn.Module):
    def __init__(self, vocab, dim, layers, n_classes, max_len=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim, padding_idx=0)
        self.pos = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, nhead=4, dim_feedforward=4 * dim, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=layers)
        self.cls = nn.Linear(dim, n_classes)

    def forward(self, ids):
        pad = ids.eq(0)
        pos = torch.arange(ids.size(1), device=ids.device)
        h = self.encoder(self.tok(ids) + self.pos(pos), src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).to(h.dtype)
        return self.cls((h * keep).sum(dim=1) / keep.sum(dim=1).clamp_min(1.0))


def kd_loss(student_logits, teacher_logits, labels, T, alpha):
    soft = F.kl_div(F.log_softmax(student_logits / T, dim=-1), F.log_softmax(teacher_logits / T, dim=-1),
                    reduction="batchmean", log_target=True) * T * T
    return alpha * soft + (1 - alpha) * F.cross_entropy(student_logits, labels)


def build_vocab(texts, size):
    counts = pd.Series([w for t in texts for w in WORD.findall(t.lower())]).value_counts()
    return {w: i + 2 for i, w in enumerate(counts.index[: size - 2])}


def encode(df, stoi):
    seqs = [torch.tensor([stoi.get(w, 1) for w in WORD.findall(t.lower())][:128] or [1]) for t in df["text"]]
    return list(zip(seqs, df["label"].astype(int).tolist()))


def collate(batch):
    seqs, labels = zip(*batch)
    return pad_sequence(list(seqs), batch_first=True), torch.tensor(labels)


@torch.no_grad()
def accuracy(model, loader, device):
    model.eval()
    hits = n = 0
    for ids, y in loader:
        hits += (model(ids.to(device)).argmax(-1).cpu() == y).sum().item()
        n += y.numel()
    return hits / n


def main(cfg=CFG):
    torch.manual_seed(cfg["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_df, test_df = pd.read_csv(cfg["train_csv"]), pd.read_csv(cfg["test_csv"])
    stoi = build_vocab(train_df["text"], cfg["vocab_size"])
    n_classes = int(train_df["label"].max()) + 1
    train_dl = DataLoader(encode(train_df, stoi), batch_size=cfg["batch_size"], shuffle=True, collate_fn=collate)
    test_dl = DataLoader(encode(test_df, stoi), batch_size=256, collate_fn=collate)

    teacher = IntentEncoder(cfg["vocab_size"], cfg["dim"], cfg["teacher_layers"], n_classes)
    teacher.load_state_dict(torch.load(cfg["teacher_ckpt"], map_location="cpu", weights_only=True))
    teacher = teacher.to(device).eval().requires_grad_(False)
    student = IntentEncoder(cfg["vocab_size"], cfg["dim"], cfg["student_layers"], n_classes).to(device)
    opt = torch.optim.Adam(student.parameters(), lr=cfg["lr"])
    accum = cfg["accum_steps"]
    for epoch in range(cfg["epochs"]):
        student.train()
        opt.zero_grad(set_to_none=True)
        running, seen = 0.0, 0
        for step, (ids, y) in enumerate(train_dl, start=1):
            ids, y = ids.to(device), y.to(device)
            with torch.no_grad():
                t_logits = teacher(ids)
            loss = kd_loss(student(ids), t_logits, y, cfg["temperature"], cfg["alpha"])
            (loss / accum).backward()
            running += loss.item() * y.numel()
            seen += y.numel()
            if step % accum == 0 or step == len(train_dl):
                nn.utils.clip_grad_norm_(student.parameters(), 1.0)
                opt.step()
                opt.zero_grad(set_to_none=True)
        print(f"epoch {epoch:2d}  kd loss {running / seen:.4f}  student acc {accuracy(student, test_dl, device):.4f}")
    print(f"teacher acc {accuracy(teacher, test_dl, device):.4f}")
    torch.save({"model": student.state_dict(), "stoi": stoi}, "intent_student_l4.pt")


if __name__ == "__main__":
    main()
