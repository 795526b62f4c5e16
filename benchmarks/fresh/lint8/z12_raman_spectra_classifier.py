# %% [markdown]
# # Bacterial isolate identification from Raman spectra
# 30 isolates, ~60 spectra each, 1000 wavenumber bins (381-1792 cm^-1). The reference set is
# small, so each spectrum is expanded with physically plausible variants (baseline drift,
# intensity scaling, shot noise, a small wavenumber shift) before fitting a 1-D CNN.

# %%
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import accuracy_score, confusion_matrix
from sklearn.model_selection import train_test_split
from torch.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(0)
torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# %%
raw = pd.read_csv("data/raman/reference_spectra.csv")
wavenumbers = np.array([float(c) for c in raw.columns if c != "isolate"])
X = raw.drop(columns="isolate").to_numpy(dtype=np.float32)
isolates = sorted(raw["isolate"].astype(str).unique())
y = raw["isolate"].astype(str).map({name: k for k, name in enumerate(isolates)}).to_numpy()
print(X.shape, len(isolates), "isolates")


# %%
def minmax(spectra):
    lo = spectra.min(axis=1, keepdims=True)
    hi = spectra.max(axis=1, keepdims=True)
    return (spectra - lo) / (hi - lo + 1e-8)


def expand(spectra, labels, copies, rng):
    """Return the originals plus `copies` perturbed variants of every spectrum."""
    grid = np.linspace(0.0, 1.0, spectra.shape[1], dtype=np.float32)
    out, out_y = [spectra], [labels]
    for _ in range(copies):
        drift = rng.normal(0, 0.05, (len(spectra), 3)).astype(np.float32)
        baseline = drift[:, :1] + drift[:, 1:2] * grid + drift[:, 2:] * grid**2
        scaled = spectra * rng.uniform(0.9, 1.1, (len(spectra), 1)).astype(np.float32)
        shifted = np.stack([np.roll(s, int(k)) for s, k in zip(scaled, rng.integers(-2, 3, len(spectra)))])
        noisy = shifted + rng.normal(0, 0.01, spectra.shape).astype(np.float32)
        out.append(noisy + baseline)
        out_y.append(labels)
    return np.concatenate(out), np.concatenate(out_y)


X_all, y_all = expand(minmax(X), y, copies=5, rng=rng)
X_all = minmax(X_all)

# %%
X_train, X_test, y_train, y_test = train_test_split(X_all, y_all, test_size=0.2, stratify=y_all, random_state=0)
train_dl = DataLoader(TensorDataset(torch.from_numpy(X_train), torch.from_numpy(y_train)), batch_size=128, shuffle=True)
test_dl = DataLoader(TensorDataset(torch.from_numpy(X_test), torch.from_numpy(y_test)), batch_size=512)
print(len(X_train), "train spectra,", len(X_test), "test spectra")


# %%
class SpectraCNN(nn.Module):
    def __init__(self, n_classes, width=32):
        super().__init__()
        self.convs = nn.Sequential(
            nn.Conv1d(1, width, 7, padding=3, bias=False), nn.BatchNorm1d(width), nn.ReLU(), nn.MaxPool1d(2),
            nn.Conv1d(width, 2 * width, 5, padding=2, bias=False), nn.BatchNorm1d(2 * width), nn.ReLU(), nn.MaxPool1d(2),
            nn.Conv1d(2 * width, 4 * width, 3, padding=1, bias=False), nn.BatchNorm1d(4 * width), nn.ReLU(),
            nn.AdaptiveAvgPool1d(8),
        )
        self.fc = nn.Linear(4 * width * 8, n_classes)

    def forward(self, x):
        return self.fc(self.convs(x.unsqueeze(1)).flatten(1))


model = SpectraCNN(len(isolates)).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)

# %%
for epoch in range(30):
    model.train()
    total, seen = 0.0, 0
    for xb, yb in train_dl:
        xb, yb = xb.to(device), yb.to(device)
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item() * len(yb)
        seen += len(yb)
    if epoch % 5 == 4:
        print(f"epoch {epoch + 1}: train loss {total / seen:.4f}")

# %%
model.eval()
with torch.no_grad():
    pred = torch.cat([model(xb.to(device)).argmax(dim=1).cpu() for xb, _ in test_dl]).numpy()
print(f"isolate-level test accuracy: {accuracy_score(y_test, pred):.3f}")
cm = confusion_matrix(y_test, pred)
worst = np.argsort(cm.diagonal() / cm.sum(axis=1))[:5]
print("hardest isolates:", [isolates[k] for k in worst])

# %%
torch.save({"model": model.state_dict(), "isolates": isolates, "wavenumbers": wavenumbers.tolist()}, "raman_cnn.pt")
