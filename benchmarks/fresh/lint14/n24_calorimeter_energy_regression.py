import argparse
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import gradcheck
from torch.utils.data import DataLoader, Dataset

LAYER_SHAPES = [(3, 96), (12, 12), (12, 6)]


def parse_args():
    p = argparse.ArgumentParser(description="Regress incident energy from three calorimeter layers")
    p.add_argument("--showers", default="data/calo/eplus_showers.npz")
    p.add_argument("--epochs", type=int, default=25)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--seed", type=int, default=12)
    p.add_argument("--out", default="runs/calo_energy")
    p.add_argument("--skip-gradcheck", action="store_true")
    return p.parse_args()


class Showers(Dataset):
    def __init__(self, path, indices):
        data = np.load(path)
        self.layers = [np.log1p(data[f"layer_{k}"][indices].astype(np.float32)) for k in range(3)]
        self.energy = data["energy"][indices].astype(np.float32)

    def __len__(self):
        return len(self.energy)

    def __getitem__(self, i):
        layers = [torch.from_numpy(layer[i]) for layer in self.layers]
        return layers[0], layers[1], layers[2], float(self.energy[i])


def as_float(value):
    return torch.tensor(value, dtype=torch.float32)


def collate_showers(batch):
    layers = [torch.stack([as_float(item[k]) for item in batch]).unsqueeze(1) for k in range(3)]
    energy = as_float([item[3] for item in batch])
    return layers, torch.log(energy)


class LayerBranch(nn.Module):
    def __init__(self, out_dim=64):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.LeakyReLU(0.1),
            nn.Conv2d(32, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.LeakyReLU(0.1),
        )
        self.proj = nn.Linear(64 * 2, out_dim)

    def forward(self, x):
        h = self.conv(x)
        return self.proj(torch.cat([h.mean(dim=(2, 3)), h.amax(dim=(2, 3))], dim=1))


class LayerTotal(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        total = torch.expm1(x).flatten(1).sum(1)
        ctx.save_for_backward(x, total)
        return torch.log1p(total)

    @staticmethod
    def backward(ctx, grad_out):
        x, total = ctx.saved_tensors
        scale = (grad_out / (1.0 + total)).view(-1, *([1] * (x.dim() - 1)))
        return scale * torch.exp(x)


def check_layer_total():
    probe = torch.rand(2, 1, 3, 4, requires_grad=True)
    return gradcheck(LayerTotal.apply, (probe,))


class EnergyRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.branches = nn.ModuleList([LayerBranch() for _ in LAYER_SHAPES])
        self.head = nn.Sequential(nn.Linear(3 * 64 + 3, 128), nn.LeakyReLU(0.1), nn.Linear(128, 1))

    def forward(self, layers):
        totals = torch.stack([LayerTotal.apply(x) for x in layers], dim=1)
        feats = [branch(x) for branch, x in zip(self.branches, layers)]
        return self.head(torch.cat(feats + [totals], dim=1)).squeeze(1)


def run(model, loader, device, optimizer=None):
    model.train(optimizer is not None)
    sq_err, rel_err, count = 0.0, 0.0, 0
    with torch.set_grad_enabled(optimizer is not None):
        for layers, log_e in loader:
            layers, log_e = [x.to(device) for x in layers], log_e.to(device)
            pred = model(layers)
            loss = F.mse_loss(pred, log_e)
            if optimizer is not None:
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
            sq_err += loss.item() * log_e.numel()
            rel_err += (torch.exp(pred - log_e) - 1).abs().sum().item()
            count += log_e.numel()
    return sq_err / count, rel_err / count


def main():
    args = parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    if not args.skip_gradcheck:
        check_layer_total()
    n = len(np.load(args.showers)["energy"])
    order = np.random.permutation(n)
    cut = int(0.85 * n)
    train_set, valid_set = Showers(args.showers, order[:cut]), Showers(args.showers, order[cut:])
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, drop_last=True,
                              num_workers=args.workers, collate_fn=collate_showers)
    valid_loader = DataLoader(valid_set, batch_size=1024, num_workers=args.workers, collate_fn=collate_showers)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = EnergyRegressor().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.3)
    best = float("inf")
    for epoch in range(args.epochs):
        train_mse, _ = run(model, train_loader, device, optimizer)
        valid_mse, valid_rel = run(model, valid_loader, device)
        scheduler.step()
        print(f"epoch {epoch:02d} train {train_mse:.5f} valid {valid_mse:.5f} rel.err {valid_rel:.4f}")
        if valid_mse < best:
            best = valid_mse
            Path(args.out).mkdir(parents=True, exist_ok=True)
            torch.save({"model": model.state_dict(), "epoch": epoch}, Path(args.out) / "best.pt")


if __name__ == "__main__":
    main()
