"""Crop-type classification from Sentinel-2 time series of field parcels (EuroCrops subset).
Each sample is (T=24 acquisitions, 10 bands), averaged over the parcel's pixels."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

CROPS = ["wheat", "barley", "maize", "rapeseed", "sugar_beet", "potato", "grassland", "sunflower", "fallow"]


class TempCNN(nn.Module):
    def __init__(self, bands=10, n_classes=len(CROPS), width=128, p_drop=0.3):
        super().__init__()

        def conv(c_in):
            return nn.Sequential(nn.Conv1d(c_in, width, 5, padding=2, bias=False), nn.BatchNorm1d(width),
                                 nn.ReLU(), nn.Dropout(p_drop))

        self.convs = nn.Sequential(conv(bands), conv(width), conv(width))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(width * 24, 256, bias=False), nn.BatchNorm1d(256),
                                  nn.ReLU(), nn.Dropout(p_drop), nn.Linear(256, n_classes))

    def forward(self, x):  # (B, T, bands)
        return self.head(self.convs(x.transpose(1, 2)))


class Trainer:
    def __init__(self, model, train_dl, val_dl, device, lr=1e-3):
        self.model = model.to(device)
        self.train_dl, self.val_dl, self.device = train_dl, val_dl, device
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.best_f1, self.best_state, self.best_epoch = -1.0, None, -1

    def train_one_epoch(self):
        total, n = 0.0, 0
        for x, y in self.train_dl:
            x, y = x.to(self.device), y.to(self.device)
            self.opt.zero_grad()
            loss = F.cross_entropy(self.model(x), y)
            loss.backward()
            self.opt.step()
            total += loss.item() * y.size(0)
            n += y.size(0)
        return total / n

    @torch.no_grad()
    def validate(self):
        self.model.eval()
        preds, labels = [], []
        for x, y in self.val_dl:
            preds.append(self.model(x.to(self.device)).argmax(dim=1).cpu())
            labels.append(y)
        preds, labels = torch.cat(preds), torch.cat(labels)
        f1s = []
        for c in range(len(CROPS)):
            tp = ((preds == c) & (labels == c)).sum().item()
            denom = (preds == c).sum().item() + (labels == c).sum().item()
            f1s.append(2 * tp / denom if denom else 0.0)
        return float(np.mean(f1s))

    def fit(self, epochs):
        self.model.train()
        for epoch in range(epochs):
            loss = self.train_one_epoch()
            macro_f1 = self.validate()
            if macro_f1 > self.best_f1:
                self.best_f1, self.best_epoch = macro_f1, epoch
                self.best_state = self.model.state_dict()
            print(f"epoch {epoch:02d} loss {loss:.4f} val macro-F1 {macro_f1:.4f}")
        self.model.load_state_dict(self.best_state)
        torch.save(self.best_state, "tempcnn_best.pt")
        print(f"kept epoch {self.best_epoch} (macro-F1 {self.best_f1:.4f})")


def load_split(name):
    data = np.load(f"data/eurocrops_{name}.npz")
    x = torch.from_numpy(data["reflectance"].astype(np.float32) / 10000.0)
    return TensorDataset(x, torch.from_numpy(data["crop"]).long())


if __name__ == "__main__":
    train_ds, val_ds = load_split("train"), load_split("val")
    trainer = Trainer(TempCNN(),
                      DataLoader(train_ds, batch_size=256, shuffle=True, drop_last=True),
                      DataLoader(val_ds, batch_size=1024),
                      torch.device("cuda" if torch.cuda.is_available() else "cpu"))
    trainer.fit(epochs=50)
