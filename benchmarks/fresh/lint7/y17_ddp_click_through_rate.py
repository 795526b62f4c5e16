"""DeepFM click-through-rate model on Criteo-style logs, data-parallel over several GPUs.

    torchrun --nproc_per_node 4 y17_ddp_click_through_rate.py --train data/criteo_day0.parquet
"""
import argparse
import os

import numpy as np
import pandas as pd
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score
from torch.utils.data import DataLoader, Dataset, DistributedSampler

DENSE = [f"I{i}" for i in range(1, 14)]
SPARSE = [f"C{i}" for i in range(1, 27)]


class CriteoFrame(Dataset):
    def __init__(self, path, buckets):
        df = pd.read_parquet(path)
        self.dense = torch.from_numpy(np.log1p(df[DENSE].fillna(0).clip(lower=0).to_numpy(np.float32)))
        hashed = [pd.util.hash_array(df[c].fillna("").astype(str).to_numpy()) % buckets for c in SPARSE]
        self.sparse = torch.from_numpy(np.stack(hashed, axis=1).astype(np.int64))
        self.label = torch.from_numpy(df["label"].to_numpy(np.float32))

    def __len__(self):
        return len(self.label)

    def __getitem__(self, i):
        return self.dense[i], self.sparse[i], self.label[i]


class DeepFM(nn.Module):
    def __init__(self, buckets, n_fields=len(SPARSE), n_dense=len(DENSE), k=16):
        super().__init__()
        self.emb = nn.Embedding(buckets * n_fields, k)
        self.lin = nn.Embedding(buckets * n_fields, 1)
        self.dense_proj = nn.Linear(n_dense, k)
        self.register_buffer("offsets", torch.arange(n_fields) * buckets)
        self.mlp = nn.Sequential(nn.Linear((n_fields + 1) * k, 400), nn.ReLU(), nn.Linear(400, 400), nn.ReLU(),
                                 nn.Linear(400, 1))
        nn.init.normal_(self.emb.weight, std=1e-3)
        nn.init.zeros_(self.lin.weight)

    def forward(self, dense, sparse):
        idx = sparse + self.offsets
        v = torch.cat([self.emb(idx), self.dense_proj(dense).unsqueeze(1)], dim=1)
        fm = 0.5 * (v.sum(1).pow(2) - v.pow(2).sum(1)).sum(1)
        first = self.lin(idx).sum(dim=(1, 2))
        return first + fm + self.mlp(v.flatten(1)).squeeze(-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/criteo_day0.parquet")
    ap.add_argument("--valid", default="data/criteo_day1_sample.parquet")
    ap.add_argument("--buckets", type=int, default=100_000)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()

    dist.init_process_group(backend="nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device(f"cuda:{local_rank}")
    torch.manual_seed(1234)

    train_ds = CriteoFrame(args.train, args.buckets)
    sampler = DistributedSampler(train_ds, num_replicas=world, rank=rank, shuffle=True)
    loader = DataLoader(train_ds, batch_size=args.batch, sampler=sampler, num_workers=4, pin_memory=True)

    model = DeepFM(args.buckets).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for step, (dense, sparse, label) in enumerate(loader):
            dense, sparse, label = dense.to(device), sparse.to(device), label.to(device)
            loss = F.binary_cross_entropy_with_logits(model(dense, sparse), label)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            if rank == 0 and step % 200 == 0:
                print(f"epoch {epoch} step {step} logloss {loss.item():.5f}", flush=True)

    if rank == 0:
        valid = CriteoFrame(args.valid, args.buckets)
        model.eval()
        scores = []
        with torch.no_grad():
            for dense, sparse, _ in DataLoader(valid, batch_size=16384):
                scores.append(torch.sigmoid(model(dense.to(device), sparse.to(device))).cpu())
        auc = roc_auc_score(valid.label.numpy(), torch.cat(scores).numpy())
        print(f"valid AUC {auc:.4f}")
        torch.save(model.state_dict(), "deepfm_criteo.pt")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
