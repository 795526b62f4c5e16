"""DP-SGD training of a wrist-worn activity classifier with per-sample gradients (torch.func)."""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap
from torch.utils.data import DataLoader, TensorDataset

ACTIVITIES = ["sit", "stand", "walk", "run", "cycle", "stairs"]


def load_windows(path):
    d = np.load(path)
    x = torch.from_numpy(d["acc"].astype(np.float32))
    y = torch.from_numpy(d["activity"].astype(np.int64))
    return x, y


class ActivityNet(nn.Module):
    def __init__(self, channels=3, width=32):
        super().__init__()
        self.conv1 = nn.Conv1d(channels, width, 5, padding=2)
        self.conv2 = nn.Conv1d(width, width, 5, padding=2, stride=2)
        self.norm = nn.GroupNorm(4, width)
        self.fc = nn.Linear(width, len(ACTIVITIES))

    def forward(self, x):
        h = F.relu(self.conv1(x))
        h = F.relu(self.norm(self.conv2(h)))
        return self.fc(h.mean(dim=-1))


def make_per_sample_grad(model):
    def loss_fn(params, x, y):
        logits = functional_call(model, params, (x.unsqueeze(0),))
        return F.cross_entropy(logits, y.unsqueeze(0))

    return vmap(grad(loss_fn), in_dims=(None, 0, 0))


def dp_step(model, per_sample_grad, optimizer, x, y, clip, sigma, expected_batch):
    params = {k: v.detach() for k, v in model.named_parameters()}
    grads = per_sample_grad(params, x, y)
    norms = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads.values()))
    scale = (clip / (norms + 1e-6)).clamp(max=1.0)
    optimizer.zero_grad()
    for name, p in model.named_parameters():
        g = (grads[name] * scale.view(-1, *([1] * (grads[name].dim() - 1)))).sum(0)
        p.grad = (g + sigma * clip * torch.randn_like(g)) / expected_batch
    optimizer.step()


@torch.no_grad()
def accuracy(model, x, y):
    model.eval()
    acc = (model(x).argmax(1) == y).float().mean().item()
    model.train()
    return acc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/wrist/train.npz")
    ap.add_argument("--test", default="data/wrist/test.npz")
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--out", default="models/activity_dp.pt")
    args = ap.parse_args()

    torch.manual_seed(0)
    np.random.seed(0)
    x_tr, y_tr = load_windows(args.train)
    x_te, y_te = load_windows(args.test)
    mean = x_tr.mean(dim=(0, 2), keepdim=True)
    std = x_tr.std(dim=(0, 2), keepdim=True).clamp_min(1e-6)
    x_tr, x_te = (x_tr - mean) / std, (x_te - mean) / std
    loader = DataLoader(TensorDataset(x_tr, y_tr), batch_size=args.batch_size, shuffle=True, drop_last=True)

    model = ActivityNet(channels=x_tr.shape[1])
    model.train()
    per_sample_grad = make_per_sample_grad(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    q = args.batch_size / len(x_tr)
    for epoch in range(args.epochs):
        for xb, yb in loader:
            dp_step(model, per_sample_grad, optimizer, xb, yb, args.clip, args.sigma, args.batch_size)
        steps = (epoch + 1) * len(loader)
        eps = q * math.sqrt(steps * math.log(1e5)) / args.sigma
        print(f"epoch {epoch}: test acc {accuracy(model, x_te, y_te):.3f}  eps~{eps:.2f}")

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    torch.save({"model": model.state_dict(), "mean": mean, "std": std}, args.out)


if __name__ == "__main__":
    main()
