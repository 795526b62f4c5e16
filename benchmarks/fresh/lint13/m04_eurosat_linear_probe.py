"""Linear probe of ImageNet features on EuroSAT (RGB, 10 land-use classes).

The backbone is frozen, so its features are computed once and the probe is a multinomial
logistic regression trained full-batch on the cached features, as in the usual linear-probe
protocol. Reports top-1 on the held-out 20 %.
"""
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Subset
from torchvision import datasets, models, transforms


@dataclass
class ProbeConfig:
    root: str = "data/EuroSAT_RGB"
    arch: str = "resnet50"
    image_size: int = 224
    batch_size: int = 256
    workers: int = 8
    test_fraction: float = 0.2
    steps: int = 500
    lr: float = 0.05
    l2: float = 1e-4
    seed: int = 0


MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def build_backbone(cfg):
    net = getattr(models, cfg.arch)(weights="IMAGENET1K_V2")
    feat_dim = net.fc.in_features
    net.fc = nn.Identity()
    net.eval()
    for p in net.parameters():
        p.requires_grad_(False)
    return net, feat_dim


def split_indices(n, fraction, seed):
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    cut = int(n * fraction)
    return order[cut:].tolist(), order[:cut].tolist()


@torch.inference_mode()
def extract(backbone, loader, device):
    feats, labels = [], []
    for images, targets in loader:
        out = backbone(images.to(device, non_blocking=True))
        feats.append(F.normalize(out, dim=1))
        labels.append(targets.to(device))
    return torch.cat(feats), torch.cat(labels)


def fit_probe(train_x, train_y, n_classes, cfg):
    head = nn.Linear(train_x.shape[1], n_classes).to(train_x.device)
    optimizer = torch.optim.Adam(head.parameters(), lr=cfg.lr)
    for step in range(cfg.steps):
        logits = head(train_x)
        loss = F.cross_entropy(logits, train_y) + cfg.l2 * head.weight.pow(2).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            acc = (logits.argmax(1) == train_y).float().mean().item()
            print(f"step {step:4d}  loss {loss.item():.4f}  train acc {acc:.4f}")
    return head


def evaluate(head, x, y, class_names):
    head.eval()
    with torch.no_grad():
        pred = head(x).argmax(1)
    overall = (pred == y).float().mean().item()
    per_class = {}
    for c, name in enumerate(class_names):
        mask = y == c
        per_class[name] = (pred[mask] == c).float().mean().item() if mask.any() else float("nan")
    return overall, per_class


def main(cfg=ProbeConfig()):
    torch.manual_seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tf = transforms.Compose([
        transforms.Resize(cfg.image_size),
        transforms.ToTensor(),
        transforms.Normalize(MEAN, STD),
    ])
    full = datasets.ImageFolder(cfg.root, transform=tf)
    train_idx, test_idx = split_indices(len(full), cfg.test_fraction, cfg.seed)
    loaders = {
        name: DataLoader(Subset(full, idx), batch_size=cfg.batch_size, num_workers=cfg.workers, pin_memory=True)
        for name, idx in (("train", train_idx), ("test", test_idx))
    }

    backbone, feat_dim = build_backbone(cfg)
    backbone.to(device)
    print(f"{cfg.arch}: {feat_dim}-d features, {len(train_idx)} train / {len(test_idx)} test images")
    train_x, train_y = extract(backbone, loaders["train"], device)
    test_x, test_y = extract(backbone, loaders["test"], device)

    head = fit_probe(train_x, train_y, len(full.classes), cfg)
    overall, per_class = evaluate(head, test_x, test_y, full.classes)
    print(f"linear probe top-1: {overall:.4f}")
    for name, acc in sorted(per_class.items(), key=lambda kv: kv[1]):
        print(f"  {name:22s} {acc:.3f}")
    torch.save({"head": head.state_dict(), "arch": cfg.arch, "classes": full.classes}, "eurosat_probe.pt")


if __name__ == "__main__":
    main()
