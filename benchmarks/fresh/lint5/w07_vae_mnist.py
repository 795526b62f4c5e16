"""A convolutional VAE on MNIST (Bernoulli decoder, 16-d latent), with a beta warm-up."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from torchvision.utils import save_image

LATENT = 16


class ConvVAE(nn.Module):
    def __init__(self, latent=LATENT):
        super().__init__()
        self.enc = nn.Sequential(
            nn.Conv2d(1, 32, 4, 2, 1), nn.ReLU(),   # 14x14
            nn.Conv2d(32, 64, 4, 2, 1), nn.ReLU(),  # 7x7
            nn.Flatten(),
        )
        self.mu = nn.Linear(64 * 7 * 7, latent)
        self.logvar = nn.Linear(64 * 7 * 7, latent)
        self.fc = nn.Linear(latent, 64 * 7 * 7)
        self.dec = nn.Sequential(
            nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.ReLU(),
            nn.ConvTranspose2d(32, 1, 4, 2, 1), nn.Sigmoid(),
        )

    def encode(self, x):
        h = self.enc(x)
        return self.mu(h), self.logvar(h)

    def decode(self, z):
        return self.dec(self.fc(z).view(-1, 64, 7, 7))

    def forward(self, x):
        mu, logvar = self.encode(x)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.decode(z), mu, logvar


def elbo_terms(recon, x, mu, logvar):
    rec = F.binary_cross_entropy(recon, x, reduction="sum") / x.size(0)
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.size(0)
    return rec, kl


def main(epochs=30, batch_size=128, device="cuda" if torch.cuda.is_available() else "cpu"):
    tf = transforms.ToTensor()
    train = DataLoader(datasets.MNIST("data", train=True, download=True, transform=tf),
                       batch_size=batch_size, shuffle=True, num_workers=2)
    test = DataLoader(datasets.MNIST("data", train=False, transform=tf), batch_size=1000)
    model = ConvVAE().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    warmup_steps, step = 10 * len(train), 0

    for epoch in range(epochs):
        model.train()
        for x, _ in train:
            x = x.to(device)
            recon, mu, logvar = model(x)
            rec, kl = elbo_terms(recon, x, mu, logvar)
            beta = min(1.0, step / warmup_steps)
            loss = rec + beta * kl
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1

        model.eval()
        total, n = 0.0, 0
        with torch.no_grad():
            for x, _ in test:
                x = x.to(device)
                recon, mu, logvar = model(x)
                rec, kl = elbo_terms(recon, x, mu, logvar)
                total += (rec + kl).item() * x.size(0)
                n += x.size(0)
            samples = model.decode(torch.randn(64, LATENT, device=device))
        save_image(samples.cpu(), f"vae_samples_{epoch:02d}.png", nrow=8)
        print(f"epoch {epoch:2d}  test -ELBO {total / n:.2f} nats  beta {beta:.2f}")

    torch.save(model.state_dict(), "conv_vae_mnist.pt")


if __name__ == "__main__":
    main()
