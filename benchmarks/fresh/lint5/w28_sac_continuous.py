"""Soft actor-critic for continuous control (HalfCheetah-v4), twin critics and learned temperature."""

import copy

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal


def mlp(inp, out, hidden=256):
    return nn.Sequential(nn.Linear(inp, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, out))


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim, act_limit):
        super().__init__()
        self.net = mlp(obs_dim, 2 * act_dim)
        self.act_limit = act_limit

    def forward(self, obs, deterministic=False):
        mu, log_std = self.net(obs).chunk(2, dim=-1)
        std = log_std.clamp(-20, 2).exp()
        dist = Normal(mu, std)
        u = mu if deterministic else dist.rsample()
        a = torch.tanh(u)
        logp = dist.log_prob(u).sum(-1) - (2 * (np.log(2) - u - F.softplus(-2 * u))).sum(-1)
        return a * self.act_limit, logp


class TwinQ(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.q1, self.q2 = mlp(obs_dim + act_dim, 1), mlp(obs_dim + act_dim, 1)

    def forward(self, obs, act):
        x = torch.cat([obs, act], dim=-1)
        return self.q1(x).squeeze(-1), self.q2(x).squeeze(-1)


class Replay:
    def __init__(self, obs_dim, act_dim, size=1_000_000):
        self.o, self.a = np.zeros((size, obs_dim), np.float32), np.zeros((size, act_dim), np.float32)
        self.r, self.o2, self.d = np.zeros(size, np.float32), np.zeros((size, obs_dim), np.float32), np.zeros(size, np.float32)
        self.ptr, self.n, self.size = 0, 0, size

    def add(self, o, a, r, o2, d):
        self.o[self.ptr], self.a[self.ptr], self.r[self.ptr], self.o2[self.ptr], self.d[self.ptr] = o, a, r, o2, d
        self.ptr, self.n = (self.ptr + 1) % self.size, min(self.n + 1, self.size)

    def sample(self, batch, device):
        idx = np.random.randint(0, self.n, size=batch)
        return [torch.as_tensor(x[idx], device=device) for x in (self.o, self.a, self.r, self.o2, self.d)]


def train(steps=1_000_000, start=10_000, batch=256, gamma=0.99, tau=0.005, device="cuda"):
    env = gym.make("HalfCheetah-v4")
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    actor = Actor(obs_dim, act_dim, float(env.action_space.high[0])).to(device)
    critic = TwinQ(obs_dim, act_dim).to(device)
    critic_targ = copy.deepcopy(critic).requires_grad_(False)
    log_alpha = torch.zeros(1, device=device, requires_grad=True)
    pi_opt = torch.optim.Adam(actor.parameters(), lr=3e-4)
    q_opt = torch.optim.Adam(critic.parameters(), lr=3e-4)
    alpha_opt = torch.optim.Adam([log_alpha], lr=3e-4)
    buf, target_entropy = Replay(obs_dim, act_dim), -float(act_dim)
    o, _ = env.reset(seed=0)
    for t in range(steps):
        if t < start:
            a = env.action_space.sample()
        else:
            with torch.no_grad():
                a = actor(torch.as_tensor(o, dtype=torch.float32, device=device))[0].cpu().numpy()
        o2, r, term, trunc, _ = env.step(a)
        buf.add(o, a, r, o2, float(term))
        o = env.reset()[0] if term or trunc else o2
        if t < start:
            continue
        ob, ab, rb, o2b, db = buf.sample(batch, device)
        alpha = log_alpha.exp().detach()
        with torch.no_grad():
            a2, logp2 = actor(o2b)
            backup = rb + gamma * (1 - db) * (torch.min(*critic_targ(o2b, a2)) - alpha * logp2)
        q1, q2 = critic(ob, ab)
        q_loss = F.mse_loss(q1, backup) + F.mse_loss(q2, backup)
        q_opt.zero_grad()
        q_loss.backward()
        q_opt.step()
        pi, logp = actor(ob)
        pi_loss = (alpha * logp - torch.min(*critic(ob, pi))).mean()
        pi_opt.zero_grad()
        pi_loss.backward()
        pi_opt.step()
        alpha_loss = -(log_alpha * (logp.detach() + target_entropy)).mean()
        alpha_opt.zero_grad()
        alpha_loss.backward()
        alpha_opt.step()
        with torch.no_grad():
            for p, p_targ in zip(critic.parameters(), critic_targ.parameters()):
                p_targ.lerp_(p, tau)
        if t % 10_000 == 0:
            print(f"t={t} q_loss={q_loss.item():.3f} pi_loss={pi_loss.item():.3f} alpha={alpha.item():.3f}")
    torch.save({"actor": actor.state_dict(), "critic": critic.state_dict()}, "sac_halfcheetah.pt")


if __name__ == "__main__":
    train()
