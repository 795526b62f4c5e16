"""Fine-tune a ResNet-34 to grade diabetic retinopathy lesions (5 grades) from fundus photos."""

import argparse
import copy
from pathlib import Path

import torch
import torch.nn as nn
import torchvision.transforms as T
from torch.utils.data import DataLoader
from torchvision import models
from torchvision.datasets import ImageFolder

NUM_GRADES = 5
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", type=Path, default=Path("data/fundus"))
    p.add_argument("--epochs", type=int, default=25)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--out", type=Path, default=Path("runs/retina"))
    return p.parse_args()


def build_loaders(root, batch_size):
    train_tf = T.Compose([
        T.RandomResizedCrop(384, scale=(0.7, 1.0)),
        T.RandomHorizontalFlip(),
        T.ColorJitter(0.2, 0.2, 0.1),
        T.ToTensor(),
        T.Normalize(MEAN, STD),
    ])
    eval_tf = T.Compose([T.Resize(416), T.CenterCrop(384), T.ToTensor(), T.Normalize(MEAN, STD)])
    train_ds = ImageFolder(root / "train", transform=train_tf)
    val_ds = ImageFolder(root / "val", transform=eval_tf)
    train_dl = DataLoader(train_ds, batch_size=batch_size, shuffle=True, num_workers=8,
                          pin_memory=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=batch_size * 2, shuffle=False, num_workers=8)
    return train_dl, val_dl


def param_groups(net, weight_decay):
    """Decay the conv / linear weights only; BatchNorm parameters and biases are left alone."""
    decay, no_decay = [], []
    for p in net.parameters():
        (decay if p.ndim > 1 else no_decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def build_model():
    net = models.resnet34(weights=models.ResNet34_Weights.IMAGENET1K_V1)
    net.fc = nn.Linear(net.fc.in_features, NUM_GRADES)
    return net


@torch.no_grad()
def evaluate(net, loader, device):
    net.eval()
    correct, seen, total_loss = 0, 0, 0.0
    for images, grades in loader:
        images, grades = images.to(device, non_blocking=True), grades.to(device)
        with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=device.type == "cuda"):
            logits = net(images)
        total_loss += nn.functional.cross_entropy(logits.float(), grades, reduction="sum").item()
        correct += (logits.argmax(dim=1) == grades).sum().item()
        seen += grades.numel()
    return total_loss / seen, correct / seen


def main():
    args = parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl, val_dl = build_loaders(args.data, args.batch_size)

    net = build_model().to(device)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.05)
    optimizer = torch.optim.AdamW(param_groups(net, 0.05), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    scaler = torch.amp.GradScaler("cuda", enabled=device.type == "cuda")

    best_acc, best_weights = 0.0, None
    for epoch in range(args.epochs):
        net.train()
        running, batches = 0.0, 0
        for images, grades in train_dl:
            images, grades = images.to(device, non_blocking=True), grades.to(device)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=device.type == "cuda"):
                loss = criterion(net(images), grades)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(net.parameters(), max_norm=2.0)
            scaler.step(optimizer)
            scaler.update()
            running += loss.item()
            batches += 1
        scheduler.step()

        val_loss, val_acc = evaluate(net, val_dl, device)
        print(f"epoch {epoch:02d} train {running / batches:.4f} val {val_loss:.4f} acc {val_acc:.3f}")
        if val_acc > best_acc:
            best_acc = val_acc
            best_weights = copy.deepcopy(net.state_dict())
            torch.save(best_weights, args.out / "best.pt")

    if best_weights is not None:
        net.load_state_dict(best_weights)
    _, final_acc = evaluate(net, val_dl, device)
    print(f"restored best model: val acc {final_acc:.3f} (best seen {best_acc:.3f})")


if __name__ == "__main__":
    main()
