"""Predict whether a protein is soluble when expressed in E. coli, from its amino-acid sequence.

Bidirectional GRU over residues; sequences of 30-1000 residues. Splits keep sequence clusters
(<= 25 % identity) together so near-duplicates never straddle train and test.
"""
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupShuffleSplit
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset

CSV = "data/solubility/esol_clusters.csv"  # columns: sequence, soluble, cluster
AMINO = "ACDEFGHIKLMNPQRSTVWY"
PAD, UNK = 0, 1
MAX_LEN = 1000
EMB, HIDDEN = 32, 128
BATCH, EPOCHS, LR = 64, 20, 1e-3


def encode(seq):
    lookup = {a: i + 2 for i, a in enumerate(AMINO)}
    return torch.tensor([lookup.get(a, UNK) for a in seq[:MAX_LEN]], dtype=torch.long)


class ProteinDataset(Dataset):
    def __init__(self, frame):
        self.seqs = [encode(s) for s in frame["sequence"]]
        self.labels = torch.tensor(frame["soluble"].to_numpy(), dtype=torch.float32)

    def __len__(self):
        return len(self.seqs)

    def __getitem__(self, i):
        return self.seqs[i], self.labels[i]


def collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    return pad_sequence(seqs, batch_first=True, padding_value=PAD), lengths, torch.stack(labels)


class SolubilityGRU(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(len(AMINO) + 2, EMB, padding_idx=PAD)
        self.gru = nn.GRU(EMB, HIDDEN, num_layers=2, batch_first=True, bidirectional=True, dropout=0.2)
        self.out = nn.Sequential(nn.Linear(4 * HIDDEN, 64), nn.ReLU(), nn.Dropout(0.3), nn.Linear(64, 1))

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.embed(tokens), lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, h_n = self.gru(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=tokens.size(1))
        last = torch.cat([h_n[-2], h_n[-1]], dim=1)
        mask = (tokens != PAD).unsqueeze(-1).float()
        mean = (out * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.out(torch.cat([last, mean], dim=1)).squeeze(1)


def split(frame, seed=0):
    outer = GroupShuffleSplit(n_splits=1, test_size=0.2, random_state=seed)
    trval_idx, test_idx = next(outer.split(frame, groups=frame["cluster"]))
    trval, test = frame.iloc[trval_idx], frame.iloc[test_idx]
    inner = GroupShuffleSplit(n_splits=1, test_size=0.125, random_state=seed)
    tr_idx, va_idx = next(inner.split(trval, groups=trval["cluster"]))
    return trval.iloc[tr_idx], trval.iloc[va_idx], test


@torch.no_grad()
def score(model, loader, device):
    model.eval()
    probs, labels = [], []
    for tokens, lengths, y in loader:
        logits = model(tokens.to(device), lengths)
        probs.append(torch.sigmoid(logits).cpu())
        labels.append(y)
    probs, labels = torch.cat(probs).numpy(), torch.cat(labels).numpy()
    return roc_auc_score(labels, probs), float(((probs > 0.5) == labels).mean())


def main():
    torch.manual_seed(0)
    np.random.seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    frame = pd.read_csv(CSV)
    frame = frame[frame["sequence"].str.len() >= 30].reset_index(drop=True)
    train_df, val_df, test_df = split(frame)
    make = lambda df, shuffle: DataLoader(ProteinDataset(df), batch_size=BATCH, shuffle=shuffle, collate_fn=collate)
    train_dl, val_dl, test_dl = make(train_df, True), make(val_df, False), make(test_df, False)

    model = SolubilityGRU().to(device)
    pos_frac = train_df["soluble"].mean()
    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor((1 - pos_frac) / pos_frac, dtype=torch.float32, device=device))
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.5, patience=2)

    best_auc, best_state = 0.0, None
    for epoch in range(EPOCHS):
        model.train()
        total, n = 0.0, 0
        for tokens, lengths, y in train_dl:
            tokens, y = tokens.to(device), y.to(device)
            optimizer.zero_grad()
            loss = criterion(model(tokens, lengths), y)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
            total += loss.item() * y.numel()
            n += y.numel()
        val_auc, val_acc = score(model, val_dl, device)
        scheduler.step(val_auc)
        print(f"epoch {epoch + 1:02d} loss {total / n:.4f} val AUC {val_auc:.4f} acc {val_acc:.4f}")
        if val_auc > best_auc:
            best_auc = val_auc
            best_state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}

    model.load_state_dict(best_state)
    test_auc, test_acc = score(model, test_dl, device)
    print(f"test AUC {test_auc:.4f} acc {test_acc:.4f}")
    torch.save(best_state, "solubility_gru.pt")


if __name__ == "__main__":
    main()
