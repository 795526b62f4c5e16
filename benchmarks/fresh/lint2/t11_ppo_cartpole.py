"""Proximal Policy Optimization on CartPole-v1 (single environment, GAE advantages)."""
import argparse
import random

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=64):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                   nn.Linear(hidden, n_actions))
        self.critic = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                    nn.Linear(hidden, 1))

    def act(self, obs):
        dist = Categorical(logits=self.actor(obs))
        action = dist.sample()
        return action, dist.log_prob(action), self.critic(obs).squeeze(-1)

    def evaluate(self, obs, actions):
        dist = Categorical(logits=self.actor(obs))
        return dist.log_prob(actions), dist.entropy(), self.critic(obs).squeeze(-1)


def gae(rewards, values, dones, last_value, gamma, lam):
    advantages = torch.zeros_like(rewards)
    running = 0.0
    for t in reversed(range(len(rewards))):
        next_value = last_value if t == len(rewards) - 1 else values[t + 1]
        not_done = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_value * not_done - values[t]
        running = delta + gamma * lam * not_done * running
        advantages[t] = running
    return advantages, advantages + values


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--total-steps", type=int, default=200_000)
    ap.add_argument("--rollout", type=int, default=2048)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--minibatch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--clip-eps", type=float, default=0.2)
    ap.add_argument("--max-grad-norm", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    env = gym.make("CartPole-v1")
    agent = ActorCritic(env.observation_space.shape[0], env.action_space.n)
    params = agent.parameters()
    optimizer = torch.optim.Adam(params, lr=args.lr, eps=1e-5)

    obs, _ = env.reset(seed=args.seed)
    episode_return, returns_log = 0.0, []
    for update in range(args.total_steps // args.rollout):
        buf = {k: [] for k in ("obs", "act", "logp", "val", "rew", "done")}
        with torch.no_grad():
            for _ in range(args.rollout):
                obs_t = torch.as_tensor(obs, dtype=torch.float32)
                action, logp, value = agent.act(obs_t)
                obs, reward, terminated, truncated, _ = env.step(action.item())
                for k, v in zip(buf, (obs_t, action, logp, value, reward, float(terminated or truncated))):
                    buf[k].append(v)
                episode_return += reward
                if terminated or truncated:
                    returns_log.append(episode_return)
                    episode_return = 0.0
                    obs, _ = env.reset()
            last_value = agent.critic(torch.as_tensor(obs, dtype=torch.float32)).squeeze(-1)

        b_obs, b_act = torch.stack(buf["obs"]), torch.stack(buf["act"])
        b_logp, b_val = torch.stack(buf["logp"]), torch.stack(buf["val"])
        rewards = torch.tensor(buf["rew"], dtype=torch.float32)
        dones = torch.tensor(buf["done"], dtype=torch.float32)
        adv, ret = gae(rewards, b_val, dones, last_value, gamma=0.99, lam=0.95)

        for _ in range(args.epochs):
            for idx in torch.randperm(args.rollout).split(args.minibatch):
                new_logp, entropy, new_val = agent.evaluate(b_obs[idx], b_act[idx])
                mb_adv = (adv[idx] - adv[idx].mean()) / (adv[idx].std() + 1e-8)
                ratio = (new_logp - b_logp[idx]).exp()
                clipped = ratio.clamp(1 - args.clip_eps, 1 + args.clip_eps)
                policy_loss = -torch.min(ratio * mb_adv, clipped * mb_adv).mean()
                value_loss = 0.5 * (new_val - ret[idx]).pow(2).mean()
                loss = policy_loss + 0.5 * value_loss - 0.01 * entropy.mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(params, args.max_grad_norm)
                optimizer.step()

        if returns_log:
            print(f"update {update}: mean return (last 20) {np.mean(returns_log[-20:]):.1f}")
    torch.save(agent.state_dict(), "ppo_cartpole.pt")


if __name__ == "__main__":
    main()
