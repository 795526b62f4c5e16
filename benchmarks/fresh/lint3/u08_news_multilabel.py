"""Reuters-21578 topic tagging: a small Transformer encoder over word pieces, 90 topics per article."""

import argparse
import json
import logging

import torch
import torch.nn as nn
from sklearn.metrics import f1_score
from tokenizers import Tokenizer
from torch.utils.data import DataLoader, Dataset

log = logging.getLogger("reuters")
MAX_LEN = 256


class Articles(Dataset):
    def __init__(self, path, tokenizer, topics):
        with open(path) as fh:
            self.rows = [json.loads(line) for line in fh]
        self.tok, self.topic_ids = tokenizer, {t: i for i, t in enumerate(topics)}

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        row = self.rows[i]
        ids = self.tok.encode(row["title"] + " . " + row["body"]).ids[:MAX_LEN]
        target = torch.zeros(len(self.topic_ids))
        target[[self.topic_ids[t] for t in row["topics"]]] = 1.0
        return torch.tensor(ids), target


def collate(batch, pad_id=0):
    seqs, targets = zip(*batch)
    length = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), length), pad_id, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = s
    return ids, ids != pad_id, torch.stack(targets)


class TopicTagger(nn.Module):
    def __init__(self, vocab, n_topics, d=256, heads=4, layers=3):
        super().__init__()
        self.tok = nn.Embedding(vocab, d, padding_idx=0)
        self.pos = nn.Embedding(MAX_LEN, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.out = nn.Linear(d, n_topics)

    def forward(self, ids, attention_mask):
        pos = torch.arange(ids.size(1), device=ids.device)
        h = self.encoder(self.tok(ids) + self.pos(pos))
        m = attention_mask.unsqueeze(-1).float()
        pooled = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
        return self.out(pooled)


def evaluate(model, loader, device, threshold=0.5):
    model.eval()
    preds, golds = [], []
    with torch.no_grad():
        for ids, mask, target in loader:
            logits = model(ids.to(device), mask.to(device))
            preds.append((torch.sigmoid(logits) > threshold).cpu())
            golds.append(target.bool())
    return f1_score(torch.cat(golds).numpy(), torch.cat(preds).numpy(), average="micro", zero_division=0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/reuters/train.jsonl")
    ap.add_argument("--test", default="data/reuters/test.jsonl")
    ap.add_argument("--tokenizer", default="data/reuters/wordpiece.json")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--lr", type=float, default=3e-4)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = "cuda" if torch.cuda.is_available() else "cpu"

    tokenizer = Tokenizer.from_file(args.tokenizer)
    with open("data/reuters/topics.txt") as fh:
        topics = fh.read().split()
    train_dl = DataLoader(Articles(args.train, tokenizer, topics), 32, shuffle=True, collate_fn=collate)
    test_dl = DataLoader(Articles(args.test, tokenizer, topics), 128, collate_fn=collate)

    model = TopicTagger(tokenizer.get_vocab_size(), len(topics)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        model.train()
        for step, (ids, mask, target) in enumerate(train_dl):
            ids, mask, target = ids.to(device), mask.to(device), target.to(device)
            loss = criterion(model(ids, mask), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 100 == 0:
                log.info("epoch %d step %d loss %.4f", epoch, step, loss.item())
        log.info("epoch %d micro-F1 %.4f", epoch, evaluate(model, test_dl, device))
    torch.save(model.state_dict(), "reuters_tagger.pt")


if __name__ == "__main__":
    main()
