"""Topic classifier for news headlines (world / sport / business / sci-tech / culture).

Small transformer encoder trained from scratch on a CSV with `headline,topic` columns.
"""
import re
from collections import Counter
from dataclasses import dataclass

import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


@dataclass
class Config:
    train_csv: str = "data/headlines_train.csv"
    val_csv: str = "data/headlines_val.csv"
    max_len: int = 32
    vocab_size: int = 20000
    d_model: int = 192
    n_heads: int = 4
    n_layers: int = 3
    dropout: float = 0.1
    batch_size: int = 128
    lr: float = 5e-4
    epochs: int = 10
    device: str = "cuda" if torch.cuda.is_available() else "cpu"


PAD, UNK = 0, 1
TOKEN_RE = re.compile(r"[a-z0-9']+")


def tokenize(text):
    return TOKEN_RE.findall(text.lower())


def build_vocab(texts, size):
    counts = Counter(tok for t in texts for tok in tokenize(t))
    itos = ["<pad>", "<unk>"] + [w for w, _ in counts.most_common(size - 2)]
    return {w: i for i, w in enumerate(itos)}


class HeadlineDataset(Dataset):
    def __init__(self, frame, vocab, label_map, max_len):
        self.texts = frame["headline"].tolist()
        self.labels = [label_map[t] for t in frame["topic"]]
        self.vocab = vocab
        self.max_len = max_len

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, i):
        ids = [self.vocab.get(t, UNK) for t in tokenize(self.texts[i])][: self.max_len]
        ids = ids + [PAD] * (self.max_len - len(ids))
        ids = torch.tensor(ids, dtype=torch.long)
        return ids, (ids != PAD).long(), self.labels[i]


class HeadlineEncoder(nn.Module):
    def __init__(self, cfg, n_classes):
        super().__init__()
        self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model, padding_idx=PAD)
        self.pos = nn.Embedding(cfg.max_len, cfg.d_model)
        layer = nn.TransformerEncoderLayer(cfg.d_model, cfg.n_heads, 4 * cfg.d_model,
                                           cfg.dropout, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, cfg.n_layers)
        self.head = nn.Sequential(nn.LayerNorm(cfg.d_model), nn.Linear(cfg.d_model, n_classes))

    def forward(self, input_ids, attention_mask):
        positions = torch.arange(input_ids.size(1), device=input_ids.device)
        x = self.tok(input_ids) + self.pos(positions)
        h = self.encoder(x, src_key_padding_mask=attention_mask == 0)
        sentence = h.mean(dim=1)
        return torch.softmax(self.head(sentence), dim=-1)


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for ids, mask, labels in loader:
            ids, mask, labels = ids.to(device), mask.to(device), labels.to(device)
            pred = model(ids, mask).argmax(dim=-1)
            correct += (pred == labels).sum().item()
            total += labels.numel()
    return correct / total


def main(cfg: Config):
    train_df = pd.read_csv(cfg.train_csv).dropna()
    val_df = pd.read_csv(cfg.val_csv).dropna()
    topics = sorted(train_df["topic"].unique())
    label_map = {t: i for i, t in enumerate(topics)}
    vocab = build_vocab(train_df["headline"], cfg.vocab_size)

    train_dl = DataLoader(HeadlineDataset(train_df, vocab, label_map, cfg.max_len),
                          batch_size=cfg.batch_size, shuffle=True, num_workers=2)
    val_dl = DataLoader(HeadlineDataset(val_df, vocab, label_map, cfg.max_len),
                        batch_size=256, num_workers=2)

    model = HeadlineEncoder(cfg, len(topics)).to(cfg.device)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.05)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)

    for epoch in range(cfg.epochs):
        model.train()
        seen, loss_sum = 0, 0.0
        for ids, mask, labels in train_dl:
            ids, mask, labels = ids.to(cfg.device), mask.to(cfg.device), labels.to(cfg.device)
            probs = model(ids, mask)
            loss = criterion(probs, labels)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            loss_sum += loss.item() * labels.size(0)
            seen += labels.size(0)
        acc = evaluate(model, val_dl, cfg.device)
        print(f"epoch {epoch + 1}: loss {loss_sum / seen:.4f}  val acc {acc:.4f}")

    torch.save({"model": model.state_dict(), "vocab": vocab, "topics": topics}, "headline_topic.pt")


if __name__ == "__main__":
    main(Config())
