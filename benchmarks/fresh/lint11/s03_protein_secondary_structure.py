"""Three-state protein secondary structure (helix / strand / coil) with a BiLSTM.

Input: a JSON-lines file per split, one chain per line:
    {"id": "1abcA", "seq": "MKTAYIAKQR...", "ss": "CCHHHHHHHCC..."}
"""
import argparse
import json
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from torch.utils.data import DataLoader, Dataset

AMINO = "ACDEFGHIKLMNPQRSTVWYX"
AA_INDEX = {a: i + 1 for i, a in enumerate(AMINO)}  # 0 is padding
SS_INDEX = {"H": 1, "E": 2, "C": 3}  # 0 marks padded positions in the label tensor
PAD_LABEL = -100


class ChainDataset(Dataset):
    def __init__(self, path, max_len):
        with open(path) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        self.items = []
        for row in rows:
            seq, ss = row["seq"][:max_len], row["ss"][:max_len]
            tokens = [AA_INDEX.get(a, AA_INDEX["X"]) for a in seq]
            labels = [SS_INDEX.get(s, SS_INDEX["C"]) for s in ss]
            self.items.append((torch.tensor(tokens), torch.tensor(labels)))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        return self.items[idx]


def collate(batch):
    lengths = torch.tensor([len(t) for t, _ in batch])
    tokens = torch.zeros(len(batch), int(lengths.max()), dtype=torch.long)
    labels = torch.zeros_like(tokens)
    for i, (t, y) in enumerate(batch):
        tokens[i, : len(t)] = t
        labels[i, : len(y)] = y
    # stored labels count from 1 (H=1, E=2, C=3); the head's outputs are indexed 0..2
    targets = torch.where(labels > 0, labels - 1, torch.full_like(labels, PAD_LABEL))
    return tokens, targets, lengths


class SSPredictor(nn.Module):
    def __init__(self, emb=64, hidden=256, layers=2, dropout=0.25):
        super().__init__()
        self.embed = nn.Embedding(len(AMINO) + 1, emb, padding_idx=0)
        self.lstm = nn.LSTM(emb, hidden, num_layers=layers, batch_first=True, bidirectional=True, dropout=dropout)
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(2 * hidden, len(SS_INDEX))

    def forward(self, tokens, lengths):
        x = self.drop(self.embed(tokens))
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=tokens.size(1))
        return self.head(self.drop(out))


def run_epoch(model, loader, device, optimizer=None, smoothing=0.0):
    training = optimizer is not None
    model.train(training)
    loss_sum, correct, residues = 0.0, 0, 0
    with torch.set_grad_enabled(training):
        for tokens, targets, lengths in loader:
            tokens, targets = tokens.to(device), targets.to(device)
            logits = model(tokens, lengths)
            flat_logits, flat_targets = logits.reshape(-1, logits.size(-1)), targets.reshape(-1)
            loss = F.cross_entropy(flat_logits, flat_targets, ignore_index=PAD_LABEL, label_smoothing=smoothing)
            if training:
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
                optimizer.step()
            mask = flat_targets != PAD_LABEL
            n = int(mask.sum())
            loss_sum += loss.item() * n
            correct += (flat_logits.argmax(dim=1)[mask] == flat_targets[mask]).sum().item()
            residues += n
    return loss_sum / residues, correct / residues


def mean_log_likelihood(model, loader, device):
    """Per-residue log-likelihood of the true state, used to compare checkpoints."""
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for tokens, targets, lengths in loader:
            tokens, targets = tokens.to(device), targets.to(device)
            log_probs = F.log_softmax(model(tokens, lengths), dim=-1)
            mask = targets != PAD_LABEL
            picked = log_probs.gather(-1, targets.clamp_min(0).unsqueeze(-1)).squeeze(-1)
            total += picked[mask].sum().item()
            count += int(mask.sum())
    return total / count


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--train", default="data/ss/train.jsonl")
    p.add_argument("--valid", default="data/ss/valid.jsonl")
    p.add_argument("--max-len", type=int, default=700)
    p.add_argument("--epochs", type=int, default=25)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--smoothing", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--out", default="ss_bilstm.pt")
    args = p.parse_args()

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train_loader = DataLoader(ChainDataset(args.train, args.max_len), batch_size=args.batch_size,
                              shuffle=True, collate_fn=collate, num_workers=2)
    valid_loader = DataLoader(ChainDataset(args.valid, args.max_len), batch_size=64, collate_fn=collate)

    model = SSPredictor().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.3)

    best_q3 = 0.0
    for epoch in range(1, args.epochs + 1):
        train_loss, train_q3 = run_epoch(model, train_loader, device, optimizer, args.smoothing)
        val_loss, val_q3 = run_epoch(model, valid_loader, device)
        scheduler.step()
        ll = mean_log_likelihood(model, valid_loader, device)
        print(f"{epoch:3d} train {train_loss:.3f}/{train_q3:.3f}  valid {val_loss:.3f}/{val_q3:.3f}  ll {ll:.3f}")
        if val_q3 > best_q3:
            best_q3 = val_q3
            torch.save({"model": model.state_dict(), "epoch": epoch, "q3": float(val_q3)}, args.out)
    print(f"best Q3 {best_q3:.4f}")


if __name__ == "__main__":
    main()
