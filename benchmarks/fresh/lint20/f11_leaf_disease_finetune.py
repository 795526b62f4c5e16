import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

MEAN = torch.tensor([0.45, 0.50, 0.40]).view(1, 3, 1, 1)
STD = torch.tensor([0.20, 0.20, 0.22]).view(1, 3, 1, 1)


class Backbone(nn.Module):
    def __init__(self, widths=(32, 64, 128, 256)):
        super().__init__()
        layers, cin = [], 3
        for cout in widths:
            layers += [nn.Conv2d(cin, cout, 3, padding=1), nn.GroupNorm(8, cout), nn.ReLU(), nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.out_features = cin

    def forward(self, x):
        return F.adaptive_avg_pool2d(self.layers(x), 1).flatten(1)


class LeafClassifier(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.backbone = Backbone()
        self.head = nn.Sequential(nn.Dropout(0.3), nn.Linear(self.backbone.out_features, n_classes))

    def forward(self, x):
        return self.head(self.backbone(x))


def to_batch(images):
    x = torch.from_numpy(images).permute(0, 3, 1, 2).float().div(255.0)
    return (x - MEAN) / STD


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x.to(device)).argmax(dim=1).cpu() == y).sum().item()
            total += len(y)
    return correct / total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="plant_leaves.npz")
    parser.add_argument("--pretrained", default="leaf_backbone_ssl.pt")
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--unfrozen-epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.01)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = np.load(args.data)
    classes = [str(c) for c in data["classes"]]
    train_set = TensorDataset(to_batch(data["train_images"]), torch.from_numpy(data["train_labels"]).long())
    val_set = TensorDataset(to_batch(data["val_images"]), torch.from_numpy(data["val_labels"]).long())
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=128)
    model = LeafClassifier(len(classes))
    model.backbone.load_state_dict(torch.load(args.pretrained, map_location="cpu", weights_only=True))
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True)
    for epoch in range(args.epochs):
        if epoch == args.unfrozen_epochs:
            model.backbone.requires_grad_(False)
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad(set_to_none=False)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: val acc {evaluate(model, val_loader, device):.3f}")
    torch.save({"model": model.state_dict(), "classes": classes}, "leaf_classifier.pt")


if __name__ == "__main__":
    main()
