#!/usr/bin/env python
# coding: utf-8

# # Motor imagery decoding (BCI IV 2a), subject-wise EEGNet
# Left hand / right hand / feet / tongue from 22-channel EEG, 4 s trials at 128 Hz.

# In[1]:


import numpy as np
import mne
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.model_selection import train_test_split
from torch.utils.data import DataLoader, TensorDataset

device = "cuda" if torch.cuda.is_available() else "cpu"
SUBJECT = 3


# In[2]:


epochs = mne.read_epochs(f"derivatives/sub-{SUBJECT:02d}_task-mi_epo.fif", preload=True)
epochs = epochs.resample(128).crop(tmin=0.5, tmax=4.5, include_tmax=False)
X = epochs.get_data(units="uV").astype(np.float32)
y = epochs.events[:, 2] - epochs.events[:, 2].min()
X = (X - X.mean(axis=-1, keepdims=True)) / (X.std(axis=-1, keepdims=True) + 1e-6)
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)
X_tr.shape, np.bincount(y_tr)


# In[3]:


class EEGNet(nn.Module):
    def __init__(self, n_ch=22, n_cls=4, F1=8, D=2, F2=16, T=512, drop=0.5):
        super().__init__()
        self.temporal = nn.Sequential(nn.Conv2d(1, F1, (1, 64), padding=(0, 32), bias=False), nn.BatchNorm2d(F1))
        self.spatial = nn.Sequential(
            nn.Conv2d(F1, F1 * D, (n_ch, 1), groups=F1, bias=False), nn.BatchNorm2d(F1 * D), nn.ELU(),
            nn.AvgPool2d((1, 4)), nn.Dropout(drop),
        )
        self.separable = nn.Sequential(
            nn.Conv2d(F1 * D, F1 * D, (1, 16), padding=(0, 8), groups=F1 * D, bias=False),
            nn.Conv2d(F1 * D, F2, 1, bias=False), nn.BatchNorm2d(F2), nn.ELU(),
            nn.AvgPool2d((1, 8)), nn.Dropout(drop),
        )
        self.classify = nn.LazyLinear(n_cls)

    def forward(self, x):
        x = self.separable(self.spatial(self.temporal(x.unsqueeze(1))))
        return self.classify(x.flatten(1))


model = EEGNet().to(device)
model(torch.zeros(2, 22, 512, device=device)).shape


# In[4]:


train_dl = DataLoader(TensorDataset(torch.from_numpy(X_tr), torch.from_numpy(y_tr).long()), batch_size=32, shuffle=True)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
history = []

for epoch in range(150):
    model.train()
    total, n = 0.0, 0
    for xb, yb in train_dl:
        xb, yb = xb.to(device), yb.to(device)
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item() * len(yb)
        n += len(yb)
    history.append(total / n)
    if epoch % 25 == 0:
        print(epoch, round(history[-1], 4))


# In[5]:


X_test = torch.from_numpy(X_te)
X_test.to(device)
model.eval()
with torch.no_grad():
    pred = model(X_test).argmax(dim=1).cpu().numpy()
print("test accuracy:", (pred == y_te).mean())


# In[6]:


torch.save(model.state_dict(), f"eegnet_sub{SUBJECT:02d}.pt")
