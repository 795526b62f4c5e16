"""AG News topic classification (World / Sports / Business / Sci-Tech) with a bag-of-ngrams
EmbeddingBag model, multi-GPU.

    torchrun --nproc_per_node=2 q10_ddp_news_topic.py --train data/ag_news/train.csv --test data/ag_news/test.csv
"""
import argparse
import os
import re
from collections import Counter

import pandas as pd
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

TOKEN = re.compile(r"[a-z0-9']+")


def tokenize(text):
    words = TOKEN.findall(text.lower())
    return words + [a + " " + b for a, b in zip(words, words[1:])]


def build_vocab(texts, min_freq=3, max_size=200_000):
    counts = Counter(tok for t in texts for tok in tokenize(t))
    itos = ["<unk>"] + [w for w, c in counts.most_common(max_size) if c >= min_freq]
    return {w: i for i, w in enumerate(itos)}


class NewsDataset(Dataset):
    def __init__(self, csv_path):
        df = pd.read_csv(csv_path, header=None, names=["label", "title", "description"])
        self.texts = (df["title"] + " " + df["description"]).tolist()
        self.labels = (df["label"] - 1).tolist()

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, i):
        return self.texts[i], self.labels[i]


def make_collate(vocab):
    def collate(batch):
        ids, offsets, labels = [], [0], []
        for text, label in batch:
            toks = [vocab.get(t, 0) for t in tokenize(text)] or [0]
            ids.extend(toks)
            offsets.append(offsets[-1] + len(toks))
            labels.append(label)
        return torch.tensor(ids), torch.tensor(offsets[:-1]), torch.tensor(labels)
    return collate


class TopicClassifier(nn.Module):
    def __init__(self, vocab_size, dim, n_classes):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, dim, mode="mean")
        self.fc = nn.Linear(dim, n_classes)
        nn.init.uniform_(self.embedding.weight, -0.5, 0.5)
        nn.init.zeros_(self.fc.bias)

    def forward(self, ids, offsets):
        return self.fc(self.embedding(ids, offsets))


def init_distributed():
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        device = torch.device(f"cuda:{local_rank}")
    else:
        device = torch.device("cpu")
    return rank, world, device


def global_mean(total, count, device):
    t = torch.tensor([total, count], dtype=torch.float64, device=device)
    dist.all_reduce(t)
    return (t[0] / t[1]).item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--train", default="data/ag_news/train.csv")
    p.add_argument("--test", default="data/ag_news/test.csv")
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=4.0)
    args = p.parse_args()

    rank, world, device = init_distributed()
    torch.manual_seed(0)
    train_ds, test_ds = NewsDataset(args.train), NewsDataset(args.test)
    vocab = build_vocab(train_ds.texts)
    collate = make_collate(vocab)
    sampler = DistributedSampler(train_ds, num_replicas=world, rank=rank, shuffle=True)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, sampler=sampler, collate_fn=collate, num_workers=2)
    test_dl = DataLoader(test_ds, batch_size=256, sampler=DistributedSampler(test_ds, shuffle=False),
                         collate_fn=collate)

    model = TopicClassifier(len(vocab), args.dim, 4).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    if rank == 0:
        print(f"world={world} vocab={len(vocab):,} train={len(train_ds):,}")

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        loss_sum, n = 0.0, 0
        for ids, offsets, labels in train_dl:
            ids, offsets, labels = ids.to(device), offsets.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(ids, offsets), labels)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            optimizer.step()
            loss_sum += loss.item() * labels.numel()
            n += labels.numel()
        scheduler.step()
        train_loss = global_mean(loss_sum, n, device)

        model.eval()
        correct, seen = 0, 0
        with torch.no_grad():
            for ids, offsets, labels in test_dl:
                pred = model(ids.to(device), offsets.to(device)).argmax(1)
                correct += (pred == labels.to(device)).sum().item()
                seen += labels.numel()
        test_acc = global_mean(correct, seen, device)
        if rank == 0:
            print(f"epoch {epoch + 1} loss {train_loss:.4f} test acc {test_acc:.4f}")
            torch.save({"model": model.state_dict(), "vocab": vocab}, "agnews_bag.pt")
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
