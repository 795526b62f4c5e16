"""Linear probe of a frozen ImageNet ResNet-50 on Stanford Dogs (120 breeds).

Only the linear head learns. The backbone keeps its weights and its BatchNorm statistics.
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

NORM = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])


class LinearProbe(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        resnet = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V2)
        resnet.fc = nn.Identity()
        self.backbone = resnet
        self.backbone.requires_grad_(False)
        self.head = nn.Linear(2048, n_classes)

    def train(self, mode=True):
        super().train(mode)
        self.backbone.eval()
        return self

    def forward(self, x):
        return self.head(self.backbone(x))


def make_loaders(root, batch_size):
    train_tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                                   transforms.ToTensor(), NORM])
    eval_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), NORM])
    train_set = datasets.ImageFolder(os.path.join(root, "train"), train_tf)
    test_set = datasets.ImageFolder(os.path.join(root, "test"), eval_tf)
    return (
        DataLoader(train_set, batch_size=batch_size, shuffle=True, num_workers=8, pin_memory=True),
        DataLoader(test_set, batch_size=256, shuffle=False, num_workers=8),
        len(train_set.classes),
    )


def evaluate(model, loader, device):
    model.eval()
    loss_sum, correct, n = 0.0, 0, 0
    with torch.inference_mode():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
            correct += (logits.argmax(dim=1) == y).sum().item()
            n += y.numel()
    return loss_sum / n, correct / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/data/stanford_dogs")
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=0.1)
    args = ap.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl, test_dl, n_classes = make_loaders(args.root, args.batch_size)
    model = LinearProbe(n_classes).to(device)
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable == ["head.weight", "head.bias"], trainable

    optimizer = torch.optim.SGD([
        {"params": [model.head.weight], "weight_decay": 5e-4},
        {"params": [model.head.bias], "weight_decay": 0.0},
    ], lr=args.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    for epoch in range(args.epochs):
        model.train()
        seen, running = 0, 0.0
        for x, y in train_dl:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            running += loss.item() * y.size(0)
            seen += y.size(0)
        scheduler.step()
        test_loss, test_acc = evaluate(model, test_dl, device)
        print(f"epoch {epoch + 1:02d} train {running / seen:.4f} test {test_loss:.4f} acc {test_acc:.4f}")

    torch.save(model.head.state_dict(), "dogs_probe_head.pt")


if __name__ == "__main__":
    main()
