"""Double DQN on a NumPy re-implementation of CartPole-v1 (no gym dependency on the cluster).

Replay buffer of float32 arrays, Huber loss, a target network refreshed every
`target_every` steps, and the best greedy policy kept aside for the final evaluation.
"""
import copy
import math
import random
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    seed: int = 0
    total_steps: int = 60_000
    buffer: int = 50_000
    batch: int = 128
    gamma: float = 0.99
    lr: float = 5e-4
    eps_start: float = 1.0
    eps_end: float = 0.02
    eps_decay_steps: int = 20_000
    target_every: int = 1_000
    warmup: int = 1_000
    eval_every: int = 5_000


class CartPole:
    g, m_cart, m_pole, half_len, force, dt = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02

    def __init__(self, rng):
        self.rng = rng

    def reset(self):
        self.s, self.t = self.rng.uniform(-0.05, 0.05, size=4), 0
        return self.s.astype(np.float32)

    def step(self, action):
        x, x_dot, th, th_dot = self.s
        f = self.force if action == 1 else -self.force
        total = self.m_cart + self.m_pole
        tmp = (f + self.m_pole * self.half_len * th_dot ** 2 * math.sin(th)) / total
        th_acc = (self.g * math.sin(th) - math.cos(th) * tmp) / (
            self.half_len * (4.0 / 3.0 - self.m_pole * math.cos(th) ** 2 / total))
        x_acc = tmp - self.m_pole * self.half_len * th_acc * math.cos(th) / total
        self.s = np.array([x + self.dt * x_dot, x_dot + self.dt * x_acc, th + self.dt * th_dot, th_dot + self.dt * th_acc])
        self.t += 1
        failed = abs(self.s[0]) > 2.4 or abs(self.s[2]) > 12 * math.pi / 180
        return self.s.astype(np.float32), 1.0, failed, self.t >= 500


class Replay:
    def __init__(self, size):
        self.obs = np.zeros((size, 4), np.float32)
        self.next_obs = np.zeros((size, 4), np.float32)
        self.act = np.zeros(size, np.int64)
        self.rew = np.zeros(size, np.float32)
        self.done = np.zeros(size, np.float32)
        self.size, self.n, self.i = size, 0, 0

    def add(self, o, a, r, o2, d):
        self.obs[self.i], self.act[self.i], self.rew[self.i], self.next_obs[self.i], self.done[self.i] = o, a, r, o2, d
        self.i, self.n = (self.i + 1) % self.size, min(self.n + 1, self.size)

    def sample(self, k, device):
        idx = np.random.randint(0, self.n, size=k)
        return [torch.as_tensor(a[idx], device=device) for a in (self.obs, self.act, self.rew, self.next_obs, self.done)]


def q_network():
    return nn.Sequential(nn.Linear(4, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 2))


@torch.no_grad()
def greedy_return(net, env, device, episodes=10):
    total = 0.0
    for _ in range(episodes):
        obs, done, trunc = env.reset(), False, False
        while not (done or trunc):
            action = int(net(torch.as_tensor(obs, device=device)).argmax())
            obs, r, done, trunc = env.step(action)
            total += r
    return total / episodes


def main(cfg=Config()):
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    env, eval_env = CartPole(np.random.default_rng(cfg.seed)), CartPole(np.random.default_rng(cfg.seed + 1))
    online, target = q_network().to(device), q_network().to(device)
    target.load_state_dict(online.state_dict())
    target.requires_grad_(False)
    optimizer = torch.optim.Adam(online.parameters(), lr=cfg.lr)
    replay = Replay(cfg.buffer)
    best_return, best_policy = -1.0, None

    obs = env.reset()
    for step in range(1, cfg.total_steps + 1):
        eps = max(cfg.eps_end, cfg.eps_start - (cfg.eps_start - cfg.eps_end) * step / cfg.eps_decay_steps)
        if random.random() < eps:
            action = random.randrange(2)
        else:
            with torch.no_grad():
                action = int(online(torch.as_tensor(obs, device=device)).argmax())
        next_obs, reward, failed, truncated = env.step(action)
        replay.add(obs, action, reward, next_obs, float(failed))
        obs = env.reset() if failed or truncated else next_obs

        if step > cfg.warmup:
            o, a, r, o2, d = replay.sample(cfg.batch, device)
            with torch.no_grad():
                next_a = online(o2).argmax(1, keepdim=True)
                y = r + cfg.gamma * (1.0 - d) * target(o2).gather(1, next_a).squeeze(1)
            q = online(o).gather(1, a.unsqueeze(1)).squeeze(1)
            loss = F.smooth_l1_loss(q, y)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(online.parameters(), 10.0)
            optimizer.step()

        if step % cfg.target_every == 0:
            target.load_state_dict(online.state_dict())
        if step % cfg.eval_every == 0:
            ret = greedy_return(online, eval_env, device)
            print(f"step {step:6d} eps {eps:.3f} greedy return {ret:.1f}")
            if ret > best_return:
                best_return, best_policy = ret, copy.deepcopy(online.state_dict())

    online.load_state_dict(best_policy)
    print(f"best policy: {greedy_return(online, eval_env, device, episodes=50):.1f} over 50 episodes")
    torch.save(best_policy, "cartpole_ddqn_best.pt")


if __name__ == "__main__":
    main()
