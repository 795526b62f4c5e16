"""Predict the star rating (1-5) of Amazon product reviews with a small Transformer encoder,
data-parallel over the GPUs of one node.

    python -m torch.distributed.launch --nproc_per_node=8 train_reviews.py \
        --train data/reviews/train.jsonl --valid data/reviews/valid.jsonl
"""
import argparse
import json
import re
from collections import Counter

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset, DistributedSampler

WORD = re.compile(r"\w+|[^\w\s]")
PAD, UNK = 0, 1


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", required=True)
    parser.add_argument("--valid", required=True)
    parser.add_argument("--max-len", type=int, default=256)
    parser.add_argument("--vocab-size", type=int, default=50000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--local_rank", type=int, default=0)
    return parser.parse_args()


def read_jsonl(path):
    with open(path) as f:
        return [(r["text"], int(r["stars"]) - 1) for r in map(json.loads, f)]


def build_vocab(texts, size):
    counts = Counter(w for t in texts for w in WORD.findall(t.lower()))
    return {w: i + 2 for i, (w, _) in enumerate(counts.most_common(size - 2))}


class Reviews(Dataset):
    def __init__(self, rows, vocab, max_len):
        self.rows, self.vocab, self.max_len = rows, vocab, max_len

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        text, label = self.rows[i]
        ids = [self.vocab.get(w, UNK) for w in WORD.findall(text.lower())][: self.max_len] or [UNK]
        return torch.tensor(ids), label


def collate(batch):
    ids = nn.utils.rnn.pad_sequence([b[0] for b in batch], batch_first=True, padding_value=PAD)
    return ids, torch.tensor([b[1] for b in batch])


class ReviewEncoder(nn.Module):
    def __init__(self, vocab_size, d_model=256, heads=4, layers=4, max_len=256, classes=5):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model, padding_idx=PAD)
        self.pos = nn.Embedding(max_len, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d_model, classes)

    def forward(self, ids):
        pad = ids == PAD
        h = self.tok(ids) + self.pos(torch.arange(ids.size(1), device=ids.device))
        h = self.encoder(h, src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).float()
        return self.head((h * keep).sum(1) / keep.sum(1))


def main():
    args = parse_args()
    dist.init_process_group("nccl", init_method="env://")
    torch.cuda.set_device(args.local_rank)
    device = torch.device("cuda", args.local_rank)
    rank = dist.get_rank()

    train_rows, valid_rows = read_jsonl(args.train), read_jsonl(args.valid)
    vocab = build_vocab([t for t, _ in train_rows], args.vocab_size)
    train_ds, valid_ds = Reviews(train_rows, vocab, args.max_len), Reviews(valid_rows, vocab, args.max_len)
    sampler = DistributedSampler(train_ds, shuffle=True, seed=17)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, sampler=sampler, collate_fn=collate,
                          num_workers=4, drop_last=True)
    valid_dl = DataLoader(valid_ds, batch_size=256, sampler=DistributedSampler(valid_ds, shuffle=False),
                          collate_fn=collate, num_workers=4)

    model = ReviewEncoder(args.vocab_size, max_len=args.max_len).to(device)
    model = DistributedDataParallel(model, device_ids=[args.local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    total = args.epochs * len(train_dl)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 1000) * max(0.0, 1 - s / total))

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for step, (ids, labels) in enumerate(train_dl):
            ids, labels = ids.to(device), labels.to(device)
            loss = F.cross_entropy(model(ids), labels)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            if rank == 0 and step % 200 == 0:
                print(f"epoch {epoch} step {step}/{len(train_dl)} loss {loss.item():.4f}")

        model.eval()
        counts = torch.zeros(2, device=device)
        with torch.no_grad():
            for ids, labels in valid_dl:
                pred = model(ids.to(device)).argmax(1)
                counts += torch.stack([(pred == labels.to(device)).sum(), torch.tensor(len(labels), device=device)])
        dist.all_reduce(counts)
        if rank == 0:
            print(f"epoch {epoch}: valid accuracy {(counts[0] / counts[1]).item():.4f}")
            torch.save(model.module.state_dict(), "review_encoder.pt")
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
