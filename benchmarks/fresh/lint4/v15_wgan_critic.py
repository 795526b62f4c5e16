"""WGAN (weight clipping) on 64x64 anime faces: DCGAN generator and critic, RMSprop, 5 critic
steps per generator step, as in the original paper's settings."""

import os

import torch
import torchvision.utils as vutils
from torch import nn
from torchvision import datasets, transforms

Z_DIM, CLIP, N_CRITIC, LR = 100, 0.01, 5, 5e-5
BATCH, ITERS = 64, 100_000


def generator():
    def up(c_in, c_out):
        return [nn.ConvTranspose2d(c_in, c_out, 4, 2, 1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(True)]
    return nn.Sequential(
        nn.ConvTranspose2d(Z_DIM, 512, 4, 1, 0, bias=False), nn.BatchNorm2d(512), nn.ReLU(True),
        *up(512, 256), *up(256, 128), *up(128, 64),
        nn.ConvTranspose2d(64, 3, 4, 2, 1), nn.Tanh(),
    )


def critic():
    def down(c_in, c_out):
        return [nn.Conv2d(c_in, c_out, 4, 2, 1, bias=False), nn.BatchNorm2d(c_out), nn.LeakyReLU(0.2, True)]
    return nn.Sequential(
        nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2, True),
        *down(64, 128), *down(128, 256), *down(256, 512),
        nn.Conv2d(512, 1, 4, 1, 0), nn.Flatten(0),
    )


def endless(loader):
    while True:
        for images, _ in loader:
            yield images


def main(root="data/anime_faces", out="runs/wgan"):
    os.makedirs(out, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tf = transforms.Compose([transforms.Resize(64), transforms.CenterCrop(64), transforms.ToTensor(),
                             transforms.Normalize((0.5,) * 3, (0.5,) * 3)])
    loader = torch.utils.data.DataLoader(datasets.ImageFolder(root, tf), batch_size=BATCH, shuffle=True,
                                         num_workers=4, drop_last=True)
    batches = endless(loader)

    G, D = generator().to(device), critic().to(device)
    opt_g = torch.optim.RMSprop(G.parameters(), lr=LR)
    opt_d = torch.optim.RMSprop(D.parameters(), lr=LR)
    fixed_z = torch.randn(64, Z_DIM, 1, 1, device=device)

    for it in range(ITERS):
        for _ in range(N_CRITIC):
            real = next(batches).to(device)
            z = torch.randn(BATCH, Z_DIM, 1, 1, device=device)
            with torch.no_grad():
                fake = G(z)
            loss_d = D(fake).mean() - D(real).mean()
            for p in D.parameters():
                p.data.clamp_(-CLIP, CLIP)
            opt_d.zero_grad()
            loss_d.backward()
            opt_d.step()

        z = torch.randn(BATCH, Z_DIM, 1, 1, device=device)
        loss_g = -D(G(z)).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()

        if it % 500 == 0:
            print(f"iter {it:6d}  W-distance estimate {-loss_d.item():.4f}  loss_G {loss_g.item():.4f}")
            G.eval()
            with torch.no_grad():
                samples = G(fixed_z)
            G.train()
            vutils.save_image(samples, f"{out}/samples_{it:06d}.png", normalize=True, nrow=8)
        if it % 5000 == 0:
            torch.save({"G": G.state_dict(), "D": D.state_dict(), "iter": it}, f"{out}/ckpt.pt")


if __name__ == "__main__":
    main()
