"""Predict the star rating (1-5) of product reviews with a bidirectional GRU over packed sequences."""
import re
from collections import Counter
from dataclasses import dataclass

import pandas as pd
import torch
import torch.nn as nn
from sklearn.metrics import classification_report
from sklearn.model_selection import train_test_split
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader


@dataclass
class Config:
    csv: str = "data/reviews/electronics_reviews.csv"
    vocab_size: int = 30000
    max_len: int = 400
    embed: int = 200
    hidden: int = 192
    dropout: float = 0.3
    batch_size: int = 64
    epochs: int = 8
    lr: float = 1e-3
    clip: float = 1.0
    seed: int = 17


WORD = re.compile(r"[a-z']+|[!?.]")


def encode(texts, stoi, max_len):
    return [torch.tensor([stoi.get(w, 1) for w in WORD.findall(t.lower())[:max_len]] or [1]) for t in texts]


def collate(batch):
    seqs, ratings = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    return pad_sequence(list(seqs), batch_first=True), lengths, torch.tensor(ratings)


class ClassifierHead(nn.Module):
    def __init__(self, dim, n_classes, dropout):
        super().__init__()
        self.layers = nn.Sequential(nn.Dropout(dropout), nn.Linear(dim, dim // 2), nn.Tanh(),
                                    nn.Linear(dim // 2, n_classes), nn.Softmax(dim=-1))

    def forward(self, h):
        return self.layers(h)


class ReviewGRU(nn.Module):
    def __init__(self, cfg, n_classes=5):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab_size, cfg.embed, padding_idx=0)
        self.gru = nn.GRU(cfg.embed, cfg.hidden, batch_first=True, bidirectional=True)
        self.head = ClassifierHead(2 * cfg.hidden, n_classes, cfg.dropout)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.embed(tokens), lengths, batch_first=True, enforce_sorted=False)
        _, h_n = self.gru(packed)
        return self.head(torch.cat([h_n[-2], h_n[-1]], dim=1))


def main(cfg=Config()):
    torch.manual_seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    df = pd.read_csv(cfg.csv).dropna(subset=["text", "rating"])
    texts, ratings = df["text"].tolist(), (df["rating"].astype(int) - 1).tolist()
    tr_x, te_x, tr_y, te_y = train_test_split(texts, ratings, test_size=0.1, stratify=ratings, random_state=cfg.seed)

    counts = Counter(w for t in tr_x for w in WORD.findall(t.lower()))
    stoi = {w: i + 2 for i, (w, _) in enumerate(counts.most_common(cfg.vocab_size - 2))}
    train = list(zip(encode(tr_x, stoi, cfg.max_len), tr_y))
    test = list(zip(encode(te_x, stoi, cfg.max_len), te_y))
    train_dl = DataLoader(train, batch_size=cfg.batch_size, shuffle=True, collate_fn=collate)
    test_dl = DataLoader(test, batch_size=256, collate_fn=collate)

    model = ReviewGRU(cfg).to(device)
    criterion = nn.NLLLoss()
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    for epoch in range(cfg.epochs):
        model.train()
        total, seen = 0.0, 0
        for tokens, lengths, y in train_dl:
            tokens, y = tokens.to(device), y.to(device)
            opt.zero_grad()
            loss = criterion(model(tokens, lengths), y)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
            opt.step()
            total += loss.item() * y.size(0)
            seen += y.size(0)

        model.eval()
        preds, golds = [], []
        with torch.no_grad():
            for tokens, lengths, y in test_dl:
                preds.append(model(tokens.to(device), lengths).argmax(dim=1).cpu())
                golds.append(y)
        preds, golds = torch.cat(preds), torch.cat(golds)
        print(f"epoch {epoch}  train loss {total / seen:.4f}  test acc {(preds == golds).float().mean().item():.3f}")
    print(classification_report(golds.numpy(), preds.numpy(), target_names=[f"{k} star" for k in range(1, 6)]))
    torch.save({"model": model.state_dict(), "stoi": stoi}, "review_gru.pt")


if __name__ == "__main__":
    main()
