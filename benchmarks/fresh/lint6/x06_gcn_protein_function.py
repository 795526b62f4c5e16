"""Multi-label protein function prediction on a protein-protein interaction graph (node
classification, 121 GO-term labels per protein), with a residual GCN."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import f1_score
from torch_geometric.datasets import PPI
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GCNConv


class ResidualGCN(nn.Module):
    def __init__(self, in_dim, hidden, n_labels, depth=4, p_drop=0.2):
        super().__init__()
        self.inp = nn.Linear(in_dim, hidden)
        self.convs = nn.ModuleList(GCNConv(hidden, hidden) for _ in range(depth))
        self.norms = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(depth))
        self.out = nn.Linear(hidden, n_labels)
        self.p_drop = p_drop

    def forward(self, x, edge_index):
        h = self.inp(x)
        for conv, norm in zip(self.convs, self.norms):
            update = F.gelu(conv(norm(h), edge_index))
            h = h + F.dropout(update, p=self.p_drop, training=self.training)
        return self.out(h)  # one logit per label


def train_epoch(model, loader, optimizer, device):
    model.train()
    total, nodes = 0.0, 0
    for batch in loader:
        batch = batch.to(device)
        optimizer.zero_grad()
        logits = model(batch.x, batch.edge_index)
        loss = F.binary_cross_entropy_with_logits(logits, batch.y)
        loss.backward()
        optimizer.step()
        total += loss.item() * batch.num_nodes
        nodes += batch.num_nodes
    return total / nodes


@torch.no_grad()
def micro_f1(model, loader, device):
    model.eval()
    truth, preds = [], []
    for batch in loader:
        batch = batch.to(device)
        probs = torch.sigmoid(model(batch.x, batch.edge_index))
        preds.append((probs > 0.5).cpu())
        truth.append(batch.y.cpu())
    return f1_score(torch.cat(truth).numpy(), torch.cat(preds).numpy(), average="micro")


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_ds = PPI("data/ppi", split="train")
    val_ds = PPI("data/ppi", split="val")
    test_ds = PPI("data/ppi", split="test")
    train_loader = DataLoader(train_ds, batch_size=2, shuffle=True)
    val_loader = DataLoader(val_ds, batch_size=4)
    test_loader = DataLoader(test_ds, batch_size=4)

    model = ResidualGCN(train_ds.num_features, 256, train_ds.num_classes).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.5, patience=10)

    best_f1 = 0.0
    for epoch in range(1, 301):
        loss = train_epoch(model, train_loader, optimizer, device)
        val_f1 = micro_f1(model, val_loader, device)
        scheduler.step(val_f1)
        if val_f1 > best_f1:
            best_f1 = val_f1
            torch.save(model.state_dict(), "ppi_gcn_best.pt")
        if epoch % 10 == 0:
            print(f"epoch {epoch:03d} loss {loss:.4f} val micro-F1 {val_f1:.4f}")

    model.load_state_dict(torch.load("ppi_gcn_best.pt", map_location=device, weights_only=True))
    print(f"test micro-F1 {micro_f1(model, test_loader, device):.4f}")


if __name__ == "__main__":
    main()
