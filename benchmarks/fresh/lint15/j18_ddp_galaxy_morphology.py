import os
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


@dataclass
class Settings:
    images: str = "data/galaxy10_images.npy"
    labels: str = "data/galaxy10_labels.npy"
    run_dir: str = "runs/galaxy_ddp"
    epochs: int = 40
    batch_per_gpu: int = 64
    lr: float = 1e-3
    weight_decay: float = 0.05
    val_frac: float = 0.1


class GalaxyCutouts(Dataset):
    def __init__(self, images, labels, indices, augment):
        self.images, self.labels, self.indices, self.augment = images, labels, indices, augment

    def __len__(self):
        return len(self.indices)

    def __getitem__(self, i):
        j = self.indices[i]
        x = torch.from_numpy(np.ascontiguousarray(self.images[j])).permute(2, 0, 1).float() / 255.0
        if self.augment:
            x = torch.rot90(x, int(torch.randint(0, 4, ())), dims=(1, 2))
            if torch.rand(()) < 0.5:
                x = torch.flip(x, dims=[2])
        return (x - 0.5) / 0.25, int(self.labels[j])


def make_model(classes=10):
    layers, c = [], 3
    for width in (32, 64, 128, 256):
        layers += [nn.Conv2d(c, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
                   nn.MaxPool2d(2)]
        c = width
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(c, classes))


def split_params(model):
    decay = [p for p in model.parameters() if p.ndim > 1]
    rest = [p for p in model.parameters() if p.ndim <= 1]
    return decay, rest


def evaluate(model, loader, device):
    model.eval()
    counts = torch.zeros(2, device=device)
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            counts[0] += (model(x).argmax(1) == y).sum()
            counts[1] += y.numel()
    dist.all_reduce(counts)
    return (counts[0] / counts[1]).item()


def main():
    cfg = Settings()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    rank = dist.get_rank()
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    images = np.load(cfg.images, mmap_mode="r")
    labels = np.load(cfg.labels)
    order = np.random.default_rng(0).permutation(len(labels))
    n_val = int(cfg.val_frac * len(order))
    train_set = GalaxyCutouts(images, labels, order[n_val:], augment=True)
    val_set = GalaxyCutouts(images, labels, order[:n_val], augment=False)
    train_sampler = DistributedSampler(train_set, shuffle=True, seed=0)
    val_sampler = DistributedSampler(val_set, shuffle=False)
    train_loader = DataLoader(train_set, batch_size=cfg.batch_per_gpu, sampler=train_sampler, num_workers=6,
                              pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=cfg.batch_per_gpu, sampler=val_sampler, num_workers=6)

    model = nn.SyncBatchNorm.convert_sync_batchnorm(make_model()).to(device)
    decay, rest = split_params(model)
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                                   {"params": rest, "weight_decay": 0.0}], lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.epochs)
    ckpt_path = os.path.join(cfg.run_dir, "last.pt")
    start = 0
    if os.path.exists(ckpt_path):
        state = torch.load(ckpt_path, map_location=device, weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        start = state["epoch"] + 1
    model = DDP(model, device_ids=[local_rank])

    for epoch in range(start, cfg.epochs):
        train_sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        scheduler.step()
        acc = evaluate(model, val_loader, device)
        if rank == 0:
            print(f"epoch {epoch}: val acc {acc:.4f}")
            os.makedirs(cfg.run_dir, exist_ok=True)
            torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict(), "epoch": epoch, "settings": asdict(cfg)}, ckpt_path)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
