"""EuroSAT land-use classification with DistributedDataParallel.

Launch: torchrun --nproc_per_node=4 z16_ddp_eurosat_resnet.py --epochs 40
"""
import argparse
import os
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, random_split
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, models, transforms


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/EuroSAT_RGB")
    p.add_argument("--out", type=Path, default=Path("runs/eurosat_r18"))
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=128, help="per process")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--workers", type=int, default=6)
    return p.parse_args()


def setup():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return local_rank


def build_data(root):
    norm = transforms.Normalize([0.344, 0.380, 0.408], [0.203, 0.137, 0.116])
    train_tf = transforms.Compose([transforms.RandomHorizontalFlip(), transforms.RandomVerticalFlip(),
                                   transforms.RandomRotation(90), transforms.ToTensor(), norm])
    test_tf = transforms.Compose([transforms.ToTensor(), norm])
    full = datasets.ImageFolder(root)
    gen = torch.Generator().manual_seed(0)
    train_idx, val_idx = random_split(range(len(full)), [0.8, 0.2], generator=gen)
    train = torch.utils.data.Subset(datasets.ImageFolder(root, transform=train_tf), list(train_idx))
    val = torch.utils.data.Subset(datasets.ImageFolder(root, transform=test_tf), list(val_idx))
    return train, val, len(full.classes)


def make_model(n_classes):
    net = models.resnet18(weights=None, num_classes=n_classes)
    net.maxpool = nn.Identity()
    return nn.SyncBatchNorm.convert_sync_batchnorm(net)


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        correct += (model(x).argmax(dim=1) == y).sum().item()
        total += y.size(0)
    return correct / total


def main():
    args = parse_args()
    local_rank = setup()
    device = torch.device("cuda", local_rank)
    torch.manual_seed(0)
    train_ds, val_ds, n_classes = build_data(args.data)
    train_sampler = DistributedSampler(train_ds, shuffle=True, drop_last=True)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, sampler=train_sampler,
                          num_workers=args.workers, pin_memory=True, persistent_workers=True)
    val_dl = DataLoader(val_ds, batch_size=256, sampler=DistributedSampler(val_ds, shuffle=False),
                        num_workers=args.workers, pin_memory=True)

    model = DDP(make_model(n_classes).to(device), device_ids=[local_rank])
    decay = [p for p in model.parameters() if p.ndim > 1]
    no_decay = [p for p in model.parameters() if p.ndim <= 1]
    opt = torch.optim.SGD([{"params": decay, "weight_decay": 5e-4}, {"params": no_decay, "weight_decay": 0.0}],
                          lr=args.lr, momentum=0.9, nesterov=True)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    args.out.mkdir(parents=True, exist_ok=True)

    for epoch in range(args.epochs):
        model.train()
        total, seen = torch.zeros((), device=device), 0
        for x, y in train_dl:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            loss = criterion(model(x), y)
            loss.backward()
            opt.step()
            total += loss.detach() * y.size(0)
            seen += y.size(0)
        sched.step()
        acc = evaluate(model, val_dl, device)
        print(f"epoch {epoch:2d}  train loss {total.item() / seen:.4f}  val acc {acc:.4f}")
        torch.save({"model": model.module.state_dict(), "optimizer": opt.state_dict(),
                    "scheduler": sched.state_dict(), "epoch": epoch}, args.out / "last.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
