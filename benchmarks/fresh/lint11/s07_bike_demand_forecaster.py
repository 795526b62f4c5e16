"""Next-24-hour bike-share demand per station with a transformer encoder over the last week.

data/bike_windows.npz holds x_train (N, 168, F), y_train (N, 24) and the same for val; targets
are log1p(rentals) standardised with the training statistics. Supports resuming from the last
checkpoint with --resume.
"""
import argparse
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/bike_windows.npz")
    p.add_argument("--ckpt", default="runs/bike/last.pt")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--micro-batch", type=int, default=64)
    p.add_argument("--accum-steps", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--weight-decay", type=float, default=0.05)
    p.add_argument("--d-model", type=int, default=96)
    p.add_argument("--seed", type=int, default=7)
    return p.parse_args()


class DemandTransformer(nn.Module):
    def __init__(self, n_features, d_model, horizon=24, history=168, layers=3, heads=4):
        super().__init__()
        self.inp = nn.Linear(n_features, d_model)
        self.pos = nn.Parameter(torch.zeros(1, history, d_model))
        nn.init.trunc_normal_(self.pos, std=0.02)
        block = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(block, layers)
        self.norm = nn.LayerNorm(d_model)
        self.out = nn.Linear(d_model, horizon)

    def forward(self, x):
        h = self.encoder(self.inp(x) + self.pos)
        return self.out(self.norm(h.mean(dim=1)))


def param_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if p.ndim < 2 or name.endswith(".bias") or name == "pos":
            no_decay.append(p)
        else:
            decay.append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def evaluate(model, loader, device, use_amp):
    model.eval()
    sq_err, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=use_amp):
                pred = model(x)
            sq_err += F.mse_loss(pred.float(), y, reduction="sum").item()
            count += y.numel()
    return sq_err / count


def main():
    args = get_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    use_amp = device.type == "cuda"

    d = np.load(args.data)
    train = TensorDataset(torch.from_numpy(d["x_train"].astype(np.float32)), torch.from_numpy(d["y_train"].astype(np.float32)))
    val = TensorDataset(torch.from_numpy(d["x_val"].astype(np.float32)), torch.from_numpy(d["y_val"].astype(np.float32)))
    train_loader = DataLoader(train, batch_size=args.micro_batch, shuffle=True, drop_last=True)
    val_loader = DataLoader(val, batch_size=256)

    model = DemandTransformer(train.tensors[0].shape[-1], args.d_model).to(device)
    optimizer = torch.optim.AdamW(param_groups(model, args.weight_decay), lr=args.lr)
    updates_per_epoch = len(train_loader) // args.accum_steps
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, epochs=args.epochs,
                                                    steps_per_epoch=updates_per_epoch, pct_start=0.1)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    start_epoch, best = 0, float("inf")
    if args.resume and os.path.exists(args.ckpt):
        ckpt = torch.load(args.ckpt, map_location=device, weights_only=True)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch, best = ckpt["epoch"] + 1, ckpt["best"]
        print(f"resumed at epoch {start_epoch}, best val mse {best:.4f}")

    for epoch in range(start_epoch, args.epochs):
        model.train()
        optimizer.zero_grad(set_to_none=True)
        running, seen = 0.0, 0
        for i, (x, y) in enumerate(train_loader):
            if i >= updates_per_epoch * args.accum_steps:
                break
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=use_amp):
                pred = model(x)
            loss = F.mse_loss(pred.float(), y)
            scaler.scale(loss / args.accum_steps).backward()
            running += loss.item() * x.size(0)
            seen += x.size(0)
            if (i + 1) % args.accum_steps == 0:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
                scheduler.step()

        val_mse = evaluate(model, val_loader, device, use_amp)
        best = min(best, val_mse)
        print(f"epoch {epoch:03d} train {running / seen:.4f} val {val_mse:.4f} lr {scheduler.get_last_lr()[0]:.2e}")
        os.makedirs(os.path.dirname(args.ckpt), exist_ok=True)
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "scaler": scaler.state_dict(),
                    "epoch": epoch, "best": float(best)}, args.ckpt)


if __name__ == "__main__":
    main()
