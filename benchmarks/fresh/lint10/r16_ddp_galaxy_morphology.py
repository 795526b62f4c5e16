"""Galaxy10 DECaLS morphology classes, data-parallel over the GPUs of one node.

    torchrun --standalone --nproc_per_node=8 r16_ddp_galaxy_morphology.py --epochs 40
Images come as one uint8 array (N, 256, 256, 3) in galaxy10_images.npy, labels in galaxy10_labels.npy.
"""
import argparse
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset, DistributedSampler, Subset


def cli():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/galaxy10")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--batch", type=int, default=64, help="per GPU")
    ap.add_argument("--lr", type=float, default=0.1, help="for a global batch of 512")
    ap.add_argument("--out", default="galaxy10_resnet.pt")
    return ap.parse_args()


class Galaxies(Dataset):
    MEAN = torch.tensor([0.167, 0.161, 0.158]).view(3, 1, 1)
    STD = torch.tensor([0.127, 0.118, 0.110]).view(3, 1, 1)

    def __init__(self, folder, augment):
        self.images = np.load(os.path.join(folder, "galaxy10_images.npy"), mmap_mode="r")
        self.labels = np.load(os.path.join(folder, "galaxy10_labels.npy")).astype(np.int64)
        self.augment = augment

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        img = torch.from_numpy(np.array(self.images[i])).permute(2, 0, 1).float().div(255)
        img = img[:, 32:224, 32:224]
        if self.augment:
            img = torch.rot90(img, int(torch.randint(4, ())), dims=(1, 2))
            if torch.rand(()) < 0.5:
                img = img.flip(2)
        return (img - self.MEAN) / self.STD, self.labels[i]


def split_indices(n, seed=0, valid_frac=0.1):
    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()
    cut = int(n * valid_frac)
    return order[cut:], order[:cut]


def param_groups(model, weight_decay):
    decay = [p for p in model.parameters() if p.ndim > 1]
    rest = [p for p in model.parameters() if p.ndim <= 1]
    return [{"params": decay, "weight_decay": weight_decay}, {"params": rest, "weight_decay": 0.0}]


def main():
    args = cli()
    dist.init_process_group(backend="nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device(f"cuda:{local_rank}")
    torch.manual_seed(0)

    train_idx, valid_idx = split_indices(len(np.load(os.path.join(args.data, "galaxy10_labels.npy"))))
    train_set = Subset(Galaxies(args.data, augment=True), train_idx)
    valid_set = Subset(Galaxies(args.data, augment=False), valid_idx[rank::world])
    sampler = DistributedSampler(train_set, num_replicas=world, rank=rank, shuffle=True, seed=17)
    train_loader = DataLoader(train_set, batch_size=args.batch, sampler=sampler, num_workers=8,
                              pin_memory=True, drop_last=True, persistent_workers=True)
    valid_loader = DataLoader(valid_set, batch_size=256, num_workers=4)

    net = torchvision.models.resnet18(num_classes=10)
    net = nn.SyncBatchNorm.convert_sync_batchnorm(net).to(device)
    model = DistributedDataParallel(net, device_ids=[local_rank], output_device=local_rank)
    lr = args.lr * args.batch * world / 512
    optimizer = torch.optim.SGD(param_groups(model, 5e-4), lr=lr, momentum=0.9, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        stats = torch.zeros(2, device=device)
        for x, y in train_loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            stats += torch.stack([loss.detach().float() * len(y), torch.tensor(float(len(y)), device=device)])
        scheduler.step()

        model.eval()
        hits = torch.zeros(2, device=device)
        with torch.no_grad():
            for x, y in valid_loader:
                pred = model.module(x.to(device, non_blocking=True)).argmax(dim=1)
                hits += torch.tensor([(pred.cpu() == y).sum().item(), len(y)], device=device, dtype=torch.float)
        dist.all_reduce(stats)
        dist.all_reduce(hits)
        if rank == 0:
            print(f"epoch {epoch:02d} loss {(stats[0] / stats[1]).item():.4f} "
                  f"valid acc {(hits[0] / hits[1]).item():.4f}")
            torch.save({"model": model.module.state_dict(), "epoch": epoch}, args.out)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
