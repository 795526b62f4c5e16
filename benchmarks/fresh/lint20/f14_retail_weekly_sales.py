import argparse
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class SalesConfig:
    data: str = "weekly_sales.npz"
    emb_dims: dict = field(default_factory=lambda: {"store": 8, "dept": 16, "week": 6})
    hidden: int = 256
    micro_batch: int = 64
    accum_steps: int = 8
    lr: float = 1e-3
    epochs: int = 15


class SalesModel(nn.Module):
    def __init__(self, cardinalities, emb_dims, n_numeric, hidden):
        super().__init__()
        self.names = list(cardinalities)
        self.embeddings = nn.ModuleDict({k: nn.Embedding(cardinalities[k], emb_dims[k]) for k in self.names})
        width = sum(emb_dims[k] for k in self.names) + n_numeric
        self.mlp = nn.Sequential(nn.Linear(width, hidden), nn.ReLU(), nn.Linear(hidden, hidden // 2), nn.ReLU(), nn.Linear(hidden // 2, 1))

    def forward(self, cats, nums):
        embedded = [self.embeddings[k](cats[:, i]) for i, k in enumerate(self.names)]
        return self.mlp(torch.cat(embedded + [nums], dim=1)).squeeze(1)


def load_data(path):
    data = np.load(path)
    cats = torch.from_numpy(np.stack([data["store"], data["dept"], data["week"]], axis=1).astype(np.int64))
    nums = torch.from_numpy(np.stack([data["temperature"], data["fuel_price"], data["cpi"], data["holiday"]], axis=1).astype(np.float32))
    target = torch.from_numpy(np.log1p(np.clip(data["sales"], 0, None)).astype(np.float32))
    return cats, nums, target, data["is_valid"].astype(bool)


@torch.no_grad()
def rmsle(model, loader, device):
    model.eval()
    sq, n = 0.0, 0
    for cats, nums, y in loader:
        pred = model(cats.to(device), nums.to(device))
        sq += F.mse_loss(pred, y.to(device), reduction="sum").item()
        n += len(y)
    return (sq / n) ** 0.5


def train(cfg):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    cats, nums, target, is_valid = load_data(cfg.data)
    mu, sd = nums[~is_valid].mean(0), nums[~is_valid].std(0).clamp_min(1e-6)
    nums = (nums - mu) / sd
    valid = torch.from_numpy(is_valid)
    cardinalities = {k: int(cats[:, i].max()) + 1 for i, k in enumerate(("store", "dept", "week"))}
    train_loader = DataLoader(TensorDataset(cats[~valid], nums[~valid], target[~valid]), batch_size=cfg.micro_batch, shuffle=True, drop_last=True)
    valid_loader = DataLoader(TensorDataset(cats[valid], nums[valid], target[valid]), batch_size=4096)
    model = SalesModel(cardinalities, cfg.emb_dims, nums.shape[1], cfg.hidden).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    for epoch in range(cfg.epochs):
        model.train()
        optimizer.zero_grad()
        for step, (c, x, y) in enumerate(train_loader, start=1):
            c, x, y = c.to(device), x.to(device), y.to(device)
            loss = F.mse_loss(model(c, x), y)
            loss.backward()
            if step % cfg.accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        print(f"epoch {epoch}: valid RMSLE {rmsle(model, valid_loader, device):.4f}")
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=SalesConfig.data)
    parser.add_argument("--accum-steps", type=int, default=SalesConfig.accum_steps)
    parser.add_argument("--epochs", type=int, default=SalesConfig.epochs)
    args = parser.parse_args()
    model = train(SalesConfig(data=args.data, accum_steps=args.accum_steps, epochs=args.epochs))
    torch.save(model.state_dict(), "sales_model.pt")


if __name__ == "__main__":
    main()
