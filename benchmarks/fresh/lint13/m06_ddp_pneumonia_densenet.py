"""Paediatric chest X-ray classification (normal / bacterial / viral) with DenseNet-121 on
several GPUs. Launch with: torchrun --nproc_per_node=4 m06_ddp_pneumonia_densenet.py --data data/cxr
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torch.utils.tensorboard import SummaryWriter
from torchvision import datasets, models, transforms


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/cxr")
    p.add_argument("--epochs", type=int, default=25)
    p.add_argument("--batch-size", type=int, default=32, help="per GPU")
    p.add_argument("--lr-head", type=float, default=1e-3)
    p.add_argument("--lr-backbone", type=float, default=1e-4)
    p.add_argument("--max-grad-norm", type=float, default=2.0)
    p.add_argument("--out", default="runs/cxr_densenet")
    return p.parse_args()


class XrayNet(nn.Module):
    def __init__(self, n_classes=3):
        super().__init__()
        dense = models.densenet121(weights="IMAGENET1K_V1")
        self.backbone = dense.features
        self.head = nn.Linear(dense.classifier.in_features, n_classes)

    def forward(self, x):
        h = F.relu(self.backbone(x))
        return self.head(F.adaptive_avg_pool2d(h, 1).flatten(1))


def build_optimizer(net, args):
    return torch.optim.AdamW([
        {"params": net.backbone.parameters(), "lr": args.lr_backbone, "weight_decay": 0.0},
        {"params": [net.head.weight], "lr": args.lr_head, "weight_decay": 1e-4},
        {"params": [net.head.bias], "lr": args.lr_head, "weight_decay": 0.0},
    ])


def loaders(args, world, rank):
    norm = transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
    train_tf = transforms.Compose([transforms.Grayscale(3), transforms.RandomResizedCrop(224, scale=(0.7, 1.0)),
                                   transforms.RandomRotation(7), transforms.ToTensor(), norm])
    val_tf = transforms.Compose([transforms.Grayscale(3), transforms.Resize(256), transforms.CenterCrop(224),
                                 transforms.ToTensor(), norm])
    train_set = datasets.ImageFolder(os.path.join(args.data, "train"), train_tf)
    val_set = datasets.ImageFolder(os.path.join(args.data, "val"), val_tf)
    train_sampler = DistributedSampler(train_set, num_replicas=world, rank=rank, shuffle=True)
    val_sampler = DistributedSampler(val_set, num_replicas=world, rank=rank, shuffle=False)
    train = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler, num_workers=6,
                       pin_memory=True, drop_last=True)
    val = DataLoader(val_set, batch_size=64, sampler=val_sampler, num_workers=6, pin_memory=True)
    return train, val, train_sampler


def evaluate(model, loader, device):
    model.eval()
    stats = torch.zeros(3, device=device)
    with torch.no_grad(), torch.autocast(device_type=device.type, dtype=torch.bfloat16):
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            logits = model(x)
            stats[0] += F.cross_entropy(logits.float(), y, reduction="sum")
            stats[1] += (logits.argmax(1) == y).sum()
            stats[2] += y.numel()
    dist.all_reduce(stats)
    return (stats[0] / stats[2]).item(), (stats[1] / stats[2]).item()


def main():
    args = parse()
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    torch.manual_seed(1234 + rank)

    net = XrayNet().to(device)
    optimizer = build_optimizer(net, args)
    model = DDP(net, device_ids=[local_rank])
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    train_loader, val_loader, sampler = loaders(args, world, rank)
    writer = SummaryWriter(args.out) if rank == 0 else None
    best = 0.0
    try:
        for epoch in range(args.epochs):
            sampler.set_epoch(epoch)
            model.train()
            for step, (x, y) in enumerate(train_loader):
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
                    loss = F.cross_entropy(model(x), y, label_smoothing=0.05)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                optimizer.step()
                if writer is not None and step % 20 == 0:
                    writer.add_scalar("train/loss", loss.item(), epoch * len(train_loader) + step)
            scheduler.step()
            val_loss, val_acc = evaluate(model, val_loader, device)
            if rank == 0:
                writer.add_scalar("val/loss", val_loss, epoch)
                writer.add_scalar("val/acc", val_acc, epoch)
                print(f"epoch {epoch:2d}  val loss {val_loss:.4f}  acc {val_acc:.4f}")
                if val_acc > best:
                    best = val_acc
                    torch.save(model.module.state_dict(), os.path.join(args.out, "best.pt"))
            dist.barrier()
    finally:
        if writer is not None:
            writer.close()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
