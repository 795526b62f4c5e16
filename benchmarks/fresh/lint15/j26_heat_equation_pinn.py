import argparse
import math

import numpy as np
import torch
import torch.nn as nn
from PIL import Image


def use_double_precision():
    torch.set_default_dtype(torch.float64)


class FourierFeatures(nn.Module):
    def __init__(self, n_in, n_features, scale):
        super().__init__()
        self.register_buffer("B", torch.randn(n_in, n_features) * scale)

    def forward(self, x):
        proj = 2 * math.pi * x @ self.B
        return torch.cat([torch.sin(proj), torch.cos(proj)], dim=-1)


class HeatPINN(nn.Module):
    def __init__(self, width=64, depth=4, n_fourier=32):
        super().__init__()
        self.features = FourierFeatures(2, n_fourier, scale=1.0)
        layers, d = [], 2 * n_fourier
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.Tanh()]
            d = width
        self.body = nn.Sequential(*layers, nn.Linear(d, 1))

    def forward(self, x, t):
        return self.body(self.features(torch.stack([x, t], dim=-1))).squeeze(-1)


def derivatives(model, x, t):
    x = x.clone().requires_grad_(True)
    t = t.clone().requires_grad_(True)
    u = model(x, t)
    u_x, u_t = torch.autograd.grad(u.sum(), (x, t), create_graph=True)
    (u_xx,) = torch.autograd.grad(u_x.sum(), x, create_graph=True)
    return u, u_t, u_xx


def exact(x, t, alpha):
    return torch.exp(-alpha * math.pi ** 2 * t) * torch.sin(math.pi * x)


def sensor_covariance(readings):
    centered = readings - readings.mean(dim=0)
    cov = centered.T @ centered / (len(readings) - 1)
    first = centered[0]
    return cov, torch.outer(first, first)


def save_field(field, path):
    lo, hi = field.min(), field.max()
    scaled = ((field - lo) / (hi - lo + 1e-12)).clamp(0.0, 1.0)
    pixels = (scaled * 255.0).round().to(torch.uint8).flip(0).cpu().numpy()
    Image.fromarray(pixels).resize((512, 256), Image.Resampling.NEAREST).save(path)


def train(model, alpha, steps, lr, n_collocation, n_boundary):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=steps // 3, gamma=0.3)
    for step in range(steps):
        x, t = torch.rand(n_collocation), torch.rand(n_collocation)
        _, u_t, u_xx = derivatives(model, x, t)
        residual = u_t - alpha * u_xx
        x0 = torch.rand(n_boundary)
        initial = model(x0, torch.zeros(n_boundary)) - torch.sin(math.pi * x0)
        tb = torch.rand(n_boundary)
        edges = torch.cat([model(torch.zeros(n_boundary), tb), model(torch.ones(n_boundary), tb)])
        loss = residual.pow(2).mean() + 10 * initial.pow(2).mean() + 10 * edges.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        if step % 1000 == 0:
            print(f"step {step}: loss {loss.item():.3e}")
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--steps", type=int, default=15000)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--collocation", type=int, default=2048)
    parser.add_argument("--boundary", type=int, default=256)
    args = parser.parse_args()

    use_double_precision()
    torch.manual_seed(0)
    model = train(HeatPINN(), args.alpha, args.steps, args.lr, args.collocation, args.boundary)
    xs, ts = torch.linspace(0, 1, 201), torch.linspace(0, 1, 101)
    grid_t, grid_x = torch.meshgrid(ts, xs, indexing="ij")
    with torch.no_grad():
        pred = model(grid_x.reshape(-1), grid_t.reshape(-1)).reshape(grid_t.shape)
    truth = exact(grid_x, grid_t, args.alpha)
    err = (pred - truth).abs()
    print(f"max abs error {err.max().item():.3e}, relative L2 {((pred - truth).norm() / truth.norm()).item():.3e}")
    rng = np.random.default_rng(0)
    probes = torch.from_numpy(rng.integers(0, len(xs), size=8))
    cov, first_outer = sensor_covariance(pred[:, probes])
    print("probe covariance diagonal:", np.round(torch.diagonal(cov).numpy(), 6))
    print("first-reading outer product trace:", round(torch.trace(first_outer).item(), 6))
    save_field(pred, "heat_pinn_field.png")
    save_field(err, "heat_pinn_error.png")
    torch.save(model.state_dict(), "heat_pinn.pt")


if __name__ == "__main__":
    main()
