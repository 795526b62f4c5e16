"""Food-101 with ConvNeXt-Tiny on several GPUs.

    torchrun --standalone --nproc_per_node=4 train_food101.py --data /data/food-101 --epochs 30
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, models, transforms


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/data/food-101")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=64, help="per GPU")
    p.add_argument("--lr", type=float, default=4e-4)
    p.add_argument("--weight-decay", type=float, default=0.05)
    p.add_argument("--out", default="food101_convnext_t.pt")
    return p.parse_args()


def setup():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return dist.get_rank(), dist.get_world_size(), torch.device("cuda", local_rank)


def loaders(root, batch_size, rank, world):
    norm = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    train_tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                                   transforms.TrivialAugmentWide(), transforms.ToTensor(), norm])
    test_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), norm])
    train_ds = datasets.Food101(root, split="train", transform=train_tf)
    test_ds = datasets.Food101(root, split="test", transform=test_tf)
    train_sampler = DistributedSampler(train_ds, num_replicas=world, rank=rank, shuffle=True, drop_last=True)
    test_sampler = DistributedSampler(test_ds, num_replicas=world, rank=rank, shuffle=False)
    train_dl = DataLoader(train_ds, batch_size=batch_size, sampler=train_sampler, num_workers=8,
                          pin_memory=True, drop_last=True, persistent_workers=True)
    test_dl = DataLoader(test_ds, batch_size=128, sampler=test_sampler, num_workers=8, pin_memory=True)
    return train_dl, test_dl, train_sampler


def decay_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if p.ndim <= 1 or name.endswith(".gamma"):
            no_decay.append(p)
        else:
            decay.append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    stats = torch.zeros(3, device=device)
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
        stats[0] += F.cross_entropy(logits.float(), y, reduction="sum")
        stats[1] += (logits.argmax(1) == y).sum()
        stats[2] += y.numel()
    dist.all_reduce(stats)
    return (stats[0] / stats[2]).item(), (stats[1] / stats[2]).item()


def main():
    args = get_args()
    rank, world, device = setup()
    torch.manual_seed(1234 + rank)
    train_dl, test_dl, train_sampler = loaders(args.data, args.batch_size, rank, world)

    net = models.convnext_tiny(weights=models.ConvNeXt_Tiny_Weights.IMAGENET1K_V1)
    net.classifier[2] = nn.Linear(net.classifier[2].in_features, 101)
    model = DDP(net.to(device), device_ids=[device.index])
    optimizer = torch.optim.AdamW(decay_groups(model.module, args.weight_decay), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, pct_start=0.05,
                                                    total_steps=args.epochs * len(train_dl))
    best_acc = 0.0
    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        model.train()
        t0 = time.time()
        for x, y in train_dl:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
        test_loss, test_acc = evaluate(model, test_dl, device)
        if rank == 0:
            print(f"epoch {epoch:2d} test loss {test_loss:.4f} acc {test_acc:.4f} ({time.time() - t0:.0f}s)")
            if test_acc > best_acc:
                best_acc = test_acc
                torch.save(model.module.state_dict(), args.out)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
