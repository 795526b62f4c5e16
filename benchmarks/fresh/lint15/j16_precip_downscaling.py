import argparse
import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def load_pairs(path):
    arrays = np.load(path)
    coarse = np.log1p(arrays["coarse"].astype(np.float32))[:, None]
    fine = np.log1p(arrays["fine"].astype(np.float32))[:, None]
    orography = arrays["orography"].astype(np.float32)
    orography = (orography - orography.mean()) / orography.std()
    return torch.from_numpy(coarse), torch.from_numpy(fine), torch.from_numpy(orography)


class Block(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1), nn.GELU(),
                                  nn.Conv2d(c_out, c_out, 3, padding=1), nn.GELU())

    def forward(self, x):
        return self.conv(x)


class DownscaleNet(nn.Module):
    def __init__(self, orography, factor=4, width=64):
        super().__init__()
        self.factor = factor
        self.register_buffer("orography", orography[None, None])
        self.enc = Block(2, width)
        self.mid = Block(width, 2 * width)
        self.dec = Block(3 * width, width)
        self.out = nn.Conv2d(width, 1, 1)

    def forward(self, coarse):
        up = F.interpolate(coarse, scale_factor=self.factor, mode="bilinear", align_corners=False)
        x = torch.cat([up, self.orography.expand(len(up), -1, -1, -1)], dim=1)
        e = self.enc(x)
        m = F.interpolate(self.mid(F.max_pool2d(e, 2)), scale_factor=2, mode="bilinear", align_corners=False)
        return up + self.out(self.dec(torch.cat([e, m], dim=1)))


def train(args):
    coarse, fine, orography = load_pairs(args.train)
    net = DownscaleNet(orography, factor=fine.shape[-1] // coarse.shape[-1])
    model = torch.compile(net) if args.compile else net
    loader = DataLoader(TensorDataset(coarse, fine), batch_size=args.batch_size, shuffle=True, drop_last=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        running = 0.0
        for c, f in loader:
            loss = F.l1_loss(model(c), f)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item()
        print(f"epoch {epoch}: l1 {running / len(loader):.4f}")
    torch.save({"weights": model.state_dict(), "factor": net.factor}, args.checkpoint)


def load_for_eval(checkpoint, orography):
    state = torch.load(checkpoint, map_location="cpu", weights_only=True)
    net = DownscaleNet(orography, factor=state["factor"])
    report = net.load_state_dict(state["weights"], strict=False)
    if report.missing_keys:
        print(f"note: {len(report.missing_keys)} keys not in checkpoint")
    return net.eval()


def critical_success_index(pred, truth, threshold_mm):
    p, t = pred > np.log1p(threshold_mm), truth > np.log1p(threshold_mm)
    hits = (p & t).sum().item()
    return hits / max((p | t).sum().item(), 1)


def evaluate(args):
    coarse, fine, orography = load_pairs(args.test)
    net = load_for_eval(args.checkpoint, orography)
    preds = []
    with torch.no_grad():
        for c in coarse.split(64):
            preds.append(net(c))
    pred = torch.cat(preds)
    report = {
        "rmse_mm": torch.sqrt(((torch.expm1(pred) - torch.expm1(fine)) ** 2).mean()).item(),
        "bias_mm": (torch.expm1(pred) - torch.expm1(fine)).mean().item(),
        "csi_1mm": critical_success_index(pred, fine, 1.0),
        "csi_10mm": critical_success_index(pred, fine, 10.0),
    }
    print(json.dumps(report, indent=2))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["train", "eval"])
    parser.add_argument("--train", default="data/precip_train.npz")
    parser.add_argument("--test", default="data/precip_test.npz")
    parser.add_argument("--checkpoint", default="downscale.pt")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--compile", action="store_true", default=True)
    parser.add_argument("--no-compile", dest="compile", action="store_false")
    args = parser.parse_args()
    train(args) if args.mode == "train" else evaluate(args)


if __name__ == "__main__":
    main()
