"""Credit-card default prediction (UCI "default of credit card clients"), MLP baseline."""

import argparse
import json
import logging

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from torch.utils.data import DataLoader, TensorDataset

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
log = logging.getLogger("credit")

CATEGORICAL = ["SEX", "EDUCATION", "MARRIAGE"]
TARGET = "default.payment.next.month"


def load_frame(path):
    df = pd.read_csv(path).drop(columns=["ID"])
    df = pd.get_dummies(df, columns=CATEGORICAL, dtype=np.float32)
    y = df.pop(TARGET).to_numpy(np.float32)
    return df.to_numpy(np.float32), y


def make_model(n_features, hidden=(256, 128, 64), p=0.2):
    layers, width = [], n_features
    for h in hidden:
        layers += [nn.Linear(width, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Dropout(p)]
        width = h
    layers += [nn.Linear(width, 1), nn.Sigmoid()]
    return nn.Sequential(*layers)


@torch.no_grad()
def predict(model, x, device, bs=4096):
    model.eval()
    out = [model(x[i : i + bs].to(device)).squeeze(1).cpu() for i in range(0, len(x), bs)]
    return torch.cat(out).numpy()


def run(args):
    x, y = load_frame(args.csv)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.2, stratify=y, random_state=args.seed)
    mu, sd = x_tr.mean(0), x_tr.std(0) + 1e-6
    x_tr, x_te = (x_tr - mu) / sd, (x_te - mu) / sd

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(args.seed)
    train_dl = DataLoader(
        TensorDataset(torch.from_numpy(x_tr), torch.from_numpy(y_tr)),
        batch_size=args.batch_size,
        shuffle=True,
        drop_last=True,
    )
    model = make_model(x.shape[1]).to(device)
    pos_weight = torch.tensor([(y_tr == 0).sum() / (y_tr == 1).sum()], dtype=torch.float32, device=device)
    criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=1e-5)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.5, patience=3)

    x_te_t = torch.from_numpy(x_te)
    best_auc, history = 0.0, []
    for epoch in range(args.epochs):
        model.train()
        epoch_loss = 0.0
        for xb, yb in train_dl:
            xb, yb = xb.to(device), yb.to(device)
            logits = model(xb).squeeze(1)
            loss = criterion(logits, yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_loss += loss
        epoch_loss = epoch_loss / len(train_dl)
        auc = roc_auc_score(y_te, predict(model, x_te_t, device))
        scheduler.step(auc)
        history.append({"epoch": epoch, "loss": float(epoch_loss), "auc": float(auc)})
        log.info("epoch %02d loss %.4f test AUC %.4f", epoch, float(epoch_loss), auc)
        if auc > best_auc:
            best_auc = auc
            torch.save(model.state_dict(), args.out)
    with open(args.out.replace(".pt", "_history.json"), "w") as fh:
        json.dump(history, fh, indent=1)
    return best_auc


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default="data/UCI_Credit_Card.csv")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default="credit_mlp.pt")
    log.info("best AUC %.4f", run(ap.parse_args()))
