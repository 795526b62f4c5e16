import argparse
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

ZONES = ["na_area", "rock", "glacier", "ocean_ice_melange"]


class SarGlacierPatches(Dataset):
    def __init__(self, root, split, train):
        self.files = sorted((Path(root) / split).glob("*.npz"))
        self.train = train

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        sample = np.load(self.files[i])
        image = torch.from_numpy(sample["sar"].astype(np.float32) / 255.0)[None]
        zones = torch.from_numpy(sample["zones"].astype(np.int64))
        if self.train:
            if torch.rand(()) < 0.5:
                image, zones = image.flip(-1), zones.flip(-1)
            k = int(torch.randint(0, 4, ()))
            image, zones = torch.rot90(image, k, dims=(-2, -1)), torch.rot90(zones, k, dims=(-2, -1))
        return (image - 0.3) / 0.2, zones


def double_conv(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
    )


class ZoneNet(nn.Module):
    def __init__(self, w=32):
        super().__init__()
        self.d1, self.d2, self.d3 = double_conv(1, w), double_conv(w, 2 * w), double_conv(2 * w, 4 * w)
        self.u2 = double_conv(6 * w, 2 * w)
        self.u1 = double_conv(3 * w, w)
        self.out = nn.Conv2d(w, len(ZONES), 1)

    def forward(self, x):
        a = self.d1(x)
        b = self.d2(F.max_pool2d(a, 2))
        c = self.d3(F.max_pool2d(b, 2))
        b = self.u2(torch.cat([F.interpolate(c, scale_factor=2.0, mode="bilinear", align_corners=False), b], 1))
        return self.out(self.u1(torch.cat([F.interpolate(b, scale_factor=2.0, mode="bilinear", align_corners=False), a], 1)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", default="data/caffe_patches")
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--amp", action="store_true")
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    use_amp = args.amp and device.type == "cuda"

    train = DataLoader(SarGlacierPatches(args.root, "train", True), batch_size=12, shuffle=True, num_workers=4, drop_last=True)
    val = DataLoader(SarGlacierPatches(args.root, "val", False), batch_size=12, num_workers=4)
    model = ZoneNet().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=5e-4)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    for epoch in range(args.epochs):
        model.train()
        for image, zones in train:
            image, zones = image.to(device), zones.to(device)
            opt.zero_grad()
            with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=use_amp):
                loss = F.cross_entropy(model(image), zones)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        model.eval()
        inter = torch.zeros(len(ZONES))
        union = torch.zeros(len(ZONES))
        with torch.no_grad(), torch.autocast(device_type=device.type, dtype=torch.float16, enabled=use_amp):
            for image, zones in val:
                pred = model(image.to(device)).argmax(1).cpu()
                for z in range(len(ZONES)):
                    inter[z] += ((pred == z) & (zones == z)).sum()
                    union[z] += ((pred == z) | (zones == z)).sum()
        print(f"epoch {epoch}: loss {loss.item():.4f} zone IoU {[round(v, 3) for v in (inter / union.clamp(min=1)).tolist()]}")
    torch.save(model.state_dict(), "zone_net.pt")


if __name__ == "__main__":
    main()
