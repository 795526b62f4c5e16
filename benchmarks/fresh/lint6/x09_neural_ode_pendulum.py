"""Learn the vector field of a damped pendulum from noisy simulated trajectories.
The network f(theta, omega) is integrated with a fixed-step RK4 solver and trained by
matching whole rolled-out trajectories (a small neural ODE, no adjoint)."""

import math

import numpy as np
import torch
import torch.nn as nn

DT, STEPS = 0.05, 60
G_OVER_L, DAMPING = 9.81, 0.25


def simulate(n, rng):
    """Ground-truth trajectories (n, STEPS, 2) with the true dynamics, plus noise."""
    state = np.stack([rng.uniform(-math.pi / 2, math.pi / 2, n), rng.uniform(-1, 1, n)], axis=1)
    traj = [state]
    for _ in range(STEPS - 1):
        theta, omega = state[:, 0], state[:, 1]
        d = np.stack([omega, -G_OVER_L * np.sin(theta) - DAMPING * omega], axis=1)
        state = state + DT * d
        traj.append(state)
    traj = np.stack(traj, axis=1).astype(np.float32)
    return traj + rng.normal(0, 0.01, traj.shape).astype(np.float32)


class VectorField(nn.Module):
    def __init__(self, hidden=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, 2))

    def forward(self, state):
        return self.net(state)


def rk4_rollout(field, y0, steps, dt):
    ys = [y0]
    y = y0
    for _ in range(steps - 1):
        k1 = field(y)
        k2 = field(y + 0.5 * dt * k1)
        k3 = field(y + 0.5 * dt * k2)
        k4 = field(y + dt * k3)
        y = y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        ys.append(y)
    return torch.stack(ys, dim=1)  # (B, steps, 2)


def main():
    rng = np.random.default_rng(7)
    torch.manual_seed(7)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train = torch.from_numpy(simulate(2048, rng)).to(device)
    test = torch.from_numpy(simulate(256, rng)).to(device)

    field = VectorField().to(device)
    optimizer = torch.optim.Adam(field.parameters(), lr=3e-3)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=400)
    batch = 128
    for epoch in range(400):
        field.train()
        perm = torch.randperm(train.size(0), device=device)
        epoch_loss = 0.0
        for i in range(0, train.size(0), batch):
            traj = train[perm[i:i + batch]]
            horizon = min(STEPS, 10 + epoch // 10)  # curriculum: lengthen the rollout
            pred = rk4_rollout(field, traj[:, 0], horizon, DT)
            loss = nn.functional.mse_loss(pred, traj[:, :horizon])
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(field.parameters(), 1.0)
            optimizer.step()
            epoch_loss += loss.item() * traj.size(0)
        scheduler.step()

        if epoch % 20 == 0:
            field.eval()
            with torch.no_grad():
                rollout = rk4_rollout(field, test[:, 0], STEPS, DT)
                test_mse = nn.functional.mse_loss(rollout, test).item()
            print(f"epoch {epoch}: train {epoch_loss / train.size(0):.5f} test rollout MSE {test_mse:.5f}")

    torch.save(field.state_dict(), "pendulum_field.pt")


if __name__ == "__main__":
    main()
