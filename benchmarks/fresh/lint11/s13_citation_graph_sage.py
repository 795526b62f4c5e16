"""Semi-supervised paper classification on a citation graph (PubMed-diabetes style) with a
GraphSAGE-mean network written in plain PyTorch (no PyG on the cluster).

graph.npz: features (N, F) TF-IDF, labels (N,), edges (2, E) undirected, and boolean masks
train_mask / val_mask / test_mask (20 labelled nodes per class for training).
"""
import argparse
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class SAGEMeanLayer(nn.Module):
    """GraphSAGE layer with mean aggregation over the (row-normalised) adjacency."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin_self = nn.Linear(d_in, d_out)
        self.lin_neigh = nn.Linear(d_in, d_out, bias=False)

    def forward(self, x, mean_adj):
        neigh = torch.sparse.mm(mean_adj, x)
        return self.lin_neigh(neigh)


class GraphSAGE(nn.Module):
    def __init__(self, d_in, d_hidden, n_classes, n_layers=2, dropout=0.5):
        super().__init__()
        dims = [d_in] + [d_hidden] * (n_layers - 1) + [n_classes]
        self.layers = nn.ModuleList(SAGEMeanLayer(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.norms = nn.ModuleList(nn.LayerNorm(d) for d in dims[1:-1])
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mean_adj):
        for i, layer in enumerate(self.layers):
            x = layer(self.dropout(x), mean_adj)
            if i < len(self.layers) - 1:
                x = F.relu(self.norms[i](x))
        return x


def mean_adjacency(edges, n_nodes):
    src, dst = edges
    src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
    pairs = np.unique(np.stack([src, dst], axis=1), axis=0)
    deg = np.bincount(pairs[:, 0], minlength=n_nodes).astype(np.float32)
    values = 1.0 / np.maximum(deg[pairs[:, 0]], 1.0)
    idx = torch.from_numpy(pairs.T.copy()).long()
    return torch.sparse_coo_tensor(idx, torch.from_numpy(values), (n_nodes, n_nodes), check_invariants=True).coalesce()


def accuracy(logits, labels, mask):
    return (logits[mask].argmax(1) == labels[mask]).float().mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graph", default="data/pubmed_graph.npz")
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--weight-decay", type=float, default=5e-4)
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--patience", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    g = np.load(args.graph)
    x = torch.from_numpy(g["features"].astype(np.float32)).to(device)
    x = x / x.sum(dim=1, keepdim=True).clamp_min(1e-12)
    y = torch.from_numpy(g["labels"].astype(np.int64)).to(device)
    masks = {k: torch.from_numpy(g[f"{k}_mask"]).to(device) for k in ("train", "val", "test")}
    adj = mean_adjacency(g["edges"], x.size(0)).to(device)

    model = GraphSAGE(x.size(1), args.hidden, int(y.max()) + 1, args.layers).to(device)
    decay = [p for n, p in model.named_parameters() if n.endswith("weight") and p.ndim == 2]
    rest = [p for n, p in model.named_parameters() if not (n.endswith("weight") and p.ndim == 2)]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                                   {"params": rest, "weight_decay": 0.0}], lr=args.lr)

    best_val, best_state, since_best = 0.0, None, 0
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
        val_acc = accuracy(logits, y, masks["val"])
        if val_acc > best_val:
            best_val, best_state, since_best = val_acc, copy.deepcopy(model.state_dict()), 0
        else:
            since_best += 1
        if epoch % 20 == 0:
            print(f"epoch {epoch:3d} loss {loss.item():.4f} train {accuracy(logits, y, masks['train']):.3f} val {val_acc:.3f}")
        if since_best >= args.patience:
            print(f"early stop at epoch {epoch}")
            break

    model.load_state_dict(best_state)
    model.eval()
    with torch.no_grad():
        logits = model(x, adj)
    print(f"val {accuracy(logits, y, masks['val']):.4f}  test {accuracy(logits, y, masks['test']):.4f}")
    torch.save(model.state_dict(), "sage_pubmed.pt")


if __name__ == "__main__":
    main()
