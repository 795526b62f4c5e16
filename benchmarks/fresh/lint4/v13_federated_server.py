"""Federated training of a readmission-risk model across hospital sites (simulation).

Each round, a sample of sites trains the global model locally for a few epochs; the server
turns the weighted mean of their updates into a pseudo-gradient and applies it with its own
Adam optimizer (FedAdam).
"""

import copy
import random

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader

from fedsim.sites import load_site_datasets

ROUNDS, SITES_PER_ROUND, LOCAL_EPOCHS = 100, 8, 2
CLIENT_LR, SERVER_LR = 0.05, 1e-2


def risk_model(n_features):
    return nn.Sequential(
        nn.Linear(n_features, 128), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(128, 64), nn.ReLU(),
        nn.Linear(64, 1),
    )


def local_update(global_model, dataset):
    model = copy.deepcopy(global_model)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=CLIENT_LR, momentum=0.9)
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    for _ in range(LOCAL_EPOCHS):
        for x, y in loader:
            opt.zero_grad()
            F.binary_cross_entropy_with_logits(model(x).squeeze(1), y).backward()
            opt.step()
    return [p.detach() for p in model.parameters()], len(dataset)


def server_round(global_model, server_opt, results):
    total = sum(n for _, n in results)
    server_opt.zero_grad()
    for params, n in results:
        for p_global, p_local in zip(global_model.parameters(), params):
            p_global.grad.add_((p_global.detach() - p_local) * (n / total))
    server_opt.step()


@torch.no_grad()
def evaluate(model, datasets):
    model.eval()
    losses, count = 0.0, 0
    for ds in datasets:
        for x, y in DataLoader(ds, batch_size=1024):
            losses += F.binary_cross_entropy_with_logits(model(x).squeeze(1), y, reduction="sum").item()
            count += len(y)
    return losses / count


def main(seed=0):
    random.seed(seed)
    torch.manual_seed(seed)
    train_sites, test_sites = load_site_datasets("data/readmission_sites")
    n_features = train_sites[0][0][0].numel()
    global_model = risk_model(n_features)
    for p in global_model.parameters():
        p.grad = torch.zeros_like(p)
    server_opt = torch.optim.Adam(global_model.parameters(), lr=SERVER_LR, betas=(0.9, 0.99), eps=1e-3)

    for rnd in range(ROUNDS):
        chosen = random.sample(range(len(train_sites)), SITES_PER_ROUND)
        results = [local_update(global_model, train_sites[i]) for i in chosen]
        server_round(global_model, server_opt, results)
        if rnd % 10 == 9:
            print(f"round {rnd + 1:3d}: test log-loss {evaluate(global_model, test_sites):.4f}")

    torch.save(global_model.state_dict(), "fedadam_readmission.pt")


if __name__ == "__main__":
    main()
