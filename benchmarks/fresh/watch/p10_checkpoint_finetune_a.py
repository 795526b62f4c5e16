"""Pretrain a digit-like classifier, checkpoint it, then resume from the checkpoint and fine-tune."""
import os
import tempfile

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
torch.set_num_threads(1)  # tiny model: one thread is fastest

N_CLASSES, DIM = 5, 20
TEMPLATES = torch.randn(N_CLASSES, DIM, generator=torch.Generator().manual_seed(11))


def samples(n, g):
    y = torch.randint(0, N_CLASSES, (n,), generator=g)
    return TEMPLATES[y] + 1.0 * torch.randn(n, DIM, generator=g), y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(DIM, 64)
        self.fc2 = nn.Linear(64, N_CLASSES)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def init_weights(module):
    if isinstance(module, nn.Linear):
        nn.init.kaiming_normal_(module.weight, nonlinearity="relu")
        nn.init.zeros_(module.bias)


def train(model, loader, lr, epochs, tag):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(y)
        print(f"[{tag}] epoch {epoch}  loss {total / len(loader.dataset):.4f}")


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def main():
    g = torch.Generator().manual_seed(1)
    x_pre, y_pre = samples(2000, g)
    x_small, y_small = samples(40, g)
    x_val, y_val = samples(500, g)

    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "pretrained.pt")
        model = Net()
        model.apply(init_weights)
        train(model, DataLoader(TensorDataset(x_pre, y_pre), batch_size=64, shuffle=True), 0.05, 3, "pretrain")
        print(f"val acc of the pretrained model: {accuracy(model, x_val, y_val):.3f}")
        torch.save(model.state_dict(), ckpt)

        # --- later: resume from the checkpoint and fine-tune on a small labelled set ---
        model = Net()
        model.load_state_dict(torch.load(ckpt, weights_only=True))
        model.apply(init_weights)
        print(f"val acc right after loading the checkpoint: {accuracy(model, x_val, y_val):.3f}")
        train(model, DataLoader(TensorDataset(x_small, y_small), batch_size=8, shuffle=True), 0.01, 2, "finetune")
        print(f"val acc after fine-tuning: {accuracy(model, x_val, y_val):.3f}")


if __name__ == "__main__":
    main()
