import argparse

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split

CLASSES = {"normal": 0, "suspect": 1, "pathological": 2}
FHR_BASE, FHR_SCALE, UC_SCALE = 140.0, 25.0, 50.0


def load_ctg(path):
    data = np.load(path, allow_pickle=False)
    fhr = (data["fhr"].astype(np.float32) - FHR_BASE) / FHR_SCALE
    uc = data["uc"].astype(np.float32) / UC_SCALE
    labels = np.array([CLASSES[c] for c in data["category"]], dtype=np.int64)
    return torch.from_numpy(np.stack([fhr, uc], axis=1)), torch.from_numpy(labels)


def jittered_copies(signals, labels, copies, seed=0):
    g = torch.Generator().manual_seed(seed)
    out_x, out_y = [signals], [labels]
    for _ in range(copies):
        shift = int(torch.randint(-240, 241, (1,), generator=g))
        x = torch.roll(signals, shifts=shift, dims=2)
        x = x + 0.02 * torch.randn(x.shape, generator=g)
        x[:, 0] += 0.1 * torch.randn(len(x), 1, generator=g)
        out_x.append(x)
        out_y.append(labels)
    return torch.cat(out_x), torch.cat(out_y)


class CTGNet(nn.Module):
    def __init__(self, n_classes=3, width=32):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(2, width, 15, stride=2, padding=7), nn.BatchNorm1d(width), nn.ReLU(),
            nn.Conv1d(width, 2 * width, 15, stride=2, padding=7), nn.BatchNorm1d(2 * width), nn.ReLU(),
            nn.Conv1d(2 * width, 4 * width, 15, stride=2, padding=7), nn.BatchNorm1d(4 * width), nn.ReLU(),
            nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Dropout(0.3), nn.Linear(4 * width, n_classes),
        )

    def forward(self, x):
        return self.net(x)


def evaluate(model, loader, criterion):
    model.eval()
    loss_sum, correct, n = 0.0, 0, 0
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            loss_sum += criterion(logits, y).item() * len(y)
            correct += (logits.argmax(1) == y).sum().item()
            n += len(y)
    return loss_sum / n, correct / n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/ctu_uhb_ctg.npz")
    p.add_argument("--copies", type=int, default=4)
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--lr", type=float, default=1e-3)
    args = p.parse_args()
    torch.manual_seed(0)

    signals, labels = load_ctg(args.data)
    signals, labels = jittered_copies(signals, labels, args.copies)
    dataset = TensorDataset(signals, labels)
    n_val = len(dataset) // 5
    train_set, val_set = random_split(dataset, [len(dataset) - n_val, n_val], generator=torch.Generator().manual_seed(1))
    train = DataLoader(train_set, batch_size=32, shuffle=True, drop_last=True)
    val = DataLoader(val_set, batch_size=128)

    model = CTGNet()
    counts = torch.bincount(labels, minlength=len(CLASSES)).float()
    criterion = nn.CrossEntropyLoss(weight=counts.sum() / (len(CLASSES) * counts))
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=5, verbose=True)

    for epoch in range(args.epochs):
        model.train()
        for x, y in train:
            loss = criterion(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        val_loss, val_acc = evaluate(model, val, criterion)
        plateau.step(val_loss)
        print(f"epoch {epoch}: val loss {val_loss:.4f} acc {val_acc:.3f}")
    torch.save(model.state_dict(), "ctg_net.pt")


if __name__ == "__main__":
    main()
