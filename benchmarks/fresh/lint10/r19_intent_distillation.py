"""Distil a large intent classifier (CLINC150, 151 intents incl. out-of-scope) into a bag-of-ngrams
student small enough for an on-device assistant. Utterances are pre-tokenised into hashed
uni- and bi-gram ids (JSON lines: {"ngrams": [...], "intent": k})."""
import json
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

KD = dict(temperature=4.0, alpha=0.7, epochs=25, batch=128, lr=2e-3, warmup_frac=0.06, clip=1.0,
          buckets=2 ** 20, teacher_dim=768, student_dim=96, intents=151,
          teacher_ckpt="models/clinc_teacher.pt", train="data/clinc/train.jsonl", valid="data/clinc/valid.jsonl")


class Utterances(Dataset):
    def __init__(self, path):
        with open(path) as f:
            self.rows = [json.loads(line) for line in f]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return torch.tensor(self.rows[i]["ngrams"], dtype=torch.long), self.rows[i]["intent"]


def bag_collate(batch):
    ids, labels = zip(*batch)
    offsets = torch.tensor([0] + [len(t) for t in ids[:-1]]).cumsum(0)
    return torch.cat(ids), offsets, torch.tensor(labels)


class BagClassifier(nn.Module):
    def __init__(self, buckets, dim, intents, hidden=None):
        super().__init__()
        self.bag = nn.EmbeddingBag(buckets, dim, mode="mean")
        layers = [nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, intents)] if hidden else [nn.Linear(dim, intents)]
        self.out = nn.Sequential(*layers)

    def forward(self, ids, offsets):
        return self.out(self.bag(ids, offsets))


def load_teacher(cfg, device):
    teacher = BagClassifier(cfg["buckets"], cfg["teacher_dim"], cfg["intents"], hidden=1024)
    teacher.load_state_dict(torch.load(cfg["teacher_ckpt"], map_location="cpu", weights_only=True))
    return teacher.to(device).eval().requires_grad_(False)


def distillation_loss(student_logits, teacher_logits, labels, temperature, alpha):
    soft_student = F.log_softmax(student_logits / temperature, dim=-1)
    soft_teacher = F.softmax(teacher_logits / temperature, dim=-1)
    kd = F.kl_div(soft_student, soft_teacher, reduction="batchmean") * temperature ** 2
    return alpha * kd + (1 - alpha) * F.cross_entropy(student_logits, labels)


def warmup_then_cosine(total, warmup):
    def factor(step):
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(total - warmup, 1)))
    return factor


@torch.no_grad()
def accuracy(model, loader, device):
    model.eval()
    right = seen = 0
    for ids, offsets, labels in loader:
        pred = model(ids.to(device), offsets.to(device)).argmax(dim=1).cpu()
        right += (pred == labels).sum().item()
        seen += labels.numel()
    return right / seen


def main(cfg=KD):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = DataLoader(Utterances(cfg["train"]), cfg["batch"], shuffle=True, collate_fn=bag_collate,
                              drop_last=True)
    valid_loader = DataLoader(Utterances(cfg["valid"]), 512, collate_fn=bag_collate)
    teacher = load_teacher(cfg, device)
    print(f"teacher valid accuracy {accuracy(teacher, valid_loader, device):.4f}")

    student = BagClassifier(cfg["buckets"], cfg["student_dim"], cfg["intents"]).to(device)
    optimizer = torch.optim.Adam(student.parameters(), lr=cfg["lr"])
    total = cfg["epochs"] * len(train_loader)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, warmup_then_cosine(total, int(cfg["warmup_frac"] * total)))

    for epoch in range(cfg["epochs"]):
        student.train()
        loss_sum, n = 0.0, 0
        for ids, offsets, labels in train_loader:
            ids, offsets, labels = ids.to(device), offsets.to(device), labels.to(device)
            with torch.no_grad():
                teacher_logits = teacher(ids, offsets)
            loss = distillation_loss(student(ids, offsets), teacher_logits, labels,
                                     cfg["temperature"], cfg["alpha"])
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(student.parameters(), cfg["clip"])
            optimizer.step()
            scheduler.step()
            loss_sum += loss.item() * labels.numel()
            n += labels.numel()
        print(f"epoch {epoch:02d} loss {loss_sum / n:.4f} "
              f"student valid acc {accuracy(student, valid_loader, device):.4f}")
    torch.save(student.state_dict(), "clinc_student.pt")


if __name__ == "__main__":
    main()
