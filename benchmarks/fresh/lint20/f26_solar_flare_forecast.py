import argparse
import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

SHARP_KEYS = ["USFLUX", "MEANGAM", "MEANGBT", "MEANGBZ", "MEANJZD", "TOTUSJZ", "MEANALP", "TOTUSJH", "ABSNJZH", "SAVNCPP", "MEANPOT", "TOTPOT", "MEANSHR", "SHRGT45", "R_VALUE", "AREA_ACR"]

HPARAMS = {"epochs": 60, "lr": 3e-3, "power": 0.9, "batch_size": 128, "hidden": 64, "window": 12}


class FlareGRU(nn.Module):
    def __init__(self, n_in, hidden):
        super().__init__()
        self.gru = nn.GRU(n_in, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        _, h = self.gru(x)
        return self.out(h[-1]).squeeze(-1)


def load_sequences(path, window):
    data = np.load(path)
    feats = np.log1p(np.abs(data["sharp"])) * np.sign(data["sharp"])
    x = torch.from_numpy(feats[:, -window:, :].astype(np.float32))
    y = torch.from_numpy(data["flare_24h"].astype(np.float32))
    return x, y


def true_skill_statistic(pred, truth):
    tp = (pred & truth).sum().item()
    fn = (~pred & truth).sum().item()
    fp = (pred & ~truth).sum().item()
    tn = (~pred & ~truth).sum().item()
    return tp / max(tp + fn, 1) - fp / max(fp + tn, 1)


def optimizer_step(loss, optimizer, scheduler, model):
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", default="sharp_train.npz")
    parser.add_argument("--test", default="sharp_test.npz")
    parser.add_argument("--hparams", default=None)
    args = parser.parse_args()
    hp = dict(HPARAMS)
    if args.hparams:
        with open(args.hparams) as fh:
            hp.update(json.load(fh))
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x_train, y_train = load_sequences(args.train, hp["window"])
    x_test, y_test = load_sequences(args.test, hp["window"])
    mu, sd = x_train.mean(dim=(0, 1)), x_train.std(dim=(0, 1)).clamp_min(1e-6)
    x_train, x_test = (x_train - mu) / sd, (x_test - mu) / sd
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=hp["batch_size"], shuffle=True)
    model = FlareGRU(len(SHARP_KEYS), hp["hidden"]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=hp["lr"])
    scheduler = torch.optim.lr_scheduler.PolynomialLR(optimizer, total_iters=hp["epochs"], power=hp["power"])
    pos_weight = torch.tensor((len(y_train) - y_train.sum().item()) / max(y_train.sum().item(), 1.0), device=device)
    for epoch in range(hp["epochs"]):
        model.train()
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            loss = F.binary_cross_entropy_with_logits(model(xb), yb, pos_weight=pos_weight)
            optimizer_step(loss, optimizer, scheduler, model)
        model.eval()
        with torch.no_grad():
            prob = torch.sigmoid(model(x_test.to(device))).cpu()
        tss = true_skill_statistic(prob > 0.5, y_test.bool())
        print(f"epoch {epoch}: lr {optimizer.param_groups[0]['lr']:.2e} TSS {tss:.3f}")
    torch.save({"model": model.state_dict(), "mu": mu.tolist(), "sd": sd.tolist()}, "flare_gru.pt")


if __name__ == "__main__":
    main()
