"""Physics-informed network for the 2-D heat equation u_t = k (u_xx + u_yy) on the unit square,
u = 0 on the boundary, u(x, y, 0) = sin(pi x) sin(pi y). Deep residual MLP with activation
checkpointing so that large collocation batches fit in memory."""
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


@dataclass
class Config:
    kappa: float = 0.1
    width: int = 256
    depth: int = 8
    n_interior: int = 16384
    n_boundary: int = 4096
    n_initial: int = 4096
    steps: int = 20000
    lr: float = 1e-3
    checkpointing: bool = True


class ResBlock(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.l1, self.l2 = nn.Linear(width, width), nn.Linear(width, width)

    def forward(self, h):
        return h + torch.tanh(self.l2(torch.tanh(self.l1(h))))


class HeatPINN(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.inp = nn.Linear(3, cfg.width)
        self.blocks = nn.ModuleList(ResBlock(cfg.width) for _ in range(cfg.depth))
        self.out = nn.Linear(cfg.width, 1)
        self.use_ckpt = cfg.checkpointing

    def forward(self, xyt):
        h = torch.tanh(self.inp(xyt))
        for block in self.blocks:
            if self.use_ckpt and self.training:
                h = checkpoint(block, h)
            else:
                h = block(h)
        return self.out(h).squeeze(-1)


def grad(out, wrt):
    return torch.autograd.grad(out, wrt, grad_outputs=torch.ones_like(out), create_graph=True)[0]


def pde_residual(model, xyt, kappa):
    u = model(xyt)
    du = grad(u, xyt)
    u_xx = grad(du[:, 0], xyt)[:, 0]
    u_yy = grad(du[:, 1], xyt)[:, 1]
    return du[:, 2] - kappa * (u_xx + u_yy)


def sample_boundary(n, device):
    pts = torch.rand(n, 3, device=device)
    side = torch.randint(0, 4, (n,), device=device)
    pts[:, 0] = torch.where(side == 0, 0.0, torch.where(side == 1, 1.0, pts[:, 0]))
    pts[:, 1] = torch.where(side == 2, 0.0, torch.where(side == 3, 1.0, pts[:, 1]))
    return pts


def exact(xyt, kappa):
    x, y, t = xyt.unbind(dim=1)
    return torch.sin(math.pi * x) * torch.sin(math.pi * y) * torch.exp(-2 * math.pi**2 * kappa * t)


def train(cfg=Config()):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = HeatPINN(cfg).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9998)
    for step in range(cfg.steps):
        model.train()
        interior = torch.rand(cfg.n_interior, 3, device=device).requires_grad_(True)
        boundary = sample_boundary(cfg.n_boundary, device)
        initial = torch.rand(cfg.n_initial, 3, device=device)
        initial[:, 2] = 0.0
        loss_pde = pde_residual(model, interior, cfg.kappa).pow(2).mean()
        loss_bc = model(boundary).pow(2).mean()
        loss_ic = (model(initial) - exact(initial, cfg.kappa)).pow(2).mean()
        loss = loss_pde + 10.0 * loss_bc + 10.0 * loss_ic
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        if step % 1000 == 0:
            model.eval()
            with torch.no_grad():
                test = torch.rand(8192, 3, device=device)
                rel = (model(test) - exact(test, cfg.kappa)).norm() / exact(test, cfg.kappa).norm()
            print(f"step {step}: pde {loss_pde.item():.2e} bc {loss_bc.item():.2e} ic {loss_ic.item():.2e} "
                  f"rel L2 {rel.item():.3e}")
    torch.save(model.state_dict(), "heat_pinn.pt")
    return model


if __name__ == "__main__":
    train()
