import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

AMINO = "ACDEFGHIKLMNPQRSTVWY"
SS3 = {"H": 0, "E": 1, "C": 2}
CONFIG = {"window": 96, "stride": 48, "embed": 64, "hidden": 128, "layers": 2, "dropout": 0.2}


def encode_chain(rec):
    onehot = np.zeros((len(rec["seq"]), len(AMINO)), dtype=np.float32)
    for i, aa in enumerate(rec["seq"]):
        if aa in AMINO:
            onehot[i, AMINO.index(aa)] = 1.0
    pssm = 1.0 / (1.0 + np.exp(-np.asarray(rec["pssm"], dtype=np.float32)))
    tags = np.array([SS3[s] for s in rec["ss3"]], dtype=np.int64)
    return np.concatenate([onehot, pssm], axis=1), tags


class ResidueWindows(Dataset):
    def __init__(self, path, window, stride):
        self.items = []
        for line in Path(path).read_text().splitlines():
            feats, tags = encode_chain(json.loads(line))
            for start in range(0, len(tags) - window + 1, stride):
                self.items.append((feats[start:start + window], tags[start:start + window]))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        feats, tags = self.items[i]
        return torch.from_numpy(feats), torch.from_numpy(tags)


class SSTagger(nn.Module):
    def __init__(self, n_in, embed, hidden, layers, dropout):
        super().__init__()
        self.proj = nn.Sequential(nn.Linear(n_in, embed), nn.ReLU())
        self.rnn = nn.GRU(embed, hidden, num_layers=layers, bidirectional=True, dropout=dropout)
        self.out = nn.Linear(2 * hidden, len(SS3))

    def forward(self, feats):
        h, _ = self.rnn(self.proj(feats))
        return self.out(h)


def q3(model, loader):
    model.eval()
    hit = tot = 0
    with torch.no_grad():
        for feats, tags in loader:
            pred = model(feats).argmax(-1)
            hit += (pred == tags).sum().item()
            tot += tags.numel()
    return hit / tot


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/ss/cullpdb_train.jsonl")
    ap.add_argument("--test", default="data/ss/cb513.jsonl")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()

    torch.manual_seed(2)
    train_ds = ResidueWindows(args.train, CONFIG["window"], CONFIG["stride"])
    test_ds = ResidueWindows(args.test, CONFIG["window"], CONFIG["window"])
    train_dl = DataLoader(train_ds, batch_size=32, shuffle=True)
    test_dl = DataLoader(test_ds, batch_size=64)

    model = SSTagger(len(AMINO) * 2, CONFIG["embed"], CONFIG["hidden"], CONFIG["layers"], CONFIG["dropout"])
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        for feats, tags in train_dl:
            logits = model(feats)
            loss = F.cross_entropy(logits.reshape(-1, len(SS3)), tags.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
        print(f"epoch {epoch} last loss {loss.item():.4f} Q3 {q3(model, test_dl):.3f}")
    torch.save(model.state_dict(), "ss_tagger.pt")


if __name__ == "__main__":
    main()
