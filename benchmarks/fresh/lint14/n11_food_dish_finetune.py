import argparse
import random
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def parse_args():
    p = argparse.ArgumentParser(description="Food-101 fine-tuning")
    p.add_argument("--data", default="data/food-101/split")
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--weight-decay", type=float, default=1e-4)
    p.add_argument("--workers", type=int, default=16)
    p.add_argument("--seed", type=int, default=101)
    p.add_argument("--out", default="runs/food101")
    return p.parse_args()


def loaders(root, batch_size, workers):
    train_tf = transforms.Compose([
        transforms.RandomResizedCrop(224, scale=(0.25, 1.0)),
        transforms.RandomHorizontalFlip(),
        transforms.ColorJitter(0.3, 0.3, 0.3),
        transforms.ToTensor(),
        transforms.Normalize(MEAN, STD),
    ])
    test_tf = transforms.Compose([
        transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), transforms.Normalize(MEAN, STD),
    ])
    train_set = datasets.ImageFolder(Path(root) / "train", train_tf)
    test_set = datasets.ImageFolder(Path(root) / "test", test_tf)
    train = DataLoader(train_set, batch_size=batch_size, shuffle=True, num_workers=workers, pin_memory=True,
                       drop_last=True, persistent_workers=True)
    test = DataLoader(test_set, batch_size=batch_size, num_workers=workers, pin_memory=True)
    return train, test, train_set.classes


def prepare_model(num_classes, device):
    model = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V2)
    model.fc = nn.Linear(model.fc.in_features, num_classes)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    else:
        model = model.to(device)
    return model


def param_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim == 1 else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad(), torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
        for images, labels in loader:
            logits = model(images.to(device, non_blocking=True))
            correct += (logits.argmax(1).cpu() == labels).sum().item()
            total += labels.numel()
    return correct / total


def main():
    args = parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader, test_loader, classes = loaders(args.data, args.batch_size, args.workers)
    model = prepare_model(len(classes), device)
    optimizer = torch.optim.SGD(param_groups(model, args.weight_decay), lr=args.lr, momentum=0.9, nesterov=True)
    total_steps = args.epochs * len(train_loader)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, total_steps=total_steps, pct_start=0.1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    best = 0.0
    for epoch in range(args.epochs):
        model.train()
        start, seen, loss_sum = time.time(), 0, 0.0
        for images, labels in train_loader:
            images = images.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
                loss = F.cross_entropy(model(images), labels, label_smoothing=0.1)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            loss_sum += loss.item() * labels.size(0)
            seen += labels.size(0)
        acc = evaluate(model, test_loader, device)
        print(f"epoch {epoch:02d} loss {loss_sum / seen:.4f} top1 {acc:.4f} ({time.time() - start:.0f}s)")
        if acc > best:
            best = acc
            net = model.module if isinstance(model, nn.DataParallel) else model
            torch.save({"model": net.state_dict(), "classes": classes, "epoch": epoch, "top1": acc}, out / "best.pt")
    print(f"best top1 {best:.4f}")


if __name__ == "__main__":
    main()
