"""Double DQN on LunarLander-v3 with a uniform replay buffer and Polyak-averaged targets."""

import copy
import random

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

GAMMA, TAU, LR = 0.99, 0.005, 3e-4
BATCH, BUFFER, WARMUP = 128, 200_000, 5_000
TOTAL_STEPS = 400_000


def q_network(obs_dim, n_actions, hidden=256, depth=3):
    block = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU())
    layers = [nn.Linear(obs_dim, hidden), nn.ReLU()]
    for _ in range(depth - 1):
        layers.append(block)
    layers.append(nn.Linear(hidden, n_actions))
    return nn.Sequential(*layers)


class Replay:
    def __init__(self, capacity, obs_dim):
        self.obs = np.zeros((capacity, obs_dim), np.float32)
        self.next_obs = np.zeros((capacity, obs_dim), np.float32)
        self.act = np.zeros(capacity, np.int64)
        self.rew = np.zeros(capacity, np.float32)
        self.done = np.zeros(capacity, np.float32)
        self.capacity, self.size, self.ptr = capacity, 0, 0

    def add(self, o, a, r, o2, d):
        i = self.ptr
        self.obs[i], self.act[i], self.rew[i], self.next_obs[i], self.done[i] = o, a, r, o2, d
        self.ptr = (i + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, n):
        idx = np.random.randint(0, self.size, size=n)
        return tuple(torch.as_tensor(arr[idx]) for arr in
                     (self.obs, self.act, self.rew, self.next_obs, self.done))


def epsilon(step):
    return max(0.05, 1.0 - step / 100_000)


def train():
    env = gym.make("LunarLander-v3")
    obs_dim, n_actions = env.observation_space.shape[0], env.action_space.n
    online = q_network(obs_dim, n_actions)
    target = copy.deepcopy(online).requires_grad_(False)
    opt = torch.optim.Adam(online.parameters(), lr=LR)
    buffer = Replay(BUFFER, obs_dim)

    obs, _ = env.reset(seed=0)
    episode_return, returns = 0.0, []
    for step in range(TOTAL_STEPS):
        if random.random() < epsilon(step):
            action = env.action_space.sample()
        else:
            with torch.no_grad():
                action = int(online(torch.as_tensor(obs).unsqueeze(0)).argmax(dim=1))
        next_obs, reward, terminated, truncated, _ = env.step(action)
        buffer.add(obs, action, reward, next_obs, float(terminated))
        episode_return += reward
        obs = next_obs
        if terminated or truncated:
            returns.append(episode_return)
            episode_return = 0.0
            obs, _ = env.reset()

        if step < WARMUP:
            continue
        o, a, r, o2, d = buffer.sample(BATCH)
        with torch.no_grad():
            best_next = online(o2).argmax(dim=1, keepdim=True)
            target_q = r + GAMMA * (1.0 - d) * target(o2).gather(1, best_next).squeeze(1)
        q = online(o).gather(1, a.unsqueeze(1)).squeeze(1)
        loss = F.smooth_l1_loss(q, target_q)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(online.parameters(), 10.0)
        opt.step()
        with torch.no_grad():
            for p_t, p in zip(target.parameters(), online.parameters()):
                p_t.lerp_(p, TAU)

        if step % 10_000 == 0 and returns:
            print(f"step {step:7d}  mean return (last 20) {np.mean(returns[-20:]):8.2f}  "
                  f"eps {epsilon(step):.2f}")

    torch.save(online.state_dict(), "dqn_lunar.pt")


if __name__ == "__main__":
    train()
