"""Building footprint segmentation on SpaceNet-style 512x512 tiles (RGB + binary mask).

A lightweight trainer with hooks around the optimisation step; loss spikes from badly
registered tiles are handled by gradient-norm clipping, and the clipped norm is logged.
"""
import glob
import os
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset


@dataclass
class TrainConfig:
    tiles: str = "data/spacenet/tiles"
    val_city: str = "Vegas"
    crop: int = 384
    batch_size: int = 12
    epochs: int = 50
    lr: float = 5e-4
    weight_decay: float = 1e-4
    max_grad_norm: float = 1.0
    log_every: int = 25
    bf16: bool = True


class Tiles(Dataset):
    MEAN = np.array([0.36, 0.38, 0.33], dtype=np.float32)
    STD = np.array([0.18, 0.16, 0.16], dtype=np.float32)

    def __init__(self, paths, crop, train):
        self.paths, self.crop, self.train = paths, crop, train

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        img = np.asarray(Image.open(self.paths[i]).convert("RGB"), dtype=np.float32) / 255.0
        mask = np.asarray(Image.open(self.paths[i].replace("/rgb/", "/mask/")), dtype=np.float32) > 0
        if self.train:
            top, left = torch.randint(0, img.shape[0] - self.crop + 1, (2,)).tolist()
            img, mask = img[top:top + self.crop, left:left + self.crop], mask[top:top + self.crop, left:left + self.crop]
            if torch.rand(()) < 0.5:
                img, mask = img[:, ::-1], mask[:, ::-1]
        img = (img - self.MEAN) / self.STD
        return torch.from_numpy(img.transpose(2, 0, 1).copy()), torch.from_numpy(mask[None].astype(np.float32))


def double_conv(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class FootprintNet(nn.Module):
    def __init__(self, widths=(32, 64, 128, 256)):
        super().__init__()
        self.downs = nn.ModuleList()
        cin = 3
        for w in widths:
            self.downs.append(double_conv(cin, w))
            cin = w
        self.ups = nn.ModuleList(double_conv(widths[i] + widths[i + 1], widths[i]) for i in range(len(widths) - 1))
        self.out = nn.Conv2d(widths[0], 1, 1)

    def forward(self, x):
        skips = []
        for i, down in enumerate(self.downs):
            x = down(x if i == 0 else F.max_pool2d(x, 2))
            skips.append(x)
        for i in reversed(range(len(self.ups))):
            x = F.interpolate(x, size=skips[i].shape[-2:], mode="bilinear", align_corners=False)
            x = self.ups[i](torch.cat([x, skips[i]], dim=1))
        return self.out(x)


class SegTrainer:
    def __init__(self, model, cfg, device):
        self.model, self.cfg, self.device = model, cfg, device
        decay = [p for n, p in model.named_parameters() if p.ndim == 4]
        other = [p for n, p in model.named_parameters() if p.ndim != 4]
        self.optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                                            {"params": other, "weight_decay": 0.0}], lr=cfg.lr)
        self.step = 0
        self.last_grad_norm = float("nan")

    def compute_loss(self, x, y):
        with torch.autocast(device_type=self.device.type, dtype=torch.bfloat16, enabled=self.cfg.bf16):
            logits = self.model(x)
        logits = logits.float()
        prob = torch.sigmoid(logits)
        dice = 1 - (2 * (prob * y).sum() + 1) / (prob.sum() + y.sum() + 1)
        return F.binary_cross_entropy_with_logits(logits, y) + dice

    def on_after_optimizer_step(self):
        norm = nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.max_grad_norm)
        self.last_grad_norm = float(norm)

    def on_step_end(self, loss):
        if self.step % self.cfg.log_every == 0:
            print(f"step {self.step:6d}  loss {loss:.4f}  grad-norm {self.last_grad_norm:.3f}")

    def fit_epoch(self, loader):
        self.model.train()
        for x, y in loader:
            x, y = x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
            loss = self.compute_loss(x, y)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            self.on_after_optimizer_step()
            self.step += 1
            self.on_step_end(loss.item())

    @torch.no_grad()
    def iou(self, loader):
        self.model.eval()
        inter = union = 0.0
        for x, y in loader:
            pred = (self.model(x.to(self.device)) > 0).float()
            y = y.to(self.device)
            inter += (pred * y).sum().item()
            union += ((pred + y) > 0).sum().item()
        return inter / max(union, 1.0)


def main(cfg=TrainConfig()):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    paths = sorted(glob.glob(os.path.join(cfg.tiles, "*", "rgb", "*.png")))
    train_paths = [p for p in paths if f"/{cfg.val_city}/" not in p]
    val_paths = [p for p in paths if f"/{cfg.val_city}/" in p]
    train = DataLoader(Tiles(train_paths, cfg.crop, True), batch_size=cfg.batch_size, shuffle=True,
                       num_workers=6, drop_last=True, pin_memory=True)
    val = DataLoader(Tiles(val_paths, cfg.crop, False), batch_size=4, num_workers=4)
    trainer = SegTrainer(FootprintNet().to(device), cfg, device)
    best = 0.0
    for epoch in range(cfg.epochs):
        trainer.fit_epoch(train)
        iou = trainer.iou(val)
        print(f"epoch {epoch:2d}  val IoU {iou:.4f}")
        if iou > best:
            best = iou
            torch.save(trainer.model.state_dict(), "footprints_best.pt")


if __name__ == "__main__":
    main()
