"""PPO rollout storage and update step for vectorised continuous-control environments.

Used by train_ppo.py: collect() fills a Rollout with T steps of N environments, then
ppo_update() runs several epochs of clipped-surrogate minibatch updates on it.
"""

from dataclasses import dataclass

import torch
from torch import nn
from torch.distributions import Normal


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=64):
        super().__init__()
        self.pi = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                nn.Linear(hidden, act_dim))
        self.v = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                               nn.Linear(hidden, 1))
        self.log_std = nn.Parameter(torch.full((act_dim,), -0.5))

    def dist(self, obs):
        return Normal(self.pi(obs), self.log_std.exp())

    def value(self, obs):
        return self.v(obs).squeeze(-1)


@dataclass
class Rollout:
    obs: torch.Tensor        # (T, N, obs_dim)
    actions: torch.Tensor    # (T, N, act_dim)
    logp: torch.Tensor       # (T, N)
    rewards: torch.Tensor    # (T, N)
    dones: torch.Tensor      # (T, N)
    values: torch.Tensor     # (T, N)
    last_value: torch.Tensor  # (N,)


@torch.no_grad()
def collect(envs, policy, obs, steps):
    buf = {k: [] for k in ("obs", "actions", "logp", "rewards", "dones", "values")}
    for _ in range(steps):
        d = policy.dist(obs)
        action = d.sample()
        next_obs, reward, done = envs.step(action)
        for key, val in zip(buf, (obs, action, d.log_prob(action).sum(-1), reward, done.float(),
                                  policy.value(obs))):
            buf[key].append(val)
        obs = next_obs
    rollout = Rollout(**{k: torch.stack(v) for k, v in buf.items()}, last_value=policy.value(obs))
    return rollout, obs


@torch.no_grad()
def gae(r: Rollout, gamma=0.99, lam=0.95):
    adv = torch.zeros_like(r.rewards)
    running = torch.zeros_like(r.last_value)
    next_value = r.last_value
    for t in reversed(range(r.rewards.shape[0])):
        not_done = 1.0 - r.dones[t]
        delta = r.rewards[t] + gamma * next_value * not_done - r.values[t]
        running = delta + gamma * lam * not_done * running
        adv[t] = running
        next_value = r.values[t]
    return adv, adv + r.values


def ppo_update(policy, optimizer, r: Rollout, epochs=10, minibatch=64, clip=0.2, vf_coef=0.5,
               ent_coef=0.0, max_grad_norm=0.5):
    advantages, returns = gae(r)
    flat = lambda x: x.reshape(-1, *x.shape[2:])
    obs, actions, old_logp = flat(r.obs), flat(r.actions), flat(r.logp)
    advantages, returns = flat(advantages), flat(returns)
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)

    stats = []
    for _ in range(epochs):
        for idx in torch.randperm(obs.shape[0]).split(minibatch):
            d = policy.dist(obs[idx])
            logp = d.log_prob(actions[idx]).sum(-1)
            ratio = (logp - old_logp[idx]).exp()
            surr = torch.min(ratio * advantages[idx], ratio.clamp(1 - clip, 1 + clip) * advantages[idx])
            v_loss = (policy.value(obs[idx]) - returns[idx]).pow(2).mean()
            loss = -surr.mean() + vf_coef * v_loss - ent_coef * d.entropy().sum(-1).mean()
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                approx_kl = (old_logp[idx] - logp).mean().item()
                clip_frac = ((ratio - 1).abs() > clip).float().mean().item()
            stats.append((len(idx), loss.item(), approx_kl, clip_frac))
    n = sum(s[0] for s in stats)
    return {name: sum(s[0] * s[i] for s in stats) / n
            for i, name in enumerate(("loss", "approx_kl", "clip_frac"), start=1)}
