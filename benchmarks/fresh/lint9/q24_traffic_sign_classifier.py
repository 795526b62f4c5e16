"""German Traffic Sign Recognition Benchmark (43 classes) with a compact CNN.

    python q24_traffic_sign_classifier.py --epochs 30
    python q24_traffic_sign_classifier.py --resume checkpoints/gtsrb_last.pt   # continue a run
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def get_parser():
    p = argparse.ArgumentParser(description="GTSRB classifier")
    p.add_argument("--data", default="data")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--dropout", type=float, default=0.4)
    p.add_argument("--ckpt-dir", default="checkpoints")
    p.add_argument("--resume", default="")
    return p


def build_loaders(args):
    norm = transforms.Normalize((0.3403, 0.3121, 0.3214), (0.2724, 0.2608, 0.2669))
    train_tf = transforms.Compose([
        transforms.Resize((40, 40)), transforms.RandomCrop(32),
        transforms.RandomAffine(degrees=10, translate=(0.05, 0.05), scale=(0.9, 1.1)),
        transforms.ColorJitter(0.3, 0.3, 0.3), transforms.ToTensor(), norm])
    test_tf = transforms.Compose([transforms.Resize((40, 40)), transforms.CenterCrop(32), transforms.ToTensor(), norm])
    train = datasets.GTSRB(args.data, split="train", transform=train_tf, download=True)
    test = datasets.GTSRB(args.data, split="test", transform=test_tf, download=True)
    return (DataLoader(train, args.batch_size, shuffle=True, num_workers=4, drop_last=True),
            DataLoader(test, 512, shuffle=False, num_workers=4))


class SignNet(nn.Module):
    def __init__(self, n_classes=43, dropout=0.4):
        super().__init__()
        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True),
                                 nn.Conv2d(o, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True),
                                 nn.MaxPool2d(2))
        self.features = nn.Sequential(block(3, 32), block(32, 64), block(64, 128))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(dropout), nn.Linear(128 * 4 * 4, 256),
                                        nn.ReLU(inplace=True), nn.Dropout(dropout), nn.Linear(256, n_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


def validate(model, loader, device):
    model.eval()
    correct = total = 0
    loss = 0.0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            out = model(x)
            loss += F.cross_entropy(out, y, reduction="sum").item()
            correct += (out.argmax(1) == y).sum().item()
            total += y.size(0)
    return loss / total, correct / total


def save(path, model, optimizer, scheduler, epoch, best, args):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "epoch": epoch, "best": best, "args": args}, path)


def main():
    args = get_parser().parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    os.makedirs(args.ckpt_dir, exist_ok=True)
    train_dl, test_dl = build_loaders(args)

    model = SignNet(dropout=args.dropout).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    start_epoch, best = 0, 0.0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=device)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        start_epoch, best = ckpt["epoch"] + 1, ckpt["best"]
        print(f"resumed from {args.resume} (epoch {ckpt['epoch']}, best {best:.4f})")

    model.train()
    for epoch in range(start_epoch, args.epochs):
        seen, loss_sum, correct = 0, 0.0, 0
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            out = model(x)
            loss = F.cross_entropy(out, y, label_smoothing=0.05)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum += loss.item() * y.size(0)
            correct += (out.argmax(1) == y).sum().item()
            seen += y.size(0)
        scheduler.step()
        val_loss, val_acc = validate(model, test_dl, device)
        print(f"epoch {epoch + 1:02d}/{args.epochs} train loss {loss_sum / seen:.4f} acc {correct / seen:.4f} "
              f"| test loss {val_loss:.4f} acc {val_acc:.4f}")
        if val_acc > best:
            best = val_acc
            save(os.path.join(args.ckpt_dir, "gtsrb_best.pt"), model, optimizer, scheduler, epoch, best, args)
        save(os.path.join(args.ckpt_dir, "gtsrb_last.pt"), model, optimizer, scheduler, epoch, best, args)
    print(f"best test accuracy {best:.4f}")


if __name__ == "__main__":
    main()
