"""Score a deep ensemble of solar-power forecasters on the held-out year.

Each member was trained with a different seed (runs/solar/seed_*/model.pt). The ensemble
mean is the point forecast; the spread between members gives a rough 80% band.
"""

import glob
import json

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

from solar.model import SolarLSTM

HORIZON = 48


def load_members(pattern, device):
    members = []
    for path in sorted(glob.glob(pattern)):
        state = torch.load(path, map_location=device, weights_only=True)
        net = SolarLSTM(n_features=12, hidden=128, horizon=HORIZON)
        net.load_state_dict(state)
        members.append(net.to(device).eval())
    if not members:
        raise FileNotFoundError(pattern)
    return members


@torch.inference_mode()
def ensemble_predict(members, loader, device):
    means, lows, highs, targets = [], [], [], []
    for x, y in loader:
        x = x.to(device)
        per_member = torch.stack([m(x) for m in members])
        means.append(per_member.mean(dim=0).cpu())
        lows.append(per_member.quantile(0.1, dim=0).cpu())
        highs.append(per_member.quantile(0.9, dim=0).cpu())
        targets.append(y)
    return (torch.cat(means), torch.cat(lows), torch.cat(highs), torch.cat(targets))


def metrics(mean, low, high, target, capacity_kw):
    err = mean - target
    per_horizon_mae = err.abs().mean(dim=0) / capacity_kw
    covered = ((target >= low) & (target <= high)).float().mean().item()
    return {
        "nMAE": err.abs().mean().item() / capacity_kw,
        "nRMSE": err.pow(2).mean().sqrt().item() / capacity_kw,
        "coverage_80": covered,
        "nMAE_by_hour": [round(v, 4) for v in per_horizon_mae.view(-1, 2).mean(dim=1).tolist()],
    }


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = np.load("data/solar_test_2023.npz")
    x = torch.as_tensor(data["inputs"], dtype=torch.float32)
    y = torch.as_tensor(data["targets"], dtype=torch.float32)
    assert y.shape[1] == HORIZON, y.shape
    loader = DataLoader(TensorDataset(x, y), batch_size=512)

    members = load_members("runs/solar/seed_*/model.pt", device)
    mean, low, high, target = ensemble_predict(members, loader, device)
    mean, low, high = mean.clamp(min=0), low.clamp(min=0), high.clamp(min=0)

    report = metrics(mean, low, high, target, capacity_kw=float(data["capacity_kw"]))
    report["members"] = len(members)
    report["samples"] = int(target.shape[0])
    print(json.dumps(report, indent=2))
    with open("solar_ensemble_report.json", "w") as fh:
        json.dump(report, fh, indent=2)

    member_scores = []
    with torch.inference_mode():
        for m in members:
            preds = torch.cat([m(xb.to(device)).cpu() for xb, _ in loader]).clamp(min=0)
            member_scores.append((preds - target).abs().mean().item() / float(data["capacity_kw"]))
    print("single-member nMAE:", np.round(member_scores, 4).tolist())


if __name__ == "__main__":
    main()
