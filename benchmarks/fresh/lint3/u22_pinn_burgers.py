"""Physics-informed network for the viscous Burgers equation u_t + u u_x = (0.01/pi) u_xx on [-1, 1] x [0, 1].

Adam warm-up, then L-BFGS, as in Raissi et al. (2019). Reference solution: data/burgers_shock.npz.
"""

import argparse
import logging
import math

import numpy as np
import torch
import torch.nn as nn

log = logging.getLogger("pinn")
NU = 0.01 / math.pi


class MLP(nn.Module):
    def __init__(self, width=20, depth=8):
        super().__init__()
        dims = [2] + [width] * depth + [1]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        for layer in self.layers:
            nn.init.xavier_normal_(layer.weight)
            nn.init.zeros_(layer.bias)

    def forward(self, x, t):
        h = torch.cat([x, t], dim=1)
        for layer in self.layers[:-1]:
            h = torch.tanh(layer(h))
        return self.layers[-1](h)


def grad(out, inp):
    return torch.autograd.grad(out, inp, grad_outputs=torch.ones_like(out), create_graph=True)[0]


def pde_residual(model, x, t):
    u = model(x, t)
    u_t, u_x = grad(u, t), grad(u, x)
    u_xx = grad(u_x, x)
    return u_t + u * u_x - NU * u_xx


def sample_points(n_f, n_b, gen):
    x_f = torch.rand(n_f, 1, generator=gen) * 2 - 1
    t_f = torch.rand(n_f, 1, generator=gen)
    x_0 = torch.rand(n_b, 1, generator=gen) * 2 - 1  # initial condition u(x, 0) = -sin(pi x)
    t_0 = torch.zeros(n_b, 1)
    u_0 = -torch.sin(math.pi * x_0)
    t_b = torch.rand(n_b, 1, generator=gen)  # boundaries u(+-1, t) = 0
    x_b = torch.where(torch.rand(n_b, 1, generator=gen) < 0.5, -1.0, 1.0)
    return x_f, t_f, torch.cat([x_0, x_b]), torch.cat([t_0, t_b]), torch.cat([u_0, torch.zeros(n_b, 1)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--adam-steps", type=int, default=5000)
    ap.add_argument("--lbfgs-iters", type=int, default=20000)
    ap.add_argument("--n-f", type=int, default=10000)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    gen = torch.Generator().manual_seed(1234)

    x_f, t_f, x_u, t_u, u_u = (p.to(device) for p in sample_points(args.n_f, 100, gen))
    x_f.requires_grad_(True)
    t_f.requires_grad_(True)
    model = MLP().to(device)

    def total_loss():
        loss_u = (model(x_u, t_u) - u_u).pow(2).mean()
        loss_f = pde_residual(model, x_f, t_f).pow(2).mean()
        return loss_u + loss_f, loss_u, loss_f

    adam = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(args.adam_steps):
        adam.zero_grad()
        loss, loss_u, loss_f = total_loss()
        loss.backward()
        adam.step()
        if step % 500 == 0:
            log.info("adam %d  loss %.3e (u %.3e, f %.3e)", step, loss.item(), loss_u.item(), loss_f.item())

    lbfgs = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=args.lbfgs_iters, history_size=50,
                              tolerance_grad=1e-9, tolerance_change=1e-12, line_search_fn="strong_wolfe")

    def closure():
        lbfgs.zero_grad()
        loss, _, _ = total_loss()
        loss.backward()
        return loss

    lbfgs.step(closure)
    log.info("after L-BFGS: loss %.3e", total_loss()[0].item())

    ref = np.load("data/burgers_shock.npz")
    X, T = np.meshgrid(ref["x"].ravel(), ref["t"].ravel(), indexing="ij")
    xs = torch.tensor(X.reshape(-1, 1), dtype=torch.float32, device=device)
    ts = torch.tensor(T.reshape(-1, 1), dtype=torch.float32, device=device)
    with torch.no_grad():
        u_pred = model(xs, ts).cpu().numpy().reshape(X.shape)
    err = np.linalg.norm(u_pred - ref["usol"]) / np.linalg.norm(ref["usol"])
    log.info("relative L2 error %.3e", err)
    torch.save(model.state_dict(), "pinn_burgers.pt")


if __name__ == "__main__":
    main()
