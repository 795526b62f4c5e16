"""Predict grain protein content from NIR reflectance spectra (1100-2498 nm, 2 nm steps).

Pre-processing: SNV per spectrum, then first derivative. The network's first layer is a
linear projection initialised from PCA of the training spectra (a PCR warm start), followed by
a small MLP; all of it is fine-tuned.
"""
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.decomposition import PCA
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split
from torch.utils.data import DataLoader, TensorDataset

CSV = "data/nir_wheat/spectra.csv"  # sample_id, protein, then one column per wavelength
N_COMPONENTS = 20
HIDDEN = 64
EPOCHS = 400
BATCH = 32
LR = 3e-4
SEED = 11


def snv(spectra):
    mu = spectra.mean(axis=1, keepdims=True)
    sd = spectra.std(axis=1, keepdims=True)
    return (spectra - mu) / sd


def first_derivative(spectra, gap=2):
    return spectra[:, gap:] - spectra[:, :-gap]


def load():
    df = pd.read_csv(CSV)
    wavelengths = [c for c in df.columns if c not in ("sample_id", "protein")]
    x = first_derivative(snv(df[wavelengths].to_numpy()))
    y = df["protein"].to_numpy()
    return x, y


class PCRNet(nn.Module):
    def __init__(self, n_in, n_comp, hidden):
        super().__init__()
        self.proj = nn.Linear(n_in, n_comp)
        self.mlp = nn.Sequential(nn.Linear(n_comp, hidden), nn.SiLU(), nn.Dropout(0.1), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.mlp(self.proj(x)).squeeze(-1)


def warm_start_from_pca(model, x_train):
    pca = PCA(n_components=N_COMPONENTS, whiten=False, random_state=SEED).fit(x_train)
    model.proj.weight.data = torch.from_numpy(pca.components_)
    model.proj.bias.data = torch.from_numpy(-pca.components_ @ pca.mean_)
    scores = pca.transform(x_train)
    return scores.std(axis=0)


def fit(model, loader, x_val, y_val, y_scale):
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=EPOCHS)
    loss_fn = nn.SmoothL1Loss(beta=0.5)
    for epoch in range(EPOCHS):
        model.train()
        for xb, yb in loader:
            loss = loss_fn(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        if epoch % 50 == 49:
            model.eval()
            with torch.no_grad():
                pred = model(x_val).numpy() * y_scale[1] + y_scale[0]
            rmsep = float(np.sqrt(np.mean((pred - y_val) ** 2)))
            print(f"epoch {epoch + 1}: RMSEP {rmsep:.3f} %  R2 {r2_score(y_val, pred):.3f}")
    return model


def main():
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    x, y = load()
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.25, random_state=SEED)
    y_mu, y_sd = y_tr.mean(), y_tr.std()

    model = PCRNet(x.shape[1], N_COMPONENTS, HIDDEN)
    score_sd = warm_start_from_pca(model, x_tr)
    print("explained score std of the first components:", np.round(score_sd[:5], 3))

    train_ds = TensorDataset(torch.tensor(x_tr, dtype=torch.float32),
                             torch.tensor((y_tr - y_mu) / y_sd, dtype=torch.float32))
    loader = DataLoader(train_ds, batch_size=BATCH, shuffle=True)
    x_te_t = torch.tensor(x_te, dtype=torch.float32)
    fit(model, loader, x_te_t, y_te, (y_mu, y_sd))

    model.eval()
    with torch.no_grad():
        pred = model(x_te_t).numpy() * y_sd + y_mu
    print(f"final RMSEP {np.sqrt(np.mean((pred - y_te) ** 2)):.3f} %, R2 {r2_score(y_te, pred):.3f}")
    torch.save(model.state_dict(), "nir_pcrnet.pt")


if __name__ == "__main__":
    main()
