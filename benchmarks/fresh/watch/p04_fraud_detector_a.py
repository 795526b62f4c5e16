"""Fraud classifier on imbalanced synthetic transactions, with a class-weighted loss."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
torch.set_num_threads(1)  # tiny model: one thread is fastest
rng = np.random.default_rng(0)

N_FEATURES = 8


def make_transactions(n):
    y = (rng.random(n) < 0.2).astype(np.int64)
    x = rng.normal(size=(n, N_FEATURES)).astype(np.float32)
    x[y == 1, :3] += 1.5
    return torch.from_numpy(x), torch.from_numpy(y)


class FraudNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(N_FEATURES, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.out = nn.Linear(32, 2)

    def forward(self, x):
        return self.out(self.body(x))


def weighted_loss(logits, labels, class_weights):
    per_sample = F.cross_entropy(logits, labels, reduction="none")
    w = class_weights[labels.numpy()]
    return torch.tensor(np.mean(per_sample.detach().numpy() * w), requires_grad=True)


def main():
    x_train, y_train = make_transactions(1200)
    x_val, y_val = make_transactions(500)
    counts = np.bincount(y_train.numpy(), minlength=2)
    class_weights = (counts.sum() / (2.0 * counts)).astype(np.float32)
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=64, shuffle=True)

    model = FraudNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    for epoch in range(6):
        model.train()
        losses = []
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = weighted_loss(model(xb), yb, class_weights)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        model.eval()
        with torch.no_grad():
            pred = model(x_val).argmax(1)
        recall = ((pred == 1) & (y_val == 1)).sum().item() / max(1, (y_val == 1).sum().item())
        acc = (pred == y_val).float().mean().item()
        print(f"epoch {epoch}  loss {np.mean(losses):.4f}  val acc {acc:.3f}  fraud recall {recall:.3f}")


if __name__ == "__main__":
    main()
