"""Double DQN for a single-warehouse inventory problem with stochastic demand and lead time.

State: on-hand stock, pipeline orders (lead time 2), day of week. Action: order 0..10 crates.
Reward: revenue - holding cost - stock-out penalty - ordering cost.
"""
import copy
import random
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

MAX_ORDER, CAP, LEAD = 10, 60, 2


class InventoryEnv:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)

    def reset(self):
        self.stock, self.pipeline, self.day = 20, [0] * LEAD, 0
        return self._obs()

    def _obs(self):
        dow = np.eye(7)[self.day % 7]
        return np.concatenate([[self.stock / CAP], np.array(self.pipeline) / MAX_ORDER, dow]).astype(np.float32)

    def step(self, action):
        self.stock = min(CAP, self.stock + self.pipeline.pop(0))
        self.pipeline.append(int(action))
        mean = 6 + 4 * (self.day % 7 >= 5)
        demand = self.rng.poisson(mean)
        sold = min(demand, self.stock)
        self.stock -= sold
        reward = 2.0 * sold - 0.1 * self.stock - 1.0 * (demand - sold) - 0.5 * (action > 0) - 0.2 * action
        self.day += 1
        return self._obs(), float(reward), self.day >= 90


class QNet(nn.Module):
    def __init__(self, d_obs, n_actions):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_obs, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU())
        self.q = nn.Linear(128, n_actions)

    def forward(self, obs):
        return self.q(self.body(obs))


class Replay:
    def __init__(self, size):
        self.buf = deque(maxlen=size)

    def push(self, *transition):
        self.buf.append(transition)

    def sample(self, n):
        batch = random.sample(self.buf, n)
        obs, act, rew, nxt, done = map(np.array, zip(*batch))
        return (torch.as_tensor(obs), torch.as_tensor(act, dtype=torch.long), torch.as_tensor(rew, dtype=torch.float32),
                torch.as_tensor(nxt), torch.as_tensor(done, dtype=torch.float32))


def td_loss(online, target, batch, gamma):
    obs, act, rew, nxt, done = batch
    q = online(obs).gather(1, act.unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        best = online(nxt).argmax(dim=1, keepdim=True)
        q_next = target(nxt).gather(1, best).squeeze(1)
        y = rew + gamma * (1.0 - done) * q_next
    return F.smooth_l1_loss(q, y)


def main(episodes=800, gamma=0.99, batch_size=64, sync_every=500, seed=0):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    env = InventoryEnv(seed)
    d_obs = env.reset().shape[0]
    online = QNet(d_obs, MAX_ORDER + 1)
    target = copy.deepcopy(online)
    target.requires_grad_(False)
    optimizer = torch.optim.Adam(online.parameters(), lr=5e-4)
    replay = Replay(50_000)

    steps = 0
    for ep in range(episodes):
        obs, done, ep_return = env.reset(), False, 0.0
        eps = max(0.05, 1.0 - ep / (0.6 * episodes))
        while not done:
            if random.random() < eps:
                action = random.randrange(MAX_ORDER + 1)
            else:
                with torch.no_grad():
                    action = int(online(torch.from_numpy(obs)).argmax())
            nxt, reward, done = env.step(action)
            replay.push(obs, action, reward / 10.0, nxt, done)
            obs, ep_return, steps = nxt, ep_return + reward, steps + 1

            if len(replay.buf) >= 1000:
                loss = td_loss(online, target, replay.sample(batch_size), gamma)
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(online.parameters(), 10.0)
                optimizer.step()
            if steps % sync_every == 0:
                target.load_state_dict(online.state_dict())
        if ep % 50 == 0:
            print(f"episode {ep:4d} eps {eps:.2f} return {ep_return:8.1f}")
    torch.save(online.state_dict(), "inventory_ddqn.pt")


if __name__ == "__main__":
    main()
