import argparse
import json

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

TAGS = ["iambic", "trochaic", "anapestic", "dactylic", "feminine_ending", "caesura"]
ALPHABET = "abcdefghijklmnopqrstuvwxyz '-,;:.!?"
MAX_CHARS = 80


def encode_line(text):
    ids = [ALPHABET.find(c) + 1 for c in text.lower()[:MAX_CHARS]]
    return ids + [0] * (MAX_CHARS - len(ids))


class VerseLines(Dataset):
    def __init__(self, path):
        with open(path) as f:
            self.rows = [json.loads(line) for line in f]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        row = self.rows[i]
        target = torch.zeros(len(TAGS))
        target[[TAGS.index(t) for t in row["tags"]]] = 1.0
        return torch.tensor(encode_line(row["text"])), target


class CharEncoder(nn.Module):
    def __init__(self, dim=64, width=256):
        super().__init__()
        self.embed = nn.Embedding(len(ALPHABET) + 1, dim, padding_idx=0)
        self.convs = nn.Sequential(
            nn.Conv1d(dim, width, 5, padding=2), nn.ReLU(),
            nn.Conv1d(width, width, 5, padding=4, dilation=2), nn.ReLU(),
            nn.Conv1d(width, width, 5, padding=8, dilation=4), nn.ReLU(),
        )
        self.out_dim = width

    def forward(self, ids):
        return self.convs(self.embed(ids).transpose(1, 2))


class MeterTagger(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Sequential(nn.Linear(2 * encoder.out_dim, 128), nn.ReLU(), nn.Linear(128, len(TAGS)))

    def forward(self, ids):
        h = self.encoder(ids)
        mask = (ids > 0).unsqueeze(1)
        mean = (h * mask).sum(-1) / mask.sum(-1).clamp(min=1)
        peak = h.masked_fill(~mask, float("-inf")).amax(-1)
        return self.head(torch.cat([mean, peak], dim=1))

    @torch.no_grad()
    def predict(self, ids, threshold=0.5):
        return torch.sigmoid(self(ids)) > threshold


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--train", default="data/prosody/train.jsonl")
    p.add_argument("--dev", default="data/prosody/dev.jsonl")
    p.add_argument("--encoder", default="checkpoints/char_encoder_gutenberg.pt")
    p.add_argument("--epochs", type=int, default=15)
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    encoder = CharEncoder()
    encoder.load_state_dict(torch.load(args.encoder, map_location="cpu", weights_only=True))
    encoder.requires_grad_(False)
    model = MeterTagger(encoder).to(device)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3, weight_decay=0.0)
    criterion = nn.BCEWithLogitsLoss()
    train = DataLoader(VerseLines(args.train), batch_size=128, shuffle=True)
    dev = DataLoader(VerseLines(args.dev), batch_size=256)

    for epoch in range(args.epochs):
        model.train()
        model.encoder.eval()
        for ids, target in train:
            ids, target = ids.to(device), target.to(device)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
                logits = model(ids)
            loss = criterion(logits.float(), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        tp = fp = fn = 0
        for ids, target in dev:
            pred, gold = model.predict(ids.to(device)).cpu(), target.bool()
            tp += (pred & gold).sum().item()
            fp += (pred & ~gold).sum().item()
            fn += (~pred & gold).sum().item()
        print(f"epoch {epoch}: dev micro-F1 {2 * tp / max(2 * tp + fp + fn, 1):.3f}")
    torch.save(model.head.state_dict(), "meter_head.pt")


if __name__ == "__main__":
    main()
