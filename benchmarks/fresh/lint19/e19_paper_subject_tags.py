import argparse
import json
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

SUBJECTS = ["cs.LG", "cs.CV", "cs.CL", "stat.ML", "math.OC", "q-bio.QM", "physics.comp-ph", "eess.SP"]


class AbstractEncoder(nn.Module):
    def __init__(self, vocab_size, dim=256):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab_size, dim, mode="mean")
        self.proj = nn.Sequential(nn.Linear(dim, dim), nn.LayerNorm(dim), nn.GELU())

    def forward(self, ids, offsets):
        return self.proj(self.bag(ids, offsets))


class SubjectTagger(nn.Module):
    def __init__(self, vocab_size, dim=256):
        super().__init__()
        self.encoder = AbstractEncoder(vocab_size, dim)
        self.head = nn.Linear(dim, len(SUBJECTS))

    def forward(self, ids, offsets):
        return self.head(self.encoder(ids, offsets))


def collate(batch):
    ids, offsets, targets = [], [], torch.zeros(len(batch), len(SUBJECTS))
    for row, paper in enumerate(batch):
        offsets.append(len(ids))
        ids.extend(paper["token_ids"])
        targets[row, [SUBJECTS.index(s) for s in paper["subjects"]]] = 1.0
    return torch.tensor(ids), torch.tensor(offsets), targets


def load_pretrained_encoder(model, path):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    enc_state = {k.removeprefix("encoder."): v for k, v in ckpt["state_dict"].items() if k.startswith("encoder.")}
    model.encoder.load_state_dict(enc_state)
    print(f"encoder restored from {path}, pretraining step {ckpt['step']}")


@torch.no_grad()
def predict_subjects(model, ids, offsets, threshold=0.4):
    model.eval()
    probs = torch.sigmoid(model(ids, offsets))
    return [[SUBJECTS[j] for j in torch.nonzero(row > threshold).flatten().tolist()] for row in probs]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--papers", type=Path, default=Path("data/arxiv/papers.jsonl"))
    ap.add_argument("--pretrained", type=Path, default=Path("runs/arxiv_mlm/encoder.pt"))
    ap.add_argument("--vocab-size", type=int, default=50000)
    ap.add_argument("--epochs", type=int, default=8)
    args = ap.parse_args()

    torch.manual_seed(17)
    papers = [json.loads(line) for line in args.papers.read_text().splitlines()]
    train = [p for p in papers if p["year"] < 2023]
    val = [p for p in papers if p["year"] >= 2023]
    train_dl = DataLoader(train, batch_size=64, shuffle=True, collate_fn=collate)
    val_dl = DataLoader(val, batch_size=256, collate_fn=collate)

    model = SubjectTagger(args.vocab_size)
    load_pretrained_encoder(model, args.pretrained)
    optimizer = torch.optim.Adam([
        {"params": model.encoder.parameters(), "lr": 1e-4},
        {"params": model.head.parameters(), "lr": 1e-3},
    ])
    for epoch in range(args.epochs):
        model.train()
        for ids, offsets, targets in train_dl:
            loss = F.binary_cross_entropy_with_logits(model(ids, offsets), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        exact = total = 0
        for ids, offsets, targets in val_dl:
            predicted = predict_subjects(model, ids, offsets)
            truth = [[SUBJECTS[j] for j in torch.nonzero(row).flatten().tolist()] for row in targets]
            exact += sum(p == t for p, t in zip(predicted, truth))
            total += len(truth)
        print(f"epoch {epoch} exact-match {exact / total:.3f}")
    torch.save(model.state_dict(), "subject_tagger.pt")


if __name__ == "__main__":
    main()
