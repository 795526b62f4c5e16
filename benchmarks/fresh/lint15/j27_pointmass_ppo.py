import argparse

import torch
import torch.nn as nn
from torch.distributions import Normal
from torch.func import functional_call


class PointMassEnvs:
    def __init__(self, n, horizon=100, dt=0.1, seed=0):
        self.n, self.horizon, self.dt = n, horizon, dt
        self.gen = torch.Generator().manual_seed(seed)
        self.reset_all()

    def reset_all(self):
        self.pos = torch.rand(self.n, 2, generator=self.gen) * 4 - 2
        self.vel = torch.zeros(self.n, 2)
        self.t = torch.zeros(self.n, dtype=torch.long)
        return self.obs()

    def obs(self):
        return torch.cat([self.pos, self.vel], dim=1)

    def step(self, action):
        action = action.clamp(-1.0, 1.0)
        self.vel = 0.9 * self.vel + self.dt * action
        self.pos = self.pos + self.dt * self.vel
        self.t += 1
        dist = self.pos.norm(dim=1)
        reward = -dist - 0.01 * action.pow(2).sum(1) + 5.0 * (dist < 0.1).float()
        done = (dist < 0.1) | (self.t >= self.horizon)
        if done.any():
            k = int(done.sum())
            self.pos[done] = torch.rand(k, 2, generator=self.gen) * 4 - 2
            self.vel[done] = 0.0
            self.t[done] = 0
        return self.obs(), reward, done


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=4, act_dim=2, hidden=64):
        super().__init__()
        self.pi = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                nn.Linear(hidden, act_dim))
        self.v = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.log_std = nn.Parameter(torch.full((act_dim,), -0.5))

    def forward(self, obs):
        return Normal(self.pi(obs), self.log_std.exp()), self.v(obs).squeeze(-1)


def gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    adv = torch.zeros_like(rewards)
    running = torch.zeros_like(last_value)
    for t in reversed(range(len(rewards))):
        nxt = last_value if t == len(rewards) - 1 else values[t + 1]
        not_done = 1.0 - dones[t].float()
        delta = rewards[t] + gamma * nxt * not_done - values[t]
        running = delta + gamma * lam * not_done * running
        adv[t] = running
    return adv, adv + values


def kl_to_snapshot(model, snapshot, obs):
    old_dist, _ = functional_call(model, snapshot, (obs,))
    new_dist, _ = model(obs)
    return torch.distributions.kl_divergence(old_dist, new_dist).sum(-1).mean()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--envs", type=int, default=64)
    parser.add_argument("--rollout", type=int, default=128)
    parser.add_argument("--updates", type=int, default=300)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--minibatch", type=int, default=1024)
    parser.add_argument("--clip", type=float, default=0.2)
    parser.add_argument("--target-kl", type=float, default=0.02)
    args = parser.parse_args()

    torch.manual_seed(0)
    envs = PointMassEnvs(args.envs)
    model = ActorCritic()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    obs = envs.obs()
    for update in range(args.updates):
        buf = {k: [] for k in ("obs", "act", "logp", "rew", "done", "val")}
        with torch.no_grad():
            for _ in range(args.rollout):
                dist, value = model(obs)
                action = dist.sample()
                nxt, reward, done = envs.step(action)
                for k, v in zip(buf, (obs, action, dist.log_prob(action).sum(-1), reward, done, value)):
                    buf[k].append(v)
                obs = nxt
            _, last_value = model(obs)
        data = {k: torch.stack(v) for k, v in buf.items()}
        adv, ret = gae(data["rew"], data["val"], data["done"], last_value)
        flat = {k: v.flatten(0, 1) for k, v in data.items()}
        flat["adv"] = ((adv - adv.mean()) / (adv.std() + 1e-8)).flatten()
        flat["ret"] = ret.flatten()
        snapshot = {k: v.detach().clone() for k, v in model.named_parameters()}
        for _ in range(args.epochs):
            for idx in torch.randperm(len(flat["obs"])).split(args.minibatch):
                dist, value = model(flat["obs"][idx])
                ratio = (dist.log_prob(flat["act"][idx]).sum(-1) - flat["logp"][idx]).exp()
                surrogate = torch.min(ratio * flat["adv"][idx],
                                      ratio.clamp(1 - args.clip, 1 + args.clip) * flat["adv"][idx])
                loss = -surrogate.mean() + 0.5 * (value - flat["ret"][idx]).pow(2).mean() - 0.001 * dist.entropy().mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                optimizer.step()
            with torch.no_grad():
                kl = kl_to_snapshot(model, snapshot, flat["obs"][:4096]).item()
            if kl > args.target_kl:
                break
        if update % 10 == 0:
            with torch.no_grad():
                spread = Normal(torch.zeros(2), model.log_std.exp()).sample((1000,)).std(0)
            print(f"update {update}: mean reward {data['rew'].mean().item():.3f} kl {kl:.4f} "
                  f"action spread {spread.tolist()}")
    torch.save(model.state_dict(), "pointmass_ppo.pt")


if __name__ == "__main__":
    main()
