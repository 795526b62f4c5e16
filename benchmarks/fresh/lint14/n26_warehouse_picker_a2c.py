import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


@dataclass
class A2CConfig:
    envs: int = 16
    grid: int = 9
    items: int = 4
    max_steps: int = 120
    rollout: int = 16
    updates: int = 30000
    gamma: float = 0.99
    lr: float = 7e-4
    entropy: float = 0.01
    value_coef: float = 0.5
    seed: int = 2
    out: str = "runs/warehouse_a2c"


class WarehouseGrid:
    MOVES = np.array([[0, 1], [0, -1], [1, 0], [-1, 0], [0, 0]])

    def __init__(self, cfg, n, seed):
        self.cfg, self.n = cfg, n
        self.rng = np.random.default_rng(seed)
        self.pos = np.zeros((n, 2), dtype=np.int64)
        self.items = np.zeros((n, cfg.items, 2), dtype=np.int64)
        self.left = np.zeros((n, cfg.items), dtype=bool)
        self.t = np.zeros(n, dtype=np.int64)
        for i in range(n):
            self.reset_one(i)

    def reset_one(self, i):
        self.pos[i] = self.rng.integers(0, self.cfg.grid, 2)
        self.items[i] = self.rng.integers(0, self.cfg.grid, (self.cfg.items, 2))
        self.left[i] = True
        self.t[i] = 0

    def observe(self):
        g = self.cfg.grid - 1
        rel = (self.items - self.pos[:, None, :]) / g
        return np.concatenate([self.pos / g, (rel * self.left[..., None]).reshape(self.n, -1),
                               self.left.astype(np.float64), (self.t / self.cfg.max_steps)[:, None]], axis=1)

    def step(self, actions):
        self.pos = np.clip(self.pos + self.MOVES[actions], 0, self.cfg.grid - 1)
        self.t += 1
        hit = (self.items == self.pos[:, None, :]).all(-1) & self.left
        reward = hit.sum(1) - 0.01 - 0.2 * (actions == 4)
        self.left &= ~hit
        done = (~self.left.any(1)) | (self.t >= self.cfg.max_steps)
        for i in np.flatnonzero(done):
            self.reset_one(i)
        return self.observe().astype(np.float32), reward.astype(np.float32), done


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, actions=5, hidden=128):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, actions)
        self.v = nn.Linear(hidden, 1)
        nn.init.orthogonal_(self.pi.weight, gain=0.01)
        nn.init.zeros_(self.pi.bias)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)


class EpisodeTracker:
    def __init__(self, n, device):
        self.running = torch.zeros(n, device=device)
        self.finished = []

    def update(self, rewards, dones):
        self.running += rewards
        if dones:
            self.finished.extend(self.running[dones.bool()].tolist())
            self.running[dones.bool()] = 0.0


def main(cfg=A2CConfig()):
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    env = WarehouseGrid(cfg, cfg.envs, cfg.seed)
    obs = torch.as_tensor(env.observe(), dtype=torch.float32, device=device)
    model = ActorCritic(obs.size(1)).to(device)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=cfg.lr, alpha=0.99, eps=1e-5)
    tracker = EpisodeTracker(cfg.envs, device)
    for update in range(cfg.updates):
        log_probs, values, entropies, rewards, masks = [], [], [], [], []
        for _ in range(cfg.rollout):
            logits, value = model(obs)
            dist = Categorical(logits=logits)
            action = dist.sample()
            next_obs, reward, done = env.step(action.cpu().numpy())
            reward_t = torch.as_tensor(reward, device=device)
            done_t = torch.as_tensor(done, dtype=torch.float32, device=device)
            tracker.update(reward_t, done_t)
            log_probs.append(dist.log_prob(action))
            values.append(value)
            entropies.append(dist.entropy())
            rewards.append(reward_t)
            masks.append(1.0 - done_t)
            obs = torch.as_tensor(next_obs, device=device)
        with torch.no_grad():
            _, ret = model(obs)
        returns = []
        for r, m in zip(reversed(rewards), reversed(masks)):
            ret = r + cfg.gamma * ret * m
            returns.insert(0, ret)
        returns, values = torch.stack(returns), torch.stack(values)
        advantages = returns - values
        policy_loss = -(torch.stack(log_probs) * advantages.detach()).mean()
        value_loss = F.mse_loss(values, returns)
        loss = policy_loss + cfg.value_coef * value_loss - cfg.entropy * torch.stack(entropies).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        if update % 500 == 0 and tracker.finished:
            print(f"update {update:05d} mean episode return {np.mean(tracker.finished[-100:]):.3f}")
    Path(cfg.out).mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict(), "updates": cfg.updates}, Path(cfg.out) / "a2c.pt")


if __name__ == "__main__":
    main()
