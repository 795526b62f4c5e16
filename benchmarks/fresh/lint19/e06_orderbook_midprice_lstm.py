import argparse
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class BookWindows(Dataset):
    def __init__(self, book, labels, window):
        self.book = torch.from_numpy(book.astype(np.float32))
        self.labels = torch.from_numpy(labels.astype(np.int64))
        self.window = window

    def __len__(self):
        return len(self.labels) - self.window

    def __getitem__(self, i):
        return self.book[i:i + self.window], self.labels[i + self.window - 1]


class MidPriceLSTM(nn.Module):
    def __init__(self, n_levels, hidden=64):
        super().__init__()
        self.inp = nn.Linear(4 * n_levels, hidden)
        self.lstm = nn.LSTM(hidden, hidden, num_layers=2, batch_first=True, dropout=0.1)
        self.out = nn.Linear(hidden, 3)

    def forward(self, book):
        h, _ = self.lstm(torch.relu(self.inp(book)))
        return self.out(h[:, -1])


def evaluate(model, loader):
    model.eval()
    loss_sum, hits, n = 0.0, 0, 0
    with torch.no_grad():
        for book, y in loader:
            logits = model(book)
            loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
            hits += (logits.argmax(dim=1) == y).sum().item()
            n += y.numel()
    return loss_sum / n, hits / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/lob/btc_usd_10lvl.npz")
    ap.add_argument("--window", type=int, default=100)
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--out", default="runs/lob/midprice_lstm.pt")
    args = ap.parse_args()

    torch.manual_seed(1)
    d = np.load(args.data)
    book, labels = d["book"], d["direction"]
    cut = int(0.8 * len(labels))
    mu, sd = book[:cut].mean(0), book[:cut].std(0) + 1e-8
    book = (book - mu) / sd
    train_ds = BookWindows(book[:cut], labels[:cut], args.window)
    val_ds = BookWindows(book[cut:], labels[cut:], args.window)
    train_dl = DataLoader(train_ds, batch_size=256, shuffle=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=1024)

    model = MidPriceLSTM(n_levels=book.shape[1] // 4)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    best_loss, best_state = float("inf"), None
    for epoch in range(args.epochs):
        model.train()
        seen, run = 0, 0.0
        for x, y in train_dl:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            run += loss.item() * y.size(0)
            seen += y.size(0)
        val_loss, val_acc = evaluate(model, val_dl)
        if val_loss < best_loss:
            best_loss, best_state = val_loss, copy.deepcopy(model.state_dict())
        print(f"epoch {epoch} train {run / seen:.4f} val {val_loss:.4f} acc {val_acc:.3f}")

    model.load_state_dict(best_state)
    torch.save(model.state_dict(), args.out)


if __name__ == "__main__":
    main()
