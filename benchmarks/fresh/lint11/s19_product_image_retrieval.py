"""Self-supervised fine-tuning of an image embedding for near-duplicate product retrieval.

Two augmented views of each catalogue photo are pulled together with an InfoNCE loss over the
batch; evaluation is Recall@1/5 of query photos (shop snapshots) against the catalogue gallery.
"""
import argparse
import csv
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms

IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


class PhotoList(Dataset):
    def __init__(self, csv_path, root, transform, two_views=False):
        with open(csv_path) as f:
            self.rows = [(r["path"], int(r["product_id"])) for r in csv.DictReader(f)]
        self.root, self.transform, self.two_views = Path(root), transform, two_views

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        path, pid = self.rows[i]
        img = Image.open(self.root / path).convert("RGB")
        if self.two_views:
            return self.transform(img), self.transform(img)
        return self.transform(img), pid


class Embedder(nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        backbone = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V2)
        backbone.fc = nn.Identity()
        self.backbone = backbone
        self.proj = nn.Sequential(nn.Linear(2048, 1024), nn.ReLU(inplace=True), nn.Linear(1024, dim))

    def forward(self, x):
        z = self.proj(self.backbone(x))
        return z / z.norm(p=2, keepdim=True)


def info_nce(z1, z2, temperature):
    logits = z1 @ z2.t() / temperature
    targets = torch.arange(z1.size(0), device=z1.device)
    return 0.5 * (F.cross_entropy(logits, targets) + F.cross_entropy(logits.t(), targets))


@torch.no_grad()
def embed_all(model, loader, device):
    model.eval()
    feats, ids = [], []
    for x, pid in loader:
        feats.append(model(x.to(device)).cpu())
        ids.append(pid)
    return torch.cat(feats), torch.cat(ids)


def recall_at_k(q, q_ids, g, g_ids, ks=(1, 5)):
    sims = q @ g.t()
    top = sims.topk(max(ks), dim=1).indices
    hits = g_ids[top] == q_ids[:, None]
    return {k: hits[:, :k].any(dim=1).float().mean().item() for k in ks}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/products")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--temperature", type=float, default=0.07)
    args = ap.parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train_tf = transforms.Compose([
        transforms.RandomResizedCrop(224, scale=(0.4, 1.0)),
        transforms.RandomHorizontalFlip(),
        transforms.ColorJitter(0.3, 0.3, 0.2, 0.05),
        transforms.ToTensor(),
        transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD),
    ])
    eval_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(),
                                  transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD)])
    root = Path(args.root)
    train_loader = DataLoader(PhotoList(root / "catalogue.csv", root, train_tf, two_views=True),
                              batch_size=args.batch_size, shuffle=True, drop_last=True, num_workers=8)
    gallery_loader = DataLoader(PhotoList(root / "catalogue.csv", root, eval_tf), batch_size=256, num_workers=8)
    query_loader = DataLoader(PhotoList(root / "queries.csv", root, eval_tf), batch_size=256, num_workers=8)

    model = Embedder().to(device)
    optimizer = torch.optim.AdamW([
        {"params": model.backbone.parameters(), "lr": args.lr * 0.1},
        {"params": model.proj.parameters(), "lr": args.lr},
    ], weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    for epoch in range(args.epochs):
        model.train()
        total, n = 0.0, 0
        for v1, v2 in train_loader:
            v1, v2 = v1.to(device, non_blocking=True), v2.to(device, non_blocking=True)
            loss = info_nce(model(v1), model(v2), args.temperature)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            n += 1
        scheduler.step()

        g, g_ids = embed_all(model, gallery_loader, device)
        q, q_ids = embed_all(model, query_loader, device)
        r = recall_at_k(q, q_ids, g, g_ids)
        print(f"epoch {epoch:02d}  loss {total / n:.4f}  R@1 {r[1]:.4f}  R@5 {r[5]:.4f}")
        torch.save(model.state_dict(), "product_embedder.pt")


if __name__ == "__main__":
    main()
