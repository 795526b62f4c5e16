"""Reuse a backbone trained on task A for a new task B: freeze it and train a new head."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
torch.set_num_threads(1)  # tiny model: one thread is fastest

IN_DIM = 16
PROJ = torch.randn(IN_DIM, 4, generator=torch.Generator().manual_seed(7))


def task_a(n, g):
    x = torch.randn(n, IN_DIM, generator=g)
    return x, (x @ PROJ).argmax(dim=1)


def task_b(n, g):
    x = torch.randn(n, IN_DIM, generator=g)
    return x, (x @ PROJ[:, 0] > x @ PROJ[:, 1] + 0.5).long()


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(IN_DIM, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 32), nn.ReLU())

    def forward(self, x):
        return self.net(x)


class Classifier(nn.Module):
    def __init__(self, backbone, n_out):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Linear(32, n_out)

    def forward(self, x):
        return self.head(self.backbone(x))


def fit(model, loader, optimizer, epochs, tag):
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(yb)
        print(f"[{tag}] epoch {epoch}  loss {total / len(loader.dataset):.4f}")


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def main():
    g = torch.Generator().manual_seed(1)
    xa, ya = task_a(2000, g)
    xa_val, ya_val = task_a(500, g)
    xb, yb = task_b(300, g)
    xb_val, yb_val = task_b(500, g)

    backbone = Backbone()
    model_a = Classifier(backbone, 4)
    opt_a = torch.optim.Adam(model_a.parameters(), lr=3e-3)
    fit(model_a, DataLoader(TensorDataset(xa, ya), batch_size=64, shuffle=True), opt_a, 4, "task A")
    print(f"task A val acc after pretraining: {accuracy(model_a, xa_val, ya_val):.3f}")
    snapshot = [p.detach().clone() for p in backbone.parameters()]

    model_b = Classifier(backbone, 2)
    model_b.backbone.eval()  # freeze the pretrained backbone
    opt_b = torch.optim.SGD(model_b.parameters(), lr=0.05, momentum=0.9)
    fit(model_b, DataLoader(TensorDataset(xb, yb), batch_size=16, shuffle=True), opt_b, 6, "task B")

    drift = max((p - s).abs().max().item() for p, s in zip(backbone.parameters(), snapshot))
    print(f"task B val acc: {accuracy(model_b, xb_val, yb_val):.3f}")
    print(f"backbone max change during task B: {drift:.4f}")
    print(f"task A val acc with the shared backbone now: {accuracy(model_a, xa_val, ya_val):.3f}")


if __name__ == "__main__":
    main()
