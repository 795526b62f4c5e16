"""PPO (clipped objective, GAE) on a NumPy re-implementation of the classic Pendulum swing-up.

Observations are normalised with running statistics collected during the rollouts.
"""
import math

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Normal

SEED = 3
TOTAL_STEPS = 300_000
ROLLOUT = 2048
EPOCHS = 10
MINIBATCH = 64
GAMMA, LAM, CLIP = 0.99, 0.95, 0.2
LR = 3e-4
ENT_COEF = 0.001
CKPT = "ppo_pendulum.pt"


class Pendulum:
    max_speed, max_torque, dt, g = 8.0, 2.0, 0.05, 10.0

    def __init__(self, rng):
        self.rng = rng

    def _obs(self):
        return np.array([math.cos(self.th), math.sin(self.th), self.thdot], dtype=np.float32)

    def reset(self):
        self.th, self.thdot, self.t = self.rng.uniform(-math.pi, math.pi), self.rng.uniform(-1, 1), 0
        return self._obs()

    def step(self, u):
        u = float(np.clip(u, -self.max_torque, self.max_torque))
        angle = ((self.th + math.pi) % (2 * math.pi)) - math.pi
        cost = angle ** 2 + 0.1 * self.thdot ** 2 + 0.001 * u ** 2
        self.thdot = np.clip(self.thdot + (3 * self.g / 2 * math.sin(self.th) + 3.0 * u) * self.dt,
                             -self.max_speed, self.max_speed)
        self.th += self.thdot * self.dt
        self.t += 1
        return self._obs(), -cost, self.t >= 200


class RunningNorm(nn.Module):
    def __init__(self, dim, clip=5.0):
        super().__init__()
        self.mean = torch.zeros(dim)
        self.var = torch.ones(dim)
        self.count = 1e-4
        self.clip = clip

    @torch.no_grad()
    def update(self, batch):
        b_mean, b_var, n = batch.mean(0), batch.var(0, unbiased=False), batch.shape[0]
        delta, total = b_mean - self.mean, self.count + n
        self.mean = self.mean + delta * n / total
        self.var = (self.var * self.count + b_var * n + delta ** 2 * self.count * n / total) / total
        self.count = total

    def forward(self, x):
        return ((x - self.mean) / torch.sqrt(self.var + 1e-8)).clamp(-self.clip, self.clip)


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.norm = RunningNorm(obs_dim)
        self.pi = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, act_dim))
        self.v = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))
        self.log_std = nn.Parameter(torch.zeros(act_dim))

    def forward(self, obs):
        z = self.norm(obs)
        return Normal(self.pi(z), self.log_std.exp()), self.v(z).squeeze(-1)


def collect(env, agent, obs):
    buf = {k: [] for k in ("obs", "act", "logp", "rew", "done", "val")}
    for _ in range(ROLLOUT):
        o = torch.as_tensor(obs)
        with torch.no_grad():
            dist, v = agent(o)
            a = dist.sample()
        nxt, r, done = env.step(a.item() * 2.0)
        for k, x in zip(buf, (o, a, dist.log_prob(a).sum(), r, done, v)):
            buf[k].append(x)
        obs = env.reset() if done else nxt
    with torch.no_grad():
        last_v = agent(torch.as_tensor(obs))[1]
    return {k: torch.stack(v) if k in ("obs", "act", "logp", "val") else torch.tensor(v, dtype=torch.float32)
            for k, v in buf.items()}, last_v, obs


def gae(rew, done, val, last_v):
    adv, running = torch.zeros_like(rew), 0.0
    for t in reversed(range(len(rew))):
        nxt = last_v if t == len(rew) - 1 else val[t + 1]
        delta = rew[t] + GAMMA * nxt * (1 - done[t]) - val[t]
        running = delta + GAMMA * LAM * (1 - done[t]) * running
        adv[t] = running
    return adv, adv + val


def main():
    rng = np.random.default_rng(SEED)
    torch.manual_seed(SEED)
    env, agent = Pendulum(rng), ActorCritic(3, 1)
    opt = torch.optim.Adam(agent.parameters(), lr=LR, eps=1e-5)
    obs = env.reset()
    for it in range(TOTAL_STEPS // ROLLOUT):
        batch, last_v, obs = collect(env, agent, obs)
        agent.norm.update(batch["obs"])
        adv, ret = gae(batch["rew"], batch["done"], batch["val"], last_v)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        for _ in range(EPOCHS):
            for idx in torch.randperm(ROLLOUT).split(MINIBATCH):
                dist, v = agent(batch["obs"][idx])
                ratio = (dist.log_prob(batch["act"][idx]).sum(-1) - batch["logp"][idx]).exp()
                surr = torch.min(ratio * adv[idx], ratio.clamp(1 - CLIP, 1 + CLIP) * adv[idx])
                loss = -surr.mean() + 0.5 * (v - ret[idx]).pow(2).mean() - ENT_COEF * dist.entropy().mean()
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                opt.step()
        if it % 10 == 0:
            print(f"iter {it:4d} mean reward/step {batch['rew'].mean().item():.3f}")
    torch.save(agent.state_dict(), CKPT)


def evaluate(episodes=10):
    agent = ActorCritic(3, 1)
    agent.load_state_dict(torch.load(CKPT, weights_only=True))
    env, returns = Pendulum(np.random.default_rng(SEED + 1)), []
    for _ in range(episodes):
        obs, done, total = env.reset(), False, 0.0
        while not done:
            with torch.no_grad():
                mean_action = agent(torch.as_tensor(obs))[0].mean
            obs, r, done = env.step(mean_action.item() * 2.0)
            total += r
        returns.append(total)
    print(f"deterministic return {np.mean(returns):.1f} +- {np.std(returns):.1f}")


if __name__ == "__main__":
    main()
    evaluate()
