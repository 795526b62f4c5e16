"""Advantage actor-critic on CartPole-v1 with n-step returns (single environment)."""

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

GAMMA = 0.99
N_STEPS = 16
ENTROPY_COEF = 0.01
VALUE_COEF = 0.5


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=128):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)


def n_step_targets(rewards, dones, bootstrap):
    targets, running = [], bootstrap
    for r, d in zip(reversed(rewards), reversed(dones)):
        running = r + GAMMA * running * (1.0 - d)
        targets.append(running)
    return torch.tensor(targets[::-1], dtype=torch.float32)


def train(total_steps=200_000, seed=0):
    env = gym.make("CartPole-v1")
    torch.manual_seed(seed)
    obs, _ = env.reset(seed=seed)
    net = ActorCritic(env.observation_space.shape[0], env.action_space.n)
    opt = torch.optim.Adam(net.parameters(), lr=7e-4)
    episode_return, finished = 0.0, []

    for update in range(total_steps // N_STEPS):
        log_probs, values, entropies, rewards, dones = [], [], [], [], []
        for _ in range(N_STEPS):
            logits, value = net(torch.as_tensor(obs, dtype=torch.float32))
            dist = Categorical(logits=logits)
            action = dist.sample()
            obs, reward, terminated, truncated, _ = env.step(action.item())
            log_probs.append(dist.log_prob(action))
            values.append(value)
            entropies.append(dist.entropy())
            rewards.append(reward)
            dones.append(float(terminated or truncated))
            episode_return += reward
            if terminated or truncated:
                finished.append(episode_return)
                episode_return = 0.0
                obs, _ = env.reset()

        with torch.no_grad():
            _, last_value = net(torch.as_tensor(obs, dtype=torch.float32))
        targets = n_step_targets(rewards, dones, last_value.item())
        values = torch.stack(values)
        advantages = targets - values.detach()

        policy_loss = -(torch.stack(log_probs) * advantages).mean()
        value_loss = F.mse_loss(values, targets)
        entropy = torch.stack(entropies).mean()
        loss = policy_loss + VALUE_COEF * value_loss - ENTROPY_COEF * entropy

        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 0.5)
        opt.step()

        if update % 500 == 0 and finished:
            print(f"update {update}: mean return (last 20) {np.mean(finished[-20:]):.1f}")
    return net


@torch.no_grad()
def greedy_return(net, episodes=10):
    env = gym.make("CartPole-v1")
    scores = []
    for ep in range(episodes):
        obs, _ = env.reset(seed=1000 + ep)
        done, total = False, 0.0
        while not done:
            logits, _ = net(torch.as_tensor(obs, dtype=torch.float32))
            obs, r, terminated, truncated, _ = env.step(int(logits.argmax()))
            total += r
            done = terminated or truncated
        scores.append(total)
    return float(np.mean(scores))


if __name__ == "__main__":
    agent = train()
    print("greedy return:", greedy_return(agent))
    torch.save(agent.state_dict(), "a2c_cartpole.pt")
