import argparse
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms


def read_pairs(path):
    return dict(line.split(maxsplit=1) for line in Path(path).read_text().splitlines() if line.strip())


class CubBirds(Dataset):
    def __init__(self, root, train, transform):
        root = Path(root)
        images = read_pairs(root / "images.txt")
        labels = read_pairs(root / "image_class_labels.txt")
        split = read_pairs(root / "train_test_split.txt")
        wanted = "1" if train else "0"
        self.items = [(root / "images" / images[k].strip(), int(labels[k]) - 1)
                      for k in sorted(images, key=int) if split[k].strip() == wanted]
        self.transform = transform

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        return self.transform(Image.open(path).convert("RGB")), label


def pipelines():
    norm = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    train = transforms.Compose([transforms.RandomResizedCrop(224, scale=(0.35, 1.0)),
                                transforms.RandomHorizontalFlip(), transforms.ToTensor(), norm])
    test = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), norm])
    return train, test


class FrozenBackboneClassifier(nn.Module):
    def __init__(self, classes):
        super().__init__()
        net = models.convnext_tiny(weights=models.ConvNeXt_Tiny_Weights.IMAGENET1K_V1)
        self.backbone = net.features
        self.pool = nn.Sequential(net.avgpool, net.classifier[0], nn.Flatten(1))
        self.head = nn.Linear(768, classes)
        for module in (self.backbone, self.pool):
            module.requires_grad_(False)

    def train(self, mode=True):
        super().train(mode)
        self.backbone.eval()
        self.pool.eval()
        return self

    def forward(self, x):
        return self.head(self.pool(self.backbone(x)))


def evaluate(model, loader, device):
    model.eval()
    top1 = top5 = n = 0
    with torch.inference_mode():
        for images, labels in loader:
            logits = model(images.to(device, non_blocking=True)).cpu()
            top = logits.topk(5, dim=1).indices
            top1 += (top[:, 0] == labels).sum().item()
            top5 += (top == labels[:, None]).any(dim=1).sum().item()
            n += labels.numel()
    return top1 / n, top5 / n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default="data/CUB_200_2011")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--out", default="cub_probe_head.pt")
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    train_tf, test_tf = pipelines()
    train_loader = DataLoader(CubBirds(args.root, True, train_tf), batch_size=args.batch_size, shuffle=True,
                              num_workers=8, pin_memory=True, drop_last=True)
    test_loader = DataLoader(CubBirds(args.root, False, test_tf), batch_size=args.batch_size, num_workers=8)
    model = FrozenBackboneClassifier(200).to(device)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * len(train_loader))
    for epoch in range(args.epochs):
        model.train()
        for images, labels in train_loader:
            images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            loss = F.cross_entropy(model(images), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
        top1, top5 = evaluate(model, test_loader, device)
        print(f"epoch {epoch + 1}: top1 {top1:.3f} top5 {top5:.3f}")
    torch.save(model.head.state_dict(), args.out)


if __name__ == "__main__":
    main()
