"""ModelNet40 shape classification from 1024 sampled surface points (PointNet-style)."""
import json
import math
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

SETTINGS = {
    "root": "data/modelnet40_npy",
    "points": 1024,
    "point_mlp": [64, 64, 128, 1024],
    "head": [512, 256],
    "classes": 40,
    "epochs": 200,
    "batch": 32,
    "lr": 1e-3,
    "step_epochs": 20,
    "gamma": 0.7,
    "seed": 1,
}


class ModelNetPoints(Dataset):
    """Each shape is an (N, 3) float32 array saved as <root>/<split>/<class>/<name>.npy."""

    def __init__(self, root, split, n_points, augment):
        self.files = sorted(Path(root, split).glob("*/*.npy"))
        classes = json.loads(Path(root, "classes.json").read_text())
        self.labels = [classes.index(f.parent.name) for f in self.files]
        self.n_points, self.augment = n_points, augment

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        pts = torch.from_numpy(np.load(self.files[i]).astype(np.float32))
        pts = pts[torch.randperm(pts.shape[0])[: self.n_points]]
        pts = pts - pts.mean(dim=0)
        pts = pts / pts.norm(dim=1).max()
        if self.augment:
            theta = random.uniform(0, 2 * math.pi)
            c, s = math.cos(theta), math.sin(theta)
            rot = torch.tensor([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
            pts = pts @ rot.T * random.uniform(0.8, 1.25)
            pts = pts + 0.01 * torch.randn_like(pts).clamp(-2.5, 2.5)
        return pts.T.contiguous(), self.labels[i]


def shared_mlp(cin, cout):
    return nn.Sequential(nn.Conv1d(cin, cout, 1, bias=False), nn.BatchNorm1d(cout), nn.ReLU(inplace=True))


class PointNetClassifier(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.stages = []
        width = 3
        for out in cfg["point_mlp"]:
            self.stages.append(shared_mlp(width, out))
            width = out
        head, prev = [], width
        for h in cfg["head"]:
            head += [nn.Linear(prev, h, bias=False), nn.BatchNorm1d(h), nn.ReLU(inplace=True), nn.Dropout(0.4)]
            prev = h
        head.append(nn.Linear(prev, cfg["classes"]))
        self.head = nn.Sequential(*head)

    def forward(self, points):
        x = points
        for stage in self.stages:
            x = stage(x)
        return self.head(x.max(dim=2).values)


def smoothed_ce(logits, target, eps=0.2):
    n = logits.size(1)
    one_hot = F.one_hot(target, n).float() * (1 - eps) + eps / n
    return -(one_hot * F.log_softmax(logits, dim=1)).sum(dim=1).mean()


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for pts, label in loader:
            pred = model(pts.to(device)).argmax(dim=1)
            correct += (pred == label.to(device)).sum().item()
            total += label.numel()
    return correct / total


def main(cfg=SETTINGS):
    random.seed(cfg["seed"])
    np.random.seed(cfg["seed"])
    torch.manual_seed(cfg["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train_set = ModelNetPoints(cfg["root"], "train", cfg["points"], augment=True)
    test_set = ModelNetPoints(cfg["root"], "test", cfg["points"], augment=False)
    train_loader = DataLoader(train_set, cfg["batch"], shuffle=True, num_workers=4, drop_last=True)
    test_loader = DataLoader(test_set, cfg["batch"], num_workers=4)

    model = PointNetClassifier(cfg).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=cfg["step_epochs"], gamma=cfg["gamma"])

    best = 0.0
    for epoch in range(cfg["epochs"]):
        model.train()
        running, seen = 0.0, 0
        for pts, label in train_loader:
            pts, label = pts.to(device), label.to(device)
            optimizer.zero_grad()
            loss = smoothed_ce(model(pts), label)
            loss.backward()
            optimizer.step()
            running += loss.item() * label.numel()
            seen += label.numel()
        scheduler.step()
        acc = evaluate(model, test_loader, device)
        print(f"epoch {epoch:03d} loss {running / seen:.4f} test acc {acc:.4f}")
        if acc > best:
            best = acc
            torch.save(model.state_dict(), "pointnet_modelnet40.pt")
    print(f"best overall accuracy {best:.4f}")


if __name__ == "__main__":
    main()
