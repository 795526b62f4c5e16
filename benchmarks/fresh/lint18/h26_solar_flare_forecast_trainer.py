import argparse
import dataclasses
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset, WeightedRandomSampler


@dataclasses.dataclass
class Config:
    data: str = "data/sharp_windows.pt"
    ckpt: str = "runs/flare/last.pt"
    epochs: int = 60
    lr: float = 1e-3
    hidden: int = 64
    patience: int = 8


class FlareNet(nn.Module):
    def __init__(self, n_features, hidden):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(n_features, hidden, 3, padding=1), nn.ReLU(),
                                  nn.Conv1d(hidden, hidden, 3, padding=1), nn.ReLU())
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        return self.out(self.conv(x.transpose(1, 2)).amax(dim=2)).squeeze(1)


class EarlyStop:
    def __init__(self, patience):
        self.patience, self.best, self.wait = patience, -1.0, 0

    def __call__(self, trainer, tss):
        self.best, self.wait = (tss, 0) if tss > self.best else (self.best, self.wait + 1)
        trainer.stop = self.wait >= self.patience


class SaveLast:
    def __call__(self, trainer, tss):
        Path(trainer.cfg.ckpt).parent.mkdir(parents=True, exist_ok=True)
        torch.save({"model": trainer.model.state_dict(), "optimizer": trainer.opt.state_dict(),
                    "scheduler": trainer.sched.state_dict(), "epoch": trainer.epoch,
                    "config": dataclasses.asdict(trainer.cfg)}, trainer.cfg.ckpt)


class Trainer:
    def __init__(self, model, cfg, callbacks):
        self.model, self.cfg, self.callbacks = model, cfg, callbacks
        self.opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        self.sched = torch.optim.lr_scheduler.ReduceLROnPlateau(self.opt, mode="max", factor=0.5, patience=3)
        self.epoch, self.stop = 0, False

    def resume(self):
        state = torch.load(self.cfg.ckpt, map_location="cpu", weights_only=True)
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["optimizer"])
        self.sched.load_state_dict(state["scheduler"])
        self.epoch = state["epoch"] + 1

    def tss(self, loader):
        self.model.eval()
        tp = fn = fp = tn = 0
        with torch.no_grad():
            for x, y in loader:
                pred = self.model(x) > 0
                tp += (pred & (y == 1)).sum().item()
                fn += (~pred & (y == 1)).sum().item()
                fp += (pred & (y == 0)).sum().item()
                tn += (~pred & (y == 0)).sum().item()
        return tp / max(tp + fn, 1) - fp / max(fp + tn, 1)

    def fit(self, train, val):
        while self.epoch < self.cfg.epochs and not self.stop:
            self.model.train()
            for x, y in train:
                loss = F.binary_cross_entropy_with_logits(self.model(x), y)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            score = self.tss(val)
            self.sched.step(score)
            print(f"epoch {self.epoch}: TSS {score:.3f} lr {self.opt.param_groups[0]['lr']:.1e}")
            for callback in self.callbacks:
                callback(self, score)
            self.epoch += 1


def main():
    p = argparse.ArgumentParser()
    for f in dataclasses.fields(Config):
        p.add_argument("--" + f.name, type=f.type, default=f.default)
    p.add_argument("--resume", action="store_true")
    args = p.parse_args()
    cfg = Config(**{f.name: getattr(args, f.name) for f in dataclasses.fields(Config)})
    blob = torch.load(cfg.data, weights_only=True)
    x, y = blob["x"], blob["y"].float()
    mean, std = blob["train_mean"], blob["train_std"]
    train_set = TensorDataset((x[blob["train_idx"]] - mean) / std, y[blob["train_idx"]])
    val_set = TensorDataset((x[blob["val_idx"]] - mean) / std, y[blob["val_idx"]])
    labels = y[blob["train_idx"]]
    weights = torch.where(labels == 1, 0.5 / labels.mean(), 0.5 / (1 - labels.mean()))
    sampler = WeightedRandomSampler(weights, num_samples=len(labels), replacement=True)
    train = DataLoader(train_set, batch_size=128, sampler=sampler, shuffle=False, drop_last=True)
    val = DataLoader(val_set, batch_size=512)
    trainer = Trainer(FlareNet(x.shape[-1], cfg.hidden), cfg, [EarlyStop(cfg.patience), SaveLast()])
    if args.resume:
        trainer.resume()
    trainer.fit(train, val)


if __name__ == "__main__":
    main()
