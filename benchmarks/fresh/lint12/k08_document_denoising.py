"""Clean scanned documents (Kaggle "Denoising Dirty Documents"): a small encoder-decoder trained
on random 128x128 crops of (dirty, clean) pairs, evaluated on whole pages by RMSE.
"""
import argparse
import copy
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset


def gray(path):
    return torch.from_numpy(np.asarray(Image.open(path).convert("L"), dtype=np.float32) / 255.0)[None]


class DocPairs(Dataset):
    def __init__(self, dirty_dir, clean_dir, names, crop=None, crops_per_page=1):
        self.pairs = [(gray(dirty_dir / n), gray(clean_dir / n)) for n in names]
        self.crop, self.k = crop, crops_per_page

    def __len__(self):
        return len(self.pairs) * self.k

    def __getitem__(self, i):
        dirty, clean = self.pairs[i % len(self.pairs)]
        if self.crop is None:
            return dirty, clean
        _, h, w = dirty.shape
        top = int(torch.randint(0, h - self.crop + 1, ()))
        left = int(torch.randint(0, w - self.crop + 1, ()))
        window = (slice(None), slice(top, top + self.crop), slice(left, left + self.crop))
        return dirty[window], clean[window]


def norm(ch):
    return nn.InstanceNorm2d(ch, affine=True)


class DenoiseNet(nn.Module):
    def __init__(self, w=32):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(1, w, 3, padding=1, bias=False), norm(w), nn.ReLU(True))
        self.enc2 = nn.Sequential(nn.Conv2d(w, 2 * w, 3, stride=2, padding=1, bias=False), norm(2 * w), nn.ReLU(True))
        self.enc3 = nn.Sequential(nn.Conv2d(2 * w, 4 * w, 3, stride=2, padding=1, bias=False), norm(4 * w), nn.ReLU(True))
        self.up3 = nn.ConvTranspose2d(4 * w, 2 * w, 3, stride=2, padding=1, output_padding=1)
        self.dec2 = nn.Sequential(nn.Conv2d(4 * w, 2 * w, 3, padding=1, bias=False), norm(2 * w), nn.ReLU(True))
        self.up2 = nn.ConvTranspose2d(2 * w, w, 3, stride=2, padding=1, output_padding=1)
        self.dec1 = nn.Sequential(nn.Conv2d(2 * w, w, 3, padding=1, bias=False), norm(w), nn.ReLU(True))
        self.out = nn.Conv2d(w, 1, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(e1)
        e3 = self.enc3(e2)
        d2 = self.dec2(torch.cat([self.up3(e3), e2], 1))
        d1 = self.dec1(torch.cat([self.up2(d2), e1], 1))
        return torch.sigmoid(self.out(d1))


def pad4(x):
    h, w = x.shape[-2:]
    return F.pad(x, (0, (4 - w % 4) % 4, 0, (4 - h % 4) % 4), mode="replicate"), (h, w)


@torch.no_grad()
def page_rmse(model, loader, device, save_dir=None):
    model.eval()
    sq, n = 0.0, 0
    for i, (dirty, clean) in enumerate(loader):
        x, (h, w) = pad4(dirty.to(device))
        pred = model(x)[..., :h, :w].cpu()
        sq += F.mse_loss(pred, clean, reduction="sum").item()
        n += clean.numel()
        if save_dir is not None:
            page = (pred[0, 0].clamp(0, 1) * 255).round().to(torch.uint8).numpy()
            Image.fromarray(page).save(save_dir / f"page_{i:03d}.png")
    return (sq / n) ** 0.5


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, default=Path("data/dirty_documents"))
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--crop", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    names = sorted(p.name for p in (args.root / "train").glob("*.png"))
    valid_names, train_names = names[:20], names[20:]
    train_ds = DocPairs(args.root / "train", args.root / "train_cleaned", train_names, args.crop, 16)
    valid_ds = DocPairs(args.root / "train", args.root / "train_cleaned", valid_names)
    train_dl = DataLoader(train_ds, batch_size=16, shuffle=True, num_workers=2)
    valid_dl = DataLoader(valid_ds, batch_size=1)

    model = DenoiseNet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.3)
    best, best_state = float("inf"), None
    for epoch in range(args.epochs):
        model.train()
        for dirty, clean in train_dl:
            dirty, clean = dirty.to(device), clean.to(device)
            loss = F.mse_loss(model(dirty), clean)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        rmse = page_rmse(model, valid_dl, device)
        print(f"epoch {epoch:3d} valid RMSE {rmse:.5f}")
        if rmse < best:
            best, best_state = rmse, copy.deepcopy(model.state_dict())

    model.load_state_dict(best_state)
    out = Path("denoised_valid")
    out.mkdir(exist_ok=True)
    print(f"best RMSE {page_rmse(model, valid_dl, device, save_dir=out):.5f}")


if __name__ == "__main__":
    main()
