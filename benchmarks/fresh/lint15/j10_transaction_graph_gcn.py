import argparse
import csv

import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import roc_auc_score


def read_graph(feature_csv, class_csv, edge_csv):
    raw = np.loadtxt(feature_csv, delimiter=",", dtype=np.float64)
    node_ids = raw[:, 0].astype(np.int64)
    steps = raw[:, 1].astype(np.int64)
    feats = raw[:, 2:].astype(np.float32)
    index = {n: i for i, n in enumerate(node_ids)}
    labels = np.full(len(node_ids), -1, dtype=np.int64)
    with open(class_csv, newline="") as fh:
        for row in csv.DictReader(fh):
            if row["class"] in ("1", "2"):
                labels[index[int(row["txId"])]] = 1 if row["class"] == "1" else 0
    edges = []
    with open(edge_csv, newline="") as fh:
        for row in csv.DictReader(fh):
            edges.append((index[int(row["txId1"])], index[int(row["txId2"])]))
    return feats, steps, labels, np.array(edges, dtype=np.int64).T


def normalized_adjacency(edges, n):
    src = np.concatenate([edges[0], edges[1], np.arange(n)])
    dst = np.concatenate([edges[1], edges[0], np.arange(n)])
    idx = torch.from_numpy(np.stack([src, dst]))
    deg = torch.bincount(idx[0], minlength=n).float()
    vals = deg[idx[0]].rsqrt() * deg[idx[1]].rsqrt()
    return torch.sparse_coo_tensor(idx, vals, (n, n)).coalesce()


class GraphConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x, adj):
        return torch.sparse.mm(adj, self.lin(x))


class FraudGCN(nn.Module):
    def __init__(self, d_in, hidden, classes=2, dropout=0.3):
        super().__init__()
        self.conv1 = GraphConv(d_in, hidden)
        self.conv2 = GraphConv(hidden, hidden)
        self.drop = nn.Dropout(dropout)
        self.head = nn.Sequential(nn.Linear(hidden + d_in, classes), nn.Softmax(dim=1))

    def forward(self, x, adj):
        h = self.drop(torch.relu(self.conv1(x, adj)))
        h = self.drop(torch.relu(self.conv2(h, adj)))
        return self.head(torch.cat([h, x], dim=1))


def class_weights(labels, mask):
    counts = np.bincount(labels[mask], minlength=2).astype(np.float32)
    return torch.from_numpy(counts.sum() / (2 * counts))


def evaluate(model, x, adj, labels, mask):
    model.eval()
    with torch.no_grad():
        probs = model(x, adj)[mask, 1].numpy()
    y = labels[mask].numpy()
    pred = (probs > 0.5).astype(np.int64)
    tp = int(((pred == 1) & (y == 1)).sum())
    precision = tp / max(int(pred.sum()), 1)
    recall = tp / max(int(y.sum()), 1)
    return roc_auc_score(y, probs), precision, recall


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default="data/elliptic")
    parser.add_argument("--train-steps", type=int, default=34)
    parser.add_argument("--hidden", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--lr", type=float, default=1e-2)
    args = parser.parse_args()

    torch.manual_seed(0)
    feats, steps, labels, edges = read_graph(f"{args.root}/txs_features.csv", f"{args.root}/txs_classes.csv",
                                             f"{args.root}/txs_edgelist.csv")
    feats = (feats - feats.mean(0)) / (feats.std(0) + 1e-6)
    x = torch.from_numpy(feats)
    y = torch.from_numpy(labels)
    adj = normalized_adjacency(edges, len(labels))
    known = labels >= 0
    train_mask = torch.from_numpy(known & (steps <= args.train_steps))
    test_mask = torch.from_numpy(known & (steps > args.train_steps))

    model = FraudGCN(x.shape[1], args.hidden)
    criterion = nn.NLLLoss(weight=class_weights(labels, train_mask.numpy()))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(1, args.epochs + 1):
        model.train()
        optimizer.zero_grad()
        out = model(x, adj)
        loss = criterion(out[train_mask], y[train_mask])
        loss.backward()
        optimizer.step()
        if epoch % 20 == 0:
            auc, precision, recall = evaluate(model, x, adj, y, test_mask)
            print(f"epoch {epoch}: loss {loss.item():.4f} auc {auc:.3f} p {precision:.3f} r {recall:.3f}")
    torch.save(model.state_dict(), "fraud_gcn.pt")


if __name__ == "__main__":
    main()
