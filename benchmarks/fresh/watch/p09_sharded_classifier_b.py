"""Train a small classifier on feature vectors read class by class from disk-like shards."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import ConcatDataset, DataLoader, TensorDataset

torch.manual_seed(0)
torch.set_num_threads(1)  # tiny model: one thread is fastest

N_CLASSES, DIM = 4, 6
CENTERS = torch.randn(N_CLASSES, DIM, generator=torch.Generator().manual_seed(5)) * 0.7


def shard(label, n, g):
    """One shard per class, as an ImageFolder-style layout would give them."""
    x = CENTERS[label] + 0.5 * torch.randn(n, DIM, generator=g)
    return TensorDataset(x, torch.full((n,), label))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(DIM, 32), nn.ReLU(), nn.Linear(32, N_CLASSES))

    def forward(self, x):
        return self.layers(x)


def main():
    g = torch.Generator().manual_seed(1)
    train_set = ConcatDataset([shard(c, 200, g) for c in range(N_CLASSES)])
    val_set = ConcatDataset([shard(c, 100, g) for c in range(N_CLASSES)])
    train_loader = DataLoader(train_set, batch_size=20, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=200)

    model = MLP()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    for epoch in range(3):
        model.train()
        total = 0.0
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(y)
        model.eval()
        correct, predicted = 0, torch.zeros(N_CLASSES, dtype=torch.long)
        with torch.no_grad():
            for x, y in val_loader:
                pred = model(x).argmax(1)
                correct += (pred == y).sum().item()
                predicted += torch.bincount(pred, minlength=N_CLASSES)
        print(
            f"epoch {epoch}  loss {total / len(train_set):.4f}  val acc {correct / len(val_set):.3f}"
            f"  predictions per class {predicted.tolist()}"
        )


if __name__ == "__main__":
    main()
