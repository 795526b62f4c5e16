"""Convolutional VAE on Fashion-MNIST, with an optional self-distillation term for the classifier probe."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision import datasets, transforms
from torchvision.utils import save_image

LATENT = 16


class ConvVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(
            nn.Conv2d(1, 32, 4, 2, 1), nn.ReLU(),  # 14x14
            nn.Conv2d(32, 64, 4, 2, 1), nn.ReLU(),  # 7x7
            nn.Flatten(),
        )
        self.mu = nn.Linear(64 * 7 * 7, LATENT)
        self.logvar = nn.Linear(64 * 7 * 7, LATENT)
        self.dec_in = nn.Linear(LATENT, 64 * 7 * 7)
        self.dec = nn.Sequential(
            nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.ReLU(),
            nn.ConvTranspose2d(32, 1, 4, 2, 1),
        )
        self.probe = nn.Linear(LATENT, 10)
        self.p_drop = 0.2

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        recon = torch.sigmoid(self.dec(self.dec_in(z).view(-1, 64, 7, 7)))
        probe_logits = self.probe(F.dropout(mu, self.p_drop, self.training))
        return recon, mu, logvar, probe_logits


def vae_loss(recon, x, mu, logvar):
    bce = F.binary_cross_entropy(recon, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return (bce + kld) / x.size(0)


def distill(student_logits, teacher_logits, T=2.0):
    return F.kl_div(
        F.log_softmax(student_logits / T, dim=1),
        F.softmax(teacher_logits / T, dim=1),
        reduction="batchmean",
    ) * T * T


def main(epochs=20, device="cuda" if torch.cuda.is_available() else "cpu"):
    data = datasets.FashionMNIST("data", train=True, download=True, transform=transforms.ToTensor())
    loader = torch.utils.data.DataLoader(data, batch_size=128, shuffle=True, num_workers=2)
    model = ConvVAE().to(device)
    ema_probe = nn.Linear(LATENT, 10).to(device)
    ema_probe.load_state_dict(model.probe.state_dict())
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    for epoch in range(epochs):
        model.train()
        total = 0.0
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            recon, mu, logvar, logits = model(x)
            with torch.no_grad():
                teacher = ema_probe(mu)
            loss = vae_loss(recon, x, mu, logvar) + F.cross_entropy(logits, y) + 0.5 * distill(logits, teacher)
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                for pe, p in zip(ema_probe.parameters(), model.probe.parameters()):
                    pe.mul_(0.99).add_(p, alpha=0.01)
            total += loss.item() * x.size(0)
        print(f"epoch {epoch}: loss {total / len(data):.2f}")
        model.eval()
        with torch.no_grad():
            samples = torch.sigmoid(model.dec(model.dec_in(torch.randn(64, LATENT, device=device)).view(-1, 64, 7, 7)))
        save_image(samples.cpu(), f"samples_{epoch:02d}.png", nrow=8)


if __name__ == "__main__":
    main()
