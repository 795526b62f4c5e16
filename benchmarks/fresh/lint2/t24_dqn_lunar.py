"""Double DQN on LunarLander-v3 with a uniform replay buffer and a periodically synced target net."""
import copy
import random

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 3
CFG = dict(steps=500_000, buffer=200_000, batch=128, gamma=0.99, lr=5e-4, sync_every=2000,
           learn_start=10_000, eps_start=1.0, eps_end=0.05, eps_decay=150_000, clip=10.0)


class Replay:
    def __init__(self, capacity, obs_dim, rng):
        self.obs = np.zeros((capacity, obs_dim), np.float32)
        self.next_obs = np.zeros((capacity, obs_dim), np.float32)
        self.act = np.zeros(capacity, np.int64)
        self.rew = np.zeros(capacity, np.float32)
        self.done = np.zeros(capacity, np.float32)
        self.capacity, self.size, self.pos, self.rng = capacity, 0, 0, rng

    def add(self, o, a, r, o2, d):
        i = self.pos
        self.obs[i], self.act[i], self.rew[i], self.next_obs[i], self.done[i] = o, a, r, o2, d
        self.pos = (self.pos + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, n, device):
        idx = self.rng.integers(0, self.size, size=n)
        as_t = lambda a: torch.as_tensor(a[idx], device=device)
        return as_t(self.obs), as_t(self.act), as_t(self.rew), as_t(self.next_obs), as_t(self.done)


def q_network(obs_dim, n_actions):
    return nn.Sequential(nn.Linear(obs_dim, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, n_actions))


def td_loss(online, target, batch, gamma):
    obs, act, rew, next_obs, done = batch
    q = online(obs).gather(1, act.unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        best_next = online(next_obs).argmax(dim=1, keepdim=True)
        next_q = target(next_obs).gather(1, best_next).squeeze(1)
        y = rew + gamma * (1.0 - done) * next_q
    return F.smooth_l1_loss(q, y)


def main(cfg=CFG):
    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    env = gym.make("LunarLander-v3")
    obs_dim, n_actions = env.observation_space.shape[0], env.action_space.n

    online = q_network(obs_dim, n_actions).to(device)
    target = copy.deepcopy(online).eval()
    target.requires_grad_(False)
    optimizer = torch.optim.Adam(online.parameters(), lr=cfg["lr"])
    replay = Replay(cfg["buffer"], obs_dim, rng)

    obs, _ = env.reset(seed=SEED)
    ep_return, recent = 0.0, []
    for step in range(cfg["steps"]):
        eps = max(cfg["eps_end"], cfg["eps_start"] - step / cfg["eps_decay"])
        if rng.random() < eps:
            action = int(rng.integers(n_actions))
        else:
            with torch.no_grad():
                q_values = online(torch.as_tensor(obs, device=device).unsqueeze(0))
            action = q_values.argmax(dim=1).item()
        next_obs, reward, terminated, truncated, _ = env.step(action)
        replay.add(obs, action, reward, next_obs, float(terminated))
        obs, ep_return = next_obs, ep_return + reward
        if terminated or truncated:
            recent.append(ep_return)
            obs, ep_return = env.reset()[0], 0.0

        if step >= cfg["learn_start"]:
            loss = td_loss(online, target, replay.sample(cfg["batch"], device), cfg["gamma"])
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(online.parameters(), cfg["clip"])
            optimizer.step()
        if step % cfg["sync_every"] == 0:
            target.load_state_dict(online.state_dict())
        if step % 10_000 == 0 and recent:
            print(f"step {step}: eps {eps:.2f} mean return (last 20) {np.mean(recent[-20:]):.1f}")
    torch.save(online.state_dict(), "ddqn_lunar.pt")


if __name__ == "__main__":
    main()
