import argparse
import math
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--source", default="data/digits/svhn_train.npz")
    p.add_argument("--target", default="data/digits/mnist32_train.npz")
    p.add_argument("--target-test", default="data/digits/mnist32_test.npz")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--gamma", type=float, default=10.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--save", default="runs/dann/final.pt")
    return p.parse_args()


def load_digits(path, with_labels=True):
    data = np.load(path)
    images = torch.from_numpy(data["x"]).permute(0, 3, 1, 2).float().div_(255.0)
    images = (images - 0.5) / 0.5
    if not with_labels:
        return TensorDataset(images)
    labels = torch.from_numpy(data["y"].astype(np.int64) % 10)
    return TensorDataset(images, labels)


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, coeff):
        ctx.coeff = coeff
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg() * ctx.coeff


class FeatureExtractor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, 64, 5, padding=2, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 5, padding=2, bias=False), nn.BatchNorm2d(128), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(128, 256, 5, padding=2, bias=False), nn.BatchNorm2d(256), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )

    def forward(self, x):
        return self.net(x)


class DANN(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = FeatureExtractor()
        self.label_head = nn.Sequential(nn.Linear(256, 128), nn.ReLU(), nn.Dropout(0.5), nn.Linear(128, classes))
        self.domain_head = nn.Sequential(nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 1))

    def forward(self, x, coeff=0.0):
        feats = self.features(x)
        return self.label_head(feats), self.domain_head(GradReverse.apply(feats, coeff)).squeeze(1)


def schedule(progress, gamma, base_lr):
    coeff = 2.0 / (1.0 + math.exp(-gamma * progress)) - 1.0
    lr = base_lr / (1.0 + 10.0 * progress) ** 0.75
    return coeff, lr


def accuracy(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for images, labels in loader:
            logits, _ = model(images.to(device))
            correct += (logits.argmax(1).cpu() == labels).sum().item()
            total += labels.numel()
    return correct / total


def main():
    args = parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    source = DataLoader(load_digits(args.source), batch_size=args.batch_size, shuffle=True, drop_last=True)
    target = DataLoader(load_digits(args.target, with_labels=False), batch_size=args.batch_size, shuffle=True,
                        drop_last=True)
    target_test = DataLoader(load_digits(args.target_test), batch_size=512)
    model = DANN().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    steps_per_epoch = min(len(source), len(target))
    total_steps = args.epochs * steps_per_epoch
    step = 0
    for epoch in range(args.epochs):
        model.train()
        for (xs, ys), (xt,) in zip(source, target):
            coeff, lr = schedule(step / total_steps, args.gamma, args.lr)
            for group in optimizer.param_groups:
                group["lr"] = lr
            xs, ys, xt = xs.to(device), ys.to(device), xt.to(device)
            class_logits, dom_src = model(xs, coeff)
            _, dom_tgt = model(xt, coeff)
            dom_logits = torch.cat([dom_src, dom_tgt])
            dom_labels = torch.cat([torch.zeros_like(dom_src), torch.ones_like(dom_tgt)])
            loss = F.cross_entropy(class_logits, ys) + F.binary_cross_entropy_with_logits(dom_logits, dom_labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            step += 1
        print(f"epoch {epoch:02d} coeff {coeff:.3f} lr {lr:.5f} target acc {accuracy(model, target_test, device):.4f}")
    Path(args.save).parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict(), "epochs": args.epochs}, args.save)


if __name__ == "__main__":
    main()
