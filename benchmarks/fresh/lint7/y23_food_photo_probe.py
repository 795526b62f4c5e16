"""Food-101 dish recognition for the menu-photo app: frozen MobileNetV3 features + new head.

The backbone is exported unchanged to the phone, so only the 101-way head is trained here
and shipped as a separate small file.
"""
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

ROOT = os.environ.get("FOOD101", "/data/food-101")
CFG = dict(epochs=12, batch_size=128, lr=3e-3, label_smoothing=0.1, workers=8)


def food_loaders():
    norm = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    train_tf = transforms.Compose([
        transforms.RandomResizedCrop(224, scale=(0.4, 1.0)),
        transforms.RandomHorizontalFlip(),
        transforms.TrivialAugmentWide(),
        transforms.ToTensor(),
        norm,
    ])
    eval_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), norm])
    train = datasets.Food101(ROOT, split="train", transform=train_tf, download=False)
    test = datasets.Food101(ROOT, split="test", transform=eval_tf, download=False)
    return (DataLoader(train, CFG["batch_size"], shuffle=True, num_workers=CFG["workers"], drop_last=True),
            DataLoader(test, 256, num_workers=CFG["workers"]))


def build():
    mnv3 = models.mobilenet_v3_large(weights=models.MobileNet_V3_Large_Weights.IMAGENET1K_V2)
    backbone = nn.Sequential(mnv3.features, mnv3.avgpool, nn.Flatten(1))
    head = nn.Sequential(nn.Linear(960, 1280), nn.Hardswish(), nn.Dropout(0.2), nn.Linear(1280, 101))
    for p in backbone.parameters():
        p.requires_grad = False
    return backbone, head


def epoch_pass(model, loader, device, optimizer=None):
    total, correct, loss_sum = 0, 0, 0.0
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        with torch.set_grad_enabled(optimizer is not None):
            logits = model(x)
            loss = F.cross_entropy(logits, y, label_smoothing=CFG["label_smoothing"])
        if optimizer is not None:
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        loss_sum += loss.item() * y.size(0)
        correct += (logits.argmax(1) == y).sum().item()
        total += y.size(0)
    return loss_sum / total, correct / total


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl, test_dl = food_loaders()
    backbone, head = build()
    model = nn.Sequential(backbone, head).to(device)

    optimizer = torch.optim.AdamW(head.parameters(), lr=CFG["lr"], weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=CFG["epochs"])

    best = 0.0
    for epoch in range(CFG["epochs"]):
        t0 = time.time()
        model.train()
        tr_loss, tr_acc = epoch_pass(model, train_dl, device, optimizer)
        scheduler.step()
        model.eval()
        te_loss, te_acc = epoch_pass(model, test_dl, device)
        print(f"[{epoch + 1}/{CFG['epochs']}] train {tr_loss:.3f}/{tr_acc:.3f} "
              f"test {te_loss:.3f}/{te_acc:.3f} ({time.time() - t0:.0f}s)")
        if te_acc > best:
            best = te_acc
            torch.save(head.state_dict(), "food101_head.pt")
    print(f"best test accuracy {best:.4f}")


if __name__ == "__main__":
    main()
