import argparse
import copy
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class EarlyStopping:
    def __init__(self, patience):
        self.patience, self.bad_epochs = patience, 0
        self.best, self.best_state = math.inf, None

    def __call__(self, model, val_loss):
        if val_loss < self.best:
            self.best, self.bad_epochs = val_loss, 0
            self.best_state = copy.deepcopy(model.state_dict())
        else:
            self.bad_epochs += 1
        return self.bad_epochs >= self.patience


class CycleEncoder(nn.Module):
    def __init__(self, n_points, hidden=128):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(3, 32, 5, padding=2), nn.ReLU(), nn.Conv1d(32, 64, 5, padding=2, stride=2), nn.ReLU())
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(64 * (n_points // 2), hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, curves):
        return self.head(self.conv(curves))


class Trainer:
    def __init__(self, model, device, lr, epochs, steps_per_epoch, accum, max_norm):
        self.model, self.device, self.accum, self.max_norm = model, device, accum, max_norm
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
        updates = epochs * math.ceil(steps_per_epoch / accum)
        self.scheduler = torch.optim.lr_scheduler.OneCycleLR(self.optimizer, max_lr=lr, total_steps=updates)

    def train_epoch(self, loader):
        self.model.train()
        self.optimizer.zero_grad()
        for i, (x, y) in enumerate(loader):
            x, y = x.to(self.device), y.to(self.device)
            loss = F.l1_loss(self.model(x), y) / self.accum
            loss.backward()
            if (i + 1) % self.accum == 0 or i + 1 == len(loader):
                nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
                self.optimizer.step()
                self.scheduler.step()
                self.optimizer.zero_grad()

    @torch.no_grad()
    def validate(self, loader):
        self.model.eval()
        err, n = 0.0, 0
        for x, y in loader:
            err += F.l1_loss(self.model(x.to(self.device)), y.to(self.device), reduction="sum").item()
            n += y.size(0)
        return err / n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cycles", default="cell_cycles.npz")
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--accum", type=int, default=4)
    parser.add_argument("--patience", type=int, default=6)
    args = parser.parse_args()
    data = np.load(args.cycles)
    cells = data["cell_id"]
    val_mask = torch.from_numpy(np.isin(cells, np.unique(cells)[-2:]))
    curves = torch.from_numpy(data["curves"].astype(np.float32))
    ref = curves[~val_mask]
    curves = (curves - ref.mean(dim=(0, 2), keepdim=True)) / ref.std(dim=(0, 2), keepdim=True)
    soh = torch.from_numpy(data["soh"].astype(np.float32)).view(-1, 1)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = DataLoader(TensorDataset(curves[~val_mask], soh[~val_mask]), batch_size=32, shuffle=True)
    val_loader = DataLoader(TensorDataset(curves[val_mask], soh[val_mask]), batch_size=256)
    model = CycleEncoder(curves.shape[-1]).to(device)
    trainer = Trainer(model, device, 3e-3, args.epochs, len(train_loader), args.accum, max_norm=2.0)
    stopper = EarlyStopping(args.patience)
    for epoch in range(args.epochs):
        trainer.train_epoch(train_loader)
        val_mae = trainer.validate(val_loader)
        print(f"epoch {epoch}: val MAE {val_mae:.4f}")
        if stopper(model, val_mae):
            break
    model.load_state_dict(stopper.best_state)
    torch.save(model.state_dict(), "soh_encoder.pt")


if __name__ == "__main__":
    main()
