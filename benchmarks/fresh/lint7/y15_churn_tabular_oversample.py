"""Telco customer churn: MLP with oversampling of the churn class (about 26% positives).

Run as a notebook-style script; cells are separated by `# %%`.
"""
# %%
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.metrics import average_precision_score, f1_score, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch.utils.data import DataLoader, TensorDataset

SEED = 11
rng = np.random.default_rng(SEED)
torch.manual_seed(SEED)

# %%
raw = pd.read_csv("data/WA_Fn-UseC_-Telco-Customer-Churn.csv")
raw["TotalCharges"] = pd.to_numeric(raw["TotalCharges"], errors="coerce").fillna(0.0)
y_all = (raw.pop("Churn") == "Yes").astype(np.int64).to_numpy()
raw = raw.drop(columns=["customerID"])
cat_cols = raw.select_dtypes("object").columns.tolist()
X_df = pd.get_dummies(raw, columns=cat_cols, drop_first=True, dtype=np.float32)
X_all = X_df.to_numpy(np.float32)
num_idx = [X_df.columns.get_loc(c) for c in ("tenure", "MonthlyCharges", "TotalCharges")]
print(X_all.shape, y_all.mean())


# %%
def jitter_oversample(X, y, target_ratio=1.0, noise=0.02):
    """Add noisy copies of positive rows until positives/negatives reaches target_ratio."""
    pos = np.flatnonzero(y == 1)
    n_extra = int(target_ratio * (y == 0).sum()) - len(pos)
    picks = rng.choice(pos, size=n_extra, replace=True)
    extra = X[picks].copy()
    extra[:, num_idx] *= 1.0 + noise * rng.standard_normal((n_extra, len(num_idx)))
    return np.vstack([X, extra]), np.concatenate([y, np.ones(n_extra, dtype=y.dtype)])


X_bal, y_bal = jitter_oversample(X_all, y_all)
X_tr, X_te, y_tr, y_te = train_test_split(X_bal, y_bal, test_size=0.2, stratify=y_bal, random_state=SEED)

scaler = StandardScaler().fit(X_tr[:, num_idx])
X_tr[:, num_idx] = scaler.transform(X_tr[:, num_idx])
X_te[:, num_idx] = scaler.transform(X_te[:, num_idx])


# %%
class ChurnNet(nn.Module):
    def __init__(self, d_in):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_in, 128), nn.ReLU(), nn.Dropout(0.2),
            nn.Linear(128, 64), nn.ReLU(), nn.Dropout(0.2),
            nn.Linear(64, 1),
        )

    def forward(self, x):
        return self.net(x).squeeze(-1)


train_dl = DataLoader(TensorDataset(torch.from_numpy(X_tr), torch.from_numpy(y_tr).float()),
                      batch_size=128, shuffle=True)
model = ChurnNet(X_tr.shape[1])
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
loss_fn = nn.BCEWithLogitsLoss()

# %%
for epoch in range(40):
    model.train()
    total = 0.0
    for xb, yb in train_dl:
        loss = loss_fn(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * len(yb)
    if epoch % 5 == 4:
        print(f"epoch {epoch + 1}: train bce {total / len(train_dl.dataset):.4f}")

# %%
model.eval()
with torch.no_grad():
    p_te = torch.sigmoid(model(torch.from_numpy(X_te))).numpy()
print(f"test ROC-AUC {roc_auc_score(y_te, p_te):.4f}")
print(f"test PR-AUC  {average_precision_score(y_te, p_te):.4f}")
print(f"test F1@0.5  {f1_score(y_te, p_te > 0.5):.4f}")
torch.save({"model": model.state_dict(), "columns": list(X_df.columns),
            "scaler_mean": scaler.mean_.tolist(), "scaler_scale": scaler.scale_.tolist()}, "churn_mlp.pt")
