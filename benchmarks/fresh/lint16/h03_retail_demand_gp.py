"""Exact Gaussian-process forecast of weekly store demand (RBF + periodic kernel)."""
import argparse
import csv
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


def load_store_series(path, store_id):
    weeks, sales = [], []
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            if row["store"] == store_id:
                weeks.append(float(row["week"]))
                sales.append(float(row["units"]))
    order = sorted(range(len(weeks)), key=weeks.__getitem__)
    t = torch.tensor([weeks[i] for i in order], dtype=torch.float64)
    y = torch.tensor([sales[i] for i in order], dtype=torch.float64)
    return t, y


class DemandKernel(nn.Module):
    def __init__(self, period=52.0):
        super().__init__()
        self.raw_trend_len = nn.Parameter(torch.tensor(math.log(20.0), dtype=torch.float64))
        self.raw_season_len = nn.Parameter(torch.tensor(0.0, dtype=torch.float64))
        self.raw_trend_var = nn.Parameter(torch.tensor(0.0, dtype=torch.float64))
        self.raw_season_var = nn.Parameter(torch.tensor(-1.0, dtype=torch.float64))
        self.register_buffer("period", torch.tensor(period, dtype=torch.float64))

    def forward(self, a, b):
        d = a[:, None] - b[None, :]
        trend_len = F.softplus(self.raw_trend_len)
        season_len = F.softplus(self.raw_season_len)
        rbf = F.softplus(self.raw_trend_var) * torch.exp(-0.5 * (d / trend_len) ** 2)
        per = F.softplus(self.raw_season_var) * torch.exp(
            -2.0 * torch.sin(math.pi * d.abs() / self.period) ** 2 / season_len ** 2)
        return rbf + per


class ExactGP(nn.Module):
    def __init__(self, period):
        super().__init__()
        self.kernel = DemandKernel(period)
        self.raw_noise = nn.Parameter(torch.tensor(-2.0, dtype=torch.float64))
        self.jitter = 1e-6

    def noise(self):
        return F.softplus(self.raw_noise) + 1e-4

    def _factor(self, t):
        K = self.kernel(t, t)
        K = K + (self.noise() + self.jitter) * torch.eye(t.numel(), dtype=K.dtype, device=K.device)
        return torch.cholesky(K)

    def neg_log_marginal(self, t, y):
        L = self._factor(t)
        alpha = torch.cholesky_solve(y[:, None], L)
        fit = 0.5 * (y[:, None] * alpha).sum()
        logdet = torch.log(torch.diagonal(L)).sum()
        return (fit + logdet + 0.5 * t.numel() * math.log(2 * math.pi)) / t.numel()

    @torch.no_grad()
    def predict(self, t_train, y_train, t_new):
        L = self._factor(t_train)
        alpha = torch.cholesky_solve(y_train[:, None], L)
        k_star = self.kernel(t_new, t_train)
        mean = (k_star @ alpha).squeeze(1)
        v = torch.linalg.solve_triangular(L, k_star.T, upper=False)
        var = self.kernel(t_new, t_new).diagonal() - (v ** 2).sum(0) + self.noise()
        return mean, var.clamp_min(1e-9)


def fit(model, t, y, steps, lr, log_every=50):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for step in range(steps):
        opt.zero_grad()
        loss = model.neg_log_marginal(t, y)
        loss.backward()
        opt.step()
        if step % log_every == 0 or step == steps - 1:
            print(f"step {step:4d}  nlml/n {loss.item():.4f}  noise {model.noise().item():.4f}")
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default="data/retail/weekly_sales.csv")
    ap.add_argument("--store", default="S017")
    ap.add_argument("--holdout-weeks", type=int, default=12)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--period", type=float, default=52.0)
    ap.add_argument("--out", default="models/gp_demand.pt")
    args = ap.parse_args()

    torch.manual_seed(0)
    t, y = load_store_series(args.csv, args.store)
    t_tr, y_tr = t[:-args.holdout_weeks], y[:-args.holdout_weeks]
    t_te, y_te = t[-args.holdout_weeks:], y[-args.holdout_weeks:]
    mu, sd = y_tr.mean(), y_tr.std()
    z_tr = (y_tr - mu) / sd

    model = fit(ExactGP(args.period), t_tr, z_tr, args.steps, args.lr)
    mean, var = model.predict(t_tr, z_tr, t_te)
    mean = mean * sd + mu
    std = var.sqrt() * sd
    mape = ((mean - y_te).abs() / y_te.abs().clamp_min(1.0)).mean().item()
    inside = ((y_te - mean).abs() <= 1.96 * std).double().mean().item()
    print(f"holdout MAPE {mape:.3%}   95% interval coverage {inside:.2f}")

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    torch.save({"state_dict": model.state_dict(), "y_mean": mu.item(), "y_std": sd.item(),
                "store": args.store}, args.out)


if __name__ == "__main__":
    main()
