import random
from collections import deque
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SETTINGS = dict(episodes=400, horizon=360, capacity=40, gamma=0.97, lr=5e-4, batch=64, buffer=50000,
                warmup=2000, target_every=1000, eps_start=1.0, eps_end=0.05, eps_decay=40000, seed=11,
                out="runs/signal_dqn")


class Intersection:
    def __init__(self, capacity, horizon, rng):
        self.capacity, self.horizon, self.rng = capacity, horizon, rng
        self.arrival = np.array([0.35, 0.30, 0.20, 0.25])

    def reset(self):
        self.queues = np.zeros(4)
        self.phase, self.t = 0, 0
        return self.observe()

    def observe(self):
        onehot = np.eye(2)[self.phase]
        return np.concatenate([self.queues / self.capacity, onehot, [self.t / self.horizon]]).astype(np.float32)

    def step(self, action):
        switch_penalty = 2.0 if action != self.phase else 0.0
        self.phase = action
        self.queues += self.rng.poisson(self.arrival)
        green = [0, 2] if self.phase == 0 else [1, 3]
        self.queues[green] = np.maximum(self.queues[green] - 3, 0)
        self.queues = np.minimum(self.queues, self.capacity)
        self.t += 1
        reward = -(self.queues.sum() + switch_penalty) / self.capacity
        done = self.t >= self.horizon
        return self.observe(), float(reward), done


class QNetwork(nn.Module):
    def __init__(self, obs_dim, actions):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                                 nn.Linear(128, actions))

    def forward(self, obs):
        return self.net(obs)


class Replay:
    def __init__(self, size):
        self.items = deque(maxlen=size)

    def push(self, *transition):
        self.items.append(transition)

    def sample(self, batch, device):
        obs, act, rew, nxt, done = zip(*random.sample(self.items, batch))
        as_t = lambda v, dt: torch.as_tensor(np.array(v), dtype=dt, device=device)
        return (as_t(obs, torch.float32), as_t(act, torch.int64), as_t(rew, torch.float32),
                as_t(nxt, torch.float32), as_t(done, torch.float32))

    def __len__(self):
        return len(self.items)


def epsilon(step, s):
    frac = min(step / s["eps_decay"], 1.0)
    return s["eps_start"] + frac * (s["eps_end"] - s["eps_start"])


def act(online, obs, eps, device):
    if random.random() < eps:
        return random.randrange(2)
    with torch.no_grad():
        q = online(torch.as_tensor(obs, device=device).unsqueeze(0))
    return int(q.argmax(dim=1).item())


def learn(online, target, optimizer, batch, gamma):
    obs, act_, rew, nxt, done = batch
    q = online(obs).gather(1, act_.unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        best_next = online(nxt).argmax(dim=1, keepdim=True)
        bootstrap = target(nxt).gather(1, best_next).squeeze(1)
        goal = rew + gamma * (1.0 - done) * bootstrap
    loss = F.smooth_l1_loss(q, goal)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    nn.utils.clip_grad_norm_(online.parameters(), 10.0)
    optimizer.step()
    return loss.item()


def main(s=SETTINGS):
    random.seed(s["seed"])
    np.random.seed(s["seed"])
    torch.manual_seed(s["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    env = Intersection(s["capacity"], s["horizon"], np.random.default_rng(s["seed"]))
    online = QNetwork(7, 2).to(device)
    target = QNetwork(7, 2).to(device)
    target.load_state_dict(online.state_dict())
    target.requires_grad_(False)
    optimizer = torch.optim.Adam(online.parameters(), lr=s["lr"])
    replay, step, returns = Replay(s["buffer"]), 0, []
    for episode in range(s["episodes"]):
        obs, done, total = env.reset(), False, 0.0
        while not done:
            action = act(online, obs, epsilon(step, s), device)
            nxt, reward, done = env.step(action)
            replay.push(obs, action, reward, nxt, float(done))
            obs, total, step = nxt, total + reward, step + 1
            if len(replay) >= s["warmup"]:
                learn(online, target, optimizer, replay.sample(s["batch"], device), s["gamma"])
            if step % s["target_every"] == 0:
                target.load_state_dict(online.state_dict())
            if done:
                returns.append(total)
        if episode % 20 == 0:
            print(f"episode {episode:04d} return {np.mean(returns[-20:]):.2f} eps {epsilon(step, s):.3f}")
    out = Path(s["out"])
    out.mkdir(parents=True, exist_ok=True)
    torch.save({"online": online.state_dict(), "optimizer": optimizer.state_dict(), "step": step}, out / "dqn.pt")


if __name__ == "__main__":
    main()
