"""PPO (clipped objective, GAE) for a batch of vectorised 8x8 key-and-door gridworlds.
The environment lives in envs/keydoor.py and returns one-hot observation grids."""

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical

from envs.keydoor import KeyDoorVecEnv

N_ENVS, ROLLOUT, EPOCHS, MINIBATCH = 32, 128, 4, 512
GAMMA, LAM, CLIP, ENT_COEF, VF_COEF = 0.99, 0.95, 0.2, 0.01, 0.5
UPDATES = 2_000


class ActorCritic(nn.Module):
    def __init__(self, in_channels, n_actions):
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Conv2d(in_channels, 32, 3, padding=1), nn.ReLU(),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
            nn.Flatten(), nn.LazyLinear(256), nn.ReLU())
        self.policy = nn.Linear(256, n_actions)
        self.value = nn.Linear(256, 1)

    def forward(self, obs):
        h = self.trunk(obs)
        return self.policy(h), self.value(h).squeeze(-1)


def gae(rewards, values, dones, last_value):
    adv = torch.zeros_like(rewards)
    running = torch.zeros_like(last_value)
    for t in reversed(range(rewards.size(0))):
        next_value = last_value if t == rewards.size(0) - 1 else values[t + 1]
        not_done = 1.0 - dones[t]
        delta = rewards[t] + GAMMA * next_value * not_done - values[t]
        running = delta + GAMMA * LAM * not_done * running
        adv[t] = running
    return adv, adv + values


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    env = KeyDoorVecEnv(N_ENVS, size=8, seed=1)
    obs = torch.as_tensor(env.reset(), dtype=torch.float32, device=device)
    agent = ActorCritic(obs.shape[1], env.n_actions).to(device)
    agent(obs[:1])  # materialise the lazy layer before building the optimizer
    optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)

    for update in range(UPDATES):
        buf = {k: [] for k in ("obs", "act", "logp", "val", "rew", "done")}
        with torch.no_grad():
            for _ in range(ROLLOUT):
                logits, value = agent(obs)
                dist = Categorical(logits=logits)
                action = dist.sample()
                next_obs, reward, done = env.step(action.cpu().numpy())
                for k, v in zip(buf, (obs, action, dist.log_prob(action), value,
                                      torch.as_tensor(reward, dtype=torch.float32, device=device),
                                      torch.as_tensor(done, dtype=torch.float32, device=device))):
                    buf[k].append(v)
                obs = torch.as_tensor(next_obs, dtype=torch.float32, device=device)
            _, last_value = agent(obs)
        data = {k: torch.stack(v) for k, v in buf.items()}
        advantages, returns = gae(data["rew"], data["val"], data["done"], last_value)

        flat = {k: v.flatten(0, 1) for k, v in data.items()}
        flat_adv, flat_ret = advantages.flatten(), returns.flatten()
        stats = []
        for _ in range(EPOCHS):
            for idx in torch.randperm(flat_adv.numel(), device=device).split(MINIBATCH):
                logits, value = agent(flat["obs"][idx])
                dist = Categorical(logits=logits)
                ratio = torch.exp(dist.log_prob(flat["act"][idx]) - flat["logp"][idx])
                adv = flat_adv[idx]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                policy_loss = -torch.min(ratio * adv, ratio.clamp(1 - CLIP, 1 + CLIP) * adv).mean()
                value_loss = (value - flat_ret[idx]).pow(2).mean()
                loss = policy_loss + VF_COEF * value_loss - ENT_COEF * dist.entropy().mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()
                stats.append([policy_loss.item(), value_loss.item()])

        if update % 20 == 0:
            pl, vl = np.mean(stats, axis=0)
            print(f"update {update}: return/step {data['rew'].mean().item():.3f} pi {pl:.3f} v {vl:.3f}")
    torch.save(agent.state_dict(), "ppo_keydoor.pt")


if __name__ == "__main__":
    main()
