import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset

N_DIGITS = 5


class MeterCrops(Dataset):
    def __init__(self, folder, height=48, width=160):
        folder = Path(folder)
        self.readings = json.loads((folder / "readings.json").read_text())
        self.files = sorted(self.readings)
        self.folder, self.size = folder, (width, height)

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        name = self.files[i]
        img = Image.open(self.folder / name).convert("L").resize(self.size)
        x = torch.from_numpy(np.asarray(img, dtype=np.float32) / 255.0).unsqueeze(0)
        digits = torch.tensor([int(c) for c in self.readings[name].zfill(N_DIGITS)], dtype=torch.long)
        return (x - 0.5) / 0.5, digits


class DigitReader(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.cnn = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(2 * width, 4 * width, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d((1, N_DIGITS)),
        )
        self.heads = nn.ModuleList([nn.Linear(4 * width, 10) for _ in range(N_DIGITS)])

    def forward(self, x):
        cols = self.cnn(x).squeeze(2)
        return torch.stack([head(cols[:, :, i]) for i, head in enumerate(self.heads)], dim=1)


def digit_loss(logits, digits):
    return F.cross_entropy(logits.reshape(-1, 10), digits.reshape(-1))


def evaluate(model, loader, device):
    model.eval()
    exact = digit_hits = n = 0
    with torch.no_grad():
        for x, digits in loader:
            pred = model(x.to(device)).argmax(dim=-1).cpu()
            exact += (pred == digits).all(dim=1).sum().item()
            digit_hits += (pred == digits).sum().item()
            n += len(digits)
    return exact / n, digit_hits / (n * N_DIGITS)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", default="meters/train")
    parser.add_argument("--val", default="meters/val")
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--log-every", type=int, default=50)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = DataLoader(MeterCrops(args.train), batch_size=32, shuffle=True, num_workers=2)
    val_loader = DataLoader(MeterCrops(args.val), batch_size=128, num_workers=2)
    model = DigitReader().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    step = 0
    for epoch in range(args.epochs):
        model.train()
        for x, digits in train_loader:
            x, digits = x.to(device), digits.to(device)
            optimizer.zero_grad
            loss = digit_loss(model(x), digits)
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                print(f"step {step}: loss {loss.item():.4f}")
        exact, per_digit = evaluate(model, val_loader, device)
        print(f"epoch {epoch}: exact {exact:.3f} per-digit {per_digit:.3f}")
    torch.save(model.state_dict(), "meter_reader.pt")


if __name__ == "__main__":
    main()
