"""Advantage actor-critic on CartPole-v1 with n-step returns from 8 synchronous environments."""

import argparse
import logging
from collections import deque

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

log = logging.getLogger("a2c")


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=128):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)


def nstep_returns(rewards, dones, last_value, gamma):
    """rewards, dones: (T, E); last_value: (E,). Bootstrapped discounted returns, (T, E)."""
    ret = last_value
    out = torch.zeros_like(rewards)
    for t in reversed(range(rewards.shape[0])):
        ret = rewards[t] + gamma * ret * (1.0 - dones[t])
        out[t] = ret
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--envs", type=int, default=8)
    ap.add_argument("--nsteps", type=int, default=5)
    ap.add_argument("--updates", type=int, default=20_000)
    ap.add_argument("--gamma", type=float, default=0.99)
    ap.add_argument("--lr", type=float, default=7e-4)
    ap.add_argument("--ent", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    torch.manual_seed(args.seed)

    envs = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1") for _ in range(args.envs)])
    obs, _ = envs.reset(seed=args.seed)
    model = ActorCritic(envs.single_observation_space.shape[0], envs.single_action_space.n)
    opt = torch.optim.RMSprop(model.parameters(), lr=args.lr, alpha=0.99, eps=1e-5)
    episode_return = np.zeros(args.envs)
    recent = deque(maxlen=100)

    for update in range(args.updates):
        log_probs, values, entropies, rewards, dones = [], [], [], [], []
        for _ in range(args.nsteps):
            logits, value = model(torch.as_tensor(obs, dtype=torch.float32))
            dist = Categorical(logits=logits)
            action = dist.sample()
            obs, reward, term, trunc, _ = envs.step(action.numpy())
            done = np.logical_or(term, trunc)
            episode_return += reward
            for i in np.flatnonzero(done):
                recent.append(episode_return[i])
                episode_return[i] = 0.0
            log_probs.append(dist.log_prob(action))
            values.append(value)
            entropies.append(dist.entropy())
            rewards.append(torch.as_tensor(reward, dtype=torch.float32))
            dones.append(torch.as_tensor(term, dtype=torch.float32))

        with torch.no_grad():
            _, last_value = model(torch.as_tensor(obs, dtype=torch.float32))
        returns = nstep_returns(torch.stack(rewards), torch.stack(dones), last_value, args.gamma)
        values = torch.stack(values)
        advantages = returns - values.detach()

        policy_loss = -(torch.stack(log_probs) * advantages).mean()
        value_loss = F.mse_loss(values, returns)
        entropy = torch.stack(entropies).mean()
        loss = policy_loss + 0.5 * value_loss - args.ent * entropy

        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()

        if update % 500 == 0 and recent:
            log.info("update %d  mean return(100) %.1f  loss %.3f  entropy %.3f",
                     update, np.mean(recent), loss.item(), entropy.item())
        if len(recent) == recent.maxlen and np.mean(recent) >= 475:
            log.info("solved at update %d", update)
            break
    torch.save(model.state_dict(), "a2c_cartpole.pt")


if __name__ == "__main__":
    main()
