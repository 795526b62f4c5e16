import argparse
import re
import zlib
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

N_BUCKETS = 2 ** 17
MAX_LEN = 32


def hash_tokens(text):
    words = re.findall(r"[a-z0-9']+", text.lower())[:MAX_LEN]
    ids = [zlib.crc32(w.encode()) % (N_BUCKETS - 1) + 1 for w in words]
    return ids + [0] * (MAX_LEN - len(ids))


class Headlines(Dataset):
    def __init__(self, folder):
        self.rows = []
        for label, name in enumerate(["not_sarcastic.txt", "sarcastic.txt"]):
            for line in (Path(folder) / name).read_text(encoding="utf8").splitlines():
                if line.strip():
                    self.rows.append((hash_tokens(line), label))

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        ids, label = self.rows[i]
        return torch.tensor(ids), torch.tensor(label, dtype=torch.float32)


class HeadlineCNN(nn.Module):
    def __init__(self, dim=128, filters=100):
        super().__init__()
        self.emb = nn.Embedding(N_BUCKETS, dim, padding_idx=0)
        self.convs = nn.ModuleList(nn.Conv1d(dim, filters, k, padding=k // 2) for k in (2, 3, 4))
        self.drop = nn.Dropout(0.4)
        self.out = nn.Linear(3 * filters, 1)

    def forward(self, ids):
        h = self.emb(ids).transpose(1, 2)
        pooled = torch.cat([F.relu(conv(h)).amax(dim=2) for conv in self.convs], dim=1)
        return self.out(self.drop(pooled)).squeeze(1)


def roc_auc(scores, labels):
    order = np.argsort(scores)
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    pos = labels == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    return (ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / max(n_pos * n_neg, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/sarcasm/train")
    ap.add_argument("--val", default="data/sarcasm/val")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--shuffle", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(13)
    train_dl = DataLoader(Headlines(args.train), batch_size=args.batch_size, shuffle=args.shuffle)
    val_dl = DataLoader(Headlines(args.val), batch_size=512)
    model = HeadlineCNN()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    for epoch in range(args.epochs):
        model.train()
        scores, labels = [], []
        for ids, y in train_dl:
            logits = model(ids)
            loss = F.binary_cross_entropy_with_logits(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scores.append(torch.sigmoid(logits).cpu().numpy())
            labels.append(y.numpy())
        train_auc = roc_auc(np.concatenate(scores), np.concatenate(labels))
        model.eval()
        with torch.no_grad():
            val_scores = np.concatenate([torch.sigmoid(model(ids)).numpy() for ids, _ in val_dl])
            val_labels = np.concatenate([y.numpy() for _, y in val_dl])
        print(f"epoch {epoch} train AUC {train_auc:.3f} val AUC {roc_auc(val_scores, val_labels):.3f}")
    torch.save(model.state_dict(), "headline_cnn.pt")


if __name__ == "__main__":
    main()
