"""Multi-label fundus photo classifier (8 findings, ODIR-style), DDP + fp16 autocast.

    torchrun --nproc_per_node 4 y18_ddp_amp_fundus_multilabel.py --accum 4

Each optimizer update sees accum x batch x world images; the LR schedule is defined per update.
"""
import argparse
import contextlib
import math
import os

import pandas as pd
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from torchvision import models, transforms

FINDINGS = ["N", "D", "G", "C", "A", "H", "M", "O"]


class FundusSet(Dataset):
    def __init__(self, csv_path, img_dir, train):
        self.df = pd.read_csv(csv_path)
        self.img_dir = img_dir
        aug = [transforms.RandomRotation(15), transforms.RandomHorizontalFlip()] if train else []
        self.tf = transforms.Compose([transforms.Resize((384, 384)), *aug, transforms.ToTensor(),
                                      transforms.Normalize([0.42, 0.27, 0.15], [0.28, 0.19, 0.12])])

    def __len__(self):
        return len(self.df)

    def __getitem__(self, i):
        row = self.df.iloc[i]
        img = Image.open(os.path.join(self.img_dir, row["image"])).convert("RGB")
        return self.tf(img), torch.tensor(row[FINDINGS].to_numpy(dtype="float32"))


def cosine_with_warmup(warmup, total):
    def f(update):
        if update < warmup:
            return (update + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (update - warmup) / max(1, total - warmup)))
    return f


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/data/odir")
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--accum", type=int, default=4)
    ap.add_argument("--lr", type=float, default=4e-4)
    args = ap.parse_args()

    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    train_ds = FundusSet(f"{args.root}/train.csv", f"{args.root}/images", train=True)
    sampler = DistributedSampler(train_ds, shuffle=True, drop_last=True)
    loader = DataLoader(train_ds, batch_size=args.batch, sampler=sampler, num_workers=8, pin_memory=True,
                        drop_last=True)

    net = models.efficientnet_b3(weights=models.EfficientNet_B3_Weights.IMAGENET1K_V1)
    net.classifier[1] = nn.Linear(net.classifier[1].in_features, len(FINDINGS))
    model = DDP(net.to(device), device_ids=[local_rank])

    optimizer = torch.optim.AdamW([
        {"params": [p for p in model.parameters() if p.ndim > 1], "weight_decay": 0.05},
        {"params": [p for p in model.parameters() if p.ndim <= 1], "weight_decay": 0.0},
    ], lr=args.lr)
    updates_per_epoch = len(loader) // args.accum
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, cosine_with_warmup(updates_per_epoch, args.epochs * updates_per_epoch))
    scaler = torch.amp.GradScaler("cuda")

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        optimizer.zero_grad(set_to_none=True)
        for i, (x, y) in enumerate(loader):
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            boundary = (i + 1) % args.accum == 0
            sync = contextlib.nullcontext() if boundary else model.no_sync()
            with sync:
                with torch.autocast("cuda", dtype=torch.float16):
                    logits = model(x)
                    loss = F.binary_cross_entropy_with_logits(logits, y) / args.accum
                scaler.scale(loss).backward()
            if boundary:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), 2.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
                scheduler.step()
        if rank == 0:
            print(f"epoch {epoch + 1}/{args.epochs} lr {scheduler.get_last_lr()[0]:.2e} "
                  f"last loss {loss.item() * args.accum:.4f}", flush=True)
            torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict(), "scaler": scaler.state_dict(),
                        "epoch": epoch}, "fundus_effb3_last.pt")
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
