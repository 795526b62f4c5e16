# Sentiment classification on IMDB-style reviews with a 2-layer LSTM
import json
from collections import Counter

import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset

PAD, UNK = 0, 1
MAX_LEN = 256


def build_vocab(texts, min_freq=2):
    counts = Counter(tok for t in texts for tok in t.lower().split())
    itos = ["<pad>", "<unk>"] + [w for w, c in counts.most_common() if c >= min_freq]
    return {w: i for i, w in enumerate(itos)}


class ReviewDataset(Dataset):
    def __init__(self, path, vocab=None):
        with open(path) as fh:
            rows = [json.loads(line) for line in fh]
        self.texts = [r["text"] for r in rows]
        self.labels = [int(r["label"]) for r in rows]
        self.vocab = vocab or build_vocab(self.texts)

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, idx):
        ids = [self.vocab.get(tok, UNK) for tok in self.texts[idx].lower().split()[:MAX_LEN]]
        return torch.tensor(ids, dtype=torch.long), self.labels[idx]


def collate(batch):
    # left-pad (pad the reversed sequences, then reverse back) so the last position is a real token
    seqs, labels = zip(*batch)
    padded = pad_sequence([s.flip(0) for s in seqs], batch_first=True, padding_value=PAD).flip(1)
    return padded, torch.tensor(labels)


class LSTMClassifier(nn.Module):
    def __init__(self, vocab_size, emb_dim=128, hidden=256, n_classes=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=PAD)
        self.lstm = nn.LSTM(emb_dim, hidden, num_layers=2, dropout=0.3)
        self.dropout = nn.Dropout(0.3)
        self.out = nn.Linear(hidden, n_classes)

    def forward(self, token_ids):
        emb = self.dropout(self.embedding(token_ids))
        outputs, (h_n, c_n) = self.lstm(emb)
        last = outputs[:, -1, :]
        return self.out(self.dropout(last))


def evaluate(model, loader, device):
    correct = total = 0
    with torch.no_grad():
        for tokens, labels in loader:
            logits = model(tokens.to(device))
            correct += (logits.argmax(dim=-1).cpu() == labels).sum().item()
            total += labels.numel()
    return correct / total


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_ds = ReviewDataset("data/imdb_train.jsonl")
    val_ds = ReviewDataset("data/imdb_val.jsonl", vocab=train_ds.vocab)
    train_dl = DataLoader(train_ds, batch_size=64, shuffle=True, collate_fn=collate)
    val_dl = DataLoader(val_ds, batch_size=128, collate_fn=collate)

    model = LSTMClassifier(len(train_ds.vocab)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()

    for epoch in range(1, 11):
        model.train()
        for step, (tokens, labels) in enumerate(train_dl):
            tokens, labels = tokens.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = criterion(model(tokens), labels)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            if step % 100 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        print(f"epoch {epoch} val acc {evaluate(model, val_dl, device):.4f}")


if __name__ == "__main__":
    main()
