"""Fine-tune an ImageNet backbone on PatchCamelyon (metastasis vs normal tissue, 96x96 patches).

The PCam HDF5 files were converted once to .npy (x: N x 96 x 96 x 3 uint8, y: N) so that they
can be memory-mapped by every worker.

    python train_pcam.py --data /data/pcam_npy --arch resnet18 --epochs 8
"""
import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from sklearn.metrics import roc_auc_score
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms

MEAN, STD = (0.702, 0.546, 0.696), (0.239, 0.282, 0.216)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--arch", default="resnet18")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--dropout", type=float, default=0.2)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--out", type=Path, default=Path("runs/pcam"))
    return p.parse_args()


class PCamNpy(Dataset):
    def __init__(self, root, split, transform):
        self.x = np.load(root / f"{split}_x.npy", mmap_mode="r")
        self.y = np.load(root / f"{split}_y.npy").astype(np.int64).reshape(-1)
        self.transform = transform

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        img = Image.fromarray(np.ascontiguousarray(self.x[i]))
        return self.transform(img), int(self.y[i])


def make_transforms(train):
    ops = [transforms.RandomHorizontalFlip(), transforms.RandomVerticalFlip(),
           transforms.ColorJitter(0.1, 0.1, 0.1, 0.02)] if train else []
    return transforms.Compose(ops + [transforms.ToTensor(), transforms.Normalize(MEAN, STD)])


def load_backbone(arch, device):
    weights = models.get_model_weights(arch).DEFAULT
    net = models.get_model(arch, weights=weights)
    return net.to(device, memory_format=torch.channels_last)


def replace_head(net, num_classes, dropout):
    in_features = net.fc.in_features
    net.fc = nn.Sequential(nn.Dropout(dropout), nn.Linear(in_features, num_classes))
    return net


def param_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim == 1 else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def train_one_epoch(model, loader, optimizer, scheduler, device):
    model.train()
    seen, total = 0, 0.0
    for images, labels in loader:
        images = images.to(device, non_blocking=True).contiguous(memory_format=torch.channels_last)
        labels = labels.to(device, non_blocking=True)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        seen += labels.size(0)
        total += loss.item() * labels.size(0)
    return total / seen


@torch.inference_mode()
def evaluate(model, loader, device):
    model.eval()
    scores, targets = [], []
    for images, labels in loader:
        images = images.to(device).contiguous(memory_format=torch.channels_last)
        probs = model(images).float().softmax(dim=1)[:, 1]
        scores.append(probs.cpu())
        targets.append(labels)
    scores, targets = torch.cat(scores).numpy(), torch.cat(targets).numpy()
    acc = float(((scores > 0.5) == targets).mean())
    return {"auc": float(roc_auc_score(targets, scores)), "acc": acc}


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    args.out.mkdir(parents=True, exist_ok=True)

    train_ds = PCamNpy(args.data, "train", make_transforms(True))
    valid_ds = PCamNpy(args.data, "valid", make_transforms(False))
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, drop_last=True,
                          num_workers=args.workers, pin_memory=True, persistent_workers=True)
    valid_dl = DataLoader(valid_ds, batch_size=512, num_workers=args.workers, pin_memory=True)

    model = replace_head(load_backbone(args.arch, device), num_classes=2, dropout=args.dropout)
    optimizer = torch.optim.AdamW(param_groups(model, 1e-4), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr, total_steps=args.epochs * len(train_dl), pct_start=0.1)

    best_auc, history = 0.0, []
    for epoch in range(args.epochs):
        t0 = time.time()
        train_loss = train_one_epoch(model, train_dl, optimizer, scheduler, device)
        metrics = evaluate(model, valid_dl, device)
        history.append({"epoch": epoch, "train_loss": train_loss, **metrics})
        print(f"epoch {epoch}: loss {train_loss:.4f} auc {metrics['auc']:.4f} "
              f"acc {metrics['acc']:.4f} ({time.time() - t0:.0f}s)")
        if metrics["auc"] > best_auc:
            best_auc = metrics["auc"]
            torch.save(model.state_dict(), args.out / "best.pt")
    (args.out / "history.json").write_text(json.dumps(history, indent=2))
    print(f"best validation AUC {best_auc:.4f}")


if __name__ == "__main__":
    main()
