"""Distributed training of a 1-D CNN that labels 60 s three-component seismograms as
noise / local earthquake / teleseism (STEAD-style windows, 100 Hz).

Launch:  torchrun --standalone --nproc_per_node=4 q08_seismic_ddp_picker.py --data /data/stead_npy
"""
import argparse
import os

import numpy as np
import pandas as pd
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

CLASSES = ["noise", "local", "teleseism"]


class Waveforms(Dataset):
    def __init__(self, root, split, augment):
        meta = pd.read_csv(os.path.join(root, "metadata.csv"))
        meta = meta[meta["split"] == split].reset_index(drop=True)
        self.rows = meta["row"].to_numpy()
        self.labels = meta["label"].map({c: i for i, c in enumerate(CLASSES)}).to_numpy()
        self.traces = np.load(os.path.join(root, "traces.npy"), mmap_mode="r")  # (N, 3, 6000)
        self.augment = augment

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        x = torch.from_numpy(np.array(self.traces[self.rows[i]], dtype=np.float32))
        if self.augment:
            x = torch.roll(x, int(torch.randint(-500, 501, (1,))), dims=1)
            x = x + 0.01 * torch.randn_like(x) * x.std()
        x = x - x.mean(dim=1, keepdim=True)
        x = x / x.abs().amax().clamp(min=1e-8)
        return x, int(self.labels[i])


def conv(c_in, c_out, k, stride):
    return nn.Sequential(nn.Conv1d(c_in, c_out, k, stride, k // 2, bias=False), nn.BatchNorm1d(c_out), nn.ReLU())


class QuakeNet(nn.Module):
    def __init__(self, n_classes=3):
        super().__init__()
        self.body = nn.Sequential(conv(3, 32, 11, 2), conv(32, 64, 9, 2), conv(64, 128, 7, 2),
                                  conv(128, 128, 5, 2), conv(128, 256, 3, 2), nn.AdaptiveAvgPool1d(1))
        self.fc = nn.Linear(256, n_classes)

    def forward(self, x):
        return self.fc(self.body(x).flatten(1))


def setup():
    dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    local_rank = int(os.environ["LOCAL_RANK"])
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        return dist.get_rank(), dist.get_world_size(), torch.device("cuda", local_rank)
    return dist.get_rank(), dist.get_world_size(), torch.device("cpu")


def reduce_sum(values, device):
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t.tolist()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/data/stead_npy")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=128, help="per process")
    ap.add_argument("--lr", type=float, default=3e-3)
    args = ap.parse_args()

    rank, world, device = setup()
    torch.manual_seed(1234)
    train_ds = Waveforms(args.data, "train", augment=True)
    val_ds = Waveforms(args.data, "val", augment=False)
    train_sampler = DistributedSampler(train_ds, shuffle=True, seed=1234)
    val_sampler = DistributedSampler(val_ds, shuffle=False)
    train_dl = DataLoader(train_ds, args.batch_size, sampler=train_sampler, num_workers=6, drop_last=True)
    val_dl = DataLoader(val_ds, 256, sampler=val_sampler, num_workers=6)

    model = QuakeNet(len(CLASSES)).to(device)
    if device.type == "cuda":
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[device.index])
    else:
        model = DDP(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, epochs=args.epochs,
                                                    steps_per_epoch=len(train_dl))

    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        model.train()
        loss_sum, seen = 0.0, 0
        for x, y in train_dl:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
                loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            loss_sum += loss.item() * y.size(0)
            seen += y.size(0)

        model.eval()
        correct, total = 0, 0
        with torch.no_grad():
            for x, y in val_dl:
                x, y = x.to(device), y.to(device)
                correct += (model(x).argmax(1) == y).sum().item()
                total += y.size(0)
        loss_sum, seen, correct, total = reduce_sum([loss_sum, seen, correct, total], device)
        if rank == 0:
            print(f"epoch {epoch:02d} train loss {loss_sum / seen:.4f} val acc {correct / total:.4f}")
            torch.save(model.module.state_dict(), "quakenet.pt")
        dist.barrier()

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
