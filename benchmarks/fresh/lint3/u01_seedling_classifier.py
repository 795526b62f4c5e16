"""Plant seedling classification: fine-tune a ResNet-34 on the 12-species seedling images."""

import argparse
import logging
import os
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

log = logging.getLogger("seedlings")

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/seedlings")
    p.add_argument("--epochs", type=int, default=25)
    p.add_argument("--bs", type=int, default=48)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--workers", type=int, default=6)
    p.add_argument("--resume", default="")
    p.add_argument("--out", default="runs/seedlings")
    return p.parse_args()


def build_loaders(root, bs, workers):
    train_tf = transforms.Compose([
        transforms.RandomResizedCrop(224, scale=(0.6, 1.0)),
        transforms.RandomHorizontalFlip(),
        transforms.RandomVerticalFlip(),
        transforms.ColorJitter(0.2, 0.2, 0.1),
        transforms.ToTensor(),
        transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD),
    ])
    val_tf = transforms.Compose([
        transforms.Resize(256),
        transforms.CenterCrop(224),
        transforms.ToTensor(),
        transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD),
    ])
    train_ds = datasets.ImageFolder(os.path.join(root, "train"), train_tf)
    val_ds = datasets.ImageFolder(os.path.join(root, "val"), val_tf)
    train_dl = DataLoader(train_ds, bs, shuffle=True, num_workers=workers, pin_memory=True, drop_last=True)
    val_dl = DataLoader(val_ds, bs * 2, shuffle=False, num_workers=workers, pin_memory=True)
    return train_dl, val_dl, len(train_ds.classes)


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for images, labels in loader:
            images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            preds = model(images).argmax(dim=1)
            correct += (preds == labels).sum().item()
            total += labels.numel()
    return correct / max(total, 1)


def train_one_epoch(model, loader, criterion, optimizer, device, epoch):
    seen, running = 0, 0.0
    t0 = time.time()
    for step, (images, labels) in enumerate(loader):
        images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()
        running += loss.item() * images.size(0)
        seen += images.size(0)
        if step % 50 == 0:
            log.info("epoch %d step %d loss %.4f", epoch, step, running / seen)
    log.info("epoch %d done in %.1fs", epoch, time.time() - t0)
    return running / max(seen, 1)


def main():
    args = get_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train_dl, val_dl, num_classes = build_loaders(args.data, args.bs, args.workers)
    model = models.resnet34(weights=models.ResNet34_Weights.IMAGENET1K_V1)
    model.fc = nn.Linear(model.fc.in_features, num_classes)
    model = model.to(device)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    start_epoch, best_acc = 0, 0.0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=device)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        start_epoch, best_acc = ckpt["epoch"] + 1, ckpt["best_acc"]
        log.info("resumed from %s (epoch %d)", args.resume, start_epoch)

    model.train()
    for epoch in range(start_epoch, args.epochs):
        train_loss = train_one_epoch(model, train_dl, criterion, optimizer, device, epoch)
        scheduler.step()
        acc = evaluate(model, val_dl, device)
        log.info("epoch %d train_loss %.4f val_acc %.4f", epoch, train_loss, acc)
        state = {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "epoch": epoch,
            "best_acc": max(best_acc, acc),
            "args": args,
        }
        torch.save(state, os.path.join(args.out, "last.pt"))
        if acc > best_acc:
            best_acc = acc
            torch.save(state, os.path.join(args.out, "best.pt"))
    log.info("best val acc %.4f", best_acc)


if __name__ == "__main__":
    main()
