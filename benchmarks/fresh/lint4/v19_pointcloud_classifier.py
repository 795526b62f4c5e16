"""PointNet classifier for scanned objects with a varying number of points per scan.

Scans are not resampled to a fixed size, so each step sees one scan and the gradients of
ACCUM scans are accumulated before an optimizer step.
"""

import glob

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset

ACCUM, EPOCHS, LR = 32, 60, 1e-3


class Scans(Dataset):
    def __init__(self, pattern, classes, augment):
        self.files = sorted(glob.glob(pattern))
        self.classes, self.augment = classes, augment

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        blob = np.load(self.files[i])
        pts = torch.from_numpy(blob["xyz"].astype(np.float32))
        pts = pts - pts.mean(dim=0)
        pts = pts / pts.norm(dim=1).max().clamp(min=1e-6)
        if self.augment:
            theta = torch.rand(()) * 2 * torch.pi
            c, s = torch.cos(theta), torch.sin(theta)
            rot = torch.stack([torch.stack([c, -s, torch.zeros(())]),
                               torch.stack([s, c, torch.zeros(())]),
                               torch.tensor([0.0, 0.0, 1.0])])
            pts = pts @ rot.T + 0.01 * torch.randn_like(pts)
        return pts.T.contiguous(), self.classes.index(str(blob["label"]))


class PointNet(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        widths = [3, 64, 128, 1024]
        layers = []
        for a, b in zip(widths[:-1], widths[1:]):
            layers += [nn.Conv1d(a, b, 1), nn.BatchNorm1d(b), nn.ReLU()]
        self.point_mlp = nn.Sequential(*layers)
        self.head = nn.Sequential(
            nn.Linear(1024, 512), nn.BatchNorm1d(512), nn.ReLU(), nn.Dropout(0.4),
            nn.Linear(512, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.4),
            nn.Linear(256, n_classes),
        )

    def forward(self, pts):
        feats = self.point_mlp(pts)
        return self.head(feats.max(dim=2).values)


def main(root="data/scans"):
    classes = sorted(open(f"{root}/classes.txt").read().split())
    train_dl = DataLoader(Scans(f"{root}/train/*.npz", classes, augment=True), batch_size=1,
                          shuffle=True, num_workers=4)
    test_dl = DataLoader(Scans(f"{root}/test/*.npz", classes, augment=False), batch_size=1)
    model = PointNet(len(classes))
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=20, gamma=0.5)

    for epoch in range(EPOCHS):
        model.train()
        opt.zero_grad()
        running = 0.0
        for i, (pts, label) in enumerate(train_dl, start=1):
            loss = F.cross_entropy(model(pts), label) / ACCUM
            loss.backward()
            running += loss.item()
            if i % ACCUM == 0 or i == len(train_dl):
                opt.step()
                opt.zero_grad()
        sched.step()

        model.eval()
        hits = 0
        with torch.no_grad():
            for pts, label in test_dl:
                hits += int(model(pts).argmax(1).item() == label.item())
        print(f"epoch {epoch:2d}  loss {running * ACCUM / len(train_dl):.4f}  test acc {hits / len(test_dl):.4f}")

    torch.save(model.state_dict(), "pointnet_scans.pt")


if __name__ == "__main__":
    main()
