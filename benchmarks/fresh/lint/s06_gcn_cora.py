"""Semi-supervised node classification on a citation graph (Cora-style) with a plain-PyTorch GCN."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def normalized_adjacency(edge_index, n):
    a = torch.zeros(n, n)
    a[edge_index[0], edge_index[1]] = 1.0
    a = a + a.t() + torch.eye(n)
    a = (a > 0).float()
    d_inv_sqrt = a.sum(1).pow(-0.5)
    return d_inv_sqrt[:, None] * a * d_inv_sqrt[None, :]


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.zeros(out_features))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, x, adj):
        return adj @ (x @ self.weight) + self.bias


class GCN(nn.Module):
    def __init__(self, n_feat, n_hidden, n_class, n_layers=2, dropout=0.5):
        super().__init__()
        dims = [n_feat] + [n_hidden] * (n_layers - 1) + [n_class]
        self.layers = []
        for d_in, d_out in zip(dims[:-1], dims[1:]):
            self.layers.append(GraphConvolution(d_in, d_out))
        self.skip = nn.Linear(n_feat, n_class)  # linear shortcut from the raw features
        self.dropout = dropout

    def forward(self, x, adj):
        x0 = x
        for i, layer in enumerate(self.layers):
            x = F.dropout(x, self.dropout, training=self.training)
            x = layer(x, adj)
            if i < len(self.layers) - 1:
                x = F.relu(x)
        return x + self.skip(x0)


def accuracy(logits, labels, mask):
    _, pred = logits.max(0)
    return (pred[mask] == labels[mask]).float().mean().item()


def main():
    data = np.load("cora.npz")
    x = torch.tensor(data["features"], dtype=torch.float32)
    y = torch.tensor(data["labels"], dtype=torch.long)
    adj = normalized_adjacency(torch.tensor(data["edge_index"]), x.shape[0])
    train_mask = torch.tensor(data["train_mask"])
    val_mask = torch.tensor(data["val_mask"])

    model = GCN(x.shape[1], 16, int(y.max()) + 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(200):
        model.train()
        optimizer.zero_grad()
        out = model(x, adj)
        loss = F.cross_entropy(out[train_mask], y[train_mask])
        loss.backward()
        optimizer.step()
        model.eval()
        with torch.no_grad():
            out = model(x, adj)
        if epoch % 10 == 0:
            print(f"{epoch:03d} loss {loss.item():.4f} train {accuracy(out, y, train_mask):.3f} val {accuracy(out, y, val_mask):.3f}")


if __name__ == "__main__":
    main()
