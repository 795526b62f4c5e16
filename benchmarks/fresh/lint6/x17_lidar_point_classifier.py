"""Classify segmented LiDAR objects (car, pedestrian, cyclist, truck, pole, vegetation, ...)
from their point clouds with a PointNet-style network. Each sample is 1024 points (x, y, z,
intensity), centred and scaled to the unit sphere by the preprocessing job."""

import glob

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

CLASSES = ["car", "pedestrian", "cyclist", "truck", "bus", "pole", "vegetation", "sign"]
N_POINTS = 1024


class ObjectClouds(Dataset):
    def __init__(self, pattern, train):
        self.files = sorted(glob.glob(pattern))
        self.train = train

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        sample = np.load(self.files[i])
        pts = sample["points"].astype(np.float32)  # (N_POINTS, 4)
        if self.train:
            angle = np.random.uniform(0, 2 * np.pi)
            c, s = np.cos(angle), np.sin(angle)
            rot = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]], dtype=np.float32)
            pts[:, :3] = pts[:, :3] @ rot.T + np.random.normal(0, 0.01, (N_POINTS, 3)).astype(np.float32)
        return torch.from_numpy(pts).T.contiguous(), int(sample["label"])  # (4, N_POINTS)


class PointNetClassifier(nn.Module):
    def __init__(self, n_classes=len(CLASSES)):
        super().__init__()

        def shared_mlp(c_in, c_out):
            return nn.Sequential(nn.Conv1d(c_in, c_out, 1, bias=False), nn.BatchNorm1d(c_out), nn.ReLU())

        self.point_features = nn.Sequential(shared_mlp(4, 64), shared_mlp(64, 128), shared_mlp(128, 1024))
        self.classifier = nn.Sequential(
            nn.Linear(1024, 512, bias=False), nn.BatchNorm1d(512), nn.ReLU(), nn.Dropout(0.4),
            nn.Linear(512, 256, bias=False), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.4),
            nn.Linear(256, n_classes),
        )

    def forward(self, points):  # (B, 4, N)
        per_point = self.point_features(points)
        global_feature = per_point.max(dim=2).values  # symmetric pooling over points
        return self.classifier(global_feature).softmax(dim=-1)


def run(model, loader, device, criterion, optimizer=None):
    train = optimizer is not None
    model.train() if train else model.eval()
    loss_sum, hits, seen = 0.0, 0, 0
    with torch.set_grad_enabled(train):
        for points, label in loader:
            points, label = points.to(device), label.to(device)
            class_probs = model(points)
            loss = criterion(class_probs, label)
            if train:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            loss_sum += loss.item() * label.size(0)
            hits += (class_probs.argmax(dim=1) == label).sum().item()
            seen += label.size(0)
    return loss_sum / seen, hits / seen


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl = DataLoader(ObjectClouds("data/objects/train/*.npz", train=True), batch_size=32,
                          shuffle=True, num_workers=4, drop_last=True)
    val_dl = DataLoader(ObjectClouds("data/objects/val/*.npz", train=False), batch_size=64, num_workers=4)
    model = PointNetClassifier().to(device)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.5)

    best = 0.0
    for epoch in range(100):
        tr_loss, tr_acc = run(model, train_dl, device, criterion, optimizer)
        va_loss, va_acc = run(model, val_dl, device, criterion)
        scheduler.step()
        print(f"{epoch:3d} train {tr_loss:.3f}/{tr_acc:.3f} val {va_loss:.3f}/{va_acc:.3f}")
        if va_acc > best:
            best = va_acc
            torch.save(model.state_dict(), "pointnet_objects.pt")


if __name__ == "__main__":
    main()
