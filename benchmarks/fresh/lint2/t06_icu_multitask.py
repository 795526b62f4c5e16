"""Two-task model on ICU admission features: length of stay (regression) and in-hospital mortality.

The task weights are rebalanced from the gradient norm each task produces on the shared trunk.
"""
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

FEATURES = ["age", "heart_rate", "resp_rate", "sbp", "dbp", "spo2", "temp", "gcs", "creatinine", "lactate", "wbc"]
CFG = dict(csv="data/icu_admissions.csv", epochs=40, batch=256, lr=3e-4, wd=1e-2, alpha=0.5, rebalance_every=50)


class Trunk(nn.Module):
    def __init__(self, n_in, width=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, width), nn.LayerNorm(width), nn.GELU(),
                                 nn.Linear(width, width), nn.LayerNorm(width), nn.GELU())
        self.los_head = nn.Linear(width, 1)
        self.death_head = nn.Linear(width, 1)

    def forward(self, x):
        h = self.net(x)
        return self.los_head(h).squeeze(-1), self.death_head(h).squeeze(-1)


def load_split(path, seed=7):
    df = pd.read_csv(path).dropna(subset=FEATURES + ["los_days", "died"])
    df = df.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    n_val = len(df) // 5
    train, val = df.iloc[n_val:], df.iloc[:n_val]
    mu, sigma = train[FEATURES].mean(), train[FEATURES].std().replace(0, 1.0)

    def to_tensors(part):
        x = torch.tensor(((part[FEATURES] - mu) / sigma).to_numpy(np.float32))
        los = torch.tensor(np.log1p(part["los_days"].to_numpy(np.float32)))
        died = torch.tensor(part["died"].to_numpy(np.float32))
        return TensorDataset(x, los, died)

    return to_tensors(train), to_tensors(val)


def task_losses(model, x, los, died):
    los_pred, death_logit = model(x)
    return [F.smooth_l1_loss(los_pred, los), F.binary_cross_entropy_with_logits(death_logit, died)]


def shared_grad_norms(losses, shared):
    norms = []
    for loss in losses:
        grads = torch.autograd.grad(loss, shared, retain_graph=True)
        norms.append(torch.sqrt(sum(g.pow(2).sum() for g in grads)))
    return torch.stack(norms)


def param_groups(model, wd):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim == 1 else decay).append(p)
    return [{"params": decay, "weight_decay": wd}, {"params": no_decay, "weight_decay": 0.0}]


def main(cfg=CFG):
    torch.manual_seed(0)
    train_ds, val_ds = load_split(cfg["csv"])
    train_loader = DataLoader(train_ds, batch_size=cfg["batch"], shuffle=True)
    val_loader = DataLoader(val_ds, batch_size=1024)
    model = Trunk(len(FEATURES))
    optimizer = torch.optim.AdamW(param_groups(model, cfg["wd"]), lr=cfg["lr"])
    shared = [p for p in model.net.parameters()]
    weights = torch.ones(2)

    step = 0
    for epoch in range(cfg["epochs"]):
        model.train()
        for x, los, died in train_loader:
            losses = task_losses(model, x, los, died)
            if step % cfg["rebalance_every"] == 0:
                norms = shared_grad_norms(losses, shared)
                with torch.no_grad():
                    weights = weights * (norms / norms.mean()).pow(-cfg["alpha"])
                    weights = 2.0 * weights / weights.sum()
            total = (weights * torch.stack(losses)).sum()
            optimizer.zero_grad()
            total.backward()
            optimizer.step()
            step += 1

        model.eval()
        sums, n = torch.zeros(2), 0
        with torch.no_grad():
            for x, los, died in val_loader:
                sums += torch.stack(task_losses(model, x, los, died)) * x.size(0)
                n += x.size(0)
        print(f"epoch {epoch}: val los {sums[0] / n:.4f} val death {sums[1] / n:.4f} weights {weights.tolist()}")

    torch.save(model.state_dict(), "icu_multitask.pt")


if __name__ == "__main__":
    main()
