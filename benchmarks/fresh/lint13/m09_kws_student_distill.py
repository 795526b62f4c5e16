"""Distil a ResNet-15 keyword-spotting teacher into a depthwise-separable student for an MCU.

Google Speech Commands v2, 12 classes (10 words + silence + unknown). 40 MFCCs x 98 frames are
precomputed into one .npz per split. The teacher checkpoint comes from an earlier run.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

HP = {
    "data": "data/speech_commands_v2/mfcc_{}.npz",
    "teacher_ckpt": "checkpoints/res15_teacher.pt",
    "temperature": 4.0,
    "alpha": 0.7,
    "epochs": 30,
    "batch_size": 256,
    "lr": 5e-3,
    "seed": 11,
}


def load(split):
    z = np.load(HP["data"].format(split))
    x = torch.from_numpy(z["mfcc"]).float()
    x = (x - x.mean(-2, keepdim=True)) / (x.std(-2, keepdim=True) + 1e-5)
    x = x.unsqueeze(1)
    return TensorDataset(x, torch.from_numpy(z["label"]).long())


class Res15(nn.Module):
    def __init__(self, n_classes=12, ch=45, n_layers=13):
        super().__init__()
        self.conv0 = nn.Conv2d(1, ch, 3, padding=1, bias=False)
        self.convs = nn.ModuleList(
            nn.Conv2d(ch, ch, 3, padding=int(2 ** (i // 3)), dilation=int(2 ** (i // 3)), bias=False)
            for i in range(n_layers))
        self.bns = nn.ModuleList(nn.BatchNorm2d(ch, affine=False) for _ in range(n_layers))
        self.fc = nn.Linear(ch, n_classes)

    def forward(self, x):
        y = old = F.relu(self.conv0(x))
        for i, (conv, bn) in enumerate(zip(self.convs, self.bns)):
            y = F.relu(conv(y))
            if i % 2 == 1:
                y = y + old
                old = y
            y = bn(y)
        return self.fc(y.mean((2, 3)))


class DSCNN(nn.Module):
    def __init__(self, n_classes=12, ch=64, blocks=4):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, ch, (10, 4), stride=(2, 2), padding=(5, 1), bias=False),
                                  nn.BatchNorm2d(ch), nn.ReLU())
        layers = []
        for _ in range(blocks):
            layers += [nn.Conv2d(ch, ch, 3, padding=1, groups=ch, bias=False), nn.BatchNorm2d(ch), nn.ReLU(),
                       nn.Conv2d(ch, ch, 1, bias=False), nn.BatchNorm2d(ch), nn.ReLU()]
        self.body = nn.Sequential(*layers)
        self.fc = nn.Linear(ch, n_classes)

    def forward(self, x):
        return self.fc(self.body(self.stem(x)).mean((2, 3)))


class DistillationLoss(nn.Module):
    def __init__(self, temperature, alpha):
        super().__init__()
        self.t, self.alpha = temperature, alpha

    def forward(self, student_logits, teacher_logits, labels):
        soft_student = F.softmax(student_logits / self.t, dim=-1)
        soft_teacher = F.softmax(teacher_logits / self.t, dim=-1)
        kd = F.kl_div(soft_student, soft_teacher, reduction="batchmean") * self.t ** 2
        ce = F.cross_entropy(student_logits, labels)
        return self.alpha * kd + (1 - self.alpha) * ce


def load_teacher(path, device):
    teacher = Res15()
    teacher.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    teacher.eval().requires_grad_(False)
    return teacher.to(device)


@torch.no_grad()
def accuracy(model, loader, device):
    model.eval()
    correct = total = 0
    for x, y in loader:
        correct += (model(x.to(device)).argmax(1).cpu() == y).sum().item()
        total += y.numel()
    return correct / total


def main():
    torch.manual_seed(HP["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train = DataLoader(load("train"), batch_size=HP["batch_size"], shuffle=True, drop_last=True)
    valid = DataLoader(load("valid"), batch_size=1024)
    teacher = load_teacher(HP["teacher_ckpt"], device)
    print(f"teacher val acc {accuracy(teacher, valid, device):.4f}")

    student = DSCNN().to(device)
    criterion = DistillationLoss(HP["temperature"], HP["alpha"])
    optimizer = torch.optim.Adam(student.parameters(), lr=HP["lr"])
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=HP["lr"], epochs=HP["epochs"],
                                                    steps_per_epoch=len(train))
    best = 0.0
    for epoch in range(HP["epochs"]):
        student.train()
        for x, y in train:
            x, y = x.to(device), y.to(device)
            with torch.no_grad():
                t_logits = teacher(x)
            loss = criterion(student(x), t_logits, y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
        acc = accuracy(student, valid, device)
        print(f"epoch {epoch:2d}  loss {loss.item():.4f}  student val acc {acc:.4f}")
        if acc > best:
            best = acc
            torch.save(student.state_dict(), "checkpoints/dscnn_student.pt")
    print(f"best student accuracy {best:.4f}")


if __name__ == "__main__":
    main()
