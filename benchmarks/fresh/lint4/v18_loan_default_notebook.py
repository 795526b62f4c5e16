#!/usr/bin/env python
# coding: utf-8

# # Loan risk tiers: an MLP baseline
# Five tiers (0 = lowest risk ... 4 = highest), from the cleaned application table.

# In[1]:


import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(42)
df = pd.read_parquet("data/applications_clean.parquet")
feature_cols = [c for c in df.columns if c not in ("application_id", "tier")]
df = df[feature_cols + ["tier"]].fillna(0.0)
print(df.shape, df["tier"].value_counts().sort_index().tolist())


# In[2]:


train_df = df.sample(frac=0.8, random_state=42)
valid_df = df.drop(train_df.index)
mu = train_df[feature_cols].mean()
sigma = train_df[feature_cols].std().replace(0, 1)


def to_tensors(frame):
    frame = frame.copy()
    frame[feature_cols] = (frame[feature_cols] - mu) / sigma
    data = torch.tensor(frame.values, dtype=torch.float32)
    return data[:, :-1], data[:, -1]


X_train, y_train = to_tensors(train_df)
X_valid, y_valid = to_tensors(valid_df)
train_dl = DataLoader(TensorDataset(X_train, y_train), batch_size=256, shuffle=True)


# In[3]:


class TierNet(nn.Module):
    def __init__(self, n_in, n_tiers=5):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_in, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.3),
            nn.Linear(256, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Dropout(0.3),
            nn.Linear(128, n_tiers),
        )

    def forward(self, x):
        return self.net(x)


model = TierNet(len(feature_cols))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)


# In[4]:


for epoch in range(25):
    model.train()
    for xb, yb in train_dl:
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        valid_acc = (model(X_valid).argmax(1) == y_valid).float().mean().item()
    print(f"epoch {epoch:2d}  loss {loss.item():.4f}  valid acc {valid_acc:.4f}")

torch.save(model.state_dict(), "tier_net.pt")


# In[5]:


# Score the new applications received this week.
new_apps = pd.read_parquet("data/applications_week48.parquet")
X_new = torch.tensor(((new_apps[feature_cols].fillna(0.0) - mu) / sigma).values, dtype=torch.float32)

scorer = TierNet(len(feature_cols))
scorer.load_state_dict(torch.load("tier_net.pt", weights_only=True))
with torch.no_grad():
    probs = scorer(X_new).softmax(dim=1)
new_apps["tier_pred"] = probs.argmax(1).numpy()
new_apps["tier_conf"] = probs.max(1).values.numpy()
new_apps[["application_id", "tier_pred", "tier_conf"]].to_csv("week48_scores.csv", index=False)
print(new_apps["tier_pred"].value_counts().sort_index())
