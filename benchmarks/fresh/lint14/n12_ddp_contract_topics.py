import argparse
import os
import random
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

PAD = 0


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/contracts/tokenized.pt")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--seed", type=int, default=17)
    p.add_argument("--out", default="runs/contract_topics")
    return p.parse_args()


class TopicEncoder(nn.Module):
    def __init__(self, vocab, classes, d_model, layers, max_len=512):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model, padding_idx=PAD)
        self.pos = nn.Embedding(max_len, d_model)
        layer = nn.TransformerEncoderLayer(d_model, 8, 4 * d_model, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, classes)

    def forward(self, ids):
        pad = ids == PAD
        positions = torch.arange(ids.size(1), device=ids.device)
        h = self.encoder(self.tok(ids) + self.pos(positions), src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).to(h.dtype)
        pooled = (h * keep).sum(1) / keep.sum(1).clamp(min=1.0)
        return self.head(self.norm(pooled))


def build_loaders(path, batch_size, rank, world):
    blob = torch.load(path, weights_only=True)
    train = TensorDataset(blob["train_ids"], blob["train_labels"])
    valid = TensorDataset(blob["valid_ids"], blob["valid_labels"])
    train_sampler = DistributedSampler(train, num_replicas=world, rank=rank, shuffle=True, drop_last=True)
    valid_sampler = DistributedSampler(valid, num_replicas=world, rank=rank, shuffle=False)
    return (DataLoader(train, batch_size=batch_size, sampler=train_sampler, num_workers=2, pin_memory=True),
            DataLoader(valid, batch_size=batch_size * 2, sampler=valid_sampler, num_workers=2),
            int(blob["vocab_size"]), int(blob["num_classes"]))


class Trainer:
    def __init__(self, model, optimizer, scheduler, loaders, device, rank):
        self.model, self.optimizer, self.scheduler = model, optimizer, scheduler
        self.train_loader, self.valid_loader = loaders
        self.device, self.rank = device, rank

    def train_epoch(self):
        self.model.train()
        for ids, labels in self.train_loader:
            ids, labels = ids.to(self.device, non_blocking=True), labels.to(self.device, non_blocking=True)
            loss = F.cross_entropy(self.model(ids), labels)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.optimizer.step()
            self.scheduler.step()

    def validate(self):
        self.model.eval()
        stats = torch.zeros(3, device=self.device)
        with torch.no_grad():
            for ids, labels in self.valid_loader:
                ids, labels = ids.to(self.device), labels.to(self.device)
                logits = self.model(ids)
                stats[0] += F.cross_entropy(logits, labels, reduction="sum")
                stats[1] += (logits.argmax(1) == labels).sum()
                stats[2] += labels.numel()
        dist.all_reduce(stats)
        return (stats[0] / stats[2]).item(), (stats[1] / stats[2]).item()

    def fit(self, epochs, out):
        for epoch in range(epochs):
            self.train_epoch()
            loss, acc = self.validate()
            if self.rank == 0:
                print(f"epoch {epoch} valid loss {loss:.4f} acc {acc:.4f}")
                torch.save({"model": self.model.module.state_dict(), "epoch": epoch}, out / "last.pt")


def main():
    args = parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    random.seed(args.seed + rank)
    np.random.seed(args.seed + rank)
    torch.manual_seed(args.seed)
    train_loader, valid_loader, vocab, classes = build_loaders(args.data, args.batch_size, rank, world)
    model = TopicEncoder(vocab, classes, args.d_model, args.layers).to(device)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    total = args.epochs * len(train_loader)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 500) * max(0.0, 1 - s / total))
    out = Path(args.out)
    if rank == 0:
        out.mkdir(parents=True, exist_ok=True)
    Trainer(model, optimizer, scheduler, (train_loader, valid_loader), device, rank).fit(args.epochs, out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
