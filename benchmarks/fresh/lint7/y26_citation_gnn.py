"""Deep GCN for node classification on a citation graph (Cora / CiteSeer / PubMed in .npz form).

Eight propagation layers; PairNorm between layers keeps the node embeddings from collapsing
(over-smoothing). Full-batch training with the public Planetoid split.
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def load_graph(path, device):
    z = np.load(path)
    x = torch.from_numpy(z["features"].astype(np.float32))
    x = x / x.sum(1, keepdim=True).clamp(min=1.0)
    y = torch.from_numpy(z["labels"].astype(np.int64))
    edges = torch.from_numpy(z["edges"].astype(np.int64))
    n = x.size(0)
    loops = torch.arange(n).repeat(2, 1)
    ei = torch.cat([edges, edges.flip(0), loops], dim=1).unique(dim=1)
    deg = torch.zeros(n).index_add_(0, ei[0], torch.ones(ei.size(1)))
    w = deg[ei[0]].rsqrt() * deg[ei[1]].rsqrt()
    adj = torch.sparse_coo_tensor(ei, w, (n, n)).coalesce()
    masks = {k: torch.from_numpy(z[f"{k}_mask"].astype(bool)) for k in ("train", "val", "test")}
    return x.to(device), adj.to(device), y.to(device), {k: m.to(device) for k, m in masks.items()}


@torch.no_grad()
def pair_norm(h, scale=1.0, eps=1e-6):
    h = h - h.mean(dim=0, keepdim=True)
    return scale * h / (h.pow(2).sum(dim=1).mean() + eps).sqrt()


class DeepGCN(nn.Module):
    def __init__(self, d_in, d_hidden, n_classes, n_layers=8, dropout=0.5):
        super().__init__()
        dims = [d_in] + [d_hidden] * (n_layers - 1) + [n_classes]
        self.lins = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.drop = nn.Dropout(dropout)

    def forward(self, x, adj):
        h = x
        for i, lin in enumerate(self.lins):
            h = torch.sparse.mm(adj, lin(self.drop(h)))
            if i < len(self.lins) - 1:
                h = F.relu(pair_norm(h))
        return h


def accuracy(logits, y, mask):
    return (logits[mask].argmax(1) == y[mask]).float().mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graph", default="data/cora_planetoid.npz")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=400)
    ap.add_argument("--patience", type=int, default=100)
    args = ap.parse_args()

    torch.manual_seed(42)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x, adj, y, masks = load_graph(args.graph, device)
    model = DeepGCN(x.size(1), args.hidden, int(y.max()) + 1, args.layers).to(device)
    first, rest = model.lins[0], model.lins[1:]
    optimizer = torch.optim.Adam([
        {"params": first.parameters(), "weight_decay": 5e-4},
        {"params": rest.parameters(), "weight_decay": 0.0},
    ], lr=0.005)

    best_val, best_test, wait = 0.0, 0.0, 0
    for epoch in range(args.epochs):
        model.train()
        optimizer.zero_grad()
        logits = model(x, adj)
        loss = F.cross_entropy(logits[masks["train"]], y[masks["train"]])
        loss.backward()
        optimizer.step()

        model.eval()
        with torch.no_grad():
            logits = model(x, adj)
        val_acc, test_acc = accuracy(logits, y, masks["val"]), accuracy(logits, y, masks["test"])
        if val_acc > best_val:
            best_val, best_test, wait = val_acc, test_acc, 0
        else:
            wait += 1
        if epoch % 20 == 0:
            print(f"epoch {epoch:3d} loss {loss.item():.4f} val {val_acc:.4f} test {test_acc:.4f}")
        if wait >= args.patience:
            break
    print(f"best val {best_val:.4f}, test at best val {best_test:.4f}")


if __name__ == "__main__":
    main()
