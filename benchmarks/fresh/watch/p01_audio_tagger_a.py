"""Fine-tune the pooling and the classifier of a small audio tagger on synthetic clips."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
torch.set_num_threads(1)  # tiny model: one thread is fastest

N_CLASSES, FRAMES, BINS = 4, 20, 16


class ClipDataset(Dataset):
    """Log-mel-like clips: each class has its own spectral envelope, plus noise."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        envelopes = torch.randn(N_CLASSES, BINS, generator=torch.Generator().manual_seed(99))
        self.labels = torch.randint(0, N_CLASSES, (n,), generator=g)
        self.clips = envelopes[self.labels].unsqueeze(1) + 0.8 * torch.randn(n, FRAMES, BINS, generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.clips[i], self.labels[i]


class AttentionPool(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.attn_fc = nn.Linear(dim, 1)

    def forward(self, h):  # h: (batch, frames, dim)
        w = torch.softmax(self.attn_fc(h), dim=1)
        return (w * h).sum(dim=1)


class Tagger(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv1d(BINS, dim, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.Conv1d(dim, dim, kernel_size=3, padding=1),
            nn.ReLU(),
        )
        self.pool = AttentionPool(dim)
        self.classifier = nn.Linear(dim, N_CLASSES)

    def forward(self, x):  # x: (batch, frames, bins)
        h = self.encoder(x.transpose(1, 2)).transpose(1, 2)
        return self.classifier(self.pool(h))


def accuracy(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(dim=1) == y).sum().item()
            total += len(y)
    return correct / total


def main():
    train_loader = DataLoader(ClipDataset(384, seed=1), batch_size=32, shuffle=True)
    val_loader = DataLoader(ClipDataset(256, seed=2), batch_size=128)
    model = Tagger()

    # the encoder is treated as pretrained: train only the attention pool and the classifier
    for name, p in model.named_parameters():
        if not name.startswith(("pool.", "classifier.")):
            p.requires_grad = False
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(trainable, lr=3e-3)
    head_before = model.classifier.weight.detach().clone()

    for epoch in range(5):
        model.train()
        total = 0.0
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(y)
        print(f"epoch {epoch}  train loss {total / len(train_loader.dataset):.4f}  val acc {accuracy(model, val_loader):.3f}")

    change = (model.classifier.weight - head_before).abs().max().item()
    print(f"classifier weight max change: {change:.4f}")


if __name__ == "__main__":
    main()
