"""Multi-GPU training of a product-category classifier (ResNet-50, ~1.2M catalogue images).

Launch:
    torchrun --nproc_per_node 8 y16_ddp_product_image_pretrain.py --data /mnt/catalogue
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
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/mnt/catalogue")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch-per-gpu", type=int, default=96)
    ap.add_argument("--base-lr", type=float, default=0.1)
    ap.add_argument("--out", default="checkpoints/product_r50")
    return ap.parse_args()


def setup():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return dist.get_rank(), dist.get_world_size(), local_rank


def make_loader(root, batch, world, rank):
    tf = transforms.Compose([
        transforms.RandomResizedCrop(224),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
    ])
    ds = datasets.ImageFolder(os.path.join(root, "train"), tf)
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True, drop_last=True)
    loader = DataLoader(ds, batch_size=batch, sampler=sampler, num_workers=10,
                        pin_memory=True, persistent_workers=True)
    return loader, len(ds.classes)


def main():
    args = get_args()
    rank, world, local_rank = setup()
    device = torch.device("cuda", local_rank)
    loader, n_classes = make_loader(args.data, args.batch_per_gpu, world, rank)

    model = models.resnet50(num_classes=n_classes)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model).to(device)
    model = DDP(model, device_ids=[local_rank])

    lr = args.base_lr * args.batch_per_gpu * world / 256
    decay = [p for n, p in model.named_parameters() if p.ndim > 1]
    no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1]
    optimizer = torch.optim.SGD([{"params": decay, "weight_decay": 1e-4},
                                 {"params": no_decay, "weight_decay": 0.0}], lr=lr, momentum=0.9, nesterov=True)
    steps_per_epoch = len(loader)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=lr, epochs=args.epochs,
                                                    steps_per_epoch=steps_per_epoch, pct_start=0.1)

    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        seen = torch.zeros(2, device=device)
        for images, labels in loader:
            images = images.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = F.cross_entropy(model(images), labels, label_smoothing=0.1)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            seen += torch.stack([loss.detach().float() * labels.size(0),
                                 torch.tensor(float(labels.size(0)), device=device)])
        dist.all_reduce(seen)
        if rank == 0:
            print(f"epoch {epoch:02d} loss {(seen[0] / seen[1]).item():.4f} {time.time() - t0:.0f}s", flush=True)
            os.makedirs(args.out, exist_ok=True)
            torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict(), "epoch": epoch},
                       os.path.join(args.out, "last.pt"))
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
