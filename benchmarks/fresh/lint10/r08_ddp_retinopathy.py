"""Diabetic retinopathy grading (0-4) on fundus photographs, multi-GPU.

    torchrun --nproc_per_node=4 r08_ddp_retinopathy.py --csv data/aptos/train.csv --images data/aptos/train
"""
import argparse
import csv
import os
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from PIL import Image
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler
from torchvision import transforms as T


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--csv", type=Path, required=True)
    p.add_argument("--images", type=Path, required=True)
    p.add_argument("--epochs", type=int, default=25)
    p.add_argument("--batch-size", type=int, default=16, help="per process")
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--valid-every", type=int, default=1)
    p.add_argument("--out", type=Path, default=Path("runs/dr_resnet50.pt"))
    return p.parse_args()


class Fundus(Dataset):
    def __init__(self, rows, folder, transform):
        self.rows, self.folder, self.transform = rows, folder, transform

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        image_id, grade = self.rows[i]
        img = Image.open(self.folder / f"{image_id}.png").convert("RGB")
        return self.transform(img), grade


def split_rows(csv_path, valid_fraction=0.15, seed=0):
    with open(csv_path) as f:
        rows = [(r["id_code"], int(r["diagnosis"])) for r in csv.DictReader(f)]
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(rows))
    n_valid = int(valid_fraction * len(rows))
    return [rows[i] for i in order[n_valid:]], [rows[i] for i in order[:n_valid]]


def quadratic_kappa(y_true, y_pred, k=5):
    observed = np.zeros((k, k))
    for t, p in zip(y_true, y_pred):
        observed[t, p] += 1
    weights = np.array([[(i - j) ** 2 for j in range(k)] for i in range(k)]) / (k - 1) ** 2
    expected = np.outer(observed.sum(1), observed.sum(0)) / observed.sum()
    return 1 - (weights * observed).sum() / (weights * expected).sum()


@torch.no_grad()
def validate(net, loader, device):
    net.eval()
    preds, labels = [], []
    for x, y in loader:
        preds.append(net(x.to(device)).argmax(1).cpu())
        labels.append(y)
    return quadratic_kappa(torch.cat(labels).numpy(), torch.cat(preds).numpy())


def main():
    args = get_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    torch.manual_seed(1234 + rank)

    norm = T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    train_tf = T.Compose([T.RandomResizedCrop(384, scale=(0.8, 1.0)), T.RandomHorizontalFlip(),
                          T.RandomRotation(30), T.ColorJitter(0.2, 0.2), T.ToTensor(), norm])
    valid_tf = T.Compose([T.Resize((384, 384)), T.ToTensor(), norm])
    train_rows, valid_rows = split_rows(args.csv)
    train_set = Fundus(train_rows, args.images, train_tf)
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, num_workers=6,
                              pin_memory=True, drop_last=True)
    valid_loader = DataLoader(Fundus(valid_rows, args.images, valid_tf), batch_size=32, num_workers=6)

    net = torchvision.models.resnet50(weights=torchvision.models.ResNet50_Weights.IMAGENET1K_V2)
    net.fc = nn.Linear(net.fc.in_features, 5)
    net = nn.SyncBatchNorm.convert_sync_batchnorm(net).to(device)
    model = DDP(net, device_ids=[local_rank])

    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr,
                                                    total_steps=args.epochs * len(train_loader))
    best = -1.0
    for epoch in range(args.epochs):
        model.train()
        seen = torch.zeros(2, device=device)
        for x, y in train_loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = F.cross_entropy(model(x), y, label_smoothing=0.05)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            seen += torch.stack([loss.detach().float() * y.numel(), torch.tensor(float(y.numel()), device=device)])
        dist.all_reduce(seen)
        if rank == 0 and (epoch + 1) % args.valid_every == 0:
            kappa = validate(model.module, valid_loader, device)
            print(f"epoch {epoch:02d} train loss {(seen[0] / seen[1]).item():.4f} valid QWK {kappa:.4f}")
            if kappa > best:
                best = kappa
                args.out.parent.mkdir(parents=True, exist_ok=True)
                torch.save({"model": model.module.state_dict(), "epoch": epoch, "qwk": kappa}, args.out)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
