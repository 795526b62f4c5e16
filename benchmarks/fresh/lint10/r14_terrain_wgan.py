# %% [markdown]
# # Terrain heightmaps with a Wasserstein GAN
# 64 x 64 tiles cut from SRTM elevation rasters (stored as one float32 array `tiles.npy`,
# metres), scaled to [-1, 1]. Weight-clipped critic, RMSprop, five critic updates per
# generator update, as in the original WGAN recipe.

# %%
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from PIL import Image
from torch.utils.data import DataLoader, TensorDataset

SEED = 99
LATENT = 128
CRITIC_ITERS = 5
CLIP = 0.01
LR = 5e-5
BATCH = 64
GEN_STEPS = 40_000
OUT = Path("runs/terrain_wgan")
random.seed(SEED)
np.random.seed(SEED)
torch.manual_seed(SEED)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# %%
tiles = np.load("data/srtm/tiles.npy").astype(np.float32)
lo = np.percentile(tiles, 0.5, axis=(1, 2), keepdims=True)
hi = np.percentile(tiles, 99.5, axis=(1, 2), keepdims=True)
scaled = np.clip((tiles - lo) / np.maximum(hi - lo, 1.0), 0, 1) * 2 - 1
dataset = TensorDataset(torch.from_numpy(scaled).unsqueeze(1))
loader = DataLoader(dataset, batch_size=BATCH, shuffle=True, drop_last=True, num_workers=2)
print(f"{len(dataset)} tiles")


# %%
class Generator(nn.Module):
    def __init__(self, latent=LATENT, width=64):
        super().__init__()

        def up(cin, cout):
            return [nn.ConvTranspose2d(cin, cout, 4, 2, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True)]

        self.net = nn.Sequential(
            nn.ConvTranspose2d(latent, width * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(width * 8), nn.ReLU(True),
            *up(width * 8, width * 4), *up(width * 4, width * 2), *up(width * 2, width),
            nn.ConvTranspose2d(width, 1, 4, 2, 1), nn.Tanh(),
        )

    def forward(self, z):
        return self.net(z.view(z.size(0), -1, 1, 1))


class Critic(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, width, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(width, width * 2, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(width * 2, width * 4, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(width * 4, 1, 8, 1, 0),
        )

    def forward(self, x):
        return self.net(x).view(-1)


generator, critic = Generator().to(device), Critic().to(device)
opt_g = torch.optim.RMSprop(generator.parameters(), lr=LR)
opt_c = torch.optim.RMSprop(critic.parameters(), lr=LR)


# %%
def enforce_lipschitz(net, bound):
    for p in net.parameters():
        p.data.clamp_(-bound, bound)


def endless(loader):
    while True:
        for (batch,) in loader:
            yield batch


def critic_round(real):
    z = torch.randn(real.size(0), LATENT, device=device)
    with torch.no_grad():
        fake = generator(z)
    distance = critic(real).mean() - critic(fake).mean()
    loss = -distance
    enforce_lipschitz(critic, CLIP)
    opt_c.zero_grad()
    loss.backward()
    opt_c.step()
    return distance.item()


def generator_round():
    z = torch.randn(BATCH, LATENT, device=device)
    loss = -critic(generator(z)).mean()
    opt_g.zero_grad()
    loss.backward()
    opt_g.step()
    return loss.item()


# %%
def save_grid(step, n=16):
    generator.eval()
    with torch.no_grad():
        sample = generator(torch.randn(n, LATENT, device=device)).cpu().squeeze(1)
    generator.train()
    rows = [torch.cat(list(sample[r * 4:(r + 1) * 4]), dim=1) for r in range(4)]
    grid = ((torch.cat(rows, dim=0) + 1) * 127.5).clamp(0, 255).round().to(torch.uint8)
    Image.fromarray(grid.numpy()).save(OUT / f"step_{step:06d}.png")


# %%
OUT.mkdir(parents=True, exist_ok=True)
batches = endless(loader)
for step in range(GEN_STEPS):
    critic_iters = 100 if step < 25 or step % 500 == 0 else CRITIC_ITERS
    for p in critic.parameters():
        p.requires_grad_(True)
    for _ in range(critic_iters):
        w_distance = critic_round(next(batches).to(device))
    for p in critic.parameters():
        p.requires_grad_(False)
    g_loss = generator_round()
    if step % 500 == 0:
        print(f"step {step:05d}  W-distance {w_distance:.4f}  G loss {g_loss:.4f}")
        save_grid(step)
        torch.save({"generator": generator.state_dict(), "critic": critic.state_dict(), "step": step},
                   OUT / "last.pt")
