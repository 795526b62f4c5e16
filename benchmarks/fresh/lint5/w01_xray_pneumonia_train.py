"""Fine-tune a DenseNet-121 on chest X-rays (normal vs. pneumonia)."""

import argparse
import time
from pathlib import Path

import torch
import torch.nn as nn
import torchvision
from sklearn.metrics import roc_auc_score
from torch.utils.data import DataLoader
from torchvision import transforms

from xray_data import ChestXrayFolder

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def build_model():
    net = torchvision.models.densenet121(weights="IMAGENET1K_V1")
    net.classifier = nn.Linear(net.classifier.in_features, 1)
    return net


def make_loaders(root, batch_size, workers):
    train_tf = transforms.Compose([
        transforms.RandomResizedCrop(224, scale=(0.8, 1.0)),
        transforms.RandomRotation(7),
        transforms.ToTensor(),
        transforms.Normalize(MEAN, STD),
    ])
    eval_tf = transforms.Compose([
        transforms.Resize(256),
        transforms.CenterCrop(224),
        transforms.ToTensor(),
        transforms.Normalize(MEAN, STD),
    ])
    train = ChestXrayFolder(Path(root) / "train", transform=train_tf)
    val = ChestXrayFolder(Path(root) / "val", transform=eval_tf)
    return (
        DataLoader(train, batch_size=batch_size, shuffle=True, num_workers=workers, pin_memory=True, drop_last=True),
        DataLoader(val, batch_size=batch_size, shuffle=False, num_workers=workers, pin_memory=True),
        train.positive_fraction(),
    )


@torch.no_grad()
def evaluate(net, loader, device):
    net.eval()
    scores, labels = [], []
    for images, targets in loader:
        logits = net(images.to(device, non_blocking=True)).squeeze(1)
        scores.append(torch.sigmoid(logits).cpu())
        labels.append(targets)
    return roc_auc_score(torch.cat(labels).numpy(), torch.cat(scores).numpy())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", default="data/chest_xray")
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--out", default="runs/densenet_best.pt")
    args = p.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader, val_loader, pos_frac = make_loaders(args.root, args.batch_size, args.workers)
    net = build_model().to(device)
    pos_weight = torch.tensor([(1 - pos_frac) / pos_frac], device=device)
    criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    optimizer = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    scaler = torch.amp.GradScaler("cuda", enabled=device.type == "cuda")

    best = {"epoch": -1, "auc": 0.0, "state": None}
    for epoch in range(args.epochs):
        net.train()
        started, seen, running = time.time(), 0, 0.0
        for images, targets in train_loader:
            images = images.to(device, non_blocking=True)
            targets = targets.float().to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=device.type == "cuda"):
                loss = criterion(net(images).squeeze(1), targets)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            running += loss.item() * images.size(0)
            seen += images.size(0)

        auc = evaluate(net, val_loader, device)
        print(f"epoch {epoch:2d}  loss {running / seen:.4f}  val AUC {auc:.4f}  ({time.time() - started:.0f}s)")
        if auc > best["auc"]:
            best = {"epoch": epoch, "auc": auc, "state": net.state_dict()}

    print(f"best epoch {best['epoch']} with AUC {best['auc']:.4f}")
    net.load_state_dict(best["state"])
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": net.state_dict(), "auc": best["auc"], "epoch": best["epoch"]}, args.out)
    print(f"final check: val AUC {evaluate(net, val_loader, device):.4f}")


if __name__ == "__main__":
    main()
