"""Classify sensor windows by when a pulse occurs (early or late) with a GRU."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
torch.set_num_threads(1)  # tiny model: one thread is fastest

STEPS, CHANNELS = 15, 3


class Windows(Dataset):
    """A pulse on channel 0, early in the window (label 1) or late (label 0), plus noise."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.label = torch.randint(0, 2, (n,), generator=g)
        start = torch.where(self.label == 1, 1, 8) + torch.randint(0, 5, (n,), generator=g)
        self.x = 0.3 * torch.randn(n, STEPS, CHANNELS, generator=g)
        self.x[torch.arange(n), start, 0] += 2.0

    def __len__(self):
        return len(self.label)

    def __getitem__(self, i):
        return self.x[i], self.label[i]


class PulseNet(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.rnn = nn.GRU(CHANNELS, hidden)
        self.fc = nn.Linear(hidden, 2)

    def forward(self, x):  # x: (batch, steps, channels)
        out, _ = self.rnn(x)
        return self.fc(out[:, -1])


def main():
    train_loader = DataLoader(Windows(800, seed=1), batch_size=32, shuffle=True)
    val_loader = DataLoader(Windows(400, seed=2), batch_size=100)
    model = PulseNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)

    for epoch in range(4):
        model.train()
        total = 0.0
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(y)
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in val_loader:
                correct += (model(x).argmax(1) == y).sum().item()
        print(f"epoch {epoch}  loss {total / 800:.4f}  val acc {correct / 400:.3f}")


if __name__ == "__main__":
    main()
