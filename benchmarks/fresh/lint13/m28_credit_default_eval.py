"""Validation report for the credit-default model before a release: ROC AUC, KS, a threshold
sweep for the approval policy, and temperature scaling fitted on the calibration split.
Runs on the CPU reporting box; bf16 autocast is optional.

python m28_credit_default_eval.py --model models/default_mlp.pt --data data/credit/holdout.csv
"""
import argparse
import json
import os

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score


def cli():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="models/default_mlp.pt")
    ap.add_argument("--prep", default="models/default_mlp_prep.json")
    ap.add_argument("--data", default="data/credit/holdout.csv")
    ap.add_argument("--calib-frac", type=float, default=0.3)
    ap.add_argument("--bf16", action="store_true")
    ap.add_argument("--report", default="reports/default_mlp_validation.json")
    return ap.parse_args()


class DefaultMLP(nn.Module):
    def __init__(self, d_in, hidden=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Dropout(0.1),
                                 nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


class Evaluator:
    def __init__(self, model, bf16):
        self.model, self.bf16 = model.eval(), bf16

    @torch.no_grad()
    def logits(self, x, batch_size=16384):
        out = []
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=self.bf16):
            for i in range(0, len(x), batch_size):
                out.append(self.model(x[i:i + batch_size]).float())
        return torch.cat(out)


def ks_statistic(scores, y):
    order = torch.argsort(scores, descending=True)
    y_sorted = y[order].float()
    tpr = torch.cumsum(y_sorted, 0) / y_sorted.sum()
    fpr = torch.cumsum(1 - y_sorted, 0) / (1 - y_sorted).sum()
    return (tpr - fpr).abs().max().item()


def threshold_sweep(probs, y, n=19):
    rows = []
    for t in torch.linspace(0.05, 0.95, n).tolist():
        pred = probs >= t
        tp = (pred & (y == 1)).sum().item()
        fp = (pred & (y == 0)).sum().item()
        fn = (~pred & (y == 1)).sum().item()
        precision = tp / max(tp + fp, 1)
        recall = tp / max(tp + fn, 1)
        f1 = 2 * precision * recall / max(precision + recall, 1e-12)
        rows.append({"threshold": round(t, 2), "precision": precision, "recall": recall, "f1": f1,
                     "approval_rate": 1.0 - pred.float().mean().item()})
    return rows


def fit_temperature(logits, y, steps=50):
    log_t = torch.zeros(1, requires_grad=True)
    opt = torch.optim.LBFGS([log_t], lr=0.1, max_iter=steps)
    targets = y.float()

    def closure():
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(logits / log_t.exp(), targets)
        loss.backward()
        return loss

    opt.step(closure)
    return log_t.exp().item()


def main():
    args = cli()
    torch.manual_seed(0)
    with open(args.prep) as f:
        prep = json.load(f)
    df = pd.read_csv(args.data)
    x = ((df[prep["features"]].astype("float32") - pd.Series(prep["mean"])) / pd.Series(prep["std"])).fillna(0.0)
    x = torch.from_numpy(x.to_numpy(dtype=np.float32))
    y = torch.from_numpy(df["default_12m"].to_numpy(dtype=np.int64))
    model = DefaultMLP(x.shape[1])
    model.load_state_dict(torch.load(args.model, map_location="cpu", weights_only=True))
    logits = Evaluator(model, args.bf16).logits(x)

    perm = torch.randperm(len(y))
    n_cal = int(args.calib_frac * len(y))
    cal, test = perm[:n_cal], perm[n_cal:]
    temperature = fit_temperature(logits[cal], y[cal])
    probs = torch.sigmoid(logits[test] / temperature)
    y_test = y[test]
    class_counts = torch.bincount(y_test, minlength=2).float()
    report = {
        "rows": len(y_test),
        "default_rate": (class_counts[1] / class_counts.sum()).item(),
        "roc_auc": float(roc_auc_score(y_test.numpy(), probs.numpy())),
        "ks": ks_statistic(probs, y_test),
        "temperature": temperature,
        "brier": F.mse_loss(probs, y_test.float()).item(),
        "sweep": threshold_sweep(probs, y_test),
    }
    best = max(report["sweep"], key=lambda r: r["f1"])
    print(f"AUC {report['roc_auc']:.4f}  KS {report['ks']:.4f}  T {temperature:.3f}  best F1 {best['f1']:.3f} "
          f"at {best['threshold']}")
    os.makedirs(os.path.dirname(args.report), exist_ok=True)
    with open(args.report, "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
