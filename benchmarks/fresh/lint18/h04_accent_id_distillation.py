import argparse
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

ACCENTS = ["us", "england", "scotland", "ireland", "india", "australia", "canada", "south_africa",
           "nigeria", "philippines", "singapore", "wales"]


class MelClips(Dataset):
    def __init__(self, root, split):
        blob = torch.load(Path(root) / f"{split}_mels.pt", weights_only=True)
        self.mels, self.labels = blob["mels"], blob["labels"]
        self.teacher_logits = blob.get("teacher_logits")

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        mel = (self.mels[i] - self.mels[i].mean()) / (self.mels[i].std() + 1e-5)
        item = {"mel": mel.unsqueeze(0), "label": self.labels[i]}
        if self.teacher_logits is not None:
            item["teacher"] = self.teacher_logits[i]
        return item


class SmallAccentNet(nn.Module):
    def __init__(self, n_classes, width=32):
        super().__init__()
        layers, cin = [], 1
        for cout in (width, 2 * width, 4 * width):
            layers += [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2)]
            cin = cout
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(cin, n_classes)

    def forward(self, x):
        return self.head(self.features(x).mean(dim=(2, 3)))


class DistillLoss(nn.Module):
    def __init__(self, temperature, alpha):
        super().__init__()
        self.t, self.alpha = temperature, alpha
        self.kl = nn.KLDivLoss(reduction="batchmean")

    def forward(self, student_logits, teacher_logits, labels):
        soft = self.kl(F.softmax(student_logits / self.t, dim=1), F.softmax(teacher_logits / self.t, dim=1))
        hard = F.cross_entropy(student_logits, labels)
        return self.alpha * soft * self.t ** 2 + (1 - self.alpha) * hard


@torch.no_grad()
def accuracy(model, loader, device):
    model.eval()
    correct = total = 0
    for batch in loader:
        logits = model(batch["mel"].to(device))
        _, predicted = torch.max(logits, 0)
        correct += (predicted.cpu() == batch["label"]).sum().item()
        total += len(batch["label"])
    return correct / total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/accents")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--temperature", type=float, default=4.0)
    p.add_argument("--alpha", type=float, default=0.7)
    p.add_argument("--lr", type=float, default=2e-3)
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train = DataLoader(MelClips(args.data, "train"), args.batch_size, shuffle=True, drop_last=True, num_workers=2)
    val = DataLoader(MelClips(args.data, "val"), args.batch_size, num_workers=2)
    student = SmallAccentNet(len(ACCENTS)).to(device)
    criterion = DistillLoss(args.temperature, args.alpha)
    opt = torch.optim.AdamW(student.parameters(), lr=args.lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)

    for epoch in range(args.epochs):
        student.train()
        for batch in train:
            mel, label, teacher = (batch[k].to(device) for k in ("mel", "label", "teacher"))
            loss = criterion(student(mel), teacher, label)
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
        print(f"epoch {epoch} loss {loss.item():.4f} val acc {accuracy(student, val, device):.3f}")
    torch.save(student.state_dict(), "accent_student.pt")


if __name__ == "__main__":
    main()
