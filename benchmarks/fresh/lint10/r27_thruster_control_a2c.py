"""Advantage actor-critic for a soft-landing task: a 2-D craft with a main engine and two side
thrusters, simulated in NumPy for 16 environments at once."""
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class A2CConfig:
    envs: int = 16
    rollout: int = 8
    updates: int = 60_000
    gamma: float = 0.99
    lr: float = 7e-4
    value_coef: float = 0.5
    entropy_coef: float = 0.01
    max_grad_norm: float = 0.5
    seed: int = 21


class Landers:
    """State: x, y, vx, vy, angle, angular velocity. Actions: 0 idle, 1 left, 2 main, 3 right."""

    def __init__(self, n, seed):
        self.n, self.rng = n, np.random.default_rng(seed)
        self.state = np.zeros((n, 6), dtype=np.float32)
        self.t = np.zeros(n, dtype=np.int64)

    def _spawn(self, idx):
        k = len(idx)
        self.state[idx] = np.stack([self.rng.uniform(-0.5, 0.5, k), np.full(k, 1.4), self.rng.normal(0, 0.1, k),
                                    np.zeros(k), self.rng.normal(0, 0.05, k), np.zeros(k)], axis=1)
        self.t[idx] = 0

    def reset(self):
        self._spawn(np.arange(self.n))
        return self.state.copy()

    def step(self, actions):
        x, y, vx, vy, a, w = self.state.T.copy()
        main = (actions == 2).astype(np.float32)
        side = (actions == 3).astype(np.float32) - (actions == 1).astype(np.float32)
        vx += 0.05 * (-np.sin(a) * main) + 0.01 * side
        vy += 0.05 * (np.cos(a) * main) - 0.03
        w += 0.02 * side
        x, y, a = x + 0.05 * vx, y + 0.05 * vy, a + 0.05 * w
        self.state = np.stack([x, y, vx, vy, a, w], axis=1).astype(np.float32)
        self.t += 1
        shaping = -0.3 * (np.abs(x) + np.abs(vx) + np.abs(vy) + np.abs(a)) - 0.03 * main
        landed = y <= 0.0
        soft = landed & (np.abs(vy) < 0.3) & (np.abs(x) < 0.2) & (np.abs(a) < 0.2)
        reward = shaping + np.where(landed, np.where(soft, 10.0, -10.0), 0.0)
        done = landed | (np.abs(x) > 1.5) | (self.t >= 400)
        if done.any():
            self._spawn(np.nonzero(done)[0])
        return self.state.copy(), reward.astype(np.float32), done


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=6, actions=4, hidden=128):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.policy = nn.Linear(hidden, actions)
        self.value = nn.Linear(hidden, 1)
        nn.init.orthogonal_(self.policy.weight, gain=0.01)
        nn.init.zeros_(self.policy.bias)

    def forward(self, obs):
        h = self.body(obs)
        return self.policy(h), self.value(h).squeeze(-1)


class Agent:
    def __init__(self, cfg: A2CConfig):
        self.cfg = cfg
        self.net = ActorCritic()
        self.params = self.net.parameters()
        self.optimizer = torch.optim.RMSprop(self.params, lr=cfg.lr, alpha=0.99, eps=1e-5)

    def act(self, obs):
        logits, value = self.net(torch.from_numpy(obs))
        dist = torch.distributions.Categorical(logits=logits)
        action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), value

    def update(self, log_probs, entropies, values, rewards, dones, last_value):
        returns, running = [], last_value
        for r, d in zip(reversed(rewards), reversed(dones)):
            running = r + self.cfg.gamma * running * (1.0 - d)
            returns.append(running)
        returns = torch.stack(returns[::-1])
        values, log_probs, entropies = torch.stack(values), torch.stack(log_probs), torch.stack(entropies)
        advantage = returns - values
        policy_loss = -(advantage.detach() * log_probs).mean()
        value_loss = F.mse_loss(values, returns)
        loss = policy_loss + self.cfg.value_coef * value_loss - self.cfg.entropy_coef * entropies.mean()
        self.optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.params, self.cfg.max_grad_norm)
        self.optimizer.step()
        return loss.item()


def train(cfg=A2CConfig()):
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    env, agent = Landers(cfg.envs, cfg.seed), Agent(cfg)
    obs, episode_return = env.reset(), np.zeros(cfg.envs)
    finished = []
    for update in range(cfg.updates):
        log_probs, entropies, values, rewards, dones = [], [], [], [], []
        for _ in range(cfg.rollout):
            action, log_prob, entropy, value = agent.act(obs)
            obs, reward, done = env.step(action.numpy())
            episode_return += reward
            finished.extend(episode_return[done].tolist())
            episode_return[done] = 0.0
            log_probs.append(log_prob), entropies.append(entropy), values.append(value)
            rewards.append(torch.from_numpy(reward)), dones.append(torch.from_numpy(done.astype(np.float32)))
        with torch.no_grad():
            _, last_value = agent.net(torch.from_numpy(obs))
        loss = agent.update(log_probs, entropies, values, rewards, dones, last_value)
        if update % 2000 == 0 and finished:
            print(f"update {update:05d} loss {loss:+.3f} mean return (last 100) {np.mean(finished[-100:]):+.2f}")
    torch.save(agent.net.state_dict(), "lander_a2c.pt")


if __name__ == "__main__":
    train()
