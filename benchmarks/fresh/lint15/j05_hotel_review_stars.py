import re
import zlib

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CFG = {
    "csv": "data/tripadvisor_hotel_reviews.csv",
    "text_column": "Review",
    "label_column": "Rating",
    "num_classes": 5,
    "buckets": 2 ** 20,
    "ngrams": 2,
    "dim": 64,
    "batch_size": 128,
    "epochs": 6,
    "lr": 0.25,
    "valid_frac": 0.1,
    "seed": 3,
}

WORD = re.compile(r"[a-z']+")


def hashed_ngrams(text, buckets, n):
    words = WORD.findall(text.lower())
    grams = list(words)
    for k in range(2, n + 1):
        grams += [" ".join(words[i:i + k]) for i in range(len(words) - k + 1)]
    return [zlib.crc32(g.encode()) % buckets for g in grams] or [0]


def load_reviews(cfg):
    df = pd.read_csv(cfg["csv"])
    df = df.dropna(subset=[cfg["text_column"], cfg["label_column"]])
    ratings = df[cfg["label_column"]].astype(int)
    if not ratings.between(1, cfg["num_classes"]).all():
        raise ValueError("ratings outside 1..5")
    return df[cfg["text_column"]].tolist(), ratings.tolist()


class Reviews(Dataset):
    def __init__(self, texts, ratings, cfg):
        self.ids = [hashed_ngrams(t, cfg["buckets"], cfg["ngrams"]) for t in texts]
        self.ratings = ratings

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return torch.tensor(self.ids[i]), torch.tensor(self.ratings[i])


def bag_collate(batch):
    ids, ratings = zip(*batch)
    offsets = torch.tensor([0] + [len(x) for x in ids[:-1]]).cumsum(0)
    return torch.cat(ids), offsets, torch.stack(ratings)


class FastTextClassifier(nn.Module):
    def __init__(self, buckets, dim, num_classes):
        super().__init__()
        self.bag = nn.EmbeddingBag(buckets, dim, mode="mean")
        self.fc = nn.Linear(dim, num_classes)
        nn.init.uniform_(self.bag.weight, -1.0 / dim, 1.0 / dim)
        nn.init.zeros_(self.fc.weight)
        nn.init.zeros_(self.fc.bias)

    def forward(self, ids, offsets):
        return self.fc(self.bag(ids, offsets))


def split(texts, ratings, frac, seed):
    idx = np.random.default_rng(seed).permutation(len(texts))
    cut = int(len(idx) * (1 - frac))
    pick = lambda sel: ([texts[i] for i in sel], [ratings[i] for i in sel])
    return pick(idx[:cut]), pick(idx[cut:])


def evaluate(model, loader):
    model.eval()
    hits, abs_err, n = 0, 0.0, 0
    with torch.no_grad():
        for ids, offsets, ratings in loader:
            pred = model(ids, offsets).argmax(1)
            hits += (pred == ratings).sum().item()
            abs_err += (pred - ratings).abs().sum().item()
            n += ratings.numel()
    return hits / n, abs_err / n


def train(cfg=CFG):
    torch.manual_seed(cfg["seed"])
    texts, ratings = load_reviews(cfg)
    (tr_x, tr_y), (va_x, va_y) = split(texts, ratings, cfg["valid_frac"], cfg["seed"])
    train_loader = DataLoader(Reviews(tr_x, tr_y, cfg), batch_size=cfg["batch_size"], shuffle=True,
                              collate_fn=bag_collate)
    valid_loader = DataLoader(Reviews(va_x, va_y, cfg), batch_size=512, collate_fn=bag_collate)
    model = FastTextClassifier(cfg["buckets"], cfg["dim"], cfg["num_classes"])
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    total_steps = cfg["epochs"] * len(train_loader)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: max(0.0, 1 - s / total_steps))
    for epoch in range(cfg["epochs"]):
        model.train()
        for ids, offsets, target in train_loader:
            loss = F.cross_entropy(model(ids, offsets), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
        acc, mae = evaluate(model, valid_loader)
        print(f"epoch {epoch + 1}: valid accuracy {acc:.3f}, mean absolute star error {mae:.3f}")
    torch.save(model.state_dict(), "hotel_stars_fasttext.pt")
    return model


if __name__ == "__main__":
    train()
