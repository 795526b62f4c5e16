import argparse
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

SPECIES = ["ae_aegypti", "ae_albopictus", "an_arabiensis", "an_gambiae", "cu_pipiens", "cu_quinquefasciatus"]

DEFAULTS = SimpleNamespace(
    data="wingbeats.npz",
    channels=(32, 64, 128, 128),
    dropout=0.2,
    loss="CrossEntropyLoss",
    loss_kwargs={"label_smoothing": 0.1},
    lr=1e-3,
    epochs=30,
    batch_size=128,
)


class WingbeatNet(nn.Module):
    def __init__(self, channels, n_classes, dropout):
        super().__init__()
        layers, cin = [], 1
        for cout in channels:
            layers += [nn.Conv1d(cin, cout, 9, padding=4, bias=False), nn.BatchNorm1d(cout), nn.ReLU(), nn.MaxPool1d(4)]
            cin = cout
        self.features = nn.Sequential(*layers, nn.AdaptiveMaxPool1d(1), nn.Flatten())
        self.classify = nn.Sequential(
            nn.Dropout(dropout),
            nn.Linear(cin, n_classes),
            nn.Softmax(dim=1),
        )

    def forward(self, signal):
        return self.classify(self.features(signal))


def load(path):
    data = np.load(path)
    sig = torch.from_numpy(data["signals"]).float().unsqueeze(1)
    sig = sig / sig.abs().amax(dim=2, keepdim=True).clamp_min(1e-6)
    return sig, torch.from_numpy(data["species"]).long(), torch.from_numpy(data["is_train"]).bool()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=DEFAULTS.data)
    parser.add_argument("--epochs", type=int, default=DEFAULTS.epochs)
    parser.add_argument("--amp", action="store_true")
    cfg = SimpleNamespace(**{**vars(DEFAULTS), **vars(parser.parse_args())})
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    use_amp = cfg.amp and device.type == "cuda"
    sig, species, is_train = load(cfg.data)
    train_loader = DataLoader(TensorDataset(sig[is_train], species[is_train]), batch_size=cfg.batch_size, shuffle=True, drop_last=True)
    test_loader = DataLoader(TensorDataset(sig[~is_train], species[~is_train]), batch_size=512)
    model = WingbeatNet(cfg.channels, len(SPECIES), cfg.dropout).to(device)
    criterion = getattr(nn, cfg.loss)(**cfg.loss_kwargs)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
    for epoch in range(cfg.epochs):
        model.train()
        running, seen = 0.0, 0
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=use_amp):
                out = model(x)
                loss = criterion(out, y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            running += loss.item() * len(y)
            seen += len(y)
        model.eval()
        confusion = torch.zeros(len(SPECIES), len(SPECIES), dtype=torch.long)
        with torch.no_grad():
            for x, y in test_loader:
                pred = model(x.to(device)).argmax(dim=1).cpu()
                confusion += torch.bincount(y * len(SPECIES) + pred, minlength=len(SPECIES) ** 2).view(len(SPECIES), -1)
        acc = confusion.diag().sum().item() / confusion.sum().item()
        print(f"epoch {epoch}: loss {running / seen:.4f} test acc {acc:.3f}")
    torch.save(model.state_dict(), "wingbeat_net.pt")


if __name__ == "__main__":
    main()
