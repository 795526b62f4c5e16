"""Next-month default prediction for credit-card clients (UCI Taiwan default data)."""
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from torch.utils.data import DataLoader, TensorDataset

CONFIG = {
    "csv": "data/default_of_credit_card_clients.csv",
    "target": "default.payment.next.month",
    "categorical": ["SEX", "EDUCATION", "MARRIAGE", "PAY_0", "PAY_2", "PAY_3", "PAY_4", "PAY_5", "PAY_6"],
    "drop": ["ID"],
    "hidden": [256, 128, 64],
    "dropout": 0.15,
    "output": "probability",
    "batch_size": 512,
    "epochs": 40,
    "lr": 2e-3,
    "seed": 2024,
}


def load_frame(cfg):
    df = pd.read_csv(cfg["csv"]).drop(columns=cfg["drop"])
    y = df.pop(cfg["target"]).to_numpy(dtype=np.float32)
    return df, y


def fit_preprocessing(train_df, cfg):
    numeric = [c for c in train_df.columns if c not in cfg["categorical"]]
    encoder = OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(train_df[cfg["categorical"]])
    scaler = StandardScaler().fit(np.log1p(train_df[numeric].clip(lower=0)))

    def transform(df):
        num = scaler.transform(np.log1p(df[numeric].clip(lower=0)))
        cat = encoder.transform(df[cfg["categorical"]])
        return np.hstack([num, cat]).astype(np.float32)

    return transform


def make_mlp(n_in, cfg):
    layers, width = [], n_in
    for h in cfg["hidden"]:
        layers += [nn.Linear(width, h, bias=False), nn.BatchNorm1d(h), nn.SiLU(), nn.Dropout(cfg["dropout"])]
        width = h
    layers.append(nn.Linear(width, 1))
    if cfg["output"] == "probability":
        layers.append(nn.Sigmoid())
    return nn.Sequential(*layers)


class DefaultScorer(nn.Module):
    def __init__(self, n_in, cfg):
        super().__init__()
        self.net = make_mlp(n_in, cfg)

    def forward(self, x):
        return self.net(x).squeeze(-1)

    @torch.no_grad()
    def predict_proba(self, x):
        self.eval()
        return self(x)


def tensors(x, y):
    return TensorDataset(torch.from_numpy(x), torch.from_numpy(y))


def evaluate(model, loader, loss_fn):
    model.eval()
    scores, labels, total = [], [], 0.0
    with torch.no_grad():
        for xb, yb in loader:
            out = model(xb)
            total += loss_fn(out, yb).item() * len(yb)
            scores.append(out)
            labels.append(yb)
    scores, labels = torch.cat(scores).numpy(), torch.cat(labels).numpy()
    return total / len(labels), roc_auc_score(labels, scores)


def main(cfg=CONFIG):
    torch.manual_seed(cfg["seed"])
    np.random.seed(cfg["seed"])
    df, y = load_frame(cfg)
    tr_df, te_df, y_tr, y_te = train_test_split(df, y, test_size=0.2, stratify=y, random_state=cfg["seed"])
    tr_df, va_df, y_tr, y_va = train_test_split(tr_df, y_tr, test_size=0.15, stratify=y_tr,
                                                random_state=cfg["seed"])
    transform = fit_preprocessing(tr_df, cfg)
    x_tr, x_va, x_te = transform(tr_df), transform(va_df), transform(te_df)

    train_loader = DataLoader(tensors(x_tr, y_tr), batch_size=cfg["batch_size"], shuffle=True, drop_last=True)
    valid_loader = DataLoader(tensors(x_va, y_va), batch_size=4096)
    test_loader = DataLoader(tensors(x_te, y_te), batch_size=4096)

    model = DefaultScorer(x_tr.shape[1], cfg)
    positives = float(y_tr.sum())
    loss_fn = nn.BCEWithLogitsLoss(pos_weight=torch.tensor((len(y_tr) - positives) / positives))
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.5, patience=3)

    best_auc, best_state = 0.0, None
    for epoch in range(cfg["epochs"]):
        model.train()
        for xb, yb in train_loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
        val_loss, val_auc = evaluate(model, valid_loader, loss_fn)
        scheduler.step(val_auc)
        print(f"epoch {epoch:02d} valid loss {val_loss:.4f} AUC {val_auc:.4f}")
        if val_auc > best_auc:
            best_auc = val_auc
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}

    model.load_state_dict(best_state)
    test_loss, test_auc = evaluate(model, test_loader, loss_fn)
    print(f"test AUC {test_auc:.4f} (best valid {best_auc:.4f})")
    x_new = torch.from_numpy(x_te[:5])
    print("sample default probabilities:", model.predict_proba(x_new).numpy().round(3))


if __name__ == "__main__":
    main()
