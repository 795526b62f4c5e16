import argparse
import json
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

TAGS = ["vegetarian", "vegan", "gluten_free", "spicy", "dessert", "quick", "one_pot", "high_protein", "kid_friendly"]


def build_vocab(recipes, min_count=3):
    counts = {}
    for r in recipes:
        for ing in r["ingredients"]:
            counts[ing] = counts.get(ing, 0) + 1
    kept = sorted(k for k, c in counts.items() if c >= min_count)
    return {ing: i + 1 for i, ing in enumerate(kept)}


def make_collate(vocab):
    def collate(batch):
        ids, offsets, targets = [], [], torch.zeros(len(batch), len(TAGS))
        for row, recipe in enumerate(batch):
            offsets.append(len(ids))
            ids.extend(vocab.get(ing, 0) for ing in recipe["ingredients"])
            for tag in recipe["tags"]:
                targets[row, TAGS.index(tag)] = 1.0
        return torch.tensor(ids), torch.tensor(offsets), targets
    return collate


class IngredientTagger(nn.Module):
    def __init__(self, vocab_size, dim=128):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab_size + 1, dim, mode="mean", padding_idx=0)
        self.mlp = nn.Sequential(nn.Linear(dim, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, len(TAGS)))

    def forward(self, ids, offsets):
        return self.mlp(self.bag(ids, offsets))


def tag_f1(model, loader, threshold=0.5):
    model.eval()
    tp = fp = fn = 0.0
    with torch.no_grad():
        for ids, offsets, targets in loader:
            pred = (model(ids, offsets).sigmoid() > threshold).float()
            tp += (pred * targets).sum().item()
            fp += (pred * (1 - targets)).sum().item()
            fn += ((1 - pred) * targets).sum().item()
    return 2 * tp / max(2 * tp + fp + fn, 1.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--recipes", type=Path, default=Path("data/recipes/recipes.json"))
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--lr", type=float, default=3e-3)
    args = ap.parse_args()

    torch.manual_seed(9)
    recipes = json.loads(args.recipes.read_text())
    train = [r for r in recipes if r["split"] == "train"]
    val = [r for r in recipes if r["split"] == "val"]
    vocab = build_vocab(train)
    collate = make_collate(vocab)
    train_dl = DataLoader(train, batch_size=128, shuffle=True, collate_fn=collate)
    val_dl = DataLoader(val, batch_size=512, collate_fn=collate)

    model = IngredientTagger(len(vocab))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        total, n = 0.0, 0
        for ids, offsets, targets in train_dl:
            logits = model(ids, offsets)
            loss = F.cross_entropy(logits, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(targets)
            n += len(targets)
        print(f"epoch {epoch} train loss {total / n:.4f} val micro-F1 {tag_f1(model, val_dl):.3f}")
    torch.save({"model": model.state_dict(), "vocab": vocab, "tags": TAGS}, "recipe_tagger.pt")


if __name__ == "__main__":
    main()
