import argparse
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


@dataclass
class ChurnConfig:
    train_csv: str = "churn_train.csv"
    valid_csv: str = "churn_valid.csv"
    hidden: int = 128
    dropout: float = 0.2
    lr: float = 2e-3
    epochs: int = 40
    batch_size: int = 256
    churn_weight: float = 3.0


def read_csv(path):
    return np.loadtxt(path, delimiter=",", skiprows=1)


class ChurnTable(Dataset):
    def __init__(self, table, mean, std):
        self.x = torch.from_numpy((table[:, :-1] - mean) / std).float()
        self.y = torch.from_numpy(table[:, -1])

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class ChurnMLP(nn.Module):
    def __init__(self, n_features, hidden, dropout):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(n_features, hidden),
            nn.LayerNorm(hidden),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(hidden, hidden // 2),
            nn.ReLU(),
            nn.Linear(hidden // 2, 2),
        )

    def forward(self, x):
        return self.layers(x)


def accuracy(model, loader, device):
    model.eval()
    hits = total = 0
    with torch.no_grad():
        for x, y in loader:
            pred = model(x.to(device)).argmax(dim=1).cpu()
            hits += (pred == y).sum().item()
            total += len(y)
    return hits / total


def fit(cfg):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_table, valid_table = read_csv(cfg.train_csv), read_csv(cfg.valid_csv)
    mean = train_table[:, :-1].mean(axis=0)
    std = train_table[:, :-1].std(axis=0) + 1e-6
    train_loader = DataLoader(ChurnTable(train_table, mean, std), batch_size=cfg.batch_size, shuffle=True)
    valid_loader = DataLoader(ChurnTable(valid_table, mean, std), batch_size=1024)
    model = ChurnMLP(train_table.shape[1] - 1, cfg.hidden, cfg.dropout).to(device)
    criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, cfg.churn_weight], device=device))
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    for epoch in range(cfg.epochs):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: valid accuracy {accuracy(model, valid_loader, device):.4f}")
    return model, mean, std


def main():
    parser = argparse.ArgumentParser()
    defaults = ChurnConfig()
    for name, value in vars(defaults).items():
        parser.add_argument("--" + name.replace("_", "-"), type=type(value), default=value)
    cfg = ChurnConfig(**vars(parser.parse_args()))
    model, mean, std = fit(cfg)
    torch.save({"model": model.state_dict(), "mean": mean.tolist(), "std": std.tolist()}, "churn_mlp.pt")


if __name__ == "__main__":
    main()
