"""P/S phase picking on 3-component seismograms (STEAD-style HDF5 exported to .npy shards),
with a PhaseNet-like 1-D U-Net predicting per-sample probabilities of P, S and noise.
Labels are Gaussians of width 0.1 s around the analyst picks; the loss is a soft-label
cross-entropy. Each trace is demeaned and scaled to unit peak on the GPU before the forward.
"""
import glob

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

SETTINGS = {
    "shards": "data/stead/shard_*.npz",
    "val_shards": 2,
    "sample_rate": 100,
    "window": 3001,
    "sigma_s": 0.1,
    "batch_size": 64,
    "epochs": 30,
    "lr": 1e-3,
    "pick_threshold": 0.3,
}


class Seismograms(Dataset):
    def __init__(self, files, cfg, train):
        self.waves, self.p, self.s = [], [], []
        for f in files:
            z = np.load(f)
            self.waves.append(z["waveforms"].astype(np.float32))
            self.p.append(z["p_arrival"])
            self.s.append(z["s_arrival"])
        self.waves, self.p, self.s = np.concatenate(self.waves), np.concatenate(self.p), np.concatenate(self.s)
        self.cfg, self.train = cfg, train
        self.t = np.arange(cfg["window"], dtype=np.float32)

    def __len__(self):
        return len(self.waves)

    def gaussian(self, centre):
        width = self.cfg["sigma_s"] * self.cfg["sample_rate"]
        return np.exp(-0.5 * ((self.t - centre) / width) ** 2)

    def __getitem__(self, i):
        shift = int(torch.randint(-500, 500, ()).item()) if self.train else 0
        x = np.roll(self.waves[i], shift, axis=-1)[:, : self.cfg["window"]]
        p_lab, s_lab = self.gaussian(self.p[i] + shift), self.gaussian(self.s[i] + shift)
        noise = np.clip(1.0 - p_lab - s_lab, 0.0, 1.0)
        y = np.stack([p_lab, s_lab, noise]).astype(np.float32)
        y /= y.sum(0, keepdims=True)
        return torch.from_numpy(np.ascontiguousarray(x)), torch.from_numpy(y)


def normalize_traces(x):
    out = []
    for trace in x:
        trace = trace - trace.mean(dim=-1, keepdim=True)
        out.append(trace / (trace.abs().amax() + 1e-8))
    return torch.stack(out)


class Down(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(cin, cout, 7, padding=3, bias=False), nn.BatchNorm1d(cout), nn.ReLU())
        self.pool = nn.Conv1d(cout, cout, 7, stride=4, padding=3, bias=False)

    def forward(self, x):
        skip = self.conv(x)
        return self.pool(skip), skip


class PhaseUNet(nn.Module):
    def __init__(self, widths=(8, 16, 32, 64)):
        super().__init__()
        chans = (3,) + widths
        self.downs = nn.ModuleList(Down(a, b) for a, b in zip(chans[:-1], chans[1:]))
        self.bottom = nn.Sequential(nn.Conv1d(widths[-1], widths[-1], 7, padding=3, bias=False),
                                    nn.BatchNorm1d(widths[-1]), nn.ReLU())
        self.ups = nn.ModuleList(
            nn.Sequential(nn.Conv1d(widths[i] * 2, widths[i - 1] if i else widths[0], 7, padding=3, bias=False),
                          nn.BatchNorm1d(widths[i - 1] if i else widths[0]), nn.ReLU())
            for i in reversed(range(len(widths))))
        self.out = nn.Conv1d(widths[0], 3, 1)

    def forward(self, x):
        skips = []
        for down in self.downs:
            x, skip = down(x)
            skips.append(skip)
        x = self.bottom(x)
        for up, skip in zip(self.ups, reversed(skips)):
            x = F.interpolate(x, size=skip.shape[-1], mode="linear", align_corners=False)
            x = up(torch.cat([x, skip], dim=1))
        return self.out(x)


def pick_errors(logits, y, threshold, sr):
    prob = logits.softmax(1)
    errs = []
    for phase in (0, 1):
        has = prob[:, phase].amax(-1) > threshold
        diff = (prob[:, phase].argmax(-1) - y[:, phase].argmax(-1)).float() / sr
        errs.append(diff[has].abs().mean().item() if has.any() else float("nan"))
    return errs


def main(cfg=SETTINGS):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    files = sorted(glob.glob(cfg["shards"]))
    train = DataLoader(Seismograms(files[cfg["val_shards"]:], cfg, True), batch_size=cfg["batch_size"],
                       shuffle=True, num_workers=4, drop_last=True)
    val = DataLoader(Seismograms(files[:cfg["val_shards"]], cfg, False), batch_size=256, num_workers=4)
    model = PhaseUNet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    for epoch in range(cfg["epochs"]):
        model.train()
        for x, y in train:
            x, y = normalize_traces(x.to(device)), y.to(device)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        p_err, s_err = [], []
        with torch.no_grad():
            for x, y in val:
                logits = model(normalize_traces(x.to(device)))
                pe, se = pick_errors(logits, y.to(device), cfg["pick_threshold"], cfg["sample_rate"])
                p_err.append(pe)
                s_err.append(se)
        print(f"epoch {epoch:2d}  loss {loss.item():.4f}  |P err| {np.nanmean(p_err):.3f} s  "
              f"|S err| {np.nanmean(s_err):.3f} s")
        torch.save(model.state_dict(), f"phasenet_epoch{epoch:02d}.pt")


if __name__ == "__main__":
    main()
