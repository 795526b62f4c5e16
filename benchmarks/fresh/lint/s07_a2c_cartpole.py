"""Advantage actor-critic (A2C) with n-step returns on a vectorised CartPole."""
import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=128):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)


def nstep_returns(rewards, dones, last_value, gamma):
    out = np.zeros_like(rewards)
    running = last_value
    for t in reversed(range(len(rewards))):
        running = rewards[t] + gamma * running * (1.0 - dones[t])
        out[t] = running
    return out


def main(total_updates=2000, n_envs=8, n_steps=5, gamma=0.99):
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1") for _ in range(n_envs)])
    obs, _ = envs.reset(seed=0)
    model = ActorCritic(envs.single_observation_space.shape[0], envs.single_action_space.n)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=7e-4, alpha=0.99, eps=1e-5)

    for update in range(total_updates):
        log_probs, values, entropies, rewards, dones = [], [], [], [], []
        for _ in range(n_steps):
            logits, value = model(torch.as_tensor(obs, dtype=torch.float32))
            dist = torch.distributions.Categorical(logits=logits)
            action = dist.sample()
            obs, reward, terminated, truncated, _ = envs.step(action.numpy())
            log_probs.append(dist.log_prob(action))
            values.append(value)
            entropies.append(dist.entropy())
            rewards.append(reward)
            dones.append(np.logical_or(terminated, truncated).astype(np.float32))

        with torch.no_grad():
            _, last_value = model(torch.as_tensor(obs, dtype=torch.float32))
        returns_np = nstep_returns(np.array(rewards, dtype=np.float32), np.array(dones), last_value.numpy(), gamma)
        returns = torch.as_tensor(returns_np, dtype=torch.float32)

        values = torch.stack(values)
        advantages = (returns - values).detach()
        policy_loss = -(torch.stack(log_probs) * advantages).mean()
        value_loss = F.mse_loss(values, returns)
        entropy = torch.stack(entropies).mean()
        loss = policy_loss + 0.5 * value_loss - 0.01 * entropy

        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        if update % 100 == 0:
            print(f"update {update}: loss {loss.item():.3f} mean return-to-go {returns_np.mean():.1f}")


if __name__ == "__main__":
    main()
