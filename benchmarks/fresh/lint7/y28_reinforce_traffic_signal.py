"""REINFORCE controller for a single four-way traffic signal (toy queue simulator).

Every 5 s the agent chooses which phase gets green (NS-through, EW-through, NS-left, EW-left).
Reward is minus the total queue length. Episodes are one simulated hour.
"""
import argparse
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical

PHASES = 4
LANES = 8


@dataclass
class Intersection:
    arrival: np.ndarray = field(default_factory=lambda: np.array([0.30, 0.30, 0.25, 0.25, 0.08, 0.08, 0.06, 0.06]))
    discharge: float = 1.6
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))

    def reset(self):
        self.queue = np.zeros(LANES)
        self.t = 0
        self.last_phase = 0
        return self.observe()

    def observe(self):
        phase = np.eye(PHASES)[self.last_phase]
        return np.concatenate([np.minimum(self.queue, 40) / 40.0, phase]).astype(np.float32)

    def step(self, phase):
        served = {0: [0, 1], 1: [2, 3], 2: [4, 5], 3: [6, 7]}[phase]
        lost = 2.0 if phase != self.last_phase else 0.0
        self.queue += self.rng.poisson(self.arrival * 5)
        for lane in served:
            self.queue[lane] = max(0.0, self.queue[lane] - self.discharge * (5 - lost))
        self.last_phase, self.t = phase, self.t + 5
        return self.observe(), -float(self.queue.sum()) / 10.0, self.t >= 3600


class Policy(nn.Module):
    def __init__(self, d_in=LANES + PHASES, hidden=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, PHASES))

    def forward(self, obs):
        return Categorical(logits=self.net(obs))


def discounted(rewards, gamma):
    out, g = np.zeros(len(rewards), dtype=np.float32), 0.0
    for i in reversed(range(len(rewards))):
        g = rewards[i] + gamma * g
        out[i] = g
    return out


def run_episode(env, policy):
    obs, done = env.reset(), False
    log_probs, rewards = [], []
    while not done:
        dist = policy(torch.from_numpy(obs))
        action = dist.sample()
        log_probs.append(dist.log_prob(action).item())
        obs, reward, done = env.step(int(action))
        rewards.append(reward)
    return np.array(log_probs, dtype=np.float32), np.array(rewards, dtype=np.float32)


def reinforce_loss(log_probs, rewards, gamma):
    returns = discounted(rewards, gamma)
    advantages = (returns - returns.mean()) / (returns.std() + 1e-8)
    value = float(-(log_probs * advantages).sum())
    return torch.tensor(value, requires_grad=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=3000)
    ap.add_argument("--gamma", type=float, default=0.98)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    env = Intersection(rng=np.random.default_rng(args.seed))
    policy = Policy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=args.lr)

    history = []
    for episode in range(args.episodes):
        log_probs, rewards = run_episode(env, policy)
        loss = reinforce_loss(log_probs, rewards, args.gamma)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append(rewards.sum())
        if episode % 100 == 0:
            print(f"episode {episode:5d} mean return (last 100) {np.mean(history[-100:]):9.2f}")
    torch.save(policy.state_dict(), "signal_policy.pt")


if __name__ == "__main__":
    main()
