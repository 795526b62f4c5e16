import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def read_triples(path, entities, relations, grow=True):
    rows = []
    with open(path) as f:
        for line in f:
            h, r, t = line.strip().split("\t")
            for name, table in ((h, entities), (t, entities), (r, relations)):
                if name not in table and grow:
                    table[name] = len(table)
            if h in entities and t in entities and r in relations:
                rows.append((entities[h], relations[r], entities[t]))
    return torch.tensor(rows, dtype=torch.long)


class RotatE(nn.Module):
    def __init__(self, n_entities, n_relations, dim=200, gamma=9.0):
        super().__init__()
        self.gamma = gamma
        bound = (gamma + 2.0) / dim
        self.entity = nn.Parameter(torch.empty(n_entities, 2 * dim).uniform_(-bound, bound))
        self.phase = nn.Parameter(torch.empty(n_relations, dim).uniform_(-math.pi, math.pi))

    def score(self, h, r, t):
        hr, hi = self.entity[h].chunk(2, dim=-1)
        tr, ti = self.entity[t].chunk(2, dim=-1)
        cos, sin = torch.cos(self.phase[r]), torch.sin(self.phase[r])
        dr, di = hr * cos - hi * sin - tr, hr * sin + hi * cos - ti
        return self.gamma - torch.sqrt(dr ** 2 + di ** 2 + 1e-9).sum(dim=-1)


def self_adversarial_loss(model, batch, n_entities, k, temperature=1.0):
    h, r, t = batch.unbind(1)
    pos = model.score(h, r, t)
    corrupt = torch.randint(0, n_entities, (len(batch), k), device=batch.device)
    neg = model.score(h[:, None], r[:, None], corrupt)
    weights = F.softmax(neg.detach() * temperature, dim=1)
    return -(F.logsigmoid(pos).mean() + (weights * F.logsigmoid(-neg)).sum(dim=1).mean()) / 2


@torch.no_grad()
def mrr(model, triples, n_entities, chunk=64):
    ranks = []
    all_tails = torch.arange(n_entities, device=triples.device)
    for batch in triples.split(chunk):
        h, r, t = batch.unbind(1)
        scores = model.score(h[:, None], r[:, None], all_tails[None, :])
        true = scores.gather(1, t[:, None])
        ranks.append((scores > true).sum(dim=1) + 1)
    return (1.0 / torch.cat(ranks).float()).mean().item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--train", default="data/fb15k237/train.txt")
    p.add_argument("--valid", default="data/fb15k237/valid.txt")
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--negatives", type=int, default=128)
    p.add_argument("--lr", type=float, default=5e-4)
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    entities, relations = {}, {}
    train_triples = read_triples(args.train, entities, relations)
    valid_triples = read_triples(args.valid, entities, relations, grow=False).to(device)
    loader = DataLoader(TensorDataset(train_triples), batch_size=1024, shuffle=True)
    model = RotatE(len(entities), len(relations)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        model.train()
        total, n = 0.0, 0
        optimizer.zero_grad()
        for (batch,) in loader:
            batch = batch.to(device)
            loss = self_adversarial_loss(model, batch, len(entities), args.negatives)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(batch)
            n += len(batch)
        if epoch % 10 == 9:
            print(f"epoch {epoch}: loss {total / n:.4f} valid MRR {mrr(model, valid_triples, len(entities)):.4f}")
    torch.save({"model": model.state_dict(), "entities": entities, "relations": relations}, "rotate_fb15k237.pt")


if __name__ == "__main__":
    main()
