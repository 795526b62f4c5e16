"""SimCLR pre-training of a ResNet-18 on unlabeled STL-10 (train+unlabeled splits)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import ConcatDataset, DataLoader
from torchvision import transforms as T


class TwoViews:
    def __init__(self, size=96):
        self.aug = T.Compose([
            T.RandomResizedCrop(size, scale=(0.2, 1.0)),
            T.RandomHorizontalFlip(),
            T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8),
            T.RandomGrayscale(p=0.2),
            T.GaussianBlur(9, sigma=(0.1, 2.0)),
            T.ToTensor(),
            T.Normalize((0.44, 0.43, 0.40), (0.26, 0.26, 0.27)),
        ])

    def __call__(self, img):
        return self.aug(img), self.aug(img)


class SimCLR(nn.Module):
    def __init__(self, proj_dim=128):
        super().__init__()
        self.encoder = torchvision.models.resnet18(num_classes=1)
        self.encoder.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        self.encoder.maxpool = nn.Identity()
        feat = self.encoder.fc.in_features
        self.encoder.fc = nn.Identity()
        self.projector = nn.Sequential(nn.Linear(feat, 2048), nn.BatchNorm1d(2048), nn.ReLU(), nn.Linear(2048, proj_dim))

    def forward(self, x):
        return self.projector(self.encoder(x))


def nt_xent(z1, z2, temperature):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.T / temperature
    n = z1.shape[0]
    sim.fill_diagonal_(float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)
    return F.cross_entropy(sim, targets)


def pretrain(epochs=200, batch_size=256, base_lr=1e-3, temperature=0.2, warmup_epochs=10):
    device = torch.device("cuda")
    views = TwoViews()
    data = ConcatDataset([
        torchvision.datasets.STL10("data", split="unlabeled", transform=views, download=True),
        torchvision.datasets.STL10("data", split="train", transform=views, download=True),
    ])
    loader = DataLoader(data, batch_size=batch_size, shuffle=True, num_workers=12,
                        pin_memory=True, drop_last=True, persistent_workers=True)
    model = SimCLR().to(device).to(memory_format=torch.channels_last)
    optimizer = torch.optim.AdamW(model.parameters(), lr=base_lr, weight_decay=1e-6)
    total_steps, warmup_steps = epochs * len(loader), warmup_epochs * len(loader)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda s: (s + 1) / warmup_steps if s < warmup_steps
        else 0.5 * (1 + math.cos(math.pi * (s - warmup_steps) / (total_steps - warmup_steps))),
    )
    scaler = torch.amp.GradScaler("cuda")

    for epoch in range(epochs):
        model.train()
        running = 0.0
        for (x1, x2), _ in loader:
            x1 = x1.to(device, non_blocking=True, memory_format=torch.channels_last)
            x2 = x2.to(device, non_blocking=True, memory_format=torch.channels_last)
            with torch.cuda.amp.autocast():
                loss = nt_xent(model(x1), model(x2), temperature)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            schedule.step()
            running += loss.item()
        print(f"epoch {epoch:3d}  nt-xent {running / len(loader):.4f}  lr {schedule.get_last_lr()[0]:.2e}")
        if (epoch + 1) % 50 == 0:
            torch.save({"encoder": model.encoder.state_dict(), "epoch": epoch}, f"simclr_r18_ep{epoch + 1}.pt")
    return model.encoder


if __name__ == "__main__":
    pretrain()
