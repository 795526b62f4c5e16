"""x2 super-resolution of widefield fluorescence images (microtubules) with an EDSR-style network.

Runs as a preemptible job: every epoch it writes last.pt and, when restarted, continues from it.
"""
import glob
import os
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


@dataclass
class SRConfig:
    data: str = "data/biosr_microtubules"
    out: str = "runs/sr_microtubules"
    scale: int = 2
    lr_patch: int = 64
    channels: int = 64
    blocks: int = 16
    batch_size: int = 16
    epochs: int = 200
    lr: float = 2e-4
    amp: bool = True


class PairedPatches(Dataset):
    def __init__(self, files, cfg, train):
        self.files, self.cfg, self.train = files, cfg, train

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        d = np.load(self.files[i])
        lr = torch.from_numpy(d["lr"].astype(np.float32))[None]
        hr = torch.from_numpy(d["hr"].astype(np.float32))[None]
        lo, hi = np.percentile(d["lr"], (0.1, 99.9))
        lr, hr = (lr - lo) / (hi - lo + 1e-6), (hr - lo) / (hi - lo + 1e-6)
        if self.train:
            p, s = self.cfg.lr_patch, self.cfg.scale
            top = int(torch.randint(0, lr.shape[1] - p + 1, (1,)))
            left = int(torch.randint(0, lr.shape[2] - p + 1, (1,)))
            lr = lr[:, top:top + p, left:left + p]
            hr = hr[:, top * s:(top + p) * s, left * s:(left + p) * s]
            if torch.rand(()) < 0.5:
                lr, hr = lr.flip(-1), hr.flip(-1)
            k = int(torch.randint(0, 4, (1,)))
            lr, hr = torch.rot90(lr, k, (1, 2)), torch.rot90(hr, k, (1, 2))
        return lr, hr


class ResBlock(nn.Module):
    def __init__(self, c, res_scale=0.1):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(c, c, 3, padding=1))
        self.res_scale = res_scale

    def forward(self, x):
        return x + self.res_scale * self.body(x)


class EDSR(nn.Module):
    def __init__(self, c, n_blocks, scale):
        super().__init__()
        self.head = nn.Conv2d(1, c, 3, padding=1)
        self.body = nn.Sequential(*[ResBlock(c) for _ in range(n_blocks)], nn.Conv2d(c, c, 3, padding=1))
        self.up = nn.Sequential(nn.Conv2d(c, c * scale ** 2, 3, padding=1), nn.PixelShuffle(scale))
        self.tail = nn.Conv2d(c, 1, 3, padding=1)

    def forward(self, x):
        h = self.head(x)
        return self.tail(self.up(h + self.body(h)))


def psnr(sr, hr):
    mse = F.mse_loss(sr.clamp(0, 1), hr.clamp(0, 1), reduction="none").mean(dim=(1, 2, 3))
    return (10 * torch.log10(1.0 / mse.clamp(min=1e-10))).sum().item()


def save_state(path, epoch, model, optimizer, scheduler, scaler, cfg):
    torch.save({"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "scaler": scaler.state_dict(), "config": asdict(cfg)}, path)


def restore_state(path, model, optimizer, scheduler, scaler):
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    scaler.load_state_dict(state["scaler"])
    return state["epoch"] + 1


def main(cfg: SRConfig):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    use_amp = cfg.amp and device.type == "cuda"
    os.makedirs(cfg.out, exist_ok=True)
    files = sorted(glob.glob(os.path.join(cfg.data, "cell_*", "*.npz")))
    cells = sorted({os.path.basename(os.path.dirname(f)) for f in files})
    val_cells = set(cells[-5:])
    train_files = [f for f in files if os.path.basename(os.path.dirname(f)) not in val_cells]
    val_files = [f for f in files if os.path.basename(os.path.dirname(f)) in val_cells]
    train_dl = DataLoader(PairedPatches(train_files, cfg, True), cfg.batch_size, shuffle=True, num_workers=4, drop_last=True)
    val_dl = DataLoader(PairedPatches(val_files, cfg, False), 1, num_workers=2)

    model = EDSR(cfg.channels, cfg.blocks, cfg.scale).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, betas=(0.9, 0.999))
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[100, 150], gamma=0.5)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    start, last = 0, os.path.join(cfg.out, "last.pt")
    if os.path.exists(last):
        start = restore_state(last, model, optimizer, scheduler, scaler)
        print(f"resuming at epoch {start}, lr {scheduler.get_last_lr()[0]:.2e}")

    for epoch in range(start, cfg.epochs):
        model.train()
        total, n = 0.0, 0
        for lr_img, hr_img in train_dl:
            lr_img, hr_img = lr_img.to(device), hr_img.to(device)
            with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=use_amp):
                loss = F.l1_loss(model(lr_img), hr_img)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), 10.0)
            scaler.step(optimizer)
            scaler.update()
            total += loss.item() * lr_img.size(0)
            n += lr_img.size(0)
        scheduler.step()
        model.eval()
        with torch.no_grad():
            val_psnr = sum(psnr(model(a.to(device)), b.to(device)) for a, b in val_dl) / len(val_dl.dataset)
        print(f"epoch {epoch + 1:03d} L1 {total / n:.4f} val PSNR {val_psnr:.2f} dB")
        save_state(last, epoch, model, optimizer, scheduler, scaler, cfg)


if __name__ == "__main__":
    main(SRConfig())
