"""Physics-informed network for the 1-D heat equation u_t = alpha * u_xx on x in [0, 1], t in [0, 1].

u(x, 0) = sin(pi x), u(0, t) = u(1, t) = 0; exact solution sin(pi x) exp(-alpha pi^2 t).
"""
import argparse
import math

import torch
import torch.nn as nn


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--alpha", type=float, default=0.1)
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--steps", type=int, default=20000)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--n-interior", type=int, default=4096)
    p.add_argument("--n-boundary", type=int, default=512)
    p.add_argument("--bc-weight", type=float, default=10.0)
    return p.parse_args()


class ResidualTanhBlock(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.lin1 = nn.Linear(width, width)
        self.lin2 = nn.Linear(width, width)

    def forward(self, h):
        return h + torch.tanh(self.lin2(torch.tanh(self.lin1(h))))


class HeatPINN(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.lift = nn.Linear(2, width)
        self.blocks = [ResidualTanhBlock(width) for _ in range(depth)]
        self.readout = nn.Linear(width, 1)

    def forward(self, x, t):
        h = torch.tanh(self.lift(torch.cat([2 * x - 1, 2 * t - 1], dim=1)))
        for block in self.blocks:
            h = block(h)
        return self.readout(h)


def pde_residual(model, x, t, alpha):
    u = model(x, t)
    u_x, u_t = torch.autograd.grad(u.sum(), (x, t), create_graph=True)
    u_xx = torch.autograd.grad(u_x.sum(), x, create_graph=True)[0]
    return u_t - alpha * u_xx


def sample_points(n_int, n_bnd, device):
    x = torch.rand(n_int, 1, device=device, requires_grad=True)
    t = torch.rand(n_int, 1, device=device, requires_grad=True)
    x0 = torch.rand(n_bnd, 1, device=device)
    t_b = torch.rand(n_bnd, 1, device=device)
    x_b = torch.randint(0, 2, (n_bnd, 1), device=device).float()
    return (x, t), (x0, torch.zeros_like(x0)), (x_b, t_b)


def exact(x, t, alpha):
    return torch.sin(math.pi * x) * torch.exp(-alpha * math.pi**2 * t)


@torch.no_grad()
def relative_l2(model, alpha, device, n=201):
    grid = torch.linspace(0, 1, n, device=device)
    x, t = torch.meshgrid(grid, grid, indexing="ij")
    x, t = x.reshape(-1, 1), t.reshape(-1, 1)
    u_hat, u = model(x, t), exact(x, t, alpha)
    return (torch.linalg.vector_norm(u_hat - u) / torch.linalg.vector_norm(u)).item()


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = HeatPINN(args.width, args.depth).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9998)
    for step in range(args.steps):
        (x, t), (x0, t0), (x_b, t_b) = sample_points(args.n_interior, args.n_boundary, device)
        loss_pde = pde_residual(model, x, t, args.alpha).pow(2).mean()
        loss_ic = (model(x0, t0) - torch.sin(math.pi * x0)).pow(2).mean()
        loss_bc = model(x_b, t_b).pow(2).mean()
        loss = loss_pde + args.bc_weight * (loss_ic + loss_bc)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 1000 == 0:
            print(f"step {step:5d}  pde {loss_pde.item():.2e}  ic {loss_ic.item():.2e}  bc {loss_bc.item():.2e}  "
                  f"rel L2 {relative_l2(model, args.alpha, device):.3e}")
    torch.save(model.state_dict(), "heat_pinn.pt")
    print(f"final relative L2 error: {relative_l2(model, args.alpha, device):.3e}")


if __name__ == "__main__":
    main()
