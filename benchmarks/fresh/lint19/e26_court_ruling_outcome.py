import argparse
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

OUTCOMES = ["affirmed", "reversed", "remanded"]


class OpinionEncoder(nn.Module):
    def __init__(self, vocab_size, d_model=256, heads=4, layers=4, max_len=512):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model, padding_idx=0)
        self.pos = nn.Embedding(max_len, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.cls = nn.Linear(d_model, len(OUTCOMES))

    def forward(self, ids):
        pad = ids == 0
        pos = torch.arange(ids.size(1), device=ids.device)
        h = self.encoder(self.tok(ids) * math.sqrt(self.tok.embedding_dim) + self.pos(pos), src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).float()
        return self.cls((h * keep).sum(1) / keep.sum(1).clamp(min=1.0))


class Trainer:
    def __init__(self, model, lr, clip_value, device):
        self.model, self.device, self.clip_value = model.to(device), device, clip_value
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98))

    def _optim_step(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        nn.utils.clip_grad_value_(self.model.parameters(), self.clip_value)

    def train_epoch(self, loader):
        self.model.train()
        total, n = 0.0, 0
        for ids, y in loader:
            ids, y = ids.to(self.device), y.to(self.device)
            loss = F.cross_entropy(self.model(ids), y)
            self._optim_step(loss)
            total += loss.item() * len(y)
            n += len(y)
        return total / n

    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        hits = n = 0
        for ids, y in loader:
            pred = self.model(ids.to(self.device)).argmax(1).cpu()
            hits += (pred == y).sum().item()
            n += len(y)
        return hits / n


def load(path):
    d = np.load(path)
    return TensorDataset(torch.from_numpy(d["token_ids"]).long(), torch.from_numpy(d["outcome"]).long())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/appeals/train.npz")
    ap.add_argument("--val", default="data/appeals/val.npz")
    ap.add_argument("--vocab-size", type=int, default=32000)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--clip-value", type=float, default=0.5)
    args = ap.parse_args()

    torch.manual_seed(26)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    trainer = Trainer(OpinionEncoder(args.vocab_size), args.lr, args.clip_value, device)
    train_dl = DataLoader(load(args.train), batch_size=16, shuffle=True)
    val_dl = DataLoader(load(args.val), batch_size=64)
    for epoch in range(args.epochs):
        loss = trainer.train_epoch(train_dl)
        print(f"epoch {epoch} train loss {loss:.4f} val accuracy {trainer.evaluate(val_dl):.3f}")
    torch.save(trainer.model.state_dict(), "opinion_encoder.pt")


if __name__ == "__main__":
    main()
