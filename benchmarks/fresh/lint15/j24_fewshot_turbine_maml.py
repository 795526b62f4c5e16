import argparse
import glob
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.stateless import functional_call


def load_turbine(path):
    table = np.genfromtxt(path, delimiter=",", names=True)
    ok = ~np.isnan(table["wind_speed"]) & ~np.isnan(table["power_kw"])
    speed = table["wind_speed"][ok].astype(np.float32)
    direction = np.deg2rad(table["wind_dir"][ok]).astype(np.float32)
    density = table["air_density"][ok].astype(np.float32)
    x = np.stack([speed / 25.0, np.sin(direction), np.cos(direction), density - 1.225], axis=1)
    y = table["power_kw"][ok].astype(np.float32) / table["rated_kw"][0]
    return torch.from_numpy(x), torch.from_numpy(y)


class PowerCurve(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, 1))

    def forward(self, x):
        return torch.sigmoid(self.net(x)).squeeze(-1)


def sample_task(turbine, k_support, k_query, rng):
    x, y = turbine
    idx = torch.from_numpy(rng.choice(len(x), k_support + k_query, replace=False))
    return (x[idx[:k_support]], y[idx[:k_support]]), (x[idx[k_support:]], y[idx[k_support:]])


def adapt(model, params, support, inner_lr, steps, second_order):
    xs, ys = support
    for _ in range(steps):
        loss = F.mse_loss(functional_call(model, params, (xs,)), ys)
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=second_order)
        params = {name: p - inner_lr * g for (name, p), g in zip(params.items(), grads)}
    return params


def meta_step(model, meta_opt, tasks, args):
    meta_opt.zero_grad()
    total = 0.0
    for support, query in tasks:
        params = dict(model.named_parameters())
        fast = adapt(model, params, support, args.inner_lr, args.inner_steps, args.second_order)
        loss = F.mse_loss(functional_call(model, fast, (query[0],)), query[1]) / len(tasks)
        loss.backward()
        total += loss.item()
    meta_opt.step()
    return total


def evaluate(model, turbines, args, rng, episodes=50):
    before, after = [], []
    for _ in range(episodes):
        support, query = sample_task(rng.choice(turbines), args.k_support, 200, np.random.default_rng(rng.randrange(2 ** 31)))
        params = {n: p.detach().requires_grad_() for n, p in model.named_parameters()}
        fast = adapt(model, params, support, args.inner_lr, args.inner_steps * 2, False)
        with torch.no_grad():
            before.append(F.mse_loss(model(query[0]), query[1]).item())
            after.append(F.mse_loss(functional_call(model, fast, (query[0],)), query[1]).item())
    return float(np.sqrt(np.mean(before))), float(np.sqrt(np.mean(after)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data/scada/turbine_*.csv")
    parser.add_argument("--k-support", type=int, default=10)
    parser.add_argument("--k-query", type=int, default=40)
    parser.add_argument("--meta-batch", type=int, default=8)
    parser.add_argument("--inner-lr", type=float, default=0.05)
    parser.add_argument("--inner-steps", type=int, default=5)
    parser.add_argument("--second-order", action="store_true")
    parser.add_argument("--iterations", type=int, default=5000)
    args = parser.parse_args()

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    turbines = [load_turbine(p) for p in sorted(glob.glob(args.data))]
    random.Random(0).shuffle(turbines)
    held_out, training = turbines[:4], turbines[4:]
    model = PowerCurve()
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for it in range(1, args.iterations + 1):
        tasks = [sample_task(training[rng.integers(len(training))], args.k_support, args.k_query, rng)
                 for _ in range(args.meta_batch)]
        loss = meta_step(model, meta_opt, tasks, args)
        if it % 500 == 0:
            rmse_before, rmse_after = evaluate(model, held_out, args, random.Random(it))
            print(f"iter {it}: meta loss {loss:.4f} held-out RMSE {rmse_before:.4f} -> {rmse_after:.4f}")
    torch.save(model.state_dict(), "turbine_maml_init.pt")


if __name__ == "__main__":
    main()
