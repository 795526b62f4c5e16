"""PPO for a single-product inventory problem with lost sales and a two-day lead time.

The environment is a small NumPy simulator; the policy chooses an order size from 0..20 units
every day. Rewards are revenue minus holding, ordering and lost-sale costs, scaled by 1/100.
"""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SETUP = {"envs": 16, "rollout": 128, "updates": 400, "epochs": 4, "minibatch": 512, "gamma": 0.99,
         "lam": 0.95, "clip": 0.2, "lr": 3e-4, "ent": 0.01, "vf": 0.5, "max_grad_norm": 0.5, "seed": 21}
MAX_ORDER, LEAD, CAP = 20, 2, 60


class InventoryEnv:
    def __init__(self, n, rng):
        self.n, self.rng = n, rng
        self.reset()

    def reset(self):
        self.stock = self.rng.integers(10, 30, self.n).astype(np.float32)
        self.pipeline = np.zeros((self.n, LEAD), dtype=np.float32)
        self.day = np.zeros(self.n, dtype=np.int64)
        return self.obs()

    def obs(self):
        season = 2 * np.pi * (self.day % 7) / 7
        return np.column_stack([self.stock / CAP, self.pipeline / MAX_ORDER, np.sin(season), np.cos(season)])

    def step(self, order):
        arriving = self.pipeline[:, 0].copy()
        self.pipeline = np.column_stack([self.pipeline[:, 1:], order.astype(np.float32)])
        self.stock = np.minimum(self.stock + arriving, CAP)
        mean_demand = 8 + 4 * np.sin(2 * np.pi * (self.day % 7) / 7)
        demand = self.rng.poisson(mean_demand).astype(np.float32)
        sold = np.minimum(self.stock, demand)
        self.stock -= sold
        reward = (5.0 * sold - 0.2 * self.stock - 1.0 * (order > 0) - 2.0 * (demand - sold)) / 100.0
        self.day += 1
        done = self.day >= 90
        if done.any():
            self.stock[done] = self.rng.integers(10, 30, done.sum())
            self.pipeline[done] = 0.0
            self.day[done] = 0
        return self.obs(), reward.astype(np.float32), done


class ActorCritic(nn.Module):
    def __init__(self, n_obs, n_act, hidden=128):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_obs, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_act)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)


def gae(rewards, values, dones, last_value, gamma, lam):
    adv = torch.zeros_like(rewards)
    running = torch.zeros_like(last_value)
    for t in reversed(range(rewards.shape[0])):
        next_value = last_value if t == rewards.shape[0] - 1 else values[t + 1]
        not_done = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_value * not_done - values[t]
        running = delta + gamma * lam * not_done * running
        adv[t] = running
    return adv, adv + values


def main(cfg=SETUP):
    random.seed(cfg["seed"])
    np.random.seed(cfg["seed"])
    torch.manual_seed(cfg["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    env = InventoryEnv(cfg["envs"], np.random.default_rng(cfg["seed"]))
    obs = torch.as_tensor(env.reset(), dtype=torch.float32, device=device)
    model = ActorCritic(obs.shape[1], MAX_ORDER + 1).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"], eps=1e-5)
    T, N = cfg["rollout"], cfg["envs"]

    for update in range(cfg["updates"]):
        buf_obs = torch.zeros(T, N, obs.shape[1], device=device)
        buf_act = torch.zeros(T, N, dtype=torch.long, device=device)
        buf_logp, buf_val, buf_rew, buf_done = (torch.zeros(T, N, device=device) for _ in range(4))
        with torch.no_grad():
            for t in range(T):
                logits, value = model(obs)
                dist = torch.distributions.Categorical(logits=logits)
                action = dist.sample()
                next_obs, reward, done = env.step(action.cpu().numpy())
                buf_obs[t], buf_act[t], buf_logp[t], buf_val[t] = obs, action, dist.log_prob(action), value
                buf_rew[t] = torch.as_tensor(reward, device=device)
                buf_done[t] = torch.as_tensor(done, dtype=torch.float32, device=device)
                obs = torch.as_tensor(next_obs, dtype=torch.float32, device=device)
            _, last_value = model(obs)
            adv, returns = gae(buf_rew, buf_val, buf_done, last_value, cfg["gamma"], cfg["lam"])

        flat = lambda x: x.reshape(T * N, *x.shape[2:])
        b_obs, b_act, b_logp, b_adv, b_ret = map(flat, (buf_obs, buf_act, buf_logp, adv, returns))
        model.train()
        for _ in range(cfg["epochs"]):
            for idx in torch.randperm(T * N, device=device).split(cfg["minibatch"]):
                logits, value = model(b_obs[idx])
                dist = torch.distributions.Categorical(logits=logits)
                ratio = (dist.log_prob(b_act[idx]) - b_logp[idx]).exp()
                a = (b_adv[idx] - b_adv[idx].mean()) / (b_adv[idx].std() + 1e-8)
                pg = -torch.min(ratio * a, ratio.clamp(1 - cfg["clip"], 1 + cfg["clip"]) * a).mean()
                vf = F.mse_loss(value, b_ret[idx])
                loss = pg + cfg["vf"] * vf - cfg["ent"] * dist.entropy().mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), cfg["max_grad_norm"])
                optimizer.step()
        if update % 20 == 0:
            print(f"update {update:4d}  mean reward/day {buf_rew.mean().item() * 100:.2f}  value loss {vf.item():.4f}")
    torch.save(model.state_dict(), "inventory_ppo.pt")


if __name__ == "__main__":
    main()
