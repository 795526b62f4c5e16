"""REINFORCE with a learned baseline on a small pixel-based foraging task.

The agent (white) walks a 10x10 grid rendered as a 40x40 RGB image, collecting berries (red)
and avoiding thorns (green); an episode lasts 60 steps. Observations are the rendered frames,
exactly as a camera would deliver them.
"""
import random
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

GRID, CELL, HORIZON = 10, 4, 60
GAMMA, LR, EPISODES, BATCH_EPISODES = 0.99, 3e-4, 4000, 8
ENTROPY_COEF, VALUE_COEF = 0.01, 0.5
MOVES = [(0, -1), (0, 1), (-1, 0), (1, 0), (0, 0)]


class Forager:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def reset(self):
        cells = self.rng.choice(GRID * GRID, size=13, replace=False)
        self.agent = divmod(int(cells[0]), GRID)
        self.berries = {divmod(int(c), GRID) for c in cells[1:9]}
        self.thorns = {divmod(int(c), GRID) for c in cells[9:]}
        self.t = 0
        return self.render()

    def render(self):
        frame = np.zeros((GRID * CELL, GRID * CELL, 3), dtype=np.uint8)
        for (r, c), color in [(p, (220, 40, 40)) for p in self.berries] + [(p, (40, 200, 60)) for p in self.thorns]:
            frame[r * CELL : (r + 1) * CELL, c * CELL : (c + 1) * CELL] = color
        r, c = self.agent
        frame[r * CELL : (r + 1) * CELL, c * CELL : (c + 1) * CELL] = 255
        return frame

    def step(self, action):
        dr, dc = MOVES[action]
        r = min(max(self.agent[0] + dr, 0), GRID - 1)
        c = min(max(self.agent[1] + dc, 0), GRID - 1)
        self.agent, self.t = (r, c), self.t + 1
        reward = 0.0
        if self.agent in self.berries:
            self.berries.discard(self.agent)
            reward += 1.0
        if self.agent in self.thorns:
            reward -= 1.0
        return self.render(), reward, self.t >= HORIZON or not self.berries


class PolicyValueNet(nn.Module):
    def __init__(self, n_actions=len(MOVES)):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(3, 16, 4, stride=2), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2), nn.ReLU(),
            nn.Conv2d(32, 32, 3, stride=1), nn.ReLU(),
            nn.Flatten(),
        )
        n_flat = 32 * 7 * 7
        self.policy = nn.Sequential(nn.Linear(n_flat, 128), nn.ReLU(), nn.Linear(128, n_actions))
        self.value = nn.Sequential(nn.Linear(n_flat, 128), nn.ReLU(), nn.Linear(128, 1))

    def forward(self, obs):
        h = self.conv(obs)
        return self.policy(h), self.value(h).squeeze(-1)


def frame_to_tensor(frame, device):
    return torch.from_numpy(frame).permute(2, 0, 1).float().unsqueeze(0).to(device)


def discounted_returns(rewards, gamma):
    out, g = [], 0.0
    for r in reversed(rewards):
        g = r + gamma * g
        out.append(g)
    return out[::-1]


def run_episode(env, net, device):
    obs, done = env.reset(), False
    log_probs, values, entropies, rewards = [], [], [], []
    while not done:
        logits, value = net(frame_to_tensor(obs, device))
        dist = Categorical(logits=logits)
        action = dist.sample()
        obs, reward, done = env.step(action.item())
        log_probs.append(dist.log_prob(action))
        values.append(value)
        entropies.append(dist.entropy())
        rewards.append(reward)
    return torch.cat(log_probs), torch.cat(values), torch.cat(entropies), rewards


def main():
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    env = Forager(seed=0)
    net = PolicyValueNet().to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=LR)
    recent = deque(maxlen=100)

    for update in range(EPISODES // BATCH_EPISODES):
        losses = []
        for _ in range(BATCH_EPISODES):
            log_probs, values, entropies, rewards = run_episode(env, net, device)
            returns = torch.tensor(discounted_returns(rewards, GAMMA), device=device)
            advantages = returns - values.detach()
            policy_loss = -(log_probs * advantages).mean()
            value_loss = F.mse_loss(values, returns)
            losses.append(policy_loss + VALUE_COEF * value_loss - ENTROPY_COEF * entropies.mean())
            recent.append(sum(rewards))
        loss = torch.stack(losses).mean()
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 0.5)
        optimizer.step()
        if update % 25 == 0:
            print(f"update {update:4d}  mean return (last 100) {np.mean(recent):.2f}  loss {loss.item():.3f}")

    torch.save(net.state_dict(), "forager_reinforce.pt")


if __name__ == "__main__":
    main()
