"""Self-supervised pre-training (MoCo v2 style) of a ResNet-18 on unlabeled product photos."""
import argparse
import copy
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms


class TwoViews:
    """Two independent augmentations of one image: the two crops are meant to differ."""

    def __init__(self, base):
        self.base = base

    def __call__(self, img):
        return self.base(img), self.base(img)


def encoder(dim=128):
    net = models.resnet18(weights=None)
    hidden = net.fc.in_features
    net.fc = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(inplace=True), nn.Linear(hidden, dim))
    return net


class MoCo(nn.Module):
    def __init__(self, dim=128, queue=16384, momentum=0.999, temperature=0.2):
        super().__init__()
        self.query = encoder(dim)
        self.key = copy.deepcopy(self.query).requires_grad_(False)
        self.m, self.t = momentum, temperature
        self.register_buffer("queue", F.normalize(torch.randn(queue, dim), dim=1))
        self.register_buffer("ptr", torch.zeros((), dtype=torch.long))

    @torch.no_grad()
    def momentum_update(self):
        for pq, pk in zip(self.query.parameters(), self.key.parameters()):
            pk.mul_(self.m).add_(pq.detach(), alpha=1.0 - self.m)

    @torch.no_grad()
    def enqueue(self, keys):
        n, start = keys.size(0), int(self.ptr)
        idx = torch.arange(start, start + n, device=keys.device) % self.queue.size(0)
        self.queue[idx] = keys.to(self.queue.dtype)
        self.ptr.fill_((start + n) % self.queue.size(0))

    def forward(self, view_q, view_k):
        q = F.normalize(self.query(view_q), dim=1)
        with torch.no_grad():
            self.momentum_update()
            k = F.normalize(self.key(view_k), dim=1)
        pos = (q * k).sum(dim=1, keepdim=True)
        neg = q @ self.queue.clone().T
        logits = torch.cat([pos, neg], dim=1) / self.t
        labels = torch.zeros(logits.size(0), dtype=torch.long, device=logits.device)
        self.enqueue(k)
        return F.cross_entropy(logits, labels), logits.softmax(dim=1)[:, 0].mean()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/products_unlabeled")
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--ckpt", default="moco_r18.pt")
    args = ap.parse_args()
    device = torch.device("cuda")

    aug = transforms.Compose([
        transforms.RandomResizedCrop(224, scale=(0.2, 1.0)),
        transforms.RandomApply([transforms.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8),
        transforms.RandomGrayscale(p=0.2), transforms.RandomHorizontalFlip(),
        transforms.ToTensor(), transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
    ])
    dataset = datasets.ImageFolder(args.data, transform=TwoViews(aug))
    loader = DataLoader(dataset, batch_size=args.batch, shuffle=True, num_workers=12, drop_last=True, pin_memory=True)

    model = MoCo().to(device)
    decay = [p for n, p in model.query.named_parameters() if p.ndim > 1]
    no_decay = [p for n, p in model.query.named_parameters() if p.ndim <= 1]
    optimizer = torch.optim.SGD([{"params": decay, "weight_decay": 1e-4}, {"params": no_decay, "weight_decay": 0.0}],
                                lr=0.03 * args.batch / 256, momentum=0.9)
    total = args.epochs * len(loader)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 0.5 * (1 + math.cos(math.pi * s / total)))
    scaler = torch.amp.GradScaler("cuda")

    start = 0
    if os.path.exists(args.ckpt):
        state = torch.load(args.ckpt, map_location=device, weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        scaler.load_state_dict(state["scaler"])
        start = state["epoch"] + 1

    for epoch in range(start, args.epochs):
        model.train()
        for (v1, v2), _ in loader:
            v1, v2 = v1.to(device, non_blocking=True), v2.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss, pos_prob = model(v1, v2)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
        print(f"epoch {epoch}: loss {loss.item():.3f} p(positive) {pos_prob.item():.3f}")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "scaler": scaler.state_dict(), "epoch": epoch}, args.ckpt)
    torch.save(model.query.state_dict(), "moco_r18_backbone.pt")


if __name__ == "__main__":
    main()
