import argparse
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CLASSES = ["soil", "crop", "weed"]


class FieldTiles(Dataset):
    def __init__(self, root, split):
        self.files = sorted((Path(root) / split).glob("*.npz"))

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        tile = np.load(self.files[i])
        rgbn = tile["rgbn"].astype(np.float32) / 65535.0
        ndvi = (rgbn[3] - rgbn[0]) / (rgbn[3] + rgbn[0] + 1e-6)
        x = np.concatenate([(rgbn - 0.2) / 0.15, ndvi[None]], axis=0)
        return torch.from_numpy(x), torch.from_numpy(tile["label"].astype(np.int64))


class WeedSegmenter(nn.Module):
    def __init__(self, in_ch=5, width=48):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(in_ch, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(2 * width), nn.ReLU(),
            nn.Conv2d(2 * width, 4 * width, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(4 * width), nn.ReLU(),
        )
        self.head = nn.Sequential(nn.Conv2d(4 * width, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, len(CLASSES), 1))

    def forward(self, x):
        return F.interpolate(self.head(self.backbone(x)), size=x.shape[-2:], mode="bilinear", align_corners=False)


def train_stage(model, loader, opt, scaler, device, epochs, use_amp, weights):
    for epoch in range(epochs):
        model.train()
        if not any(p.requires_grad for p in model.backbone.parameters()):
            model.backbone.eval()
        total, n = 0.0, 0
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            opt.zero_grad(set_to_none=False)
            with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=use_amp):
                loss = F.cross_entropy(model(x), y, weight=weights)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            total, n = total + loss.item() * len(x), n + len(x)
        print(f"  epoch {epoch}: loss {total / n:.4f}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", default="data/weed_map_tiles")
    p.add_argument("--pretrained", default="checkpoints/field_backbone.pt")
    p.add_argument("--joint-epochs", type=int, default=10)
    p.add_argument("--head-epochs", type=int, default=20)
    p.add_argument("--lr", type=float, default=0.01)
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    use_amp = device.type == "cuda"

    loader = DataLoader(FieldTiles(args.root, "train"), batch_size=16, shuffle=True, num_workers=4,
                        pin_memory=use_amp, drop_last=True)
    model = WeedSegmenter().to(device)
    if Path(args.pretrained).exists():
        model.backbone.load_state_dict(torch.load(args.pretrained, map_location=device, weights_only=True))
    weights = torch.tensor([0.5, 1.0, 3.0], device=device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)

    print("stage 1: backbone and head")
    train_stage(model, loader, opt, scaler, device, args.joint_epochs, use_amp, weights)
    print("stage 2: head only, backbone frozen")
    model.backbone.requires_grad_(False)
    train_stage(model, loader, opt, scaler, device, args.head_epochs, use_amp, weights)
    torch.save(model.state_dict(), "weed_segmenter.pt")


if __name__ == "__main__":
    main()
