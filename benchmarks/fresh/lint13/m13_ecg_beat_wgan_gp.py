"""Synthetic ECG beats (MIT-BIH, 187-sample segments at 125 Hz) with a 1-D WGAN-GP, to
augment the rare supraventricular class. Critic without normalisation, as the gradient
penalty requires; generator with BatchNorm.

python m13_ecg_beat_wgan_gp.py --beats data/mitbih/class_S.npy --iters 20000
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

BEAT_LEN = 187


def options():
    p = argparse.ArgumentParser()
    p.add_argument("--beats", default="data/mitbih/class_S.npy")
    p.add_argument("--iters", type=int, default=20000)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--z-dim", type=int, default=64)
    p.add_argument("--n-critic", type=int, default=5)
    p.add_argument("--gp-weight", type=float, default=10.0)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--out", default="runs/ecg_wgan")
    return p.parse_args()


class Generator(nn.Module):
    def __init__(self, z_dim, ch=128):
        super().__init__()
        self.fc = nn.Linear(z_dim, ch * 24, bias=False)
        self.bn0 = nn.BatchNorm1d(ch * 24)

        def up(cin, cout):
            return nn.Sequential(nn.Upsample(scale_factor=2, mode="linear"),
                                 nn.Conv1d(cin, cout, 5, padding=2, bias=False), nn.BatchNorm1d(cout), nn.ReLU())

        self.body = nn.Sequential(up(ch, ch), up(ch, ch // 2), up(ch // 2, ch // 4))
        self.out = nn.Conv1d(ch // 4, 1, 5, padding=2)
        self.ch = ch

    def forward(self, z):
        h = F.relu(self.bn0(self.fc(z))).view(z.shape[0], self.ch, 24)
        x = self.out(self.body(h))
        return torch.tanh(x[..., :BEAT_LEN])


class Critic(nn.Module):
    def __init__(self, ch=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(1, ch, 5, stride=2, padding=2), nn.LeakyReLU(0.2),
            nn.Conv1d(ch, ch * 2, 5, stride=2, padding=2), nn.LeakyReLU(0.2),
            nn.Conv1d(ch * 2, ch * 4, 5, stride=2, padding=2), nn.LeakyReLU(0.2),
        )
        self.fc = nn.Linear(ch * 4 * 24, 1)

    def forward(self, x):
        return self.fc(self.net(x).flatten(1)).squeeze(1)


def gradient_penalty(critic, real, fake):
    eps = torch.rand(real.shape[0], 1, 1, device=real.device)
    mixed = (eps * real + (1 - eps) * fake).requires_grad_(True)
    score = critic(mixed)
    grad, = torch.autograd.grad(score.sum(), mixed, create_graph=True)
    return ((grad.flatten(1).norm(dim=1) - 1) ** 2).mean()


def sample_real(beats, batch_size, device):
    idx = torch.randint(0, beats.shape[0], (batch_size,))
    return beats[idx].to(device)


def main():
    args = options()
    torch.manual_seed(0)
    np.random.seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    raw = np.load(args.beats).astype(np.float32)[:, :BEAT_LEN]
    beats = torch.from_numpy(raw * 2 - 1).unsqueeze(1)
    G, D = Generator(args.z_dim).to(device), Critic().to(device)
    opt_g = torch.optim.Adam(G.parameters(), lr=args.lr, betas=(0.0, 0.9))
    opt_d = torch.optim.Adam(D.parameters(), lr=args.lr, betas=(0.0, 0.9))
    os.makedirs(args.out, exist_ok=True)
    fixed_z = torch.randn(16, args.z_dim, device=device)

    for it in range(1, args.iters + 1):
        for _ in range(args.n_critic):
            real = sample_real(beats, args.batch_size, device)
            with torch.no_grad():
                fake = G(torch.randn(args.batch_size, args.z_dim, device=device))
            wdist = D(real).mean() - D(fake).mean()
            loss_d = -wdist + args.gp_weight * gradient_penalty(D, real, fake)
            opt_d.zero_grad(set_to_none=True)
            loss_d.backward()
            opt_d.step()

        fake = G(torch.randn(args.batch_size, args.z_dim, device=device))
        loss_g = -D(fake).mean()
        opt_g.zero_grad(set_to_none=True)
        loss_g.backward()
        opt_g.step()

        if it % 500 == 0:
            print(f"iter {it:6d}  W {wdist.item():.4f}  loss_d {loss_d.item():.4f}  loss_g {loss_g.item():.4f}")
            G.eval()
            with torch.no_grad():
                samples = (G(fixed_z).cpu().squeeze(1) + 1) / 2
            G.train()
            np.save(os.path.join(args.out, f"samples_{it:06d}.npy"), samples.numpy())
            torch.save({"G": G.state_dict(), "D": D.state_dict(), "opt_g": opt_g.state_dict(),
                        "opt_d": opt_d.state_dict(), "iter": it}, os.path.join(args.out, "last.pt"))


if __name__ == "__main__":
    main()
