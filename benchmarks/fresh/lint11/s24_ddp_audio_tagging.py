"""Multi-label sound event tagging (FSD50K-style, 200 classes) on log-mel clips with DDP.

Launch: torchrun --nproc_per_node 4 s24_ddp_audio_tagging.py --data data/fsd50k_mels
Each clip is a (128, 500) float16 log-mel .npy; labels.npy holds a (N, 200) multi-hot matrix.
"""
import argparse
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class MelClips(Dataset):
    def __init__(self, root, split):
        self.root = root
        self.files = np.load(os.path.join(root, f"{split}_files.npy"))
        self.labels = np.load(os.path.join(root, f"{split}_labels.npy")).astype(np.float32)

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        mel = np.load(os.path.join(self.root, str(self.files[i]))).astype(np.float32)
        mel = (mel + 4.5) / 4.5
        return torch.from_numpy(mel).unsqueeze(0), torch.from_numpy(self.labels[i])


def block(ci, co):
    return nn.Sequential(nn.Conv2d(ci, co, 3, padding=1, bias=False), nn.BatchNorm2d(co), nn.ReLU(inplace=True),
                         nn.Conv2d(co, co, 3, padding=1, bias=False), nn.BatchNorm2d(co), nn.ReLU(inplace=True),
                         nn.AvgPool2d(2))


class TaggingCNN(nn.Module):
    def __init__(self, n_classes=200):
        super().__init__()
        self.features = nn.Sequential(block(1, 64), block(64, 128), block(128, 256), block(256, 512))
        self.head = nn.Sequential(nn.Dropout(0.3), nn.Linear(512, n_classes))

    def forward(self, x):
        h = self.features(x).mean(dim=2)
        h = h.amax(dim=2) + h.mean(dim=2)
        return self.head(h)


def average_precision(scores, labels):
    order = scores.argsort(dim=0, descending=True)
    sorted_labels = labels.gather(0, order)
    hits = sorted_labels.cumsum(0)
    precision = hits / torch.arange(1, len(scores) + 1, device=scores.device).unsqueeze(1)
    n_pos = sorted_labels.sum(0)
    ap = (precision * sorted_labels).sum(0) / n_pos.clamp_min(1)
    return ap[n_pos > 0].mean().item()


@torch.no_grad()
def gather_predictions(model, loader, device, world):
    model.eval()
    scores, labels = [], []
    for x, y in loader:
        scores.append(torch.sigmoid(model(x.to(device))))
        labels.append(y.to(device))
    scores, labels = torch.cat(scores), torch.cat(labels)
    all_scores = [torch.empty_like(scores) for _ in range(world)]
    all_labels = [torch.empty_like(labels) for _ in range(world)]
    dist.all_gather(all_scores, scores)
    dist.all_gather(all_labels, labels)
    return torch.cat(all_scores), torch.cat(all_labels)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/fsd50k_mels")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=32, help="per GPU")
    ap.add_argument("--lr", type=float, default=5e-4)
    args = ap.parse_args()

    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    torch.manual_seed(0)

    train_set, val_set = MelClips(args.data, "train"), MelClips(args.data, "val")
    train_sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    val_sampler = DistributedSampler(val_set, shuffle=False, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler, num_workers=6,
                              pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=64, sampler=val_sampler, num_workers=6)

    model = nn.SyncBatchNorm.convert_sync_batchnorm(TaggingCNN()).to(device)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr * world, weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr * world, epochs=args.epochs,
                                                    steps_per_epoch=len(train_loader))

    best_map = 0.0
    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        model.train()
        loss_sum, count = torch.zeros((), device=device), 0
        for x, y in train_loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = F.binary_cross_entropy_with_logits(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            loss_sum += loss.detach() * x.size(0)
            count += x.size(0)
        stats = torch.stack([loss_sum, torch.full((), float(count), device=device)])
        dist.all_reduce(stats)

        scores, labels = gather_predictions(model, val_loader, device, world)
        if rank == 0:
            mAP = average_precision(scores, labels)
            print(f"epoch {epoch:02d}  train BCE {(stats[0] / stats[1]).item():.4f}  val mAP {mAP:.4f}")
            if mAP > best_map:
                best_map = mAP
                torch.save(model.module.state_dict(), "fsd50k_cnn_best.pt")
        dist.barrier()

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
