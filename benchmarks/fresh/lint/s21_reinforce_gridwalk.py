"""REINFORCE on a tiny grid-walk environment (no gym dependency)."""
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical


class GridWalk:
    """Agent starts at 0 on a line of length 10; reward 1 for reaching the right end."""

    def __init__(self, size=10, max_steps=30):
        self.size, self.max_steps = size, max_steps

    def reset(self):
        self.pos, self.t = 0, 0
        return self._obs()

    def _obs(self):
        obs = np.zeros(self.size, dtype=np.float32)
        obs[self.pos] = 1.0
        return obs

    def step(self, action):
        self.pos = int(np.clip(self.pos + (1 if action == 1 else -1), 0, self.size - 1))
        self.t += 1
        done = self.pos == self.size - 1 or self.t >= self.max_steps
        reward = 1.0 if self.pos == self.size - 1 else -0.01
        return self._obs(), reward, done


class Policy(nn.Module):
    def __init__(self, n_obs, n_actions, hidden=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_obs, hidden), nn.Tanh(), nn.Linear(hidden, n_actions))

    def forward(self, obs):
        return Categorical(logits=self.net(obs))


def discounted_returns(rewards, gamma):
    out, running = [], 0.0
    for r in reversed(rewards):
        running = r + gamma * running
        out.append(running)
    returns = np.array(out[::-1], dtype=np.float32)
    return (returns - returns.mean()) / (returns.std() + 1e-8)


def main(episodes=500, gamma=0.99, lr=1e-2):
    torch.manual_seed(0)
    env = GridWalk()
    policy = Policy(env.size, 2)
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)

    for episode in range(episodes):
        obs, done = env.reset(), False
        log_probs, rewards = [], []
        while not done:
            dist = policy(torch.from_numpy(obs))
            action = dist.sample()
            log_probs.append(dist.log_prob(action))
            obs, reward, done = env.step(action.item())
            rewards.append(reward)

        returns = discounted_returns(rewards, gamma)
        policy_loss = sum(-lp.item() * g for lp, g in zip(log_probs, returns))
        policy_loss = torch.tensor(policy_loss, requires_grad=True)
        policy_loss.backward()
        optimizer.step()

        if episode % 50 == 0:
            print(f"episode {episode}: length {len(rewards)}, return {sum(rewards):.2f}")


if __name__ == "__main__":
    main()
