"""Gaussian-process model of Li-ion capacity fade over cycles; hyper-parameter fit is resumable."""
import argparse
import csv
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


def load_cells(path):
    cells = {}
    with open(path, newline="") as fh:
        for r in csv.DictReader(fh):
            cells.setdefault(r["cell"], []).append((float(r["cycle"]), float(r["capacity_ah"])))
    out = {}
    for cell, rows in cells.items():
        rows.sort()
        out[cell] = (torch.tensor([c for c, _ in rows], dtype=torch.float64),
                     torch.tensor([q for _, q in rows], dtype=torch.float64))
    return out


class FadeGP(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_len = nn.Parameter(torch.tensor(math.log(200.0), dtype=torch.float64))
        self.log_amp = nn.Parameter(torch.tensor(0.0, dtype=torch.float64))
        self.log_noise = nn.Parameter(torch.tensor(-4.0, dtype=torch.float64))
        self.slope = nn.Parameter(torch.tensor(0.0, dtype=torch.float64))

    def kernel(self, a, b):
        r2 = ((a[:, None] - b[None, :]) / self.log_len.exp()) ** 2
        return self.log_amp.exp() * (1 + math.sqrt(5) * r2.clamp_min(1e-12).sqrt() + 5.0 / 3.0 * r2) \
            * torch.exp(-math.sqrt(5) * r2.clamp_min(1e-12).sqrt())

    def _chol(self, t):
        K = self.kernel(t, t) + (self.log_noise.exp() + 1e-8) * torch.eye(t.numel(), dtype=t.dtype)
        return torch.linalg.cholesky(K)

    def nll(self, t, y):
        resid = (y - self.slope * t / 1000.0)[:, None]
        L = self._chol(t)
        alpha = torch.cholesky_solve(resid, L)
        return (0.5 * (resid * alpha).sum() + torch.log(torch.diagonal(L)).sum()
                + 0.5 * t.numel() * math.log(2 * math.pi)) / t.numel()

    @torch.no_grad()
    def predict(self, t, y, t_new):
        resid = (y - self.slope * t / 1000.0)[:, None]
        L = self._chol(t)
        k_s = self.kernel(t_new, t)
        mean = (k_s @ torch.cholesky_solve(resid, L)).squeeze(1) + self.slope * t_new / 1000.0
        v = torch.linalg.solve_triangular(L, k_s.T, upper=False)
        var = self.kernel(t_new, t_new).diagonal() - v.pow(2).sum(0) + self.log_noise.exp()
        return mean, var.clamp_min(1e-12)


def save_state(path, model, optimizer, scheduler, step):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "step": step}, path)


def load_state(path, model, optimizer, scheduler):
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    return state["step"] + 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default="data/battery/capacity.csv")
    ap.add_argument("--train-cells", type=int, default=30)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--lr", type=float, default=0.03)
    ap.add_argument("--state", default="runs/fade_gp_state.pt")
    ap.add_argument("--save-every", type=int, default=100)
    args = ap.parse_args()

    torch.manual_seed(0)
    cells = load_cells(args.csv)
    names = sorted(cells)
    train_names, test_names = names[: args.train_cells], names[args.train_cells:]
    q0 = {n: cells[n][1][0] for n in names}

    model = FadeGP()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=500, gamma=0.3)
    start = load_state(args.state, model, optimizer, scheduler) if os.path.exists(args.state) else 0
    os.makedirs(os.path.dirname(args.state) or ".", exist_ok=True)

    for step in range(start, args.steps):
        optimizer.zero_grad()
        loss = sum(model.nll(cells[n][0], cells[n][1] / q0[n]) for n in train_names) / len(train_names)
        loss.backward()
        optimizer.step()
        scheduler.step()
        if step % args.save_every == 0 or step == args.steps - 1:
            save_state(args.state, model, optimizer, scheduler, step)
            print(f"step {step}: mean NLL {loss.item():.4f}  length {model.log_len.exp().item():.1f} cycles")

    errors = []
    for n in test_names:
        t, y = cells[n]
        y = y / q0[n]
        k = max(2, t.numel() // 2)
        mean, _ = model.predict(t[:k], y[:k], t[k:])
        errors.append((mean - y[k:]).abs().mean().item())
    if errors:
        print(f"test cells: mean abs error of normalised capacity {sum(errors) / len(errors):.4f}")


if __name__ == "__main__":
    main()
