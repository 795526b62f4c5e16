import argparse
import csv

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

CLASSES = ("elliptical", "spiral", "edge_on", "merger", "irregular")


class GalaxyNet(nn.Module):
    def __init__(self, n_classes=len(CLASSES), width=32):
        super().__init__()
        def block(cin, cout):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2))
        self.features = nn.Sequential(block(3, width), block(width, 2 * width), block(2 * width, 4 * width), block(4 * width, 4 * width))
        self.classifier = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.5), nn.Linear(4 * width, n_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


def cutouts(npz_path, key):
    images = np.load(npz_path)[key].astype(np.float32)
    images = np.arcsinh(images / 0.05)
    return torch.from_numpy(images).permute(0, 3, 1, 2).contiguous()


def train(args, device):
    data = np.load(args.data)
    x = cutouts(args.data, "train_images")
    y = torch.from_numpy(data["train_labels"]).long()
    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True, drop_last=True, num_workers=4)
    model = GalaxyNet().to(device)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        total, n = 0.0, 0
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            if torch.rand(()) < 0.5:
                xb = xb.flip(-1)
            loss = F.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(yb)
            n += len(yb)
        print(f"epoch {epoch}: train loss {total / n:.4f}")
    torch.save(model.state_dict(), args.weights)


@torch.inference_mode()
def predict(model, loader, device):
    outputs = []
    for (xb,) in loader:
        outputs.append(F.softmax(model(xb.to(device)), dim=1).cpu())
    return torch.cat(outputs)


def catalogue(args, device):
    model = GalaxyNet()
    model.load_state_dict(torch.load(args.weights, map_location="cpu", weights_only=True))
    model = model.to(device)
    x = cutouts(args.data, "survey_images")
    probs = predict(model, DataLoader(TensorDataset(x), batch_size=args.batch_size), device)
    with open(args.out, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["index", "label", "confidence"] + list(CLASSES))
        for i, p in enumerate(probs.tolist()):
            best = int(np.argmax(p))
            writer.writerow([i, CLASSES[best], f"{p[best]:.4f}"] + [f"{v:.4f}" for v in p])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["train", "catalogue"])
    parser.add_argument("--data", default="galaxy_cutouts.npz")
    parser.add_argument("--weights", default="galaxy_net.pt")
    parser.add_argument("--out", default="morphology.csv")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if args.command == "train":
        train(args, device)
    else:
        catalogue(args, device)


if __name__ == "__main__":
    main()
