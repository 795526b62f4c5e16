"""Unconditional GAN for 64x64 material textures (wood, marble, fabric crops).

Hinge loss, spectral-norm discriminator, residual generator trunk at 8x8, EMA copy of the
generator for sampling. Writes sample grids every few epochs.
"""
import copy
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.nn.utils.parametrizations import spectral_norm
from torch.utils.data import DataLoader, Dataset

CFG = dict(root="data/textures", out="runs/texture_gan", z_dim=128, ch=256, trunk_blocks=4, batch=64,
           epochs=200, lr_g=2e-4, lr_d=2e-4, betas=(0.0, 0.99), ema=0.999, sample_every=10, seed=9)


class TextureCrops(Dataset):
    def __init__(self, root, size=64, crops_per_image=32):
        self.images = [Image.open(p).convert("RGB") for p in sorted(Path(root).glob("*.jpg"))]
        self.size, self.per_image = size, crops_per_image

    def __len__(self):
        return len(self.images) * self.per_image

    def __getitem__(self, idx):
        img = self.images[idx // self.per_image]
        w, h = img.size
        x0, y0 = random.randint(0, w - self.size), random.randint(0, h - self.size)
        crop = np.asarray(img.crop((x0, y0, x0 + self.size, y0 + self.size)), dtype=np.float32)
        if random.random() < 0.5:
            crop = crop[:, ::-1]
        t = torch.from_numpy(np.ascontiguousarray(crop)).permute(2, 0, 1)
        return t / 127.5 - 1.0


class ResidualBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.body = nn.Sequential(nn.BatchNorm2d(ch), nn.ReLU(), nn.Conv2d(ch, ch, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(ch), nn.ReLU(), nn.Conv2d(ch, ch, 3, padding=1))

    def forward(self, x):
        return x + self.body(x)


def up_block(c_in, c_out):
    return nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(c_in, c_out, 3, padding=1, bias=False),
                         nn.BatchNorm2d(c_out), nn.ReLU())


class Generator(nn.Module):
    def __init__(self, z_dim, ch, trunk_blocks):
        super().__init__()
        self.fc = nn.Linear(z_dim, ch * 8 * 8)
        self.ch = ch
        self.trunk = nn.Sequential(*[ResidualBlock(ch)] * trunk_blocks)
        self.up = nn.Sequential(up_block(ch, ch // 2), up_block(ch // 2, ch // 4), up_block(ch // 4, ch // 8))
        self.to_rgb = nn.Sequential(nn.BatchNorm2d(ch // 8), nn.ReLU(), nn.Conv2d(ch // 8, 3, 3, padding=1), nn.Tanh())

    def forward(self, z):
        x = self.fc(z).view(-1, self.ch, 8, 8)
        return self.to_rgb(self.up(self.trunk(x)))


class Discriminator(nn.Module):
    def __init__(self, ch=64):
        super().__init__()
        chans = [3, ch, ch * 2, ch * 4, ch * 8]
        layers = []
        for a, b in zip(chans[:-1], chans[1:]):
            layers += [spectral_norm(nn.Conv2d(a, b, 4, stride=2, padding=1)), nn.LeakyReLU(0.2)]
        self.features = nn.Sequential(*layers)
        self.fc = spectral_norm(nn.Linear(ch * 8 * 4 * 4, 1))

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1)).squeeze(1)


@torch.no_grad()
def update_ema(ema_model, model, decay):
    for pe, p in zip(ema_model.parameters(), model.parameters()):
        pe.lerp_(p, 1.0 - decay)
    for be, b in zip(ema_model.buffers(), model.buffers()):
        be.copy_(b)


def save_grid(images, path, nrow=8):
    imgs = ((images.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8).cpu()
    n, c, h, w = imgs.shape
    rows = imgs.view(n // nrow, nrow, c, h, w).permute(0, 3, 1, 4, 2).reshape(n // nrow * h, nrow * w, c)
    Image.fromarray(rows.numpy()).save(path)


def main(cfg=CFG):
    random.seed(cfg["seed"])
    np.random.seed(cfg["seed"])
    torch.manual_seed(cfg["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    out = Path(cfg["out"])
    out.mkdir(parents=True, exist_ok=True)

    loader = DataLoader(TextureCrops(cfg["root"]), batch_size=cfg["batch"], shuffle=True, drop_last=True, num_workers=4)
    G = Generator(cfg["z_dim"], cfg["ch"], cfg["trunk_blocks"]).to(device)
    D = Discriminator().to(device)
    G_ema = copy.deepcopy(G).eval()
    opt_g = torch.optim.Adam(G.parameters(), lr=cfg["lr_g"], betas=cfg["betas"])
    opt_d = torch.optim.Adam(D.parameters(), lr=cfg["lr_d"], betas=cfg["betas"])
    fixed_z = torch.randn(64, cfg["z_dim"], device=device)

    for epoch in range(cfg["epochs"]):
        G.train()
        for real in loader:
            real = real.to(device)
            z = torch.randn(real.size(0), cfg["z_dim"], device=device)
            fake = G(z)

            d_loss = F.relu(1.0 - D(real)).mean() + F.relu(1.0 + D(fake.detach())).mean()
            opt_d.zero_grad()
            d_loss.backward()
            opt_d.step()

            g_loss = -D(fake).mean()
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
            update_ema(G_ema, G, cfg["ema"])

        print(f"epoch {epoch:3d}  d_loss {d_loss.item():.3f}  g_loss {g_loss.item():.3f}")
        if epoch % cfg["sample_every"] == 0 or epoch == cfg["epochs"] - 1:
            with torch.no_grad():
                save_grid(G_ema(fixed_z), out / f"samples_{epoch:03d}.png")
            torch.save({"G": G.state_dict(), "G_ema": G_ema.state_dict(), "D": D.state_dict()}, out / "last.pt")


if __name__ == "__main__":
    main()
