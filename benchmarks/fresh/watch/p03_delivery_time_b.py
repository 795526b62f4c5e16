"""Regress delivery time from numeric features and a store id (tabular MLP with an embedding)."""
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
torch.set_num_threads(1)  # tiny model: one thread is fastest
np.random.seed(0)

N_STORES, N_NUMERIC = 10, 5


class Deliveries(Dataset):
    def __init__(self, n, rng):
        self.numeric = rng.normal(size=(n, N_NUMERIC)).astype(np.float32)
        self.store = rng.integers(0, N_STORES, size=n)
        store_effect = np.linspace(-2.0, 2.0, N_STORES)
        coef = np.array([0.8, -0.5, 0.3, 0.0, 0.2])
        noise = 0.1 * rng.normal(size=n)
        self.target = (self.numeric @ coef + store_effect[self.store] + noise).astype(np.float32)

    def __len__(self):
        return len(self.target)

    def __getitem__(self, i):
        return self.numeric[i], self.store[i], self.target[i]


class DeliveryModel(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.num_proj = nn.Linear(N_NUMERIC, hidden)
        self.store_embed = nn.Embedding(N_STORES, hidden)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, numeric, store):
        h = torch.relu(self.num_proj(numeric))
        return self.head(h).squeeze(-1)


def evaluate(model, loader):
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for numeric, store, target in loader:
            total += ((model(numeric, store) - target) ** 2).sum().item()
            count += len(target)
    return total / count


def main():
    rng = np.random.default_rng(0)
    train_loader = DataLoader(Deliveries(1000, rng), batch_size=50, shuffle=True)
    val_loader = DataLoader(Deliveries(400, rng), batch_size=200)

    model = DeliveryModel()
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3)
    loss_fn = nn.MSELoss()
    embed_before = model.store_embed.weight.detach().clone()

    for epoch in range(8):
        model.train()
        for numeric, store, target in train_loader:
            optimizer.zero_grad()
            loss = loss_fn(model(numeric, store), target)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}  train loss {loss.item():.4f}  val mse {evaluate(model, val_loader):.4f}")

    drift = (model.store_embed.weight - embed_before).abs().max().item()
    print(f"store embedding max change: {drift:.4f}")


if __name__ == "__main__":
    main()
