"""Click-through-rate model (wide & deep) trained with DDP; launch with torchrun --nproc-per-node=N."""
import argparse
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class ClickLog(Dataset):
    def __init__(self, path):
        arrays = np.load(path)
        self.dense = np.log1p(np.maximum(arrays["dense"], 0)).astype(np.float32)
        self.sparse = arrays["sparse"].astype(np.int64)  # already offset into one shared table
        self.label = arrays["label"].astype(np.float32)

    def __len__(self):
        return len(self.label)

    def __getitem__(self, i):
        return torch.as_tensor(self.dense[i]), torch.as_tensor(self.sparse[i]), torch.as_tensor(self.label[i])


class WideDeep(nn.Module):
    def __init__(self, n_dense, n_fields, table_size, dim=16):
        super().__init__()
        self.embedding = nn.Embedding(table_size, dim)
        self.wide = nn.Embedding(table_size, 1)
        self.deep = nn.Sequential(
            nn.Linear(n_dense + n_fields * dim, 400), nn.ReLU(),
            nn.Linear(400, 400), nn.ReLU(), nn.Linear(400, 1),
        )
        self.dense_wide = nn.Linear(n_dense, 1)

    def forward(self, dense, sparse):
        emb = self.embedding(sparse).flatten(1)
        deep = self.deep(torch.cat([dense, emb], dim=1))
        wide = self.wide(sparse).sum(dim=1) + self.dense_wide(dense)
        return (deep + wide).squeeze(-1)  # logits


@torch.no_grad()
def validate(model, loader, device):
    model.eval()
    scores, labels = [], []
    for dense, sparse, label in loader:
        logits = model(dense.to(device), sparse.to(device))
        scores.append(torch.sigmoid(logits).float().cpu())
        labels.append(label)
    return roc_auc_score(torch.cat(labels).numpy(), torch.cat(scores).numpy())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/ctr_train.npz")
    ap.add_argument("--valid", default="data/ctr_valid.npz")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--table-size", type=int, default=2_000_000)
    args = ap.parse_args()

    dist.init_process_group("nccl")
    rank, local_rank = dist.get_rank(), int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    torch.manual_seed(0)

    train_set = ClickLog(args.train)
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=args.batch, sampler=sampler, num_workers=6, pin_memory=True)
    n_dense, n_fields = train_set.dense.shape[1], train_set.sparse.shape[1]

    model = DDP(WideDeep(n_dense, n_fields, args.table_size).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scaler = torch.cuda.amp.GradScaler()

    for epoch in range(args.epochs):
        model.train()
        loss_sum, seen = 0.0, 0
        for dense, sparse, label in loader:
            dense, sparse, label = (t.to(device, non_blocking=True) for t in (dense, sparse, label))
            with torch.autocast("cuda", dtype=torch.float16):
                logits = model(dense, sparse)
            loss = F.binary_cross_entropy_with_logits(logits.float(), label)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            loss_sum += loss.item() * label.size(0)
            seen += label.size(0)
        if rank == 0:
            val_loader = DataLoader(ClickLog(args.valid), batch_size=16384, num_workers=4)
            auc = validate(model.module, val_loader, device)
            print(f"epoch {epoch} train logloss {loss_sum / seen:.5f} valid auc {auc:.4f}", flush=True)
            torch.save(model.module.state_dict(), f"widedeep_epoch{epoch}.pt")
        dist.barrier()

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
