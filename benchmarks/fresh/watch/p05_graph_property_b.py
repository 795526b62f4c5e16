"""Predict a per-graph property with a small message-passing network (dense adjacency)."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
torch.set_num_threads(1)  # tiny model: one thread is fastest

N_NODES, IN_DIM = 10, 4


class RandomGraphs(Dataset):
    """Random graphs; the target is the mean over nodes of (degree * first feature)."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        upper = (torch.rand(n, N_NODES, N_NODES, generator=g) < 0.3).float().triu(1)
        self.adj = upper + upper.transpose(1, 2)
        self.feat = torch.randn(n, N_NODES, IN_DIM, generator=g)
        degree = self.adj.sum(-1)
        self.y = (degree * self.feat[..., 0]).mean(-1, keepdim=True)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.adj[i], self.feat[i], self.y[i]


class GraphConv(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.self_lin = nn.Linear(dim, dim)
        self.nbr_lin = nn.Linear(dim, dim, bias=False)

    def forward(self, h, adj):
        return F.relu(self.self_lin(h) + adj @ self.nbr_lin(h))


class GNN(nn.Module):
    def __init__(self, hidden=32, layers=2):
        super().__init__()
        self.inp = nn.Linear(IN_DIM, hidden)
        self.convs = [GraphConv(hidden) for _ in range(layers)]
        self.readout = nn.Linear(hidden, 1)

    def forward(self, adj, feat):
        h = F.relu(self.inp(feat))
        for conv in self.convs:
            h = conv(h, adj)
        return self.readout(h.mean(dim=1))


def main():
    train_loader = DataLoader(RandomGraphs(800, seed=1), batch_size=32, shuffle=True)
    val = RandomGraphs(300, seed=2)

    model = GNN()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    print("parameter tensors given to the optimizer:", len(optimizer.param_groups[0]["params"]))
    conv_before = model.convs[0].nbr_lin.weight.detach().clone()

    for epoch in range(8):
        model.train()
        total = 0.0
        for adj, feat, y in train_loader:
            optimizer.zero_grad()
            loss = F.mse_loss(model(adj, feat), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(y)
        model.eval()
        with torch.no_grad():
            val_mse = F.mse_loss(model(val.adj, val.feat), val.y).item()
        print(f"epoch {epoch}  train mse {total / 800:.4f}  val mse {val_mse:.4f}")

    print(f"first conv weight max change: {(model.convs[0].nbr_lin.weight - conv_before).abs().max().item():.4f}")


if __name__ == "__main__":
    main()
