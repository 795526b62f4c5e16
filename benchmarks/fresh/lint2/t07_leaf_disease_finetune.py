"""Fine-tune an ImageNet MobileNetV3 on a leaf-disease folder dataset, training the head only."""
import argparse
from pathlib import Path

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def build_loaders(root, batch_size):
    train_tf = transforms.Compose([
        transforms.RandomResizedCrop(224, scale=(0.6, 1.0)),
        transforms.RandomHorizontalFlip(),
        transforms.ColorJitter(0.2, 0.2, 0.2),
        transforms.ToTensor(),
        transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD),
    ])
    eval_tf = transforms.Compose([
        transforms.Resize(256), transforms.CenterCrop(224),
        transforms.ToTensor(), transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD),
    ])
    train_set = datasets.ImageFolder(Path(root) / "train", transform=train_tf)
    val_set = datasets.ImageFolder(Path(root) / "val", transform=eval_tf)
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True, num_workers=8, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=2 * batch_size, num_workers=8)
    return train_loader, val_loader, train_set.classes


def freeze_backbone(model):
    for name, param in model.named_parameters():
        if "fc" not in name:
            param.requires_grad = False


def train_mode(model):
    """train() for the model, but BatchNorm layers without trainable parameters keep their statistics."""
    model.train()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d) and not any(p.requires_grad for p in m.parameters()):
            m.eval()


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    for images, labels in loader:
        logits = model(images.to(device))
        correct += (logits.argmax(dim=1).cpu() == labels).sum().item()
        total += labels.numel()
    return correct / total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data/plant_village")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.01)
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader, val_loader, classes = build_loaders(args.data, args.batch_size)

    model = models.mobilenet_v3_large(weights=models.MobileNet_V3_Large_Weights.IMAGENET1K_V2)
    model.to(device)
    in_features = model.classifier[3].in_features
    model.classifier[3] = nn.Linear(in_features, len(classes))
    freeze_backbone(model)

    trainable = [p for p in model.parameters() if p.requires_grad]
    print(f"{sum(p.numel() for p in trainable):,} trainable parameters, {len(classes)} classes")
    optimizer = torch.optim.SGD(trainable, lr=args.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.3)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.05)

    best_acc = 0.0
    for epoch in range(args.epochs):
        train_mode(model)
        running, seen = 0.0, 0
        for images, labels in train_loader:
            images, labels = images.to(device), labels.to(device)
            loss = criterion(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item() * labels.size(0)
            seen += labels.size(0)
        scheduler.step()
        acc = evaluate(model, val_loader, device)
        print(f"epoch {epoch + 1}/{args.epochs} loss {running / seen:.4f} val acc {acc:.4f}")
        if acc > best_acc:
            best_acc = acc
            torch.save({"model": model.state_dict(), "classes": classes}, "leaf_mobilenet_best.pt")


if __name__ == "__main__":
    main()
