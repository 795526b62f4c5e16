import argparse
import dataclasses
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from PIL import Image
from torch.utils.data import DataLoader, Dataset


@dataclasses.dataclass
class Config:
    manifest: str = "data/hpwren/manifest.json"
    image_size: int = 224
    epochs: int = 25
    lr: float = 3e-4
    pos_weight: float = 4.0
    threshold: float = 0.5


class TowerFrames(Dataset):
    def __init__(self, entries, size, train):
        self.entries, self.size, self.train = entries, size, train

    def __len__(self):
        return len(self.entries)

    def __getitem__(self, i):
        entry = self.entries[i]
        img = Image.open(entry["path"]).convert("RGB").resize((self.size, self.size), Image.BILINEAR)
        x = torch.from_numpy(np.asarray(img, dtype=np.float32) / 255.0).permute(2, 0, 1)
        if self.train and torch.rand(()) < 0.5:
            x = x.flip(-1)
        x = (x - torch.tensor([0.47, 0.49, 0.50])[:, None, None]) / 0.23
        return x, torch.tensor(float(entry["smoke"]))


class SmokeNet(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        chans = [3, width, 2 * width, 4 * width, 8 * width, 8 * width]
        self.backbone = nn.Sequential(*[
            nn.Sequential(nn.Conv2d(a, b, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(b), nn.SiLU())
            for a, b in zip(chans[:-1], chans[1:])
        ])
        self.classifier = nn.Sequential(nn.Dropout(0.3), nn.Linear(chans[-1], 1), nn.Sigmoid())

    def forward(self, x):
        return self.classifier(self.backbone(x).mean(dim=(2, 3))).squeeze(1)


def split_by_camera(entries, val_cameras):
    train = [e for e in entries if e["camera"] not in val_cameras]
    val = [e for e in entries if e["camera"] in val_cameras]
    return train, val


def main():
    p = argparse.ArgumentParser()
    for f in dataclasses.fields(Config):
        p.add_argument("--" + f.name.replace("_", "-"), type=f.type, default=f.default)
    p.add_argument("--val-cameras", nargs="+", default=["lp-n-mobo", "sm-e-mobo"])
    args = p.parse_args()
    cfg = Config(**{f.name: getattr(args, f.name) for f in dataclasses.fields(Config)})
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    entries = json.loads(Path(cfg.manifest).read_text())
    train_entries, val_entries = split_by_camera(entries, set(args.val_cameras))
    train = DataLoader(TowerFrames(train_entries, cfg.image_size, True), batch_size=32, shuffle=True, num_workers=6, drop_last=True)
    val = DataLoader(TowerFrames(val_entries, cfg.image_size, False), batch_size=64, num_workers=6)
    model = SmokeNet().to(device)
    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(cfg.pos_weight, device=device))
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)

    for epoch in range(cfg.epochs):
        model.train()
        for x, y in train:
            x, y = x.to(device), y.to(device)
            loss = criterion(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        tp = fp = fn = 0
        with torch.no_grad():
            for x, y in val:
                alarm = model(x.to(device)).cpu() > cfg.threshold
                tp += (alarm & (y == 1)).sum().item()
                fp += (alarm & (y == 0)).sum().item()
                fn += (~alarm & (y == 1)).sum().item()
        print(f"epoch {epoch}: precision {tp / max(tp + fp, 1):.3f} recall {tp / max(tp + fn, 1):.3f}")
    torch.save(model.state_dict(), "smoke_net.pt")


if __name__ == "__main__":
    main()
