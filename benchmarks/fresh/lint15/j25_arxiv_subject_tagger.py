import json
import re
from collections import Counter
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset


@dataclass
class Options:
    records: str = "data/arxiv_abstracts.jsonl"
    category_table: str = "data/arxiv_categories.tsv"
    vocab_size: int = 50000
    max_words: int = 250
    dim: int = 192
    batch: int = 64
    epochs: int = 6
    lr: float = 1e-3
    aux_weight: float = 0.5


def read_categories(path):
    table = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            number, name = line.rstrip("\n").split("\t")
            table[name] = int(number) - 1
    return table


class Abstracts(Dataset):
    def __init__(self, records, vocab, categories, max_words):
        self.items = []
        for rec in records:
            words = re.findall(r"[a-z]+", rec["abstract"].lower())[:max_words] or ["<unk>"]
            ids = torch.tensor([vocab.get(w, 1) for w in words])
            tags = torch.zeros(len(categories))
            tags[[categories[c] for c in rec["categories"] if c in categories]] = 1.0
            self.items.append((ids, tags, categories[rec["primary"]]))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def collate(batch):
    ids, tags, primary = zip(*batch)
    lengths = torch.tensor([len(x) for x in ids])
    return pad_sequence(ids, batch_first=True), lengths, torch.stack(tags), torch.tensor(primary)


class SubjectModel(nn.Module):
    def __init__(self, vocab_size, dim, n_categories):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.gru = nn.GRU(dim, dim, batch_first=True, bidirectional=True)
        self.attn = nn.Linear(2 * dim, 1)
        self.tags = nn.Linear(2 * dim, n_categories)
        self.primary = nn.Linear(2 * dim, n_categories)

    def forward(self, ids, lengths):
        packed = pack_padded_sequence(self.embed(ids), lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.gru(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=ids.shape[1])
        scores = self.attn(out).squeeze(-1).masked_fill(ids == 0, float("-inf"))
        pooled = (scores.softmax(dim=1).unsqueeze(-1) * out).sum(1)
        return self.tags(pooled), F.log_softmax(self.primary(pooled), dim=-1)


def evaluate(model, loader, threshold=0.5):
    model.eval()
    tp = fp = fn = hits = n = 0
    with torch.no_grad():
        for ids, lengths, tags, primary in loader:
            tag_logits, primary_logp = model(ids, lengths)
            pred = torch.sigmoid(tag_logits) > threshold
            truth = tags.bool()
            tp += (pred & truth).sum().item()
            fp += (pred & ~truth).sum().item()
            fn += (~pred & truth).sum().item()
            hits += (primary_logp.argmax(1) == primary).sum().item()
            n += len(primary)
    return 2 * tp / max(2 * tp + fp + fn, 1), hits / n


def main(opt=Options()):
    torch.manual_seed(0)
    categories = read_categories(opt.category_table)
    with open(opt.records, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh]
    records = [r for r in records if r["primary"] in categories]
    split = int(0.9 * len(records))
    counts = Counter(w for r in records[:split] for w in re.findall(r"[a-z]+", r["abstract"].lower()))
    vocab = {w: i + 2 for i, (w, _) in enumerate(counts.most_common(opt.vocab_size - 2))}
    train_set = Abstracts(records[:split], vocab, categories, opt.max_words)
    test_set = Abstracts(records[split:], vocab, categories, opt.max_words)
    train_loader = DataLoader(train_set, batch_size=opt.batch, shuffle=True, collate_fn=collate)
    test_loader = DataLoader(test_set, batch_size=256, collate_fn=collate)
    model = SubjectModel(len(vocab) + 2, opt.dim, len(categories))
    tag_loss = nn.BCEWithLogitsLoss()
    primary_loss = nn.NLLLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=opt.lr)
    for epoch in range(opt.epochs):
        model.train()
        for ids, lengths, tags, primary in train_loader:
            tag_logits, primary_logp = model(ids, lengths)
            loss = tag_loss(tag_logits, tags) + opt.aux_weight * primary_loss(primary_logp, primary)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 2.0)
            optimizer.step()
        f1, acc = evaluate(model, test_loader)
        print(f"epoch {epoch}: tag micro-F1 {f1:.3f} primary accuracy {acc:.3f}")
    torch.save({"model": model.state_dict(), "vocab": vocab, "categories": categories}, "arxiv_tagger.pt")


if __name__ == "__main__":
    main()
