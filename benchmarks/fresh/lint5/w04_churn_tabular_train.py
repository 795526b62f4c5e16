"""Telecom churn: an MLP over one-hot categoricals and standardised numeric columns."""

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch.utils.data import DataLoader, TensorDataset

NUMERIC = ["tenure", "monthly_charges", "total_charges", "support_calls", "data_gb"]
CATEGORICAL = ["contract", "payment_method", "internet_service", "region"]


def prepare(path):
    df = pd.read_csv(path)
    df["total_charges"] = pd.to_numeric(df["total_charges"], errors="coerce").fillna(0.0)
    y = (df["churn"] == "Yes").astype(np.float32).to_numpy()
    cats = pd.get_dummies(df[CATEGORICAL].astype(str), dtype=np.float32)
    X_num_tr, X_num_te, X_cat_tr, X_cat_te, y_tr, y_te = train_test_split(
        df[NUMERIC].to_numpy(np.float32), cats.to_numpy(), y, test_size=0.2, stratify=y, random_state=42
    )
    scaler = StandardScaler().fit(X_num_tr)
    X_tr = np.hstack([scaler.transform(X_num_tr), X_cat_tr]).astype(np.float32)
    X_te = np.hstack([scaler.transform(X_num_te), X_cat_te]).astype(np.float32)
    return X_tr, X_te, y_tr, y_te, scaler


class ChurnMLP(nn.Module):
    def __init__(self, n_in, widths=(256, 128, 64), p=0.25):
        super().__init__()
        layers, prev = [], n_in
        for w in widths:
            layers += [nn.Linear(prev, w), nn.BatchNorm1d(w), nn.ReLU(), nn.Dropout(p)]
            prev = w
        layers.append(nn.Linear(prev, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(-1)


def holdout_auc(model, X, y, device):
    with torch.no_grad():
        logits = model(torch.from_numpy(X).to(device))
    return roc_auc_score(y, torch.sigmoid(logits).cpu().numpy())


def train(X_tr, y_tr, X_te, y_te, epochs=40, device="cpu"):
    loader = DataLoader(TensorDataset(torch.from_numpy(X_tr), torch.from_numpy(y_tr)),
                        batch_size=512, shuffle=True, drop_last=True)
    model = ChurnMLP(X_tr.shape[1]).to(device)
    pos_weight = torch.tensor((1 - y_tr.mean()) / y_tr.mean(), device=device)
    criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)

    for epoch in range(epochs):
        model.train()
        epoch_scores, epoch_labels = [], []
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            logits = model(xb)
            loss = criterion(logits, yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_scores.append(torch.sigmoid(logits).cpu().numpy())
            epoch_labels.append(yb.cpu().numpy())
        train_auc = roc_auc_score(np.concatenate(epoch_labels), np.concatenate(epoch_scores))
        test_auc = holdout_auc(model, X_te, y_te, device)
        print(f"epoch {epoch:2d}  loss {loss.item():.4f}  train AUC {train_auc:.4f}  holdout AUC {test_auc:.4f}")
    return model


if __name__ == "__main__":
    X_tr, X_te, y_tr, y_te, scaler = prepare("data/telco_churn.csv")
    model = train(X_tr, y_tr, X_te, y_te)
    torch.save({"model": model.state_dict(), "scaler_mean": torch.tensor(scaler.mean_),
                "scaler_scale": torch.tensor(scaler.scale_)},
               "churn_mlp.pt")
    print("saved; final holdout AUC", holdout_auc(model, X_te, y_te, "cpu"))
