"""News-topic classification (AG News-style, 4 classes) with a fastText-like EmbeddingBag model,
trained data-parallel across the GPUs of one node.

    torchrun --nproc_per_node 8 s26_ddp_news_classifier.py --data data/agnews_tok.pt
The data file holds pre-tokenised id tensors: {"train": [(label, ids), ...], "test": [...], "vocab_size": V}.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def collate(batch):
    labels = torch.tensor([label for label, _ in batch], dtype=torch.long)
    lengths = torch.tensor([len(ids) for _, ids in batch])
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
    return labels, torch.cat([ids for _, ids in batch]), offsets


class BagOfNgrams(nn.Module):
    def __init__(self, vocab_size, dim, n_classes):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, dim, mode="mean")
        self.fc = nn.Linear(dim, n_classes)
        nn.init.uniform_(self.embedding.weight, -0.5, 0.5)
        nn.init.zeros_(self.fc.bias)

    def forward(self, ids, offsets):
        return self.fc(self.embedding(ids, offsets))


def evaluate(model, loader, device):
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for labels, ids, offsets in loader:
            pred = model(ids.to(device), offsets.to(device)).argmax(1)
            correct += (pred == labels.to(device)).sum().item()
            total += labels.numel()
    return correct / total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/agnews_tok.pt")
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=4.0)
    ap.add_argument("--out", default="runs/agnews")
    args = ap.parse_args()

    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    torch.manual_seed(0)

    data = torch.load(args.data, weights_only=True)
    train_sampler = DistributedSampler(data["train"], shuffle=True)
    test_sampler = DistributedSampler(data["test"], shuffle=False)
    train_loader = DataLoader(data["train"], batch_size=args.batch_size, sampler=train_sampler, collate_fn=collate)
    test_loader = DataLoader(data["test"], batch_size=256, sampler=test_sampler, collate_fn=collate)

    model = DDP(BagOfNgrams(data["vocab_size"], args.dim, 4).to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.8)
    os.makedirs(args.out, exist_ok=True)

    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        model.train()
        t0, seen, loss_sum = time.time(), 0, 0.0
        for labels, ids, offsets in train_loader:
            labels, ids, offsets = labels.to(device), ids.to(device), offsets.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(ids, offsets), labels)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            optimizer.step()
            loss_sum += loss.item() * labels.size(0)
            seen += labels.size(0)
        scheduler.step()
        acc = evaluate(model, test_loader, device)
        print(f"epoch {epoch + 1:2d} | {time.time() - t0:5.1f}s | train loss {loss_sum / seen:.4f} | test acc {acc:.4f}")
        torch.save({"model": model.module.state_dict(), "epoch": epoch}, os.path.join(args.out, "checkpoint.pt"))

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
