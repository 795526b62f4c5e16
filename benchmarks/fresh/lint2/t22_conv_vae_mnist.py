"""Convolutional VAE on MNIST with a Bernoulli decoder; writes reconstructions and samples per epoch."""
import argparse
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from torchvision.utils import save_image


class ConvVAE(nn.Module):
    def __init__(self, latent=16):
        super().__init__()
        self.latent = latent
        self.enc = nn.Sequential(
            nn.Conv2d(1, 32, 4, 2, 1), nn.ReLU(),  # 14x14
            nn.Conv2d(32, 64, 4, 2, 1), nn.ReLU(),  # 7x7
            nn.Flatten(),
        )
        self.to_stats = nn.Linear(64 * 7 * 7, 2 * latent)
        self.from_z = nn.Linear(latent, 64 * 7 * 7)
        self.dec = nn.Sequential(
            nn.Unflatten(1, (64, 7, 7)),
            nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.ReLU(),  # 14x14
            nn.ConvTranspose2d(32, 1, 4, 2, 1),  # 28x28 logits
        )
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d, nn.Linear)):
            nn.init.kaiming_normal(m.weight, nonlinearity="relu")
            nn.init.zeros_(m.bias)

    def encode(self, x):
        mu, logvar = self.to_stats(self.enc(x)).chunk(2, dim=1)
        return mu, logvar.clamp(-10, 10)

    def decode(self, z):
        return self.dec(F.relu(self.from_z(z)))

    def forward(self, x):
        mu, logvar = self.encode(x)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.decode(z), mu, logvar


def elbo_loss(logits, x, mu, logvar, beta=1.0):
    recon = F.binary_cross_entropy_with_logits(logits, x, reduction="sum") / x.size(0)
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.size(0)
    return recon + beta * kl, recon, kl


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--latent", type=int, default=16)
    ap.add_argument("--out", default="vae_out")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)

    tf = transforms.ToTensor()
    train_loader = DataLoader(datasets.MNIST("data", train=True, download=True, transform=tf),
                              batch_size=128, shuffle=True, num_workers=4)
    test_loader = DataLoader(datasets.MNIST("data", train=False, download=True, transform=tf), batch_size=512)

    model = ConvVAE(args.latent).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    fixed_z = torch.randn(64, args.latent, device=device)

    for epoch in range(args.epochs):
        model.train()
        for x, _ in train_loader:
            x = x.to(device)
            logits, mu, logvar = model(x)
            loss, _, _ = elbo_loss(logits, x, mu, logvar)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        model.eval()
        totals, n = torch.zeros(3), 0
        with torch.no_grad():
            for x, _ in test_loader:
                x = x.to(device)
                logits, mu, logvar = model(x)
                totals += torch.stack(elbo_loss(logits, x, mu, logvar)).cpu() * x.size(0)
                n += x.size(0)
            samples = torch.sigmoid(model.decode(fixed_z))
            recon = torch.sigmoid(model(x[:32])[0])
        save_image(samples, out / f"samples_{epoch:02d}.png", nrow=8)
        save_image(torch.cat([x[:32], recon]), out / f"recon_{epoch:02d}.png", nrow=8)
        print(f"epoch {epoch}: test elbo {totals[0] / n:.2f} recon {totals[1] / n:.2f} kl {totals[2] / n:.2f}")
    torch.save(model.state_dict(), out / "conv_vae.pt")


if __name__ == "__main__":
    main()
