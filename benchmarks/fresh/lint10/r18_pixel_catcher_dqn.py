"""DQN from pixels on a small catch-the-fruit game rendered in NumPy (64 x 64 RGB frames)."""
import copy
import random
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SIZE, PADDLE = 64, 12
GAMMA, LR, BATCH = 0.99, 2.5e-4, 64
BUFFER, WARMUP, STEPS = 100_000, 5_000, 400_000
SYNC_EVERY, TRAIN_EVERY = 2_000, 4
EPS_START, EPS_END, EPS_DECAY = 1.0, 0.05, 150_000
SEED = 13


class CatcherEnv:
    """Fruit falls from the top; the paddle moves left, stays or moves right. +1 catch, -1 miss."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def reset(self):
        self.paddle = SIZE // 2
        self.fruit = [0, int(self.rng.integers(4, SIZE - 4))]
        self.colour = self.rng.uniform(0.5, 1.0, size=3)
        return self.render()

    def render(self):
        frame = np.zeros((SIZE, SIZE, 3), dtype=np.uint8)
        frame[:, :, 2] = 40
        frame[SIZE - 3:, max(self.paddle - PADDLE // 2, 0): self.paddle + PADDLE // 2] = (230, 230, 230)
        r, c = self.fruit
        frame[max(r - 2, 0): r + 2, max(c - 2, 0): c + 2] = (self.colour * 255).astype(np.uint8)
        return frame

    def step(self, action):
        self.paddle = int(np.clip(self.paddle + (action - 1) * 3, PADDLE // 2, SIZE - PADDLE // 2))
        self.fruit[0] += 2
        done = self.fruit[0] >= SIZE - 3
        reward = 0.0
        if done:
            reward = 1.0 if abs(self.fruit[1] - self.paddle) <= PADDLE // 2 else -1.0
        return self.render(), reward, done


class Replay:
    def __init__(self, capacity):
        self.data = deque(maxlen=capacity)

    def push(self, *transition):
        self.data.append(transition)

    def sample(self, n):
        obs, act, rew, nxt, done = zip(*random.sample(self.data, n))
        return np.stack(obs), np.array(act), np.array(rew, np.float32), np.stack(nxt), np.array(done, np.float32)


def frames_to_input(frames, device):
    t = torch.as_tensor(frames, device=device).float() / 255.0
    return t.reshape(-1, 3, SIZE, SIZE)


class QNet(nn.Module):
    def __init__(self, actions=3):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 32, 8, 4), nn.ReLU(), nn.Conv2d(32, 64, 4, 2), nn.ReLU(),
                                  nn.Conv2d(64, 64, 3, 1), nn.ReLU(), nn.Flatten())
        with torch.no_grad():
            n = self.conv(torch.zeros(1, 3, SIZE, SIZE)).shape[1]
        self.head = nn.Sequential(nn.Linear(n, 256), nn.ReLU(), nn.Linear(256, actions))

    def forward(self, x):
        return self.head(self.conv(x))


def epsilon(step):
    return max(EPS_END, EPS_START - (EPS_START - EPS_END) * step / EPS_DECAY)


def learn(online, target, optimizer, replay, device):
    obs, act, rew, nxt, done = replay.sample(BATCH)
    q = online(frames_to_input(obs, device)).gather(1, torch.as_tensor(act, device=device).unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        next_q = target(frames_to_input(nxt, device)).max(dim=1).values
        goal = torch.as_tensor(rew, device=device) + GAMMA * (1 - torch.as_tensor(done, device=device)) * next_q
    loss = F.smooth_l1_loss(q, goal)
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(online.parameters(), 10.0)
    optimizer.step()
    return loss.item()


def main():
    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    env, replay = CatcherEnv(SEED), Replay(BUFFER)
    online = QNet().to(device)
    target = copy.deepcopy(online).requires_grad_(False)
    optimizer = torch.optim.Adam(online.parameters(), lr=LR, eps=1e-4)

    obs, returns, episode_return = env.reset(), deque(maxlen=100), 0.0
    for step in range(STEPS):
        if random.random() < epsilon(step):
            action = random.randrange(3)
        else:
            with torch.no_grad():
                action = int(online(frames_to_input(obs[None], device)).argmax(dim=1).item())
        nxt, reward, done = env.step(action)
        replay.push(obs, action, reward, nxt, done)
        episode_return += reward
        obs = env.reset() if done else nxt
        if done:
            returns.append(episode_return)
            episode_return = 0.0
        if step >= WARMUP and step % TRAIN_EVERY == 0:
            loss = learn(online, target, optimizer, replay, device)
        if step % SYNC_EVERY == 0:
            target.load_state_dict(online.state_dict())
        if step % 20_000 == 0 and returns:
            print(f"step {step:06d} eps {epsilon(step):.2f} mean return {np.mean(returns):+.3f}")
    torch.save(online.state_dict(), "catcher_dqn.pt")


if __name__ == "__main__":
    main()
