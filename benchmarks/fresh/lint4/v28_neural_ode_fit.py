"""Fit a neural ODE to measured predator-prey population trajectories.

The right-hand side is known Lotka-Volterra structure plus a small MLP correction; the
integrator is a fixed-step RK4 written out in torch, so gradients flow through it directly.
Some sensor readings are missing (NaN) or exactly zero (extinct populations).
"""

import numpy as np
import torch
from torch import nn

DT, SUBSTEPS = 0.1, 4


class HybridRHS(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.log_rates = nn.Parameter(torch.log(torch.tensor([1.0, 0.1, 1.5, 0.075])))
        self.correction = nn.Sequential(nn.Linear(2, hidden), nn.Tanh(), nn.Linear(hidden, 2))
        nn.init.zeros_(self.correction[-1].weight)
        nn.init.zeros_(self.correction[-1].bias)

    def forward(self, y):
        a, b, c, d = self.log_rates.exp()
        prey, pred = y[..., 0], y[..., 1]
        lv = torch.stack([a * prey - b * prey * pred, d * prey * pred - c * pred], dim=-1)
        return lv + self.correction(torch.log1p(y.clamp(min=0)))


def rk4(f, y0, n_steps, dt=DT / SUBSTEPS):
    ys, y = [y0], y0
    for i in range(n_steps * SUBSTEPS):
        k1 = f(y)
        k2 = f(y + 0.5 * dt * k1)
        k3 = f(y + 0.5 * dt * k2)
        k4 = f(y + dt * k3)
        y = y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        if (i + 1) % SUBSTEPS == 0:
            ys.append(y)
    return torch.stack(ys, dim=-2)


def relative_error(pred, obs, floor=1.0):
    """Relative squared error where a reading exists; entries with no reading contribute 0."""
    valid = ~torch.isnan(obs)
    obs_safe = torch.where(valid, obs, torch.ones_like(obs))
    scale = torch.where(valid, obs_safe.abs() + floor, torch.ones_like(obs))
    err = torch.where(valid, (pred - obs_safe) / scale, torch.zeros_like(pred))
    return err.pow(2).sum() / valid.sum().clamp(min=1)


def fit(path="data/lynx_hare_sites.npz", epochs=3000, lr=3e-3):
    blob = np.load(path)
    obs = torch.as_tensor(blob["populations"], dtype=torch.float32)  # (sites, time, 2)
    y0 = torch.nan_to_num(obs[:, 0], nan=1.0)
    n_steps = obs.shape[1] - 1

    rhs = HybridRHS()
    opt = torch.optim.Adam(rhs.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    for epoch in range(epochs):
        opt.zero_grad()
        traj = rk4(rhs, y0, n_steps)
        loss = relative_error(traj, obs)
        loss.backward()
        grad_norm = nn.utils.clip_grad_norm_(rhs.parameters(), 5.0)
        opt.step()
        sched.step()
        if epoch % 250 == 0:
            rates = rhs.log_rates.exp().tolist()
            print(f"{epoch:5d} loss {loss.item():.5f} |g| {grad_norm:.3f} rates "
                  + " ".join(f"{r:.3f}" for r in rates))

    torch.save(rhs.state_dict(), "hybrid_lv.pt")
    with torch.no_grad():
        forecast = rk4(rhs, obs[:, -1].nan_to_num(1.0), 50)
    np.save("forecast.npy", forecast.numpy())


if __name__ == "__main__":
    fit()
