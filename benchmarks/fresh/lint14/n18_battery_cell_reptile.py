import argparse
import copy
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def parse_args():
    p = argparse.ArgumentParser(description="Few-shot capacity-fade regression across battery cells")
    p.add_argument("--cells", default="data/battery/cells")
    p.add_argument("--warmup-steps", type=int, default=2000)
    p.add_argument("--meta-steps", type=int, default=20000)
    p.add_argument("--inner-steps", type=int, default=8)
    p.add_argument("--inner-lr", type=float, default=0.02)
    p.add_argument("--meta-lr", type=float, default=1e-3)
    p.add_argument("--shots", type=int, default=10)
    p.add_argument("--seed", type=int, default=8)
    p.add_argument("--out", default="runs/battery_reptile")
    return p.parse_args()


def load_cells(folder):
    cells = []
    for path in sorted(Path(folder).glob("*.npz")):
        with np.load(path) as d:
            cells.append((torch.from_numpy(d["features"].astype(np.float32)),
                          torch.from_numpy(d["soh"].astype(np.float32))))
    return cells


def standardise(cells, train_ids):
    stacked = torch.cat([cells[i][0] for i in train_ids])
    mean, std = stacked.mean(0), stacked.std(0) + 1e-6
    return [((x - mean) / std, y) for x, y in cells], mean, std


class FadeRegressor(nn.Module):
    def __init__(self, features, hidden=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(features, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def sample_task(cell, shots, generator):
    x, y = cell
    idx = torch.randperm(len(x), generator=generator)
    return (x[idx[:shots]], y[idx[:shots]]), (x[idx[shots:shots * 3]], y[idx[shots:shots * 3]])


def adapt(model, support, steps, lr):
    fast = copy.deepcopy(model)
    inner = torch.optim.SGD(fast.parameters(), lr=lr)
    for _ in range(steps):
        loss = F.mse_loss(fast(support[0]), support[1])
        inner.zero_grad()
        loss.backward()
        inner.step()
    return fast


def outer_update(model, fast, meta_opt):
    meta_opt.zero_grad()
    for slow_p, fast_p in zip(model.parameters(), fast.parameters()):
        slow_p.grad.add_(slow_p.detach() - fast_p.detach())
    meta_opt.step()


def warm_start(model, cells, train_ids, steps, lr):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    x = torch.cat([cells[i][0] for i in train_ids])
    y = torch.cat([cells[i][1] for i in train_ids])
    for _ in range(steps):
        idx = torch.randint(0, len(x), (256,))
        loss = F.mse_loss(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()


def evaluate(model, cells, ids, args, generator):
    errors = []
    for i in ids:
        support, query = sample_task(cells[i], args.shots, generator)
        fast = adapt(model, support, args.inner_steps, args.inner_lr)
        with torch.no_grad():
            errors.append((fast(query[0]) - query[1]).abs().mean().item())
    return float(np.mean(errors))


def main():
    args = parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    cells = load_cells(args.cells)
    ids = list(range(len(cells)))
    random.shuffle(ids)
    test_ids, train_ids = ids[:len(ids) // 5], ids[len(ids) // 5:]
    cells, mean, std = standardise(cells, train_ids)
    model = FadeRegressor(cells[0][0].size(1))
    warm_start(model, cells, train_ids, args.warmup_steps, args.meta_lr)
    meta_opt = torch.optim.Adam(model.parameters(), lr=args.meta_lr)
    for step in range(args.meta_steps):
        cell = cells[random.choice(train_ids)]
        support, _ = sample_task(cell, args.shots, generator)
        fast = adapt(model, support, args.inner_steps, args.inner_lr)
        outer_update(model, fast, meta_opt)
        if step % 1000 == 0:
            print(f"meta step {step:05d} test-cell MAE {evaluate(model, cells, test_ids, args, generator):.4f}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict(), "mean": mean, "std": std}, out / "reptile.pt")


if __name__ == "__main__":
    main()
