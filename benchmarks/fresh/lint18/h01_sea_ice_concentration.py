import argparse
import dataclasses
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


@dataclasses.dataclass
class RunConfig:
    data_dir: str = "data/sea_ice"
    out_dir: str = "runs/sea_ice"
    epochs: int = 40
    batch_size: int = 16
    lr: float = 3e-4
    width: int = 32


class SarPatches(Dataset):
    def __init__(self, root, split):
        arrays = np.load(Path(root) / f"{split}.npz")
        self.sar = arrays["sar"].astype(np.float32)
        self.conc = arrays["concentration"].astype(np.float32)

    def __len__(self):
        return len(self.sar)

    def __getitem__(self, i):
        x = (self.sar[i] + 20.0) / 10.0
        return torch.from_numpy(x), torch.from_numpy(self.conc[i]).unsqueeze(0)


def block(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
    )


def ice_net(width):
    return nn.Sequential(
        block(2, width), nn.MaxPool2d(2), block(width, 2 * width),
        nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False), block(2 * width, width), nn.Conv2d(width, 1, 1),
    )


class Checkpoint:
    def __init__(self, path):
        self.path, self.best = Path(path), float("inf")

    def on_epoch_end(self, trainer, metrics):
        if metrics["val_mae"] < self.best:
            self.best = metrics["val_mae"]
            torch.save({"model": trainer.model.state_dict(), "optimizer": trainer.opt.state_dict(),
                        "epoch": metrics["epoch"], "config": trainer.cfg}, self.path)


class Trainer:
    def __init__(self, model, cfg, device, callbacks=()):
        self.model, self.cfg, self.device, self.callbacks = model.to(device), cfg, device, list(callbacks)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=cfg.lr)
        self.start_epoch = 0

    def resume(self, path):
        state = torch.load(path, map_location=self.device)
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["optimizer"])
        self.start_epoch = state["epoch"] + 1

    def validate(self, loader):
        self.model.eval()
        abs_err, count = 0.0, 0
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            pred = torch.sigmoid(self.model(x))
            abs_err += (pred - y).abs().sum().item()
            count += y.numel()
        return {"val_mae": abs_err / count}

    def fit(self, train_loader, val_loader):
        for epoch in range(self.start_epoch, self.cfg.epochs):
            self.model.train()
            total, seen = 0.0, 0
            for x, y in train_loader:
                x, y = x.to(self.device), y.to(self.device)
                loss = F.binary_cross_entropy_with_logits(self.model(x), y)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                total, seen = total + loss.item() * len(x), seen + len(x)
            metrics = {"epoch": epoch, "train_loss": total / seen, **self.validate(val_loader)}
            print(metrics, flush=True)
            for callback in self.callbacks:
                callback.on_epoch_end(self, metrics)


def main():
    parser = argparse.ArgumentParser()
    for field in dataclasses.fields(RunConfig):
        parser.add_argument(f"--{field.name.replace('_', '-')}", type=field.type, default=field.default)
    parser.add_argument("--resume", default=None)
    args = parser.parse_args()
    cfg = RunConfig(**{f.name: getattr(args, f.name) for f in dataclasses.fields(RunConfig)})
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train = DataLoader(SarPatches(cfg.data_dir, "train"), cfg.batch_size, shuffle=True, drop_last=True, num_workers=4)
    val = DataLoader(SarPatches(cfg.data_dir, "val"), cfg.batch_size, num_workers=4)
    trainer = Trainer(ice_net(cfg.width), cfg, device, [Checkpoint(out / "best.pt")])
    if args.resume:
        trainer.resume(args.resume)
    trainer.fit(train, val)


if __name__ == "__main__":
    main()
