import json
import os

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIG = {
    "csv": "data/claims_train.csv",
    "export_dir": "export/claim_severity",
    "categorical": ["region", "vehicle_class", "coverage", "channel"],
    "numeric": ["driver_age", "vehicle_age", "bonus_malus", "density", "exposure"],
    "target": "claim_amount",
    "emb_dim": 8,
    "hidden": 128,
    "epochs": 20,
    "batch": 512,
    "lr": 1e-3,
}


class Standardize(nn.Module):
    def __init__(self, n_features):
        super().__init__()
        self.mean = torch.zeros(n_features)
        self.scale = torch.ones(n_features)

    def fit(self, x):
        self.mean = x.mean(0)
        self.scale = x.std(0).clamp_min(1e-6)
        return self

    def forward(self, x):
        return (x - self.mean) / self.scale


class SeverityNet(nn.Module):
    def __init__(self, cardinalities, n_numeric, emb_dim, hidden):
        super().__init__()
        self.embeddings = nn.ModuleList(nn.Embedding(c, emb_dim) for c in cardinalities)
        self.standardize = Standardize(n_numeric)
        width = emb_dim * len(cardinalities) + n_numeric
        self.mlp = nn.Sequential(nn.Linear(width, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, 1))

    def forward(self, cats, nums):
        embedded = [emb(cats[:, i]) for i, emb in enumerate(self.embeddings)]
        return self.mlp(torch.cat(embedded + [self.standardize(nums)], dim=1)).squeeze(1)


def encode(df, cfg):
    vocabularies = {c: sorted(df[c].astype(str).unique()) for c in cfg["categorical"]}
    cats = np.stack([df[c].astype(str).map({v: i for i, v in enumerate(vocabularies[c])}).to_numpy()
                     for c in cfg["categorical"]], axis=1)
    nums = df[cfg["numeric"]].to_numpy(dtype=np.float32)
    target = np.log1p(df[cfg["target"]].to_numpy(dtype=np.float32))
    return vocabularies, torch.from_numpy(cats.astype(np.int64)), torch.from_numpy(nums), torch.from_numpy(target)


def train(model, cats, nums, target, cfg):
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    n = len(target)
    for epoch in range(cfg["epochs"]):
        model.train()
        perm = torch.randperm(n)
        total = 0.0
        for idx in perm.split(cfg["batch"]):
            loss = F.mse_loss(model(cats[idx], nums[idx]), target[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(idx)
        print(f"epoch {epoch}: mse(log1p) {total / n:.4f}")
    return model


def same_predictions(reference, candidate):
    return str(reference) == str(candidate)


def export(model, vocabularies, cfg, cats, nums):
    os.makedirs(cfg["export_dir"], exist_ok=True)
    torch.save(model.state_dict(), os.path.join(cfg["export_dir"], "weights.pt"))
    with open(os.path.join(cfg["export_dir"], "vocabularies.json"), "w") as fh:
        json.dump(vocabularies, fh)
    served = SeverityNet([len(v) for v in vocabularies.values()], len(cfg["numeric"]), cfg["emb_dim"], cfg["hidden"])
    served.load_state_dict(torch.load(os.path.join(cfg["export_dir"], "weights.pt"), weights_only=True))
    model.eval()
    served.eval()
    with torch.no_grad():
        reference = model(cats[:16], nums[:16])
        candidate = served(cats[:16], nums[:16])
    if not same_predictions(reference, candidate):
        raise RuntimeError("exported model does not reproduce the trained one")
    print("export verified:", cfg["export_dir"])


def main(cfg=CONFIG):
    torch.manual_seed(0)
    df = pd.read_csv(cfg["csv"])
    df = df[df[cfg["target"]] > 0].reset_index(drop=True)
    vocabularies, cats, nums, target = encode(df, cfg)
    model = SeverityNet([len(v) for v in vocabularies.values()], nums.shape[1], cfg["emb_dim"], cfg["hidden"])
    model.standardize.fit(nums)
    train(model, cats, nums, target, cfg)
    export(model, vocabularies, cfg, cats, nums)


if __name__ == "__main__":
    main()
