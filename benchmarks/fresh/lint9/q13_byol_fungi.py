"""Self-supervised BYOL pre-training on unlabeled fungi photographs (ResNet-18 from scratch).

The online network learns to predict the target network's projection of another view of the
same image; the target network is an exponential moving average of the online one.
"""
import copy
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

CFG = {
    "data": "data/fungi_unlabeled",
    "img_size": 160,
    "batch_size": 256,
    "epochs": 100,
    "lr": 3e-4,
    "tau_base": 0.996,
    "proj_dim": 256,
    "hidden_dim": 2048,
    "workers": 8,
    "out": "checkpoints/byol_fungi",
}


class TwoViews:
    def __init__(self, size):
        self.t = transforms.Compose([
            transforms.RandomResizedCrop(size, scale=(0.2, 1.0)),
            transforms.RandomHorizontalFlip(),
            transforms.RandomApply([transforms.ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8),
            transforms.RandomGrayscale(p=0.2),
            transforms.RandomApply([transforms.GaussianBlur(15, sigma=(0.1, 2.0))], p=0.5),
            transforms.ToTensor(),
            transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
        ])

    def __call__(self, img):
        return self.t(img), self.t(img)


def mlp(in_dim, hidden, out_dim):
    return nn.Sequential(nn.Linear(in_dim, hidden, bias=False), nn.BatchNorm1d(hidden),
                         nn.ReLU(inplace=True), nn.Linear(hidden, out_dim))


class Branch(nn.Module):
    def __init__(self, hidden, proj):
        super().__init__()
        self.encoder = models.resnet18(weights=None)
        self.encoder.fc = nn.Identity()
        self.projector = mlp(512, hidden, proj)

    def forward(self, x):
        return self.projector(self.encoder(x))


def regression_loss(p, z):
    p, z = F.normalize(p, dim=-1), F.normalize(z, dim=-1)
    return 2 - 2 * (p * z).sum(dim=-1)


class BYOL(nn.Module):
    def __init__(self, hidden, proj):
        super().__init__()
        self.online = Branch(hidden, proj)
        self.predictor = mlp(proj, hidden, proj)
        self.target = copy.deepcopy(self.online)

    def forward(self, v1, v2):
        p1, p2 = self.predictor(self.online(v1)), self.predictor(self.online(v2))
        z1, z2 = self.target(v1), self.target(v2)
        return (regression_loss(p1, z2) + regression_loss(p2, z1)).mean()

    @torch.no_grad()
    def update_target(self, tau):
        for po, pt in zip(self.online.parameters(), self.target.parameters()):
            pt.lerp_(po, 1.0 - tau)
        for bo, bt in zip(self.online.buffers(), self.target.buffers()):
            bt.copy_(bo)


def tau_at(step, total, base):
    return 1 - (1 - base) * (math.cos(math.pi * step / total) + 1) / 2


def main(cfg=CFG):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    os.makedirs(cfg["out"], exist_ok=True)
    ds = datasets.ImageFolder(cfg["data"], transform=TwoViews(cfg["img_size"]))
    loader = DataLoader(ds, batch_size=cfg["batch_size"], shuffle=True, num_workers=cfg["workers"],
                        drop_last=True, pin_memory=True, persistent_workers=True)

    model = BYOL(cfg["hidden_dim"], cfg["proj_dim"]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    total_steps, step = cfg["epochs"] * len(loader), 0
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=total_steps)

    for epoch in range(cfg["epochs"]):
        model.train()
        running, batches = 0.0, 0
        for (v1, v2), _ in loader:
            v1, v2 = v1.to(device, non_blocking=True), v2.to(device, non_blocking=True)
            loss = model(v1, v2)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            model.update_target(tau_at(step, total_steps, cfg["tau_base"]))
            step += 1
            running += loss.item()
            batches += 1
        print(f"epoch {epoch + 1:03d} byol loss {running / batches:.4f} lr {scheduler.get_last_lr()[0]:.2e}")
        if (epoch + 1) % 10 == 0:
            torch.save(model.online.encoder.state_dict(), os.path.join(cfg["out"], f"encoder_{epoch + 1:03d}.pt"))


if __name__ == "__main__":
    main()
