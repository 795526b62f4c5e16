import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

CATEGORICAL = {"origin": 310, "destination": 310, "carrier": 64, "commodity": 40, "uld_type": 12}


class DelayModel(nn.Module):
    def __init__(self, n_numeric, dim=16):
        super().__init__()
        self.embeddings = nn.ModuleDict({k: nn.Embedding(n, dim, sparse=True) for k, n in CATEGORICAL.items()})
        self.mlp = nn.Sequential(
            nn.Linear(dim * len(CATEGORICAL) + n_numeric, 128), nn.ReLU(),
            nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 1),
        )

    def forward(self, cats, numeric):
        embs = [self.embeddings[k](cats[:, i]) for i, k in enumerate(CATEGORICAL)]
        return self.mlp(torch.cat(embs + [numeric], dim=1)).squeeze(-1)


def load(path, stats=None):
    d = np.load(path)
    numeric = d["numeric"].astype(np.float32)
    stats = stats or (numeric.mean(0), numeric.std(0) + 1e-6)
    numeric = (numeric - stats[0]) / stats[1]
    ds = TensorDataset(torch.from_numpy(d["cats"]).long(), torch.from_numpy(numeric),
                       torch.from_numpy((d["delay_min"] > 120).astype(np.float32)))
    return ds, stats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/cargo/train.npz")
    ap.add_argument("--val", default="data/cargo/val.npz")
    ap.add_argument("--epochs", type=int, default=10)
    args = ap.parse_args()

    torch.manual_seed(22)
    train_ds, stats = load(args.train)
    val_ds, _ = load(args.val, stats)
    train_dl = DataLoader(train_ds, batch_size=512, shuffle=True)
    val_dl = DataLoader(val_ds, batch_size=4096)

    model = DelayModel(n_numeric=train_ds.tensors[1].shape[1])
    sparse_opt = torch.optim.SparseAdam(list(model.embeddings.parameters()), lr=1e-2)
    dense_opt = torch.optim.Adam(model.mlp.parameters(), lr=1e-3)
    dense_sched = torch.optim.lr_scheduler.StepLR(dense_opt, step_size=4, gamma=0.3)
    pos_rate = train_ds.tensors[2].mean()
    criterion = nn.BCEWithLogitsLoss(pos_weight=(1 - pos_rate) / pos_rate)

    for epoch in range(args.epochs):
        model.train()
        run, seen = 0.0, 0
        for cats, numeric, delayed in train_dl:
            model.zero_grad(set_to_none=True)
            loss = criterion(model(cats, numeric), delayed)
            loss.backward()
            sparse_opt.step()
            dense_opt.step()
            run += loss.item() * len(delayed)
            seen += len(delayed)
        dense_sched.step()

        model.eval()
        tp = fp = fn = 0.0
        with torch.no_grad():
            for cats, numeric, delayed in val_dl:
                flagged = (torch.sigmoid(model(cats, numeric)) > 0.5).float()
                tp += (flagged * delayed).sum().item()
                fp += (flagged * (1 - delayed)).sum().item()
                fn += ((1 - flagged) * delayed).sum().item()
        f1 = 2 * tp / max(2 * tp + fp + fn, 1.0)
        print(f"epoch {epoch} train loss {run / seen:.4f} val F1 {f1:.3f} lr {dense_sched.get_last_lr()[0]:.1e}")
    torch.save({"model": model.state_dict(), "mean": torch.from_numpy(stats[0]), "std": torch.from_numpy(stats[1])},
               "cargo_delay.pt")


if __name__ == "__main__":
    main()
