"""Fine-tune an ImageNet ResNet-50 on the leaf disease photos (38 classes).

Only the new classification layer is trained; the backbone stays as it came.
    python v01_leaf_disease_finetune.py --data /data/plantvillage --epochs 8
"""

import argparse
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def loaders(root: Path, batch_size: int, workers: int):
    train_tf = transforms.Compose([
        transforms.RandomResizedCrop(224, scale=(0.6, 1.0)),
        transforms.RandomHorizontalFlip(),
        transforms.ColorJitter(0.2, 0.2, 0.1),
        transforms.ToTensor(),
        transforms.Normalize(MEAN, STD),
    ])
    val_tf = transforms.Compose([
        transforms.Resize(256),
        transforms.CenterCrop(224),
        transforms.ToTensor(),
        transforms.Normalize(MEAN, STD),
    ])
    train_set = datasets.ImageFolder(root / "train", transform=train_tf)
    val_set = datasets.ImageFolder(root / "val", transform=val_tf)
    train_dl = DataLoader(train_set, batch_size=batch_size, shuffle=True, num_workers=workers,
                          pin_memory=True, drop_last=True)
    val_dl = DataLoader(val_set, batch_size=2 * batch_size, num_workers=workers, pin_memory=True)
    return train_dl, val_dl, len(train_set.classes)


def build_model(num_classes: int) -> nn.Module:
    net = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V2)
    net.fc = nn.Linear(net.fc.in_features, num_classes)
    for name, param in net.named_parameters():
        if not name.startswith("fc."):
            param.requires_grad_(False)
    return net


@torch.no_grad()
def accuracy(model, loader, device):
    model.eval()
    hits = total = 0
    for images, labels in loader:
        images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        hits += (model(images).argmax(dim=1) == labels).sum().item()
        total += labels.numel()
    return hits / max(total, 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--out", type=Path, default=Path("leaf_resnet50.pt"))
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl, val_dl, num_classes = loaders(args.data, args.batch_size, args.workers)
    model = build_model(num_classes).to(device)

    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(trainable, lr=args.lr, momentum=0.9, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    best_acc, best_state = 0.0, None
    for epoch in range(args.epochs):
        model.train()
        started, seen, running = time.time(), 0, 0.0
        for images, labels in train_dl:
            images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(images), labels, label_smoothing=0.1)
            loss.backward()
            optimizer.step()
            running += loss.item() * labels.size(0)
            seen += labels.size(0)
        scheduler.step()

        val_acc = accuracy(model, val_dl, device)
        print(f"epoch {epoch:2d}  loss {running / seen:.4f}  val acc {val_acc:.4f}  "
              f"({time.time() - started:.0f}s)")
        if val_acc > best_acc:
            best_acc = val_acc
            best_state = {k: v for k, v in model.state_dict().items()}

    if best_state is not None:
        model.load_state_dict(best_state)
    torch.save({"model": model.state_dict(), "classes": num_classes, "val_acc": best_acc}, args.out)
    print(f"saved {args.out} (best val acc {best_acc:.4f})")


if __name__ == "__main__":
    main()
