"""Synchronous advantage actor-critic (A2C) on a vectorised cart-pole written in NumPy."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

N_ENVS, N_STEPS, GAMMA, LR = 16, 8, 0.99, 7e-4
VALUE_COEF, ENTROPY_COEF, MAX_GRAD_NORM, UPDATES = 0.5, 0.01, 0.5, 20000


class VecCartPole:
    """Classic cart-pole dynamics (Barto et al., 1983), N copies stepped together, auto-reset."""

    def __init__(self, n, seed=0):
        self.n, self.rng = n, np.random.default_rng(seed)
        self.state = self.rng.uniform(-0.05, 0.05, (n, 4))
        self.steps = np.zeros(n, dtype=np.int64)

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state.T
        force = np.where(action == 1, 10.0, -10.0)
        cos, sin = np.cos(theta), np.sin(theta)
        temp = (force + 0.05 * theta_dot**2 * sin) / 1.1
        theta_acc = (9.8 * sin - cos * temp) / (0.5 * (4.0 / 3.0 - 0.1 * cos**2 / 1.1))
        x_acc = temp - 0.05 * theta_acc * cos / 1.1
        self.state = np.stack([x + 0.02 * x_dot, x_dot + 0.02 * x_acc, theta + 0.02 * theta_dot,
                               theta_dot + 0.02 * theta_acc], axis=1)
        self.steps += 1
        failed = (np.abs(self.state[:, 0]) > 2.4) | (np.abs(self.state[:, 2]) > 12 * math.pi / 180)
        truncated = self.steps >= 500
        done = failed | truncated
        self.state[done] = self.rng.uniform(-0.05, 0.05, (done.sum(), 4))
        self.steps[done] = 0
        return self.state.astype(np.float32), np.ones(self.n, dtype=np.float32), failed, done


class RunningNorm:
    def __init__(self, dim):
        self.mean, self.var, self.count = torch.zeros(dim), torch.ones(dim), 1e-4

    @torch.no_grad()
    def update(self, x):
        batch_mean, batch_var, n = x.mean(0), x.var(0, unbiased=False), x.size(0)
        delta, total = batch_mean - self.mean, self.count + n
        self.mean = self.mean + delta * n / total
        self.var = (self.var * self.count + batch_var * n + delta**2 * self.count * n / total) / total
        self.count = total

    def __call__(self, x):
        return ((x - self.mean) / torch.sqrt(self.var + 1e-8)).clamp(-5, 5)


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=4, n_actions=2, hidden=64):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)


def main():
    torch.manual_seed(0)
    env, norm, net = VecCartPole(N_ENVS), RunningNorm(4), ActorCritic()
    opt = torch.optim.RMSprop(net.parameters(), lr=LR, alpha=0.99, eps=1e-5)
    obs = torch.from_numpy(env.state.astype(np.float32))
    episode_len, finished = np.zeros(N_ENVS), []
    for update in range(UPDATES):
        norm.update(obs)
        log_probs, values, entropies, rewards, masks = [], [], [], [], []
        for _ in range(N_STEPS):
            logits, value = net(norm(obs))
            dist = Categorical(logits=logits)
            action = dist.sample()
            next_obs, reward, failed, done = env.step(action.numpy())
            log_probs.append(dist.log_prob(action))
            values.append(value)
            entropies.append(dist.entropy())
            rewards.append(torch.from_numpy(reward))
            masks.append(torch.from_numpy((~failed).astype(np.float32)))
            episode_len += 1
            finished.extend(episode_len[done].tolist())
            episode_len[done] = 0
            obs = torch.from_numpy(next_obs)
        with torch.no_grad():
            _, ret = net(norm(obs))
        returns = []
        for r, m in zip(reversed(rewards), reversed(masks)):
            ret = r + GAMMA * ret * m
            returns.insert(0, ret)
        returns, values = torch.stack(returns), torch.stack(values)
        advantages = returns - values.detach()
        policy_loss = -(torch.stack(log_probs) * advantages).mean()
        value_loss = F.mse_loss(values, returns)
        loss = policy_loss + VALUE_COEF * value_loss - ENTROPY_COEF * torch.stack(entropies).mean()
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), MAX_GRAD_NORM)
        opt.step()
        if update % 500 == 0 and finished:
            print(f"update {update:5d}  mean episode length (last 50) {np.mean(finished[-50:]):.1f}")
    torch.save(net.state_dict(), "a2c_cartpole.pt")


if __name__ == "__main__":
    main()
