"""Predict dietary tags (vegan, gluten-free, nut-free, low-sodium, ...) for recipes from their
ingredient lists. A recipe carries any subset of the tags. The long ingredient lists make the
target batch of 128 too large for one pass, so gradients are accumulated over micro-batches.
"""
import argparse
import json
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

PAD = 0


class Recipes(Dataset):
    def __init__(self, path, ingredient_vocab, tags, max_len=64):
        with open(path) as fh:
            self.rows = [json.loads(line) for line in fh]
        self.vocab = ingredient_vocab
        self.tag_pos = {t: i for i, t in enumerate(tags)}
        self.max_len = max_len

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        row = self.rows[i]
        ids = [self.vocab[x] for x in row["ingredients"] if x in self.vocab][: self.max_len] or [1]
        target = torch.zeros(len(self.tag_pos))
        target[[self.tag_pos[t] for t in row["tags"] if t in self.tag_pos]] = 1.0
        return torch.tensor(ids, dtype=torch.long), target


def collate(batch):
    length = max(len(ids) for ids, _ in batch)
    tokens = torch.full((len(batch), length), PAD, dtype=torch.long)
    for k, (ids, _) in enumerate(batch):
        tokens[k, : len(ids)] = ids
    return tokens, torch.stack([t for _, t in batch])


class IngredientEncoder(nn.Module):
    def __init__(self, vocab_size, n_tags, dim=128, heads=4, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=PAD)
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=4 * dim, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(dim, n_tags)

    def forward(self, tokens):
        pad = tokens == PAD
        h = self.encoder(self.embed(tokens), src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).float()
        return self.head((h * keep).sum(1) / keep.sum(1).clamp(min=1.0))


@torch.no_grad()
def macro_f1(model, loader, device):
    model.eval()
    tp = fp = fn = 0
    for tokens, target in loader:
        pred = (torch.sigmoid(model(tokens.to(device))) > 0.5).float().cpu()
        tp = tp + (pred * target).sum(0)
        fp = fp + (pred * (1 - target)).sum(0)
        fn = fn + ((1 - pred) * target).sum(0)
    return (2 * tp / (2 * tp + fp + fn).clamp(min=1)).mean().item()


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/recipes_train.jsonl")
    ap.add_argument("--valid", default="data/recipes_valid.jsonl")
    ap.add_argument("--vocab", default="data/ingredients.json")
    ap.add_argument("--tags", default="data/dietary_tags.json")
    ap.add_argument("--micro-batch", type=int, default=32)
    ap.add_argument("--accum", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--out", default="runs/recipes/tagger.pt")
    args = ap.parse_args(argv)

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with open(args.vocab) as fh:
        vocab = {name: i + 2 for i, name in enumerate(json.load(fh))}
    with open(args.tags) as fh:
        tags = json.load(fh)
    train_dl = DataLoader(Recipes(args.train, vocab, tags), batch_size=args.micro_batch, shuffle=True, collate_fn=collate)
    valid_dl = DataLoader(Recipes(args.valid, vocab, tags), batch_size=128, collate_fn=collate)
    model = IngredientEncoder(len(vocab) + 2, len(tags)).to(device)
    decay = [p for n, p in model.named_parameters() if p.ndim > 1 and "embed" not in n]
    no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1 or "embed" in n]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=args.lr)
    criterion = nn.BCEWithLogitsLoss()
    best = 0.0
    for epoch in range(args.epochs):
        model.train()
        optimizer.zero_grad()
        for i, (tokens, target) in enumerate(train_dl):
            loss = criterion(model(tokens.to(device)), target.to(device)) / args.accum
            loss.backward()
            if (i + 1) % args.accum == 0 or i + 1 == len(train_dl):
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
        f1 = macro_f1(model, valid_dl, device)
        print(f"epoch {epoch}: valid macro-F1 {f1:.4f}")
        if f1 > best:
            best = f1
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            torch.save({"model": model.state_dict(), "tags": tags}, args.out)


if __name__ == "__main__":
    main()
