import argparse
import json
from collections import Counter
from pathlib import Path

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

FAULTS = ["normal", "rope_wear", "guide_rail_misalignment", "door_roller", "motor_bearing"]


class CarRuns(Dataset):
    def __init__(self, path, stats=None):
        self.records = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
        feats = torch.tensor([r["features"] for r in self.records])
        self.stats = stats or (feats.mean(0), feats.std(0) + 1e-6)

    def __len__(self):
        return len(self.records)

    def __getitem__(self, i):
        rec = self.records[i]
        features, fault = (torch.as_tensor(v, dtype=torch.float32) for v in (rec["features"], rec["fault"]))
        mean, std = self.stats
        return (features - mean) / std, fault


class FaultMLP(nn.Module):
    def __init__(self, n_in, n_out, width=128, depth=3, p_drop=0.1):
        super().__init__()
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(n_in, width), nn.BatchNorm1d(width), nn.ReLU(), nn.Dropout(p_drop)]
            n_in = width
        layers.append(nn.Linear(width, n_out))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def class_weights(dataset):
    counts = Counter(r["fault"] for r in dataset.records)
    total = sum(counts.values())
    return torch.tensor([total / (len(FAULTS) * counts.get(k, 1)) for k in range(len(FAULTS))])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/elevator/train.jsonl")
    ap.add_argument("--val", default="data/elevator/val.jsonl")
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()

    torch.manual_seed(11)
    train_ds = CarRuns(args.train)
    val_ds = CarRuns(args.val, stats=train_ds.stats)
    train_dl = DataLoader(train_ds, batch_size=64, shuffle=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=256)

    model = FaultMLP(len(train_ds.records[0]["features"]), len(FAULTS))
    criterion = nn.CrossEntropyLoss(weight=class_weights(train_ds), label_smoothing=0.05)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        model.train()
        for x, y in train_dl:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        model.eval()
        confusion = torch.zeros(len(FAULTS), len(FAULTS), dtype=torch.long)
        with torch.no_grad():
            for x, y in val_dl:
                pred = model(x).argmax(1)
                for t, p in zip(y.long().tolist(), pred.tolist()):
                    confusion[t, p] += 1
        recall = confusion.diag().float() / confusion.sum(1).clamp(min=1)
        print(f"epoch {epoch} loss {loss.item():.4f} " + " ".join(f"{n}={r:.2f}" for n, r in zip(FAULTS, recall)))
    torch.save({"model": model.state_dict(), "mean": train_ds.stats[0], "std": train_ds.stats[1]}, "fault_mlp.pt")


if __name__ == "__main__":
    main()
