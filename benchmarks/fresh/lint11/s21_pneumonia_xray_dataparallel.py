"""Pneumonia vs normal on paediatric chest X-rays (Guangzhou dataset layout: train/val/test, each
with NORMAL/ and PNEUMONIA/ folders), DenseNet-121 fine-tuned on every GPU of the node.
"""
import argparse
import os
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/chest_xray")
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--out", default="runs/pneumonia_densenet")
    p.add_argument("--workers", type=int, default=8)
    return p.parse_args()


def build_model():
    model = models.densenet121(weights=models.DenseNet121_Weights.IMAGENET1K_V1)
    model.classifier = nn.Linear(model.classifier.in_features, 2)
    return model


def loaders(root, batch_size, workers):
    train_tf = transforms.Compose([
        transforms.Resize(256), transforms.RandomResizedCrop(224, scale=(0.8, 1.0)),
        transforms.RandomRotation(7), transforms.ToTensor(), transforms.Normalize(MEAN, STD),
    ])
    eval_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(),
                                  transforms.Normalize(MEAN, STD)])
    train_set = datasets.ImageFolder(os.path.join(root, "train"), train_tf)
    val_set = datasets.ImageFolder(os.path.join(root, "val"), eval_tf)
    test_set = datasets.ImageFolder(os.path.join(root, "test"), eval_tf)
    counts = torch.bincount(torch.tensor(train_set.targets), minlength=2).float()
    class_weights = counts.sum() / (2 * counts)
    return (DataLoader(train_set, batch_size, shuffle=True, num_workers=workers, pin_memory=True, drop_last=True),
            DataLoader(val_set, batch_size, num_workers=workers),
            DataLoader(test_set, batch_size, num_workers=workers),
            class_weights)


def evaluate(model, loader, device):
    model.eval()
    tp = fp = tn = fn = 0
    with torch.no_grad():
        for x, y in loader:
            pred = model(x.to(device)).argmax(1).cpu()
            tp += ((pred == 1) & (y == 1)).sum().item()
            tn += ((pred == 0) & (y == 0)).sum().item()
            fp += ((pred == 1) & (y == 0)).sum().item()
            fn += ((pred == 0) & (y == 1)).sum().item()
    total = tp + tn + fp + fn
    return {"acc": (tp + tn) / total, "sens": tp / max(tp + fn, 1), "spec": tn / max(tn + fp, 1)}


def main():
    args = get_args()
    torch.manual_seed(0)
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader, val_loader, test_loader, class_weights = loaders(args.data, args.batch_size, args.workers)

    model = build_model().to(device)
    if torch.cuda.device_count() > 1:
        print(f"using {torch.cuda.device_count()} GPUs")
        model = nn.DataParallel(model)
    criterion = nn.CrossEntropyLoss(weight=class_weights.to(device))
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.3)
    best_path = os.path.join(args.out, "best.pt")

    best_bal = 0.0
    for epoch in range(args.epochs):
        model.train()
        t0, total, n = time.time(), 0.0, 0
        for x, y in train_loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * y.size(0)
            n += y.size(0)
        scheduler.step()
        m = evaluate(model, val_loader, device)
        balanced = (m["sens"] + m["spec"]) / 2
        print(f"epoch {epoch:02d} loss {total / n:.4f} val acc {m['acc']:.3f} sens {m['sens']:.3f} "
              f"spec {m['spec']:.3f} ({time.time() - t0:.0f}s)")
        if balanced > best_bal:
            best_bal = balanced
            torch.save(model.state_dict(), best_path)

    final = build_model()
    final.load_state_dict(torch.load(best_path, map_location="cpu", weights_only=True))
    final = final.to(device)
    m = evaluate(final, test_loader, device)
    print(f"test acc {m['acc']:.3f}  sensitivity {m['sens']:.3f}  specificity {m['spec']:.3f}")


if __name__ == "__main__":
    main()
