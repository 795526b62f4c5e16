"""Fine-tune an ImageNet EfficientNet-B0 on the cassava leaf disease photos.

Usage:
    python y01_leaf_disease_finetune.py --data /data/cassava --epochs 8
"""
import argparse
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/data/cassava")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=48)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--trainable", nargs="+", default=["fc"],
                   help="substrings of parameter names that stay trainable")
    p.add_argument("--workers", type=int, default=6)
    p.add_argument("--out", default="runs/cassava_b0")
    return p.parse_args()


def build_loaders(root, batch_size, workers):
    train_tf = transforms.Compose([
        transforms.RandomResizedCrop(224, scale=(0.5, 1.0)),
        transforms.RandomHorizontalFlip(),
        transforms.ColorJitter(0.2, 0.2, 0.2),
        transforms.ToTensor(),
        transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD),
    ])
    val_tf = transforms.Compose([
        transforms.Resize(256),
        transforms.CenterCrop(224),
        transforms.ToTensor(),
        transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD),
    ])
    train_ds = datasets.ImageFolder(os.path.join(root, "train"), transform=train_tf)
    val_ds = datasets.ImageFolder(os.path.join(root, "val"), transform=val_tf)
    train_dl = DataLoader(train_ds, batch_size=batch_size, shuffle=True, num_workers=workers,
                          pin_memory=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=batch_size * 2, shuffle=False, num_workers=workers)
    return train_dl, val_dl, len(train_ds.classes)


def build_model(num_classes):
    model = models.efficientnet_b0(weights=models.EfficientNet_B0_Weights.IMAGENET1K_V1)
    in_features = model.classifier[1].in_features
    model.classifier[1] = nn.Linear(in_features, num_classes)
    return model


def set_trainable(model, keep):
    n_train = 0
    for name, param in model.named_parameters():
        param.requires_grad = any(k in name for k in keep)
        n_train += param.numel() if param.requires_grad else 0
    print(f"trainable parameters: {n_train:,}")


def run_epoch(model, loader, device, optimizer=None):
    training = optimizer is not None
    model.train(training)
    total_loss, correct, seen = 0.0, 0, 0
    with torch.set_grad_enabled(training):
        for images, labels in loader:
            images = images.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            logits = model(images)
            loss = F.cross_entropy(logits, labels)
            if training:
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
            total_loss += loss.item() * labels.size(0)
            correct += (logits.argmax(dim=1) == labels).sum().item()
            seen += labels.size(0)
    return total_loss / seen, correct / seen


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl, val_dl, num_classes = build_loaders(args.data, args.batch_size, args.workers)

    model = build_model(num_classes)
    set_trainable(model, args.trainable)
    model.to(device)

    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    best_acc = 0.0
    for epoch in range(args.epochs):
        t0 = time.time()
        tr_loss, tr_acc = run_epoch(model, train_dl, device, optimizer)
        va_loss, va_acc = run_epoch(model, val_dl, device)
        scheduler.step()
        print(f"epoch {epoch:02d} train {tr_loss:.4f}/{tr_acc:.3f} "
              f"val {va_loss:.4f}/{va_acc:.3f} ({time.time() - t0:.0f}s)")
        if va_acc > best_acc:
            best_acc = va_acc
            torch.save(model.state_dict(), os.path.join(args.out, "best.pt"))
    print(f"best val acc {best_acc:.3f}")


if __name__ == "__main__":
    main()
