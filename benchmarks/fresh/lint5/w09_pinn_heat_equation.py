"""Physics-informed network for the 1-D heat equation u_t = alpha * u_xx on [0, 1] x [0, T].

u(x, 0) = sin(pi x), u(0, t) = u(1, t) = 0; exact solution exp(-alpha pi^2 t) sin(pi x).
"""

import math

import torch
import torch.nn as nn

ALPHA = 0.1
T_END = 1.0
torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self, width=64, depth=5):
        super().__init__()
        layers = [nn.Linear(2, width), nn.Tanh()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.Tanh()]
        layers.append(nn.Linear(width, 1))
        self.net = nn.Sequential(*layers)
        for m in self.net:
            if isinstance(m, nn.Linear):
                nn.init.xavier_normal_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x, t):
        return self.net(torch.cat([x, t], dim=1))


def sample_interior(n, device):
    x = torch.rand(n, 1, device=device).requires_grad_(True)
    t = (torch.rand(n, 1, device=device) * T_END).requires_grad_(True)
    return x, t


def pde_residual(model, x, t):
    u = model(x, t)
    ones = torch.ones_like(u)
    u_t, u_x = torch.autograd.grad(u, (t, x), grad_outputs=ones, create_graph=True)
    u_xx = torch.autograd.grad(u_x, x, grad_outputs=torch.ones_like(u_x), create_graph=True)[0]
    return u_t - ALPHA * u_xx


def boundary_and_initial(n, device):
    x0 = torch.rand(n, 1, device=device)
    t0 = torch.zeros(n, 1, device=device)
    tb = torch.rand(n, 1, device=device) * T_END
    xb = torch.randint(0, 2, (n, 1), device=device).float()
    return (x0, t0, torch.sin(math.pi * x0)), (xb, tb, torch.zeros(n, 1, device=device))


def total_loss(model, device, n_int=4096, n_bc=512):
    x, t = sample_interior(n_int, device)
    (x0, t0, u0), (xb, tb, ub) = boundary_and_initial(n_bc, device)
    l_pde = pde_residual(model, x, t).pow(2).mean()
    l_ic = (model(x0, t0) - u0).pow(2).mean()
    l_bc = (model(xb, tb) - ub).pow(2).mean()
    return l_pde + 10.0 * (l_ic + l_bc), (l_pde.item(), l_ic.item(), l_bc.item())


def relative_l2(model, device, n=201):
    xs = torch.linspace(0, 1, n, device=device)
    ts = torch.linspace(0, T_END, n, device=device)
    X, Tm = torch.meshgrid(xs, ts, indexing="ij")
    x, t = X.reshape(-1, 1), Tm.reshape(-1, 1)
    exact = torch.exp(-ALPHA * math.pi ** 2 * t) * torch.sin(math.pi * x)
    with torch.no_grad():
        pred = model(x, t)
    return (torch.linalg.vector_norm(pred - exact) / torch.linalg.vector_norm(exact)).item()


def fit(device="cuda" if torch.cuda.is_available() else "cpu", adam_steps=8000, lbfgs_steps=500):
    model = MLP().to(device)
    adam = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(adam, step_size=2000, gamma=0.5)
    history = []
    for step in range(adam_steps):
        adam.zero_grad()
        loss, parts = total_loss(model, device)
        loss.backward()
        adam.step()
        sched.step()
        history.append(loss.item())
        if step % 1000 == 0:
            print(f"adam {step:5d}  loss {history[-1]:.3e}  pde/ic/bc {parts}  relL2 {relative_l2(model, device):.3e}")

    lbfgs = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=lbfgs_steps, line_search_fn="strong_wolfe")
    fixed_batch_seed = torch.seed()

    def closure():
        torch.manual_seed(fixed_batch_seed)
        lbfgs.zero_grad()
        loss, _ = total_loss(model, device)
        loss.backward()
        return loss

    lbfgs.step(closure)
    print(f"after L-BFGS: relL2 {relative_l2(model, device):.3e}")
    torch.save(model.state_dict(), "pinn_heat.pt")
    return model, history


if __name__ == "__main__":
    fit()
