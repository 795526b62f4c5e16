"""CUB-200 bird species: two-stage schedule.

Stage 1 fine-tunes the whole ConvNeXt-Tiny for a few epochs; stage 2 freezes the backbone and
trains only the head with the remaining budget. Per-group gradient norms are logged every step.
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms


def loaders(root, bs):
    norm = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    train_tf = transforms.Compose([transforms.RandomResizedCrop(224, scale=(0.35, 1)), transforms.RandomHorizontalFlip(),
                                   transforms.ToTensor(), norm])
    test_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), norm])
    train = datasets.ImageFolder(os.path.join(root, "train"), train_tf)
    test = datasets.ImageFolder(os.path.join(root, "test"), test_tf)
    return (DataLoader(train, bs, shuffle=True, num_workers=8, drop_last=True),
            DataLoader(test, 128, num_workers=8), len(train.classes))


class BirdNet(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        net = models.convnext_tiny(weights=models.ConvNeXt_Tiny_Weights.IMAGENET1K_V1)
        self.backbone = nn.Sequential(net.features, net.avgpool, nn.Flatten(1), net.classifier[0])
        self.head = nn.Linear(768, n_classes)

    def forward(self, x):
        return self.head(self.backbone(x))


def grad_norms(model):
    groups = {"backbone": model.backbone.parameters(), "head": model.head.parameters()}
    return {k: torch.sqrt(sum(p.grad.pow(2).sum() for p in ps)).item() for k, ps in groups.items()}


def train_step(model, optimizer, images, labels):
    optimizer.zero_grad(set_to_none=False)
    loss = F.cross_entropy(model(images), labels, label_smoothing=0.1)
    loss.backward()
    norms = grad_norms(model)
    optimizer.step()
    return loss.item(), norms


@torch.no_grad()
def top1(model, loader, device):
    model.eval()
    correct = total = 0
    for x, y in loader:
        correct += (model(x.to(device)).argmax(1).cpu() == y).sum().item()
        total += len(y)
    return correct / total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/data/CUB_200_2011/split")
    ap.add_argument("--stage1-epochs", type=int, default=5)
    ap.add_argument("--stage2-epochs", type=int, default=15)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--bs", type=int, default=64)
    args = ap.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl, test_dl, n_classes = loaders(args.root, args.bs)
    model = BirdNet(n_classes).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    total_epochs = args.stage1_epochs + args.stage2_epochs
    for epoch in range(total_epochs):
        if epoch == args.stage1_epochs:
            model.backbone.requires_grad_(False)
            print("stage 2: backbone frozen, training the head only")
        model.train()
        for step, (x, y) in enumerate(train_dl):
            loss, norms = train_step(model, optimizer, x.to(device), y.to(device))
            if step % 50 == 0:
                print(f"ep {epoch} step {step} loss {loss:.3f} |g| backbone {norms['backbone']:.3f} head {norms['head']:.3f}")
        print(f"epoch {epoch}: test top-1 {top1(model, test_dl, device):.4f}")

    torch.save(model.state_dict(), "cub_convnext_two_stage.pt")


if __name__ == "__main__":
    main()
