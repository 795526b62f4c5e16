import argparse
import json
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset, get_worker_info

MEAN = torch.tensor([0.62, 0.60, 0.57]).view(3, 1, 1)
STD = torch.tensor([0.21, 0.21, 0.22]).view(3, 1, 1)


class PillCrops(Dataset):
    def __init__(self, records, root, augment, seed=0):
        self.records, self.root, self.augment = records, Path(root), augment
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return len(self.records)

    def __getitem__(self, i):
        rec = self.records[i]
        img = Image.open(self.root / rec["file"]).convert("RGB").resize((96, 96))
        if self.augment:
            img = img.rotate(float(self.rng.uniform(0, 360)), fillcolor=(128, 128, 128))
        x = torch.from_numpy(np.asarray(img, dtype=np.float32) / 255.0).permute(2, 0, 1)
        return (x - MEAN) / STD, rec["ndc_class"]


def reseed_worker(worker_id):
    info = get_worker_info()
    info.dataset.rng = np.random.default_rng(info.seed % 2**32)


def make_model(n_classes):
    layers, cin = [], 3
    for cout in (32, 64, 128, 256):
        layers += [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2)]
        cin = cout
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(cin, n_classes))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/pills")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--workers", type=int, default=6)
    args = ap.parse_args()

    random.seed(3)
    np.random.seed(3)
    torch.manual_seed(3)
    meta = json.loads((Path(args.root) / "index.json").read_text())
    train_ds = PillCrops(meta["train"], args.root, augment=True)
    val_ds = PillCrops(meta["val"], args.root, augment=False)
    train_dl = DataLoader(train_ds, batch_size=128, shuffle=True, num_workers=args.workers,
                          worker_init_fn=reseed_worker, pin_memory=True, persistent_workers=True)
    val_dl = DataLoader(val_ds, batch_size=256, num_workers=args.workers)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    use_amp = device.type == "cuda"
    model = make_model(meta["n_classes"]).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    for epoch in range(args.epochs):
        model.train()
        for x, y in train_dl:
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            with torch.amp.autocast("cuda", dtype=torch.float16, enabled=use_amp):
                loss = F.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        model.eval()
        hits = n = 0
        with torch.no_grad():
            for x, y in val_dl:
                hits += (model(x.to(device)).argmax(1).cpu() == y).sum().item()
                n += len(y)
        print(f"epoch {epoch} val top-1 {hits / n:.3f}")
    torch.save(model.state_dict(), Path(args.root) / "pill_cnn.pt")


if __name__ == "__main__":
    main()
