import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal


@dataclass
class PlannerConfig:
    horizon: int = 15
    candidates: int = 400
    elites: int = 40
    iterations: int = 5
    max_torque: float = 2.0
    random_episodes: int = 30
    episode_len: int = 200
    model_epochs: int = 60
    seed: int = 0


class Pendulum:
    def __init__(self, rng, dt=0.05, g=9.81, m=1.0, length=1.0):
        self.rng, self.dt, self.g, self.m, self.l = rng, dt, g, m, length

    def reset(self):
        self.theta = self.rng.uniform(-math.pi, math.pi)
        self.omega = self.rng.uniform(-1.0, 1.0)
        return self.observe()

    def observe(self):
        return np.array([math.cos(self.theta), math.sin(self.theta), self.omega], dtype=np.float32)

    def step(self, torque):
        torque = float(np.clip(torque, -2.0, 2.0))
        acc = 3 * self.g / (2 * self.l) * math.sin(self.theta) + 3.0 / (self.m * self.l ** 2) * torque
        self.omega = float(np.clip(self.omega + acc * self.dt, -8.0, 8.0))
        self.theta = self.theta + self.omega * self.dt
        angle = (self.theta + math.pi) % (2 * math.pi) - math.pi
        return self.observe(), -(angle ** 2 + 0.1 * self.omega ** 2 + 0.001 * torque ** 2)


class Dynamics(nn.Module):
    def __init__(self, obs_dim=3, act_dim=1, hidden=200):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + act_dim, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
                                 nn.Linear(hidden, obs_dim))

    def forward(self, obs, act):
        return obs + self.net(torch.cat([obs, act], dim=-1))


def predicted_return(obs, actions):
    cos, sin, omega = obs.unbind(-1)
    angle = torch.atan2(sin, cos)
    return -(angle ** 2 + 0.1 * omega ** 2 + 0.001 * actions.squeeze(-1) ** 2)


class CEMPlanner:
    def __init__(self, model, cfg):
        self.model, self.cfg = model, cfg

    @torch.no_grad()
    def act(self, obs):
        cfg = self.cfg
        mu = torch.zeros(cfg.horizon, 1)
        sigma = torch.full((cfg.horizon, 1), cfg.max_torque)
        for _ in range(cfg.iterations):
            plans = Normal(mu, sigma).sample_n(cfg.candidates).clamp(-cfg.max_torque, cfg.max_torque)
            state = torch.as_tensor(obs).expand(cfg.candidates, -1)
            total = torch.zeros(cfg.candidates)
            for t in range(cfg.horizon):
                state = self.model(state, plans[:, t])
                total += predicted_return(state, plans[:, t])
            elite = plans[total.topk(cfg.elites).indices]
            mu, sigma = elite.mean(0), elite.std(0) + 1e-3
        return mu[0].item()


def collect(env, policy, episodes, length):
    rows = []
    for _ in range(episodes):
        obs = env.reset()
        for _ in range(length):
            a = policy(obs)
            nxt, _ = env.step(a)
            rows.append((obs, a, nxt))
            obs = nxt
    obs, act, nxt = zip(*rows)
    return torch.tensor(np.array(obs)), torch.tensor(act, dtype=torch.float32)[:, None], torch.tensor(np.array(nxt))


def fit_dynamics(model, data, epochs, batch=256):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    obs, act, nxt = data
    for _ in range(epochs):
        for idx in torch.randperm(len(obs)).split(batch):
            loss = F.mse_loss(model(obs[idx], act[idx]), nxt[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return loss.item()


def main(cfg=PlannerConfig()):
    rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)
    env = Pendulum(rng)
    data = collect(env, lambda _: rng.uniform(-cfg.max_torque, cfg.max_torque), cfg.random_episodes, cfg.episode_len)
    model = Dynamics()
    print(f"dynamics mse {fit_dynamics(model, data, cfg.model_epochs):.5f}")
    model.eval()
    planner = CEMPlanner(model, cfg)
    for episode in range(3):
        obs, ret = env.reset(), 0.0
        for _ in range(cfg.episode_len):
            obs, reward = env.step(planner.act(obs))
            ret += reward
        print(f"episode {episode}: return {ret:.1f}")


if __name__ == "__main__":
    main()
