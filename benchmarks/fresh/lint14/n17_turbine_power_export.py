import argparse
import csv
import json
from pathlib import Path

import torch
import torch.nn as nn

FEATURES = ["wind_speed", "wind_dir_sin", "wind_dir_cos", "air_density", "pitch_angle", "rotor_rpm", "ambient_temp"]


def parse_args():
    p = argparse.ArgumentParser(description="Export the SCADA power-curve model for the edge controller")
    p.add_argument("--checkpoint", default="runs/power_curve/best.pt")
    p.add_argument("--holdout", default="data/scada/holdout.csv")
    p.add_argument("--out", default="deploy/power_curve")
    p.add_argument("--tolerance", type=float, default=1e-5)
    return p.parse_args()


class PowerCurveNet(nn.Module):
    def __init__(self, n_features, hidden, depth, rated_kw):
        super().__init__()
        layers, width = [], n_features
        for _ in range(depth):
            layers += [nn.Linear(width, hidden), nn.SiLU()]
            width = hidden
        self.body = nn.Sequential(*layers)
        self.out = nn.Linear(width, 1)
        self.rated_kw = rated_kw

    def initialize(self):
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return torch.sigmoid(self.out(self.body(x))).squeeze(-1) * self.rated_kw

    @classmethod
    def from_checkpoint(cls, path):
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
        model = cls(**ckpt["hparams"])
        model.load_state_dict(ckpt["model"])
        model.initialize()
        return model, ckpt


class DeployedCurve(nn.Module):
    def __init__(self, net, mean, std):
        super().__init__()
        self.net = net
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32))

    def forward(self, raw: torch.Tensor) -> torch.Tensor:
        return self.net((raw - self.mean) / self.std)


def read_holdout(path):
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    x = torch.tensor([[float(r[c]) for c in FEATURES] for r in rows])
    y = torch.tensor([float(r["active_power_kw"]) for r in rows])
    return x, y


def binned_error(pred, target, wind, edges):
    report = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        sel = (wind >= lo) & (wind < hi)
        if sel.any():
            report.append({"bin": f"{lo}-{hi} m/s", "n": int(sel.sum()),
                           "mae_kw": float((pred[sel] - target[sel]).abs().mean())})
    return report


def main():
    args = parse_args()
    net, ckpt = PowerCurveNet.from_checkpoint(args.checkpoint)
    deployed = DeployedCurve(net, ckpt["feature_mean"], ckpt["feature_std"]).eval()
    x, y = read_holdout(args.holdout)
    with torch.no_grad():
        eager = deployed(x)
    scripted = torch.jit.script(deployed)
    with torch.no_grad():
        exported = scripted(x)
    max_diff = (eager - exported).abs().max().item()
    if max_diff > args.tolerance:
        raise SystemExit(f"scripted model disagrees with eager model by {max_diff:.2e}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scripted.save(str(out / "power_curve.ts"))
    rmse = float(((eager - y) ** 2).mean().sqrt())
    report = {
        "checkpoint": args.checkpoint,
        "rows": int(y.numel()),
        "rmse_kw": rmse,
        "nmae_pct": float((eager - y).abs().mean() / ckpt["hparams"]["rated_kw"] * 100),
        "bins": binned_error(eager, y, x[:, 0], [0, 3, 5, 7, 9, 11, 13, 25]),
        "max_scripted_diff": max_diff,
        "features": FEATURES,
    }
    (out / "export_report.json").write_text(json.dumps(report, indent=2))
    print(json.dumps({k: report[k] for k in ("rows", "rmse_kw", "nmae_pct", "max_scripted_diff")}, indent=2))


if __name__ == "__main__":
    main()
