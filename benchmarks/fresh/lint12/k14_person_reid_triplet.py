"""Person re-identification on Market-1501: ResNet-50 + BNNeck, ID loss + batch-hard triplet;
rank-1 and mAP of query against gallery (same-camera matches of the same identity ignored).
"""
import random
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset, Sampler
from torchvision import models, transforms

NAME = re.compile(r"(-?\d+)_c(\d)")


@dataclass
class Config:
    root: Path = Path("data/Market-1501-v15.09.15")
    p: int = 16
    k: int = 4
    epochs: int = 120
    lr: float = 3.5e-4
    milestones: tuple = (40, 70)
    margin: float = 0.3
    seed: int = 1


class ReIDImages(Dataset):
    def __init__(self, folder, train):
        self.items = []
        for f in sorted(folder.glob("*.jpg")):
            pid, cam = map(int, NAME.match(f.name).groups())
            if pid >= 0:
                self.items.append((f, pid, cam))
        pids = sorted({pid for _, pid, _ in self.items})
        self.relabel = {pid: i for i, pid in enumerate(pids)} if train else {pid: pid for pid in pids}
        aug = [transforms.RandomHorizontalFlip(), transforms.Pad(10), transforms.RandomCrop((256, 128))] if train else []
        self.tf = transforms.Compose([transforms.Resize((256, 128)), *aug, transforms.ToTensor(),
                                      transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        f, pid, cam = self.items[i]
        return self.tf(Image.open(f).convert("RGB")), self.relabel[pid], cam


class RandomIdentitySampler(Sampler):
    def __init__(self, items, p, k):
        self.index = defaultdict(list)
        for i, (_, pid, _) in enumerate(items):
            self.index[pid].append(i)
        self.p, self.k = p, k

    def __iter__(self):
        pids = list(self.index)
        random.shuffle(pids)
        for start in range(0, len(pids) - self.p + 1, self.p):
            for pid in pids[start:start + self.p]:
                pool = self.index[pid]
                yield from (random.sample(pool, self.k) if len(pool) >= self.k else random.choices(pool, k=self.k))


class BNNeckNet(nn.Module):
    def __init__(self, n_ids):
        super().__init__()
        backbone = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V2)
        backbone.layer4[0].conv2.stride = (1, 1)
        backbone.layer4[0].downsample[0].stride = (1, 1)
        self.body = nn.Sequential(*list(backbone.children())[:-2])
        self.neck = nn.BatchNorm1d(2048)
        self.classifier = nn.Linear(2048, n_ids, bias=False)

    def forward(self, x):
        feat = self.body(x).mean(dim=(2, 3))
        return feat, self.classifier(self.neck(feat))


def euclidean(a, b):
    d2 = a.pow(2).sum(1, keepdim=True) + b.pow(2).sum(1) - 2.0 * a @ b.t()
    return d2.clamp_min(1e-12).sqrt()


def triplet_hard(feat, pids, margin):
    dist = euclidean(feat, feat)
    same = pids[:, None] == pids[None, :]
    pos = (dist * same.float()).amax(1)
    neg = dist.masked_fill(same, float("inf")).amin(1)
    return F.margin_ranking_loss(neg, pos, torch.ones_like(pos), margin=margin)


class Trainer:
    def __init__(self, cfg, model, device):
        self.cfg, self.model, self.device = cfg, model.to(device), device
        decay = [p for n, p in model.named_parameters() if p.ndim > 1]
        no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1]
        self.optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 5e-4},
                                            {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr)
        self.scheduler = torch.optim.lr_scheduler.MultiStepLR(self.optimizer, list(cfg.milestones), 0.1)
        self.log = []

    def on_epoch_start(self, epoch):
        self.model.train()
        self.log = []

    def on_step_end(self, id_loss, tri_loss):
        self.log.append((id_loss, tri_loss))

    def on_epoch_end(self, epoch):
        self.scheduler.step()
        id_l, tri_l = np.mean(self.log, axis=0)
        print(f"epoch {epoch:3d} id {id_l:.3f} triplet {tri_l:.3f} lr {self.scheduler.get_last_lr()[0]:.2e}")

    def fit(self, loader):
        for epoch in range(self.cfg.epochs):
            self.on_epoch_start(epoch)
            for x, pid, _ in loader:
                x, pid = x.to(self.device), pid.to(self.device)
                feat, logits = self.model(x)
                id_loss = F.cross_entropy(logits, pid, label_smoothing=0.1)
                tri_loss = triplet_hard(feat, pid, self.cfg.margin)
                self.optimizer.zero_grad()
                (id_loss + tri_loss).backward()
                self.optimizer.step()
                self.on_step_end(id_loss.item(), tri_loss.item())
            self.on_epoch_end(epoch)


@torch.no_grad()
def embed_folder(model, folder, device):
    ds = ReIDImages(folder, train=False)
    model.eval()
    feats = [F.normalize(model.neck(model(x.to(device))[0]), dim=1).cpu()
             for x, _, _ in DataLoader(ds, batch_size=128, num_workers=4)]
    return torch.cat(feats), torch.tensor([p for _, p, _ in ds.items]), torch.tensor([c for _, _, c in ds.items])


def rank1_and_map(q, g):
    dist = torch.cdist(q[0], g[0])
    aps, hits = [], []
    for i in range(len(dist)):
        keep = ~((g[1] == q[1][i]) & (g[2] == q[2][i]))
        match = (g[1][keep][dist[i][keep].argsort()] == q[1][i]).float()
        if match.sum() > 0:
            hits.append(match[0].item())
            precision = match.cumsum(0) / torch.arange(1, len(match) + 1)
            aps.append((precision * match).sum().item() / match.sum().item())
    return float(np.mean(hits)), float(np.mean(aps))


def main(cfg=Config()):
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_ds = ReIDImages(cfg.root / "bounding_box_train", train=True)
    loader = DataLoader(train_ds, batch_size=cfg.p * cfg.k, num_workers=8, drop_last=True,
                        sampler=RandomIdentitySampler(train_ds.items, cfg.p, cfg.k))
    trainer = Trainer(cfg, BNNeckNet(len(train_ds.relabel)), device)
    trainer.fit(loader)
    query = embed_folder(trainer.model, cfg.root / "query", device)
    gallery = embed_folder(trainer.model, cfg.root / "bounding_box_test", device)
    print("rank-1 %.4f  mAP %.4f" % rank1_and_map(query, gallery))
    torch.save(trainer.model.state_dict(), "market_bnneck.pt")


if __name__ == "__main__":
    main()
