import argparse
import hashlib
import json
import math
import re
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

TOKEN = re.compile(r"[a-z0-9]+")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--catalogue", default="data/shop/items.jsonl")
    p.add_argument("--checkpoint", default="runs/two_tower/best.pt")
    p.add_argument("--out", default="serving/item_vectors")
    p.add_argument("--batch-size", type=int, default=2048)
    return p.parse_args()


def hash_tokens(text, buckets):
    ids = []
    for tok in TOKEN.findall(text.lower()):
        digest = hashlib.md5(tok.encode()).hexdigest()
        ids.append(int(digest[:8], 16) % buckets)
    return ids or [0]


class ItemTower(nn.Module):
    def __init__(self, n_categories, n_brands, buckets, dim):
        super().__init__()
        self.category = nn.Embedding(n_categories, 32)
        self.brand = nn.Embedding(n_brands, 32)
        self.title = nn.EmbeddingBag(buckets, 64, mode="mean")
        self.price = nn.Linear(1, 8)
        self.mlp = nn.Sequential(nn.Linear(32 + 32 + 64 + 8, 256), nn.ReLU(), nn.Linear(256, dim))

    def forward(self, category, brand, tokens, offsets, log_price):
        parts = [self.category(category), self.brand(brand), self.title(tokens, offsets),
                 self.price(log_price.unsqueeze(1))]
        return F.normalize(self.mlp(torch.cat(parts, dim=1)), dim=1)


def read_catalogue(path, vocab, buckets):
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    items = []
    for row in rows:
        items.append({
            "id": str(row["item_id"]),
            "category": vocab["category"].get(row.get("category", ""), 0),
            "brand": vocab["brand"].get(row.get("brand", ""), 0),
            "tokens": hash_tokens(row.get("title", ""), buckets),
            "log_price": math.log1p(max(float(row.get("price", 0.0)), 0.0)),
        })
    return items


def to_batch(chunk, device):
    tokens, offsets = [], []
    for it in chunk:
        offsets.append(len(tokens))
        tokens.extend(it["tokens"])
    return (
        torch.tensor([it["category"] for it in chunk], device=device),
        torch.tensor([it["brand"] for it in chunk], device=device),
        torch.tensor(tokens, device=device),
        torch.tensor(offsets, device=device),
        torch.tensor([it["log_price"] for it in chunk], device=device),
    )


def embed_all(tower, items, batch_size, device):
    chunks = []
    with torch.inference_mode():
        for start in range(0, len(items), batch_size):
            chunks.append(tower(*to_batch(items[start:start + batch_size], device)).cpu())
    return torch.cat(chunks)


def write_item_files(vectors, ids, folder):
    folder.mkdir(parents=True, exist_ok=True)
    for row, item_id in enumerate(ids):
        torch.save(vectors[row], folder / f"{item_id}.pt")


def write_manifest(vectors, ids, folder, meta):
    manifest = {"count": len(ids), "dim": vectors.size(1), "ids": ids, **meta}
    (folder / "manifest.json").write_text(json.dumps(manifest))


def main():
    args = parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    ckpt = torch.load(args.checkpoint, map_location="cpu", weights_only=True)
    hp = ckpt["hparams"]
    tower = ItemTower(hp["n_categories"], hp["n_brands"], hp["buckets"], hp["dim"])
    tower.load_state_dict(ckpt["item_tower"])
    tower.to(device).eval()
    items = read_catalogue(args.catalogue, ckpt["vocab"], hp["buckets"])
    vectors = embed_all(tower, items, args.batch_size, device)
    ids = [it["id"] for it in items]
    out = Path(args.out)
    write_item_files(vectors, ids, out / "by_id")
    torch.save(vectors, out / "all_vectors.pt")
    write_manifest(vectors, ids, out, {"checkpoint": args.checkpoint, "step": ckpt.get("step", -1)})
    norms = vectors.norm(dim=1)
    print(f"exported {len(ids)} items, dim {vectors.size(1)}, norm range {norms.min():.4f}-{norms.max():.4f}")


if __name__ == "__main__":
    main()
