"""Predict energy use from raw building-sensor readings with a BatchNorm MLP."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
torch.set_num_threads(1)  # tiny model: one thread is fastest

N_SENSORS = 8
SCALE = torch.tensor([100.0, 50.0, 20.0, 1000.0, 5.0, 30.0, 200.0, 10.0])
OFFSET = torch.tensor([500.0, 20.0, 0.0, 3000.0, 1.0, 60.0, 100.0, 0.0])


class SensorLog(Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        z = torch.randn(n, N_SENSORS, generator=g)
        self.x = z * SCALE + OFFSET  # raw units, not standardised
        self.y = (torch.sin(z[:, 0]) + z[:, 1] * z[:, 2] + 0.5 * z[:, 3]).unsqueeze(1)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class EnergyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.BatchNorm1d(N_SENSORS),
            nn.Linear(N_SENSORS, 64),
            nn.BatchNorm1d(64),
            nn.ReLU(),
            nn.Dropout(0.1),
            nn.Linear(64, 1),
        )

    def forward(self, x):
        return self.net(x)


def evaluate(model, loader):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            total += F.mse_loss(model(x), y, reduction="sum").item()
    return total / len(loader.dataset)


def main():
    train_loader = DataLoader(SensorLog(1200, seed=1), batch_size=64, shuffle=True)
    val_loader = DataLoader(SensorLog(400, seed=2), batch_size=200)
    model = EnergyNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

    print(f"val mse before training: {evaluate(model, val_loader):.4f}")
    for epoch in range(8):
        total = 0.0
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(y)
        print(f"epoch {epoch}  train mse {total / 1200:.4f}  val mse {evaluate(model, val_loader):.4f}")
    print(f"input BatchNorm running mean (first 4): {model.net[0].running_mean[:4].tolist()}")


if __name__ == "__main__":
    main()
