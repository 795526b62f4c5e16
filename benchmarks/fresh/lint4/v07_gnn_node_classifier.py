"""Node classification on the Planetoid citation graphs with a hand-written GraphSAGE.

Only the dataset loader comes from PyG; message passing is plain index_add_.
"""

import copy

import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.datasets import Planetoid
from torch_geometric.utils import to_undirected


def mean_neighbours(h, edge_index):
    src, dst = edge_index
    summed = torch.zeros_like(h).index_add_(0, dst, h[src])
    deg = torch.zeros(h.shape[0], device=h.device).index_add_(
        0, dst, torch.ones(dst.numel(), device=h.device))
    return summed / deg.clamp(min=1).unsqueeze(-1)


class SAGELayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.self_lin = nn.Linear(d_in, d_out)
        self.neigh_lin = nn.Linear(d_in, d_out, bias=False)

    def forward(self, h, edge_index):
        return self.self_lin(h) + self.neigh_lin(mean_neighbours(h, edge_index))


class GraphSAGE(nn.Module):
    def __init__(self, d_in, hidden, n_classes, n_layers=3, p_drop=0.5):
        super().__init__()
        dims = [d_in] + [hidden] * (n_layers - 1) + [n_classes]
        self.layers = nn.ModuleList(SAGELayer(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.norms = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(n_layers - 1))
        self.p_drop = p_drop

    def forward(self, x, edge_index):
        h = x
        for i, layer in enumerate(self.layers):
            h = layer(h, edge_index)
            if i < len(self.norms):
                h = F.relu(self.norms[i](h))
                h = F.dropout(h, p=self.p_drop, training=self.training)
        return h


@torch.no_grad()
def evaluate(model, data):
    model.eval()
    pred = model(data.x, data.edge_index).argmax(dim=-1)
    return {split: (pred[mask] == data.y[mask]).float().mean().item()
            for split, mask in (("train", data.train_mask), ("val", data.val_mask), ("test", data.test_mask))}


def main(root="data/planetoid", name="PubMed", epochs=300, patience=50):
    torch.manual_seed(1)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = Planetoid(root, name)[0]
    data.edge_index = to_undirected(data.edge_index)
    data = data.to(device)

    model = GraphSAGE(data.num_features, 256, int(data.y.max()) + 1).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)

    best_val, best_state, since_best = 0.0, None, 0
    for epoch in range(epochs):
        model.train()
        opt.zero_grad()
        out = model(data.x, data.edge_index)
        loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
        loss.backward()
        opt.step()

        acc = evaluate(model, data)
        if acc["val"] > best_val:
            best_val, since_best = acc["val"], 0
            best_state = copy.deepcopy(model.state_dict())
        else:
            since_best += 1
        if epoch % 20 == 0:
            print(f"{epoch:3d} loss {loss.item():.4f} train {acc['train']:.3f} val {acc['val']:.3f}")
        if since_best >= patience:
            break

    model.load_state_dict(best_state)
    print("final:", evaluate(model, data))


if __name__ == "__main__":
    main()
