"""Exposure classifier for camera patches (over- vs under-exposed) with a small BatchNorm CNN."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
torch.set_num_threads(1)  # tiny model: one thread is fastest

SIZE = 12
BATCH_SIZE = 32


class Patches(Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.label = torch.randint(0, 2, (n,), generator=g)
        exposure = (self.label.float() * 2 - 1) * 0.6
        texture = torch.randn(n, 1, SIZE, SIZE, generator=g)
        self.images = texture + exposure[:, None, None, None]

    def __len__(self):
        return len(self.label)

    def __getitem__(self, i):
        return self.images[i], self.label[i]


class ExposureCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, 2)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        return self.fc(x.mean(dim=(2, 3)))


def main():
    train_loader = DataLoader(Patches(320, seed=1), batch_size=BATCH_SIZE, shuffle=True)
    val_set = Patches(400, seed=2)
    model = ExposureCNN()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    for epoch in range(4):
        model.train()
        total, correct = 0.0, 0
        for x, y in train_loader:
            optimizer.zero_grad()
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(y)
            correct += (logits.argmax(1) == y).sum().item()
        model.eval()
        with torch.no_grad():
            val_acc = (model(val_set.images).argmax(1) == val_set.label).float().mean().item()
        print(f"epoch {epoch}  loss {total / 320:.4f}  train acc {correct / 320:.3f}  val acc {val_acc:.3f}")


if __name__ == "__main__":
    main()
