"""Semi-supervised node classification on a citation graph (Cora/CiteSeer/PubMed split files)
with a plain-PyTorch GCN (Kipf & Welling). Full-batch training; messages are summed over the
edge list with the symmetric normalisation.
Long sweeps are run on preemptible nodes, so the script resumes from its last checkpoint.
"""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIG = {
    "graph": "data/planetoid/cora.npz",
    "hidden": 64,
    "layers": 3,
    "dropout": 0.5,
    "lr": 0.01,
    "weight_decay": 5e-4,
    "epochs": 400,
    "patience": 100,
    "checkpoint": "runs/gcn_cora/last.pt",
    "seed": 42,
}


def load_graph(path, device):
    z = np.load(path)
    x = torch.from_numpy(z["features"]).float()
    x = x / x.sum(1, keepdim=True).clamp_min(1.0)
    edges = torch.from_numpy(z["edges"]).long()
    n = x.shape[0]
    edges = torch.cat([edges, edges.flip(0), torch.arange(n).repeat(2, 1)], dim=1)
    edges = torch.unique(edges, dim=1)
    deg = torch.bincount(edges[0], minlength=n).float()
    norm = deg[edges[0]].rsqrt() * deg[edges[1]].rsqrt()
    masks = {k: torch.from_numpy(z[f"{k}_mask"]).bool() for k in ("train", "val", "test")}
    y = torch.from_numpy(z["labels"]).long()
    adj = (edges.to(device), norm.to(device))
    return x.to(device), adj, y.to(device), {k: m.to(device) for k, m in masks.items()}


class GraphConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.lin = nn.Linear(cin, cout, bias=False)
        self.bias = nn.Parameter(torch.zeros(cout))

    def forward(self, x, adj):
        (dst, src), norm = adj
        h = self.lin(x)
        out = torch.zeros_like(h).index_add_(0, dst, h[src] * norm.unsqueeze(1))
        return out + self.bias


class GCN(nn.Module):
    def __init__(self, cin, hidden, n_classes, n_layers, dropout):
        super().__init__()
        dims = [cin] + [hidden] * (n_layers - 1) + [n_classes]
        self.convs = nn.ModuleList(GraphConv(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.dropout = dropout

    def forward(self, x, adj):
        for i, conv in enumerate(self.convs):
            x = F.dropout(x, self.dropout, training=self.training)
            x = conv(x, adj)
            if i < len(self.convs) - 1:
                x = F.relu(x)
        return x


def param_groups(model, weight_decay):
    first = list(model.convs[0].lin.parameters())
    first_ids = {id(p) for p in first}
    rest = [p for p in model.parameters() if id(p) not in first_ids]
    return [{"params": first, "weight_decay": weight_decay}, {"params": rest, "weight_decay": 0.0}]


def accuracy(logits, y, mask):
    return (logits[mask].argmax(1) == y[mask]).float().mean().item()


def save_state(path, model, optimizer, epoch, best_val, bad_epochs):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch,
                "best_val": best_val, "bad_epochs": bad_epochs}, path)


def restore_state(path, model, optimizer, device):
    state = torch.load(path, map_location=device, weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["epoch"] + 1, state["best_val"], state["bad_epochs"]


def main(cfg=CONFIG):
    torch.manual_seed(cfg["seed"])
    np.random.seed(cfg["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x, adj, y, masks = load_graph(cfg["graph"], device)
    model = GCN(x.shape[1], cfg["hidden"], int(y.max()) + 1, cfg["layers"], cfg["dropout"]).to(device)
    optimizer = torch.optim.AdamW(param_groups(model, cfg["weight_decay"]), lr=cfg["lr"])

    start, best_val, bad = 0, 0.0, 0
    if os.path.exists(cfg["checkpoint"]):
        start, best_val, bad = restore_state(cfg["checkpoint"], model, optimizer, device)
        print(f"resumed from epoch {start}")
    os.makedirs(os.path.dirname(cfg["checkpoint"]), exist_ok=True)
    best_path = os.path.join(os.path.dirname(cfg["checkpoint"]), "best.pt")

    for epoch in range(start, cfg["epochs"]):
        model.train()
        optimizer.zero_grad()
        logits = model(x, adj)
        loss = F.cross_entropy(logits[masks["train"]], y[masks["train"]])
        loss.backward()
        optimizer.step()

        model.eval()
        with torch.no_grad():
            logits = model(x, adj)
        val_acc = accuracy(logits, y, masks["val"])
        if val_acc > best_val:
            best_val, bad = val_acc, 0
            torch.save(model.state_dict(), best_path)
        else:
            bad += 1
        save_state(cfg["checkpoint"], model, optimizer, epoch, best_val, bad)
        if epoch % 20 == 0:
            print(f"epoch {epoch:3d} loss {loss.item():.4f} val {val_acc:.4f}")
        if bad >= cfg["patience"]:
            break

    model.load_state_dict(torch.load(best_path, map_location=device, weights_only=True))
    model.eval()
    with torch.no_grad():
        test_acc = accuracy(model(x, adj), y, masks["test"])
    print(f"best val {best_val:.4f}  test {test_acc:.4f}")


if __name__ == "__main__":
    main()
