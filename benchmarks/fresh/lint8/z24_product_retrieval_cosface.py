"""Image retrieval for Stanford Online Products: ResNet-50 embeddings trained with a CosFace head."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms


@torch.no_grad()
def unit_norm(x, eps=1e-6):
    return x / x.norm(dim=1, keepdim=True).clamp_min(eps)


class EmbeddingNet(nn.Module):
    def __init__(self, dim=512):
        super().__init__()
        trunk = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V2)
        self.trunk = nn.Sequential(*list(trunk.children())[:-2])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.proj = nn.Linear(2048, dim)

    def forward(self, x):
        feats = self.pool(self.trunk(x)).flatten(1)
        return unit_norm(self.proj(feats))


class CosFaceHead(nn.Module):
    def __init__(self, dim, n_classes, scale=30.0, margin=0.35):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_classes, dim))
        nn.init.xavier_uniform_(self.weight)
        self.scale, self.margin = scale, margin

    def forward(self, emb, labels):
        cos = emb @ F.normalize(self.weight, dim=1).t()
        margin = F.one_hot(labels, cos.size(1)).to(cos.dtype) * self.margin
        return self.scale * (cos - margin)


class RetrievalTrainer:
    def __init__(self, net, head, train_loader, query_loader, device, epochs=30):
        self.net, self.head = net.to(device), head.to(device)
        self.train_loader, self.query_loader = train_loader, query_loader
        self.device, self.epochs = device, epochs
        self.opt = torch.optim.Adam([
            {"params": self.net.trunk.parameters(), "lr": 1e-5},
            {"params": self.net.proj.parameters(), "lr": 1e-4},
            {"params": self.head.parameters(), "lr": 1e-3},
        ])
        self.sched = torch.optim.lr_scheduler.MultiStepLR(self.opt, milestones=[15, 25], gamma=0.1)

    def train_epoch(self):
        self.net.train()
        total, seen = 0.0, 0
        for images, labels in self.train_loader:
            images, labels = images.to(self.device), labels.to(self.device)
            logits = self.head(self.net(images), labels)
            loss = F.cross_entropy(logits, labels)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            total += loss.item() * labels.size(0)
            seen += labels.size(0)
        self.sched.step()
        return total / seen

    @torch.no_grad()
    def recall_at_k(self, ks=(1, 10, 100)):
        self.net.eval()
        embs, labels = [], []
        for images, y in self.query_loader:
            embs.append(self.net(images.to(self.device)))
            labels.append(y.to(self.device))
        embs, labels = torch.cat(embs), torch.cat(labels)
        recalls = {k: 0 for k in ks}
        for start in range(0, len(embs), 1024):
            sim = embs[start:start + 1024] @ embs.t()
            rows = torch.arange(start, min(start + 1024, len(embs)), device=self.device)
            sim[torch.arange(len(rows), device=self.device), rows] = -2.0
            top = sim.topk(max(ks), dim=1).indices
            match = labels[top] == labels[rows][:, None]
            for k in ks:
                recalls[k] += match[:, :k].any(dim=1).sum().item()
        return {k: v / len(embs) for k, v in recalls.items()}

    def fit(self):
        for epoch in range(self.epochs):
            loss = self.train_epoch()
            r = self.recall_at_k()
            print(f"epoch {epoch:2d}  loss {loss:.3f}  " + "  ".join(f"R@{k} {v:.3f}" for k, v in r.items()))
            torch.save({"net": self.net.state_dict(), "head": self.head.state_dict()}, "sop_cosface.pt")


if __name__ == "__main__":
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    norm = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    train_tf = transforms.Compose([transforms.RandomResizedCrop(224, scale=(0.3, 1.0)), transforms.RandomHorizontalFlip(),
                                   transforms.ToTensor(), norm])
    test_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), norm])
    train_ds = datasets.ImageFolder("data/sop/train_by_class", transform=train_tf)
    query_ds = datasets.ImageFolder("data/sop/test_by_class", transform=test_tf)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl = DataLoader(train_ds, batch_size=128, shuffle=True, num_workers=8, drop_last=True)
    query_dl = DataLoader(query_ds, batch_size=256, num_workers=8)
    RetrievalTrainer(EmbeddingNet(), CosFaceHead(512, len(train_ds.classes)), train_dl, query_dl, device).fit()
