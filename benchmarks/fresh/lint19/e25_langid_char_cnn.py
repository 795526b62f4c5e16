import argparse
import json
import sys
from collections import Counter

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader


class CharVocab:
    def __init__(self, texts, max_size=3000):
        counts = Counter(ch for t in texts for ch in t)
        self.itos = ["<pad>", "<unk>"] + [c for c, _ in counts.most_common(max_size)]
        self.stoi = {c: i for i, c in enumerate(self.itos)}

    def encode(self, text, length=120):
        ids = [self.stoi.get(c, 1) for c in text[:length]]
        return ids + [0] * (length - len(ids))

    def __len__(self):
        return len(self.itos)


class LangIdCNN(nn.Module):
    def __init__(self, vocab_size, n_langs, dim=64, channels=192):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.conv = nn.Sequential(nn.Conv1d(dim, channels, 5, padding=2), nn.ReLU(),
                                  nn.Conv1d(channels, channels, 5, padding=2), nn.ReLU())
        self.fc = nn.Linear(channels, n_langs)

    def forward(self, ids):
        h = self.conv(self.emb(ids).transpose(1, 2))
        mask = (ids != 0).unsqueeze(1)
        return self.fc(h.masked_fill(~mask, float("-inf")).amax(dim=2))


def train(args):
    with open(args.data, encoding="utf8") as f:
        samples = [json.loads(line) for line in f]
    langs = sorted({s["lang"] for s in samples})
    vocab = CharVocab([s["text"] for s in samples])
    pairs = [(torch.tensor(vocab.encode(s["text"])), langs.index(s["lang"])) for s in samples]
    loader = DataLoader(pairs, batch_size=256, shuffle=True)
    model = LangIdCNN(len(vocab), len(langs))
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    for epoch in range(args.epochs):
        model.train()
        hits = n = 0
        for ids, y in loader:
            logits = model(ids)
            loss = F.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            hits += (logits.argmax(1) == y).sum().item()
            n += len(y)
        print(f"epoch {epoch} train accuracy {hits / n:.4f}")
    torch.save({"model": model.state_dict(), "vocab": vocab, "langs": langs}, args.ckpt)


def load_for_inference(path):
    ckpt = torch.load(path, map_location="cpu")
    model = LangIdCNN(len(ckpt["vocab"]), len(ckpt["langs"]))
    model.load_state_dict(ckpt["model"])
    model.eval()
    return model, ckpt["vocab"], ckpt["langs"]


@torch.no_grad()
def identify(model, vocab, langs, lines):
    ids = torch.tensor([vocab.encode(line) for line in lines])
    probs = F.softmax(model(ids), dim=1)
    conf, idx = probs.max(1)
    return [(langs[i], c) for i, c in zip(idx.tolist(), conf.tolist())]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["train", "predict"])
    ap.add_argument("--data", default="data/langid/train.jsonl")
    ap.add_argument("--ckpt", default="langid_cnn.pt")
    ap.add_argument("--epochs", type=int, default=5)
    args = ap.parse_args()
    torch.manual_seed(25)
    if args.mode == "train":
        train(args)
    else:
        model, vocab, langs = load_for_inference(args.ckpt)
        lines = [line.rstrip("\n") for line in sys.stdin if line.strip()]
        for line, (lang, conf) in zip(lines, identify(model, vocab, langs, lines)):
            print(f"{lang}\t{conf:.3f}\t{line[:60]}")


if __name__ == "__main__":
    main()
