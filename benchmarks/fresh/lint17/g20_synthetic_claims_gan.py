"""Generate synthetic insurance-claim records (continuous amounts + categorical fields) with a
Wasserstein GAN with gradient penalty, so that the fraud team can share data with vendors.
"""
import argparse
import json
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class ClaimsTable:
    def __init__(self, path):
        d = np.load(path)
        self.cont = d["continuous"].astype(np.float32)
        self.cat = d["categorical"].astype(np.int64)
        self.cardinalities = [int(c.max()) + 1 for c in self.cat.T]
        self.log_cont = np.log1p(np.clip(self.cont, 0, None))
        self.mean, self.std = self.log_cont.mean(0), self.log_cont.std(0) + 1e-6

    def encoded(self):
        cont = (self.log_cont - self.mean) / self.std
        onehots = [np.eye(k, dtype=np.float32)[col] for k, col in zip(self.cardinalities, self.cat.T)]
        return torch.from_numpy(np.concatenate([cont] + onehots, axis=1))

    def decode(self, rows):
        n_cont = self.cont.shape[1]
        cont = np.expm1(rows[:, :n_cont].numpy() * self.std + self.mean)
        cats, start = [], n_cont
        for k in self.cardinalities:
            cats.append(rows[:, start:start + k].argmax(dim=1).numpy())
            start += k
        return cont, np.stack(cats, axis=1)


class Generator(nn.Module):
    def __init__(self, z_dim, n_cont, cardinalities, hidden=256):
        super().__init__()
        self.n_cont, self.cardinalities = n_cont, cardinalities
        self.body = nn.Sequential(nn.Linear(z_dim, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, hidden), nn.LeakyReLU(0.2))
        self.out = nn.Linear(hidden, n_cont + sum(cardinalities))

    def forward(self, z, tau=0.5):
        h = self.out(self.body(z))
        parts, start = [h[:, : self.n_cont]], self.n_cont
        for k in self.cardinalities:
            parts.append(F.gumbel_softmax(h[:, start:start + k], tau=tau))
            start += k
        return torch.cat(parts, dim=1)


class Critic(nn.Module):
    def __init__(self, d_in, hidden=256):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, hidden),
                                 nn.LeakyReLU(0.2), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


def gradient_penalty(critic, real, fake):
    eps = torch.rand(real.size(0), 1, device=real.device)
    mix = (eps * real + (1 - eps) * fake).requires_grad_(True)
    grad, = torch.autograd.grad(critic(mix).sum(), mix, create_graph=True)
    return ((grad.norm(2, dim=1) - 1) ** 2).mean()


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", default="data/claims_2023.npz")
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--batch-size", type=int, default=500)
    ap.add_argument("--z-dim", type=int, default=64)
    ap.add_argument("--n-critic", type=int, default=5)
    ap.add_argument("--gp", type=float, default=10.0)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--samples", type=int, default=100000)
    ap.add_argument("--out", default="runs/claims_gan")
    args = ap.parse_args(argv)

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    table = ClaimsTable(args.table)
    data = table.encoded().to(device)
    gen = Generator(args.z_dim, table.cont.shape[1], table.cardinalities).to(device)
    critic = Critic(data.shape[1]).to(device)
    opt_g = torch.optim.Adam(gen.parameters(), lr=args.lr, betas=(0.5, 0.9))
    opt_d = torch.optim.Adam(critic.parameters(), lr=args.lr, betas=(0.5, 0.9))

    for step in range(args.steps):
        for _ in range(args.n_critic):
            real = data[torch.randint(len(data), (args.batch_size,), device=device)]
            fake = gen(torch.randn(args.batch_size, args.z_dim, device=device)).detach()
            d_loss = critic(fake).mean() - critic(real).mean() + args.gp * gradient_penalty(critic, real, fake)
            opt_d.zero_grad()
            d_loss.backward()
            opt_d.step()

        fake = gen(torch.randn(args.batch_size, args.z_dim, device=device))
        g_loss = -critic(fake).mean()
        opt_d.zero_grad()
        g_loss.backward()
        opt_g.step()
        if step % 500 == 0:
            print(f"step {step}: critic {d_loss.item():.4f} generator {g_loss.item():.4f}")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.save({"generator": gen.state_dict(), "critic": critic.state_dict(),
                "cardinalities": table.cardinalities}, out / "claims_wgan.pt")
    gen.eval()
    with torch.no_grad():
        rows = torch.cat([gen(torch.randn(10000, args.z_dim, device=device)).cpu()
                          for _ in range(args.samples // 10000)])
    cont, cats = table.decode(rows)
    np.savez_compressed(out / "synthetic_claims.npz", continuous=cont, categorical=cats)
    (out / "summary.json").write_text(json.dumps({"rows": len(cont), "mean_amount": float(cont[:, 0].mean())}))


if __name__ == "__main__":
    main()
