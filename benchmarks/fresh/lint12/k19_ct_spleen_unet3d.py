"""3D U-Net for spleen segmentation (Medical Segmentation Decathlon, Task09) on CT volumes that
were resampled to 1.5 mm and stored as .npy (image: HU float32, label: uint8).

Deep blocks can be recomputed in the backward pass (--grad-checkpoint) to fit 128^3 patches.
"""
import argparse
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, Dataset

HU_MIN, HU_MAX = -160.0, 240.0


class SpleenPatches(Dataset):
    def __init__(self, cases, patch, samples_per_case):
        self.cases, self.patch, self.k = cases, patch, samples_per_case

    def __len__(self):
        return len(self.cases) * self.k

    def __getitem__(self, i):
        img_path, lbl_path = self.cases[i % len(self.cases)]
        img, lbl = np.load(img_path, mmap_mode="r"), np.load(lbl_path, mmap_mode="r")
        fg = torch.rand(()) < 0.5
        if fg:
            zz, yy, xx = np.nonzero(lbl)
            j = int(torch.randint(0, len(zz), ()))
            center = np.array([zz[j], yy[j], xx[j]])
        else:
            center = np.array([int(torch.randint(0, s, ())) for s in img.shape])
        start = np.clip(center - self.patch // 2, 0, np.maximum(np.array(img.shape) - self.patch, 0))
        sl = tuple(slice(s, s + self.patch) for s in start)
        x = (np.clip(img[sl], HU_MIN, HU_MAX) - HU_MIN) / (HU_MAX - HU_MIN)
        return torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))[None], torch.from_numpy(lbl[sl].astype(np.int64))


class DoubleConv(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(nn.Conv3d(cin, cout, 3, padding=1, bias=False), nn.InstanceNorm3d(cout, affine=True),
                         nn.LeakyReLU(0.01, True), nn.Conv3d(cout, cout, 3, padding=1, bias=False),
                         nn.InstanceNorm3d(cout, affine=True), nn.LeakyReLU(0.01, True))


class UNet3D(nn.Module):
    def __init__(self, widths=(32, 64, 128, 256), classes=2, grad_checkpoint=False):
        super().__init__()
        self.grad_checkpoint = grad_checkpoint
        self.stem = DoubleConv(1, widths[0])
        self.down = nn.ModuleList(DoubleConv(widths[i], widths[i + 1]) for i in range(len(widths) - 1))
        self.up = nn.ModuleList(nn.ConvTranspose3d(widths[i + 1], widths[i], 2, stride=2) for i in range(len(widths) - 1))
        self.dec = nn.ModuleList(DoubleConv(2 * widths[i], widths[i]) for i in range(len(widths) - 1))
        self.head = nn.Conv3d(widths[0], classes, 1)

    def run(self, block, x):
        if self.grad_checkpoint and self.training:
            return checkpoint(block, x)
        return block(x)

    def forward(self, x):
        skips = [self.stem(x)]
        for block in self.down:
            skips.append(self.run(block, F.max_pool3d(skips[-1], 2)))
        h = skips.pop()
        for i in reversed(range(len(self.up))):
            h = self.run(self.dec[i], torch.cat([self.up[i](h), skips.pop()], dim=1))
        return self.head(h)


def dice_ce_loss(logits, target, eps=1e-5):
    ce = F.cross_entropy(logits, target)
    prob = logits.softmax(1)[:, 1]
    fg = (target == 1).float()
    dice = (2 * (prob * fg).sum() + eps) / (prob.sum() + fg.sum() + eps)
    return ce + 1 - dice


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, default=Path("data/Task09_Spleen_npy"))
    ap.add_argument("--patch", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--grad-checkpoint", action="store_true")
    args = ap.parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    cases = sorted((p, p.with_name(p.name.replace("_img", "_lbl"))) for p in args.root.glob("*_img.npy"))
    train_cases, valid_cases = cases[:-8], cases[-8:]
    loader = DataLoader(SpleenPatches(train_cases, args.patch, 4), batch_size=2, shuffle=True, drop_last=True, num_workers=6)
    valid_dl = DataLoader(SpleenPatches(valid_cases, args.patch, 2), batch_size=2, num_workers=2)

    model = UNet3D(grad_checkpoint=args.grad_checkpoint).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.99, nesterov=True)
    scheduler = torch.optim.lr_scheduler.PolynomialLR(optimizer, total_iters=args.epochs, power=0.9)

    for epoch in range(args.epochs):
        model.train()
        losses = []
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
                loss = dice_ce_loss(model(x).float(), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 12.0)
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()

        if epoch % 10 == 9:
            model.eval()
            inter = union = 0.0
            with torch.no_grad():
                for x, y in valid_dl:
                    pred = model(x.to(device)).argmax(1).cpu()
                    inter += float(((pred == 1) & (y == 1)).sum())
                    union += float((pred == 1).sum() + (y == 1).sum())
            print(f"epoch {epoch + 1}: loss {np.mean(losses):.4f} valid Dice {2 * inter / max(union, 1):.4f}")
            torch.save(model.state_dict(), "spleen_unet3d.pt")


if __name__ == "__main__":
    main()
