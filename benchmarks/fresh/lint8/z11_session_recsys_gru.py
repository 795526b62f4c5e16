"""Session-based next-item recommendation (GRU4Rec-style) on e-commerce click sessions."""
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset


class Sessions(Dataset):
    def __init__(self, sessions):
        self.sessions = [s for s in sessions if len(s) >= 2]

    def __len__(self):
        return len(self.sessions)

    def __getitem__(self, i):
        items = torch.as_tensor(self.sessions[i], dtype=torch.long)
        return items[:-1], items[1:]


def collate(batch):
    inputs, targets = zip(*batch)
    lengths = torch.tensor([len(x) for x in inputs])
    return pad_sequence(inputs, batch_first=True), pad_sequence(targets, batch_first=True), lengths


class SessionGRU(nn.Module):
    def __init__(self, n_items, dim=128, dropout=0.25):
        super().__init__()
        self.embed = nn.Embedding(n_items, dim, padding_idx=0)
        self.drop = nn.Dropout(dropout)
        self.gru = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, n_items)

    def forward(self, items, lengths):
        packed = pack_padded_sequence(self.drop(self.embed(items)), lengths, batch_first=True, enforce_sorted=False)
        hidden, _ = pad_packed_sequence(self.gru(packed)[0], batch_first=True, total_length=items.size(1))
        return self.out(self.drop(hidden))


class SessionTrainer:
    def __init__(self, model, train_loader, val_loader, device, epochs=20, lr=1e-3, k=20):
        self.model, self.device = model.to(device), device
        self.train_loader, self.val_loader = train_loader, val_loader
        self.epochs, self.k = epochs, k
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.best_recall, self.best_state = -1.0, None

    def _step(self, items, targets, lengths):
        logits = self.model(items.to(self.device), lengths)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.to(self.device).flatten(), ignore_index=0)
        self.opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), 5.0)
        self.opt.step()
        return loss.item(), int((targets != 0).sum())

    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        hits, rr, n = 0.0, 0.0, 0
        for items, targets, lengths in loader:
            logits = self.model(items.to(self.device), lengths)
            last = (lengths - 1).to(self.device)
            scores = logits[torch.arange(len(last), device=self.device), last]
            gold = targets.to(self.device)[torch.arange(len(last), device=self.device), last]
            ranks = (scores > scores.gather(1, gold[:, None])).sum(dim=1) + 1
            hits += (ranks <= self.k).sum().item()
            rr += torch.where(ranks <= self.k, 1.0 / ranks, torch.zeros_like(ranks, dtype=torch.float)).sum().item()
            n += len(last)
        return {"recall": hits / n, "mrr": rr / n}

    def fit(self):
        self.model.train()
        for epoch in range(self.epochs):
            total, tokens = 0.0, 0
            for items, targets, lengths in self.train_loader:
                loss, count = self._step(items, targets, lengths)
                total += loss * count
                tokens += count
            metrics = self.evaluate(self.val_loader)
            print(f"epoch {epoch:2d}  loss {total / tokens:.4f}  "
                  f"recall@{self.k} {metrics['recall']:.4f}  mrr@{self.k} {metrics['mrr']:.4f}")
            if metrics["recall"] > self.best_recall:
                self.best_recall = metrics["recall"]
                self.best_state = self.model.state_dict()
        self.model.load_state_dict(self.best_state)
        return self.model


def load_sessions(path):
    clicks = pd.read_csv(path, usecols=["session_id", "timestamp", "item_id"]).sort_values(["session_id", "timestamp"])
    item_index = {item: k + 1 for k, item in enumerate(clicks["item_id"].unique())}
    clicks["item"] = clicks["item_id"].map(item_index)
    cutoff = clicks.groupby("session_id")["timestamp"].max().quantile(0.9)
    ends = clicks.groupby("session_id")["timestamp"].transform("max")
    split = lambda df: df.groupby("session_id")["item"].apply(list).tolist()
    return split(clicks[ends <= cutoff]), split(clicks[ends > cutoff]), len(item_index) + 1


if __name__ == "__main__":
    torch.manual_seed(1)
    np.random.seed(1)
    train_s, val_s, n_items = load_sessions("data/yoochoose/clicks_sample.csv")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl = DataLoader(Sessions(train_s), batch_size=256, shuffle=True, collate_fn=collate)
    val_dl = DataLoader(Sessions(val_s), batch_size=512, collate_fn=collate)
    model = SessionTrainer(SessionGRU(n_items), train_dl, val_dl, device).fit()
    torch.save(model.state_dict(), "session_gru_best.pt")
