# Adapted from pytorch/examples (https://github.com/pytorch/examples), reinforcement_learning/
# reinforce.py, at commit 77f55b9 (BSD 3-Clause License, (c) 2017 PyTorch contributors). Edits for
# the watch false-positive study: gymnasium's CartPole-v1 replaced by a stand-in with its
# interface (4-number states, reward 1 per step, an episode ends at random after 5 to 30 steps),
# argparse replaced by its defaults, 6 episodes. Policy, select_action() and finish_episode() as
# the original.
from collections import deque
from itertools import count

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

gamma, seed, log_interval = 0.99, 543, 2


class CartPoleStandIn:
    """reset() -> (state, info); step(action) -> (state, reward, terminated, truncated, info)."""
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed=None):
        self.left = int(self.rng.integers(5, 30))
        return self.rng.normal(size=4), {}

    def step(self, action):
        self.left -= 1
        return self.rng.normal(size=4), 1.0, self.left <= 0, False, {}


env = CartPoleStandIn(seed)
env.reset(seed=seed)
torch.manual_seed(seed)


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 128)
        self.dropout = nn.Dropout(p=0.6)
        self.affine2 = nn.Linear(128, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


policy = Policy()
optimizer = optim.Adam(policy.parameters(), lr=1e-2)
eps = np.finfo(np.float32).eps.item()


def select_action(state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode():
    R = 0
    policy_loss = []
    returns = deque()
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.appendleft(R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]


def main():
    running_reward = 10
    for i_episode in count(1):
        state, _ = env.reset()
        ep_reward = 0
        for t in range(1, 10000):
            action = select_action(state)
            state, reward, terminated, truncated, _ = env.step(action)
            policy.rewards.append(reward)
            ep_reward += reward
            if terminated or truncated:
                break
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        finish_episode()
        if i_episode % log_interval == 0:
            print(f'Episode {i_episode}\tLast reward: {ep_reward:.2f}\tAverage reward: {running_reward:.2f}')
        if i_episode >= 6:
            break


if __name__ == '__main__':
    main()
