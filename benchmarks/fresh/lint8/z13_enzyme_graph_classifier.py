"""Enzyme class (EC top level, 6 classes) from protein graphs in TU format, with a GIN in plain PyTorch."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.model_selection import train_test_split
from torch.utils.data import DataLoader

CONFIG = {
    "root": "data/ENZYMES/ENZYMES",
    "hidden": 64,
    "layers": 4,
    "dropout": 0.5,
    "batch_size": 32,
    "epochs": 300,
    "lr": 1e-2,
    "lr_decay_every": 50,
    "lr_decay": 0.5,
    "seed": 12345,
}


def read_tu(prefix):
    edges = np.loadtxt(f"{prefix}_A.txt", delimiter=",", dtype=np.int64) - 1
    graph_of_node = np.loadtxt(f"{prefix}_graph_indicator.txt", dtype=np.int64) - 1
    labels = np.loadtxt(f"{prefix}_graph_labels.txt", dtype=np.int64) - 1
    feats = np.loadtxt(f"{prefix}_node_attributes.txt", delimiter=",", dtype=np.float32)
    node_labels = np.loadtxt(f"{prefix}_node_labels.txt", dtype=np.int64) - 1
    feats = np.concatenate([feats, np.eye(node_labels.max() + 1, dtype=np.float32)[node_labels]], axis=1)
    first_node = np.searchsorted(graph_of_node, np.arange(len(labels)))
    graphs = []
    for g in range(len(labels)):
        nodes = np.flatnonzero(graph_of_node == g)
        mask = graph_of_node[edges[:, 0]] == g
        e = torch.from_numpy(edges[mask].T - first_node[g])
        graphs.append((torch.from_numpy(feats[nodes]), e, int(labels[g])))
    return graphs


def collate_graphs(batch):
    xs, edge_index, graph_ids, offset = [], [], [], 0
    for g, (x, e, _) in enumerate(batch):
        xs.append(x)
        edge_index.append(e + offset)
        graph_ids.append(torch.full((x.size(0),), g, dtype=torch.long))
        offset += x.size(0)
    labels = torch.tensor([y for _, _, y in batch])
    return torch.cat(xs), torch.cat(edge_index, dim=1), torch.cat(graph_ids), labels


class GINLayer(nn.Module):
    def __init__(self, dim_in, dim_out):
        super().__init__()
        self.eps = nn.Parameter(torch.zeros(1))
        self.mlp = nn.Sequential(nn.Linear(dim_in, dim_out, bias=False), nn.BatchNorm1d(dim_out), nn.ReLU(),
                                 nn.Linear(dim_out, dim_out))

    def forward(self, x, edge_index):
        src, dst = edge_index
        agg = torch.zeros_like(x).index_add_(0, dst, x[src])
        return self.mlp((1 + self.eps) * x + agg)


class GIN(nn.Module):
    def __init__(self, dim_in, n_classes, cfg):
        super().__init__()
        dims = [dim_in] + [cfg["hidden"]] * cfg["layers"]
        self.layers = nn.ModuleList(GINLayer(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.readout = nn.Linear(sum(dims[1:]), n_classes)
        self.p = cfg["dropout"]

    def forward(self, x, edge_index, graph_ids, n_graphs):
        pooled = []
        for layer in self.layers:
            x = F.relu(layer(x, edge_index))
            pooled.append(torch.zeros(n_graphs, x.size(1), device=x.device).index_add_(0, graph_ids, x))
        h = torch.cat(pooled, dim=1)
        return self.readout(F.dropout(h, p=self.p))


def train_epoch(model, loader, opt, scheduler, device):
    model.train()
    total, seen = 0.0, 0
    for x, edge_index, graph_ids, y in loader:
        x, edge_index, graph_ids, y = x.to(device), edge_index.to(device), graph_ids.to(device), y.to(device)
        opt.zero_grad()
        loss = F.cross_entropy(model(x, edge_index, graph_ids, len(y)), y)
        loss.backward()
        opt.step()
        scheduler.step()
        total += loss.item() * len(y)
        seen += len(y)
    return total / seen


@torch.no_grad()
def accuracy(model, loader, device):
    model.eval()
    correct = total = 0
    for x, edge_index, graph_ids, y in loader:
        logits = model(x.to(device), edge_index.to(device), graph_ids.to(device), len(y))
        correct += (logits.argmax(dim=1).cpu() == y).sum().item()
        total += len(y)
    return correct / total


def main(cfg=CONFIG):
    torch.manual_seed(cfg["seed"])
    np.random.seed(cfg["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    graphs = read_tu(cfg["root"])
    labels = [y for _, _, y in graphs]
    train_g, test_g = train_test_split(graphs, test_size=0.1, stratify=labels, random_state=cfg["seed"])
    train_dl = DataLoader(train_g, batch_size=cfg["batch_size"], shuffle=True, collate_fn=collate_graphs, drop_last=True)
    test_dl = DataLoader(test_g, batch_size=128, collate_fn=collate_graphs)
    model = GIN(graphs[0][0].size(1), 6, cfg).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=cfg["lr_decay_every"], gamma=cfg["lr_decay"])
    for epoch in range(1, cfg["epochs"] + 1):
        loss = train_epoch(model, train_dl, opt, scheduler, device)
        if epoch % 10 == 0:
            print(f"epoch {epoch:3d}  loss {loss:.4f}  lr {opt.param_groups[0]['lr']:.2e}  "
                  f"train acc {accuracy(model, train_dl, device):.3f}  test acc {accuracy(model, test_dl, device):.3f}")
    torch.save(model.state_dict(), "gin_enzymes.pt")


if __name__ == "__main__":
    main()
