import argparse
import csv
import math

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

AMINO = "ACDEFGHIKLMNPQRSTVWY"
PAD, SEP = 0, 1
VOCAB = {a: i + 2 for i, a in enumerate(AMINO)}
DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


class PairedCDRs(Dataset):
    def __init__(self, path, max_len=96):
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        self.items = []
        for r in rows:
            ids = [VOCAB[a] for a in r["heavy_cdr3"]] + [SEP] + [VOCAB[a] for a in r["light_cdr3"]]
            self.items.append((ids[:max_len], -math.log10(float(r["kd_molar"]))))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def collate(batch):
    longest = max(len(ids) for ids, _ in batch)
    tokens = torch.full((len(batch), longest), PAD, dtype=torch.long)
    for row, (ids, _) in enumerate(batch):
        tokens[row, : len(ids)] = torch.tensor(ids)
    return tokens, torch.tensor([y for _, y in batch])


class AffinityModel(nn.Module):
    def __init__(self, dim=128, heads=8, layers=4, max_len=96):
        super().__init__()
        self.embed = nn.Embedding(len(VOCAB) + 2, dim, padding_idx=PAD)
        self.pos = nn.Parameter(torch.zeros(1, max_len, dim))
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.1, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, 1))

    def forward(self, tokens):
        pad = tokens == PAD
        h = self.encoder(self.embed(tokens) + self.pos[:, : tokens.size(1)], src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).to(h.dtype)
        pooled = (h * keep).sum(1) / keep.sum(1)
        return self.head(pooled).squeeze(-1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--train", default="data/sabdab_train.csv")
    p.add_argument("--val", default="data/sabdab_val.csv")
    p.add_argument("--precision", choices=sorted(DTYPES), default="fp16")
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--lr", type=float, default=1e-4)
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dtype = DTYPES[args.precision]

    train = DataLoader(PairedCDRs(args.train), batch_size=64, shuffle=True, collate_fn=collate)
    val = DataLoader(PairedCDRs(args.val), batch_size=256, collate_fn=collate)
    model = AffinityModel().to(device=device, dtype=dtype)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        model.train()
        for tokens, target in train:
            tokens, target = tokens.to(device), target.to(device, dtype)
            loss = nn.functional.mse_loss(model(tokens), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        sq_err, n = 0.0, 0
        with torch.no_grad():
            for tokens, target in val:
                pred = model(tokens.to(device)).float().cpu()
                sq_err += ((pred - target) ** 2).sum().item()
                n += len(target)
        print(f"epoch {epoch}: val RMSE {math.sqrt(sq_err / n):.3f} pKd")
    torch.save(model.state_dict(), f"affinity_{args.precision}.pt")


if __name__ == "__main__":
    main()
