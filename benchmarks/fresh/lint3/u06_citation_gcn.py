"""Semi-supervised node classification on Cora with a plain-PyTorch GCN (Kipf & Welling)."""

import argparse
import logging

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score

log = logging.getLogger("gcn")


def load_cora(path):
    blob = np.load(path)
    x = torch.tensor(blob["features"], dtype=torch.float32)
    y = torch.tensor(blob["labels"], dtype=torch.long)
    edges = torch.tensor(blob["edges"], dtype=torch.long)  # (2, E), undirected pairs listed once
    masks = {k: torch.tensor(blob[f"{k}_mask"], dtype=torch.bool) for k in ("train", "val", "test")}
    return x, y, edges, masks


def normalized_adjacency(edges, n):
    src = torch.cat([edges[0], edges[1], torch.arange(n)])
    dst = torch.cat([edges[1], edges[0], torch.arange(n)])
    deg = torch.zeros(n).index_add_(0, dst, torch.ones(dst.numel()))
    w = deg[src].rsqrt() * deg[dst].rsqrt()
    return torch.sparse_coo_tensor(torch.stack([dst, src]), w, (n, n)).coalesce()


class GraphConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out, bias=False)
        self.bias = nn.Parameter(torch.zeros(d_out))

    def forward(self, x, adj):
        return torch.sparse.mm(adj, self.lin(x)) + self.bias


class GCN(nn.Module):
    def __init__(self, d_in, hidden, n_classes, depth=3, dropout=0.5):
        super().__init__()
        self.input_proj = nn.Linear(d_in, hidden)
        self.convs = [GraphConv(hidden, hidden) for _ in range(depth)]
        self.classifier = nn.Linear(hidden, n_classes)
        self.dropout = dropout

    def forward(self, x, adj):
        h = F.relu(self.input_proj(F.dropout(x, self.dropout, self.training)))
        for conv in self.convs:
            h = F.relu(conv(F.dropout(h, self.dropout, self.training), adj)) + h
        return self.classifier(h)


def accuracy(logits, y):
    return (logits.argmax(-1) == y).float().mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/cora.npz")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--wd", type=float, default=5e-4)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)

    x, y, edges, masks = load_cora(args.data)
    adj = normalized_adjacency(edges, x.size(0))
    n_classes = int(y.max()) + 1
    model = GCN(x.size(1), args.hidden, n_classes)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.wd)
    train_idx = masks["train"]

    best_val, best_state = 0.0, None
    for epoch in range(1, args.epochs + 1):
        model.train()
        opt.zero_grad()
        out = model(x, adj)
        loss = F.cross_entropy(out[train_idx], y[train_idx])
        loss.backward()
        opt.step()

        probs = F.softmax(out[train_idx], dim=-1).cpu().numpy()
        train_auc = roc_auc_score(y[train_idx].numpy(), probs, multi_class="ovr")

        model.eval()
        with torch.no_grad():
            logits = model(x, adj)
        val_acc = accuracy(logits[masks["val"]], y[masks["val"]])
        if val_acc > best_val:
            best_val = val_acc
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
        if epoch % 20 == 0:
            log.info("epoch %03d loss %.4f train AUC %.3f val acc %.3f", epoch, loss.item(), train_auc, val_acc)

    model.load_state_dict(best_state)
    model.eval()
    with torch.no_grad():
        test_acc = accuracy(model(x, adj)[masks["test"]], y[masks["test"]])
    log.info("best val %.3f, test %.3f", best_val, test_acc)


if __name__ == "__main__":
    main()
