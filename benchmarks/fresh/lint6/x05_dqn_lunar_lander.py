"""Double DQN on LunarLander-v3 with a replay buffer and a periodically synced target network."""

import random
from collections import deque

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

GAMMA, BATCH, BUFFER = 0.99, 128, 100_000
LR, SYNC_EVERY, WARMUP = 5e-4, 1_000, 5_000
EPS_START, EPS_END, EPS_DECAY_STEPS = 1.0, 0.05, 150_000
TOTAL_STEPS = 600_000


class QNet(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU())
        self.out = nn.Linear(256, n_actions)

    def forward(self, obs):
        return self.out(self.body(obs))


class Replay:
    def __init__(self, capacity):
        self.items = deque(maxlen=capacity)

    def push(self, *transition):
        self.items.append(transition)

    def sample(self, n, device):
        batch = random.sample(self.items, n)
        obs, act, rew, nxt, done = map(np.array, zip(*batch))
        as_t = lambda a, dt: torch.as_tensor(a, dtype=dt, device=device)  # noqa: E731
        return (as_t(obs, torch.float32), as_t(act, torch.int64), as_t(rew, torch.float32),
                as_t(nxt, torch.float32), as_t(done, torch.float32))

    def __len__(self):
        return len(self.items)


def epsilon(step):
    frac = min(step / EPS_DECAY_STEPS, 1.0)
    return EPS_START + frac * (EPS_END - EPS_START)


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    env = gym.make("LunarLander-v3")
    obs_dim, n_actions = env.observation_space.shape[0], env.action_space.n
    online = QNet(obs_dim, n_actions).to(device)
    target = QNet(obs_dim, n_actions).to(device)
    target.load_state_dict(online.state_dict())
    target.requires_grad_(False)
    optimizer = torch.optim.Adam(online.parameters(), lr=LR)
    replay = Replay(BUFFER)

    obs, _ = env.reset(seed=0)
    episode_return, returns = 0.0, deque(maxlen=100)
    for step in range(TOTAL_STEPS):
        if random.random() < epsilon(step):
            action = env.action_space.sample()
        else:
            with torch.no_grad():
                q = online(torch.as_tensor(obs, dtype=torch.float32, device=device).unsqueeze(0))
            action = int(q.argmax(dim=1).item())
        nxt, reward, terminated, truncated, _ = env.step(action)
        replay.push(obs, action, reward, nxt, float(terminated))
        episode_return += reward
        obs = nxt
        if terminated or truncated:
            returns.append(episode_return)
            episode_return = 0.0
            obs, _ = env.reset()

        if len(replay) < WARMUP:
            continue
        s, a, r, s2, done = replay.sample(BATCH, device)
        q_taken = online(s).gather(1, a.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            best_next = online(s2).argmax(dim=1, keepdim=True)
            q_next = target(s2).gather(1, best_next).squeeze(1)
            td_target = r + GAMMA * (1.0 - done) * q_next
        loss = F.smooth_l1_loss(q_taken, td_target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(online.parameters(), 10.0)
        optimizer.step()

        if step % SYNC_EVERY == 0:
            target.load_state_dict(online.state_dict())
        if step % 10_000 == 0 and returns:
            print(f"step {step}: eps {epsilon(step):.2f} mean return {np.mean(returns):.1f} loss {loss.item():.3f}")

    torch.save(online.state_dict(), "dqn_lunar.pt")
    env.close()


if __name__ == "__main__":
    main()
