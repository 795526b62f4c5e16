"""DCGAN that synthesises 64x64 material textures (wood, marble, fabric) for a game asset
pipeline. Trained on random crops of high-resolution texture scans."""

from pathlib import Path

import torch
import torch.nn as nn
import torchvision.transforms as T
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder
from torchvision.utils import save_image

Z_DIM, G_FEAT, D_FEAT = 128, 64, 64
EPOCHS, BATCH = 40, 128
OUT = Path("samples/textures")


def generator():
    return nn.Sequential(
        nn.ConvTranspose2d(Z_DIM, G_FEAT * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(G_FEAT * 8), nn.ReLU(True),
        nn.ConvTranspose2d(G_FEAT * 8, G_FEAT * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(G_FEAT * 4), nn.ReLU(True),
        nn.ConvTranspose2d(G_FEAT * 4, G_FEAT * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(G_FEAT * 2), nn.ReLU(True),
        nn.ConvTranspose2d(G_FEAT * 2, G_FEAT, 4, 2, 1, bias=False), nn.BatchNorm2d(G_FEAT), nn.ReLU(True),
        nn.ConvTranspose2d(G_FEAT, 3, 4, 2, 1, bias=False), nn.Tanh(),
    )


def discriminator():
    return nn.Sequential(
        nn.Conv2d(3, D_FEAT, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, True),
        nn.Conv2d(D_FEAT, D_FEAT * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(D_FEAT * 2), nn.LeakyReLU(0.2, True),
        nn.Conv2d(D_FEAT * 2, D_FEAT * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(D_FEAT * 4), nn.LeakyReLU(0.2, True),
        nn.Conv2d(D_FEAT * 4, D_FEAT * 8, 4, 2, 1, bias=False), nn.BatchNorm2d(D_FEAT * 8), nn.LeakyReLU(0.2, True),
        nn.Conv2d(D_FEAT * 8, 1, 4, 1, 0, bias=False), nn.Flatten(), nn.Sigmoid(),
    )


def dcgan_init(module):
    if isinstance(module, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.normal_(module.weight, 0.0, 0.02)
    elif isinstance(module, nn.BatchNorm2d):
        nn.init.normal_(module.weight, 1.0, 0.02)
        nn.init.zeros_(module.bias)


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tf = T.Compose([T.RandomCrop(256), T.Resize(64), T.RandomHorizontalFlip(), T.ToTensor(),
                    T.Normalize((0.5,) * 3, (0.5,) * 3)])
    loader = DataLoader(ImageFolder("data/texture_scans", transform=tf), batch_size=BATCH,
                        shuffle=True, num_workers=6, drop_last=True)

    G, D = generator().to(device), discriminator().to(device)
    G.apply(dcgan_init)
    D.apply(dcgan_init)
    adv_loss = nn.BCEWithLogitsLoss()
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    fixed_z = torch.randn(64, Z_DIM, 1, 1, device=device)
    OUT.mkdir(parents=True, exist_ok=True)

    for epoch in range(EPOCHS):
        for step, (real, _) in enumerate(loader):
            real = real.to(device)
            ones = torch.ones(real.size(0), 1, device=device)
            zeros = torch.zeros(real.size(0), 1, device=device)
            fake = G(torch.randn(real.size(0), Z_DIM, 1, 1, device=device))

            opt_d.zero_grad()
            d_loss = adv_loss(D(real), ones) + adv_loss(D(fake.detach()), zeros)
            d_loss.backward()
            opt_d.step()

            opt_g.zero_grad()
            g_loss = adv_loss(D(fake), ones)
            g_loss.backward()
            opt_g.step()

            if step % 200 == 0:
                print(f"[{epoch}/{EPOCHS}] step {step} D {d_loss.item():.3f} G {g_loss.item():.3f}")

        G.eval()
        with torch.no_grad():
            save_image(G(fixed_z), OUT / f"epoch_{epoch:03d}.png", normalize=True, nrow=8)
        G.train()
        torch.save({"G": G.state_dict(), "D": D.state_dict()}, OUT / "dcgan_textures.pt")


if __name__ == "__main__":
    main()
