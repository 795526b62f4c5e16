"""SimSiam self-supervised pre-training on CIFAR-10 (ResNet-18 backbone), with a kNN monitor."""

import argparse
import logging
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader

log = logging.getLogger("simsiam")
CIFAR_MEAN, CIFAR_STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)


class TwoCrops:
    def __init__(self, tf):
        self.tf = tf

    def __call__(self, img):
        return self.tf(img), self.tf(img)


def backbone():
    net = torchvision.models.resnet18(num_classes=10)
    net.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
    net.maxpool = nn.Identity()
    dim = net.fc.in_features
    net.fc = nn.Identity()
    return net, dim


class SimSiam(nn.Module):
    def __init__(self, proj_dim=2048, pred_dim=512):
        super().__init__()
        self.encoder, dim = backbone()
        self.projector = nn.Sequential(
            nn.Linear(dim, proj_dim, bias=False), nn.BatchNorm1d(proj_dim), nn.ReLU(inplace=True),
            nn.Linear(proj_dim, proj_dim, bias=False), nn.BatchNorm1d(proj_dim, affine=False),
        )
        self.predictor = nn.Sequential(
            nn.Linear(proj_dim, pred_dim, bias=False), nn.BatchNorm1d(pred_dim), nn.ReLU(inplace=True),
            nn.Linear(pred_dim, proj_dim),
        )

    def forward(self, x1, x2):
        z1, z2 = self.projector(self.encoder(x1)), self.projector(self.encoder(x2))
        return self.predictor(z1), self.predictor(z2), z1, z2


def negative_cosine(p, z):
    return -F.cosine_similarity(p, z, dim=-1).mean()


@torch.no_grad()
def knn_accuracy(encoder, memory_dl, test_dl, device, k=200, t=0.1):
    encoder.eval()
    feats, labels = [], []
    for x, y in memory_dl:
        feats.append(F.normalize(encoder(x.to(device)), dim=1))
        labels.append(y.to(device))
    bank, bank_y = torch.cat(feats), torch.cat(labels)
    hits = total = 0
    for x, y in test_dl:
        f = F.normalize(encoder(x.to(device)), dim=1)
        sim, idx = (f @ bank.T).topk(k, dim=1)
        votes = torch.zeros(f.size(0), 10, device=device).scatter_add_(1, bank_y[idx], (sim / t).exp())
        hits += (votes.argmax(1) == y.to(device)).sum().item()
        total += y.numel()
    encoder.train()
    return hits / total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=800)
    ap.add_argument("--bs", type=int, default=512)
    ap.add_argument("--lr", type=float, default=0.06)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda")

    aug = T.Compose([
        T.RandomResizedCrop(32, scale=(0.2, 1.0)), T.RandomHorizontalFlip(),
        T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8), T.RandomGrayscale(0.2),
        T.ToTensor(), T.Normalize(CIFAR_MEAN, CIFAR_STD),
    ])
    plain = T.Compose([T.ToTensor(), T.Normalize(CIFAR_MEAN, CIFAR_STD)])
    train = torchvision.datasets.CIFAR10("data", train=True, transform=TwoCrops(aug), download=True)
    memory = torchvision.datasets.CIFAR10("data", train=True, transform=plain)
    test = torchvision.datasets.CIFAR10("data", train=False, transform=plain)
    train_dl = DataLoader(train, args.bs, shuffle=True, num_workers=8, pin_memory=True, drop_last=True)
    memory_dl, test_dl = DataLoader(memory, 512, num_workers=8), DataLoader(test, 512, num_workers=8)

    model = SimSiam().to(device)
    base_lr = args.lr * args.bs / 256
    opt = torch.optim.SGD(model.parameters(), lr=base_lr, momentum=0.9, weight_decay=5e-4)
    for epoch in range(args.epochs):
        for g in opt.param_groups:
            g["lr"] = base_lr * 0.5 * (1 + math.cos(math.pi * epoch / args.epochs))
        model.train()
        for (x1, x2), _ in train_dl:
            x1, x2 = x1.to(device, non_blocking=True), x2.to(device, non_blocking=True)
            p1, p2, z1, z2 = model(x1, x2)
            loss = 0.5 * (negative_cosine(p1, z2) + negative_cosine(p2, z1))
            opt.zero_grad()
            loss.backward()
            opt.step()
        if epoch % 10 == 0:
            acc = knn_accuracy(model.encoder, memory_dl, test_dl, device)
            log.info("epoch %d loss %.4f kNN acc %.4f", epoch, loss.item(), acc)
            torch.save(model.encoder.state_dict(), "simsiam_r18.pt")


if __name__ == "__main__":
    main()
