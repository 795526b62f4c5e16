"""30-day readmission risk trained across hospitals without pooling patient records (FedSGD).

Every hospital keeps its own preprocessed table (hospital_<k>.npz with arrays x, y). The
coordinating site warms the shared model up on its own records, then, each round, collects one
gradient per hospital, averages them (weighted by patient count) and applies the average
through its optimizer.
"""
import glob
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

FED = {
    "clients": "data/readmission/hospital_*.npz",
    "coordinator": "data/readmission/coordinator.npz",
    "holdout": "data/readmission/holdout.npz",
    "hidden": 128,
    "warmup_steps": 200,
    "rounds": 1500,
    "client_batch": 256,
    "server_lr": 0.05,
    "seed": 5,
}


def load_site(path):
    data = np.load(path)
    return torch.from_numpy(data["x"].astype(np.float32)), torch.from_numpy(data["y"].astype(np.float32))


class RiskModel(nn.Module):
    def __init__(self, n_features, hidden):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_features, hidden), nn.ReLU(), nn.Dropout(0.1),
                                  nn.Linear(hidden, hidden // 2), nn.ReLU())
        self.logit = nn.Linear(hidden // 2, 1)

    def forward(self, x):
        return self.logit(self.body(x)).squeeze(-1)


class Hospital:
    def __init__(self, path, batch):
        self.x, self.y = load_site(path)
        self.batch = batch

    def __len__(self):
        return len(self.y)

    def local_gradient(self, global_model):
        idx = torch.randint(len(self.y), (self.batch,))
        global_model.zero_grad(set_to_none=True)
        global_model.train()
        loss = F.binary_cross_entropy_with_logits(global_model(self.x[idx]), self.y[idx])
        loss.backward()
        return {n: p.grad.detach().clone() for n, p in global_model.named_parameters()}


def weighted_average(grads, sizes):
    total = float(sum(sizes))
    return {n: sum(g[n] * (s / total) for g, s in zip(grads, sizes)) for n in grads[0]}


def warm_up(model, optimizer, x, y, steps, batch):
    model.train()
    for _ in range(steps):
        idx = torch.randint(len(y), (batch,))
        optimizer.zero_grad()
        F.binary_cross_entropy_with_logits(model(x[idx]), y[idx]).backward()
        optimizer.step()


def server_round(model, optimizer, hospitals):
    grads = [h.local_gradient(model) for h in hospitals]
    update = weighted_average(grads, [len(h) for h in hospitals])
    optimizer.zero_grad()
    for name, p in model.named_parameters():
        if p.grad is not None:
            p.grad.copy_(update[name])
    optimizer.step()


@torch.no_grad()
def auroc(model, x, y):
    model.eval()
    scores = model(x)
    order = torch.argsort(scores, descending=True)
    y_sorted = y[order]
    tps = torch.cumsum(y_sorted, 0)
    fps = torch.cumsum(1 - y_sorted, 0)
    tpr = tps / y.sum()
    fpr = fps / (1 - y).sum()
    return torch.trapezoid(torch.cat([torch.zeros(1), tpr]), torch.cat([torch.zeros(1), fpr])).item()


def main(cfg=FED):
    random.seed(cfg["seed"])
    np.random.seed(cfg["seed"])
    torch.manual_seed(cfg["seed"])
    hospitals = [Hospital(p, cfg["client_batch"]) for p in sorted(glob.glob(cfg["clients"]))]
    x_coord, y_coord = load_site(cfg["coordinator"])
    x_hold, y_hold = load_site(cfg["holdout"])
    print(f"{len(hospitals)} hospitals, {sum(len(h) for h in hospitals)} patients")

    model = RiskModel(x_coord.shape[1], cfg["hidden"])
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["server_lr"], momentum=0.9)
    warm_up(model, optimizer, x_coord, y_coord, cfg["warmup_steps"], cfg["client_batch"])
    print(f"after warm-up: holdout AUROC {auroc(model, x_hold, y_hold):.4f}")

    for r in range(cfg["rounds"]):
        server_round(model, optimizer, hospitals)
        if r % 100 == 0:
            print(f"round {r:04d} holdout AUROC {auroc(model, x_hold, y_hold):.4f}")
    torch.save(model.state_dict(), "fed_readmission.pt")


if __name__ == "__main__":
    main()
