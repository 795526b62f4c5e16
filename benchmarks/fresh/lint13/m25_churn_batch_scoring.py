"""Nightly batch scoring of telecom customers with the trained churn model.

Runs on the CPU-only scoring server (bf16 on Sapphire Rapids) or on a GPU box when available.
Reads the customer snapshot in chunks, applies the preprocessing saved at training time,
and writes churn probabilities and a risk band per customer.

python m25_churn_batch_scoring.py --snapshot data/snapshot_2024-06-30.csv --model models/churn_v7.pt
"""
import argparse
import json
import os
import time

import numpy as np
import pandas as pd
import torch
import torch.nn as nn

BANDS = [(0.0, "low"), (0.3, "medium"), (0.6, "high"), (0.85, "critical")]


def get_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--snapshot", default="data/snapshot.csv")
    ap.add_argument("--model", default="models/churn_v7.pt")
    ap.add_argument("--prep", default="models/churn_v7_prep.json")
    ap.add_argument("--out", default="scores/churn_scores.csv")
    ap.add_argument("--chunk-rows", type=int, default=200_000)
    ap.add_argument("--batch-size", type=int, default=8192)
    ap.add_argument("--bf16", action="store_true")
    return ap.parse_args()


class ChurnNet(nn.Module):
    def __init__(self, n_numeric, cardinalities, emb_dim=8, hidden=(256, 128)):
        super().__init__()
        self.embs = nn.ModuleList(nn.Embedding(c + 1, emb_dim) for c in cardinalities)
        layers, d = [], n_numeric + emb_dim * len(cardinalities)
        for h in hidden:
            layers += [nn.Linear(d, h), nn.ReLU(), nn.Dropout(0.2)]
            d = h
        self.mlp = nn.Sequential(*layers, nn.Linear(d, 1))

    def forward(self, num, cat):
        embedded = [emb(cat[:, i]) for i, emb in enumerate(self.embs)]
        return self.mlp(torch.cat([num] + embedded, dim=1)).squeeze(1)


def precision_context(device, bf16):
    if device.type == "cpu":
        return torch.cpu.amp.autocast(enabled=bf16, dtype=torch.bfloat16)
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=bf16)


def preprocess(df, prep):
    num = df[prep["numeric"]].astype("float32")
    num = num.fillna(pd.Series(prep["median"]))
    num = (num - pd.Series(prep["mean"])) / pd.Series(prep["std"])
    cats = []
    for col in prep["categorical"]:
        mapping = prep["vocab"][col]
        cats.append(df[col].astype(str).map(mapping).fillna(0).astype("int64").to_numpy())
    return torch.from_numpy(num.to_numpy(dtype=np.float32)), torch.from_numpy(np.stack(cats, 1))


def risk_band(p):
    edges = np.array([t for t, _ in BANDS])
    names = np.array([n for _, n in BANDS])
    return names[np.digitize(p, edges) - 1]


def score_chunk(model, num, cat, device, batch_size, bf16):
    probs = []
    with torch.inference_mode(), precision_context(device, bf16):
        for i in range(0, len(num), batch_size):
            logits = model(num[i:i + batch_size].to(device), cat[i:i + batch_size].to(device))
            probs.append(torch.sigmoid(logits.float()).cpu())
    return torch.cat(probs).numpy()


def main():
    args = get_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with open(args.prep) as f:
        prep = json.load(f)
    model = ChurnNet(len(prep["numeric"]), [len(prep["vocab"][c]) for c in prep["categorical"]])
    model.load_state_dict(torch.load(args.model, map_location="cpu", weights_only=True))
    model.to(device).eval()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    t0, total, first = time.time(), 0, True
    for chunk in pd.read_csv(args.snapshot, chunksize=args.chunk_rows):
        num, cat = preprocess(chunk, prep)
        p = score_chunk(model, num, cat, device, args.batch_size, args.bf16)
        out = pd.DataFrame({"customer_id": chunk["customer_id"].to_numpy(), "churn_prob": np.round(p, 5)})
        out["risk_band"] = risk_band(p)
        out.to_csv(args.out, mode="w" if first else "a", header=first, index=False)
        first = False
        total += len(chunk)
        print(f"scored {total:,} customers ({total / (time.time() - t0):,.0f}/s)")
    print(f"done: {total:,} rows in {time.time() - t0:.1f}s -> {args.out}")


if __name__ == "__main__":
    main()
