"""Day-ahead wind power forecasting for 134 turbines, trained with DDP.

Launch: torchrun --nproc_per_node=4 u18_wind_power_ddp.py --data data/sdwpf.parquet
"""

import argparse
import logging
import os

import pandas as pd
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

log = logging.getLogger("wind")
FEATURES = ["Wspd", "Wdir", "Etmp", "Itmp", "Ndir", "Pab1", "Prtv", "Patv"]
IN_LEN, OUT_LEN = 144, 288  # one day of 10-minute steps in, two days out


def make_windows(df, stride=36):
    xs, ys = [], []
    for _, g in df.groupby("TurbID"):
        v = torch.tensor(g[FEATURES].to_numpy(), dtype=torch.float32)
        for s in range(0, len(v) - IN_LEN - OUT_LEN, stride):
            xs.append(v[s : s + IN_LEN])
            ys.append(v[s + IN_LEN : s + IN_LEN + OUT_LEN, -1])
    return torch.stack(xs), torch.stack(ys)


class GRUForecaster(nn.Module):
    def __init__(self, n_in, hidden=256, out_len=OUT_LEN):
        super().__init__()
        self.gru = nn.GRU(n_in, hidden, num_layers=2, batch_first=True, dropout=0.1)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, out_len))

    def forward(self, x):
        _, h = self.gru(x)
        return self.head(h[-1])


def rmse(model, loader, device):
    model.eval()
    se, n = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            se += ((model(x) - y) ** 2).sum().item()
            n += y.numel()
    model.train()
    return (se / n) ** 0.5


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/sdwpf.parquet")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--bs", type=int, default=128)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--out", default="runs/wind")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    os.makedirs(args.out, exist_ok=True)

    df = pd.read_parquet(args.data).fillna(0.0)
    cut = df["Day"].quantile(0.8)
    stats = df.loc[df["Day"] <= cut, FEATURES].agg(["mean", "std"])
    df[FEATURES] = (df[FEATURES] - stats.loc["mean"]) / stats.loc["std"]
    train_ds = TensorDataset(*make_windows(df[df["Day"] <= cut]))
    val_ds = TensorDataset(*make_windows(df[df["Day"] > cut], stride=OUT_LEN))
    sampler = DistributedSampler(train_ds, shuffle=True)
    train_dl = DataLoader(train_ds, args.bs, sampler=sampler, num_workers=4, pin_memory=True)
    val_dl = DataLoader(val_ds, 512)

    model = DDP(GRUForecaster(len(FEATURES)).to(device), device_ids=[local_rank])
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    best = float("inf")
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in train_dl:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
        val = rmse(model.module, val_dl, device)
        log.info("epoch %d last batch loss %.4f val RMSE %.4f", epoch, loss.item(), val)
        if val < best:
            best = val
            torch.save({"model": model.module.state_dict(), "stats": stats.to_dict(), "epoch": epoch},
                       os.path.join(args.out, "best.pt"))
    pd.DataFrame({"best_val_rmse": [best]}).to_csv(os.path.join(args.out, "summary.csv"), index=False)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
