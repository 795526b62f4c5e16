#!/usr/bin/env python
"""Brain tumour MRI classification (glioma / meningioma / pituitary / no tumour).

Feature-extraction transfer learning: the ImageNet ResNet-50 is kept fixed, a new
classifier head is trained on top of it.
"""
import argparse
import os
from collections import Counter

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default="data/brain-tumor-mri")
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--bs", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--save", default="mri_resnet50_head.pt")
    parser.add_argument("--seed", type=int, default=1)
    return parser.parse_args()


def loaders(root, bs):
    normalize = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    tfs = {
        "Training": transforms.Compose([
            transforms.Grayscale(num_output_channels=3),
            transforms.RandomResizedCrop(224, scale=(0.8, 1.0)),
            transforms.RandomRotation(10),
            transforms.ToTensor(), normalize]),
        "Testing": transforms.Compose([
            transforms.Grayscale(num_output_channels=3),
            transforms.Resize(256), transforms.CenterCrop(224),
            transforms.ToTensor(), normalize]),
    }
    sets = {k: datasets.ImageFolder(os.path.join(root, k), tf) for k, tf in tfs.items()}
    return (
        DataLoader(sets["Training"], batch_size=bs, shuffle=True, num_workers=4, drop_last=True),
        DataLoader(sets["Testing"], batch_size=bs, shuffle=False, num_workers=4),
        sets["Training"].classes,
        Counter(sets["Training"].targets),
    )


def freeze(module):
    for p in module.parameters():
        p.requires_grad = False
    return module


def build(num_classes, hidden):
    net = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V2)
    in_features = net.fc.in_features
    freeze(net)
    net.fc = nn.Sequential(
        nn.Linear(in_features, hidden),
        nn.ReLU(inplace=True),
        nn.Dropout(0.4),
        nn.Linear(hidden, num_classes),
    )
    return net


def train_epoch(model, loader, criterion, optimizer, device):
    model.train()
    loss_sum, correct, count = 0.0, 0, 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        loss_sum += loss.item() * inputs.size(0)
        correct += (outputs.argmax(1) == targets).sum().item()
        count += inputs.size(0)
    return loss_sum / count, correct / count


def test_epoch(model, loader, criterion, device, n_classes):
    model.eval()
    loss_sum, count = 0.0, 0
    confusion = torch.zeros(n_classes, n_classes, dtype=torch.long)
    with torch.no_grad():
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = model(inputs)
            loss_sum += criterion(outputs, targets).item() * inputs.size(0)
            count += inputs.size(0)
            pairs = targets.cpu() * n_classes + outputs.argmax(1).cpu()
            confusion += torch.bincount(pairs, minlength=n_classes ** 2).view(n_classes, n_classes)
    recall = confusion.diag().float() / confusion.sum(1).clamp(min=1).float()
    return loss_sum / count, confusion.diag().sum().item() / count, recall


def main():
    args = get_args()
    torch.manual_seed(args.seed)
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    train_dl, test_dl, classes, counts = loaders(args.root, args.bs)
    print("classes:", classes, "train counts:", dict(counts))

    model = build(len(classes), args.hidden).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.fc.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[6, 10], gamma=0.1)

    best_acc = 0.0
    for epoch in range(1, args.epochs + 1):
        tr_loss, tr_acc = train_epoch(model, train_dl, criterion, optimizer, device)
        te_loss, te_acc, recall = test_epoch(model, test_dl, criterion, device, len(classes))
        scheduler.step()
        per_class = " ".join(f"{c}={r:.2f}" for c, r in zip(classes, recall.tolist()))
        print(f"epoch {epoch:2d} | train {tr_loss:.3f} {tr_acc:.3f} | test {te_loss:.3f} {te_acc:.3f} | {per_class}")
        if te_acc > best_acc:
            best_acc = te_acc
            torch.save(model.state_dict(), args.save)
    print(f"best test accuracy: {best_acc:.4f}")


if __name__ == "__main__":
    main()
