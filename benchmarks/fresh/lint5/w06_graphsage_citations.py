"""GraphSAGE node classification on a Planetoid citation graph (Cora / CiteSeer / PubMed)."""

import argparse
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_geometric.datasets import Planetoid
from torch_geometric.nn import SAGEConv
import torch_geometric.transforms as T


class SAGE(nn.Module):
    def __init__(self, in_dim, hidden, out_dim, num_layers=2, dropout=0.5):
        super().__init__()
        dims = [in_dim] + [hidden] * (num_layers - 1) + [out_dim]
        self.convs = nn.ModuleList(SAGEConv(a, b, aggr="mean") for a, b in zip(dims[:-1], dims[1:]))
        self.norms = nn.ModuleList(nn.BatchNorm1d(hidden) for _ in range(num_layers - 1))
        self.dropout = dropout

    def forward(self, x, edge_index):
        for conv, norm in zip(self.convs[:-1], self.norms):
            x = conv(x, edge_index)
            x = norm(x)
            x = F.relu(x)
            x = F.dropout(x, p=self.dropout, training=self.training)
        return self.convs[-1](x, edge_index)


def train_step(model, data, optimizer):
    model.train()
    optimizer.zero_grad()
    out = model(data.x, data.edge_index)
    loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
    loss.backward()
    optimizer.step()
    return loss.item()


@torch.no_grad()
def accuracies(model, data):
    logits = model(data.x, data.edge_index)
    pred = logits.argmax(dim=-1)
    result = {}
    for split in ("train", "val", "test"):
        mask = data[f"{split}_mask"]
        result[split] = (pred[mask] == data.y[mask]).float().mean().item()
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="Cora", choices=["Cora", "CiteSeer", "PubMed"])
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--patience", type=int, default=50)
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dataset = Planetoid("data/planetoid", args.dataset, transform=T.NormalizeFeatures())
    data = dataset[0].to(device)
    model = SAGE(dataset.num_features, args.hidden, dataset.num_classes, args.layers).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)

    best_val, best_state, waited = 0.0, None, 0
    for epoch in range(1, args.epochs + 1):
        loss = train_step(model, data, optimizer)
        acc = accuracies(model, data)
        if acc["val"] > best_val:
            best_val, waited = acc["val"], 0
            best_state = copy.deepcopy(model.state_dict())
        else:
            waited += 1
        if epoch % 20 == 0:
            print(f"epoch {epoch:03d} loss {loss:.4f} train {acc['train']:.3f} val {acc['val']:.3f}")
        if waited >= args.patience:
            print(f"early stop at epoch {epoch}")
            break

    model.load_state_dict(best_state)
    final = accuracies(model, data)
    print(f"{args.dataset}: val {final['val']:.4f} test {final['test']:.4f}")


if __name__ == "__main__":
    main()
