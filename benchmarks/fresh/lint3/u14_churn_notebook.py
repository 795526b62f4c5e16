#!/usr/bin/env python
# coding: utf-8

# # Telco customer churn: a small PyTorch classifier
# Exploration notebook. Baseline to beat: logistic regression, ROC AUC 0.84.

# In[1]:


import argparse

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.metrics import classification_report, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

get_ipython().run_line_magic('matplotlib', 'inline')


# In[2]:


parser = argparse.ArgumentParser(description="churn experiment")
parser.add_argument("--csv", default="WA_Fn-UseC_-Telco-Customer-Churn.csv")
parser.add_argument("--epochs", type=int, default=60)
parser.add_argument("--lr", type=float, default=2e-3)
parser.add_argument("--hidden", type=int, default=64)
args = parser.parse_args()
args


# In[3]:


df = pd.read_csv(args.csv)
df["TotalCharges"] = pd.to_numeric(df["TotalCharges"], errors="coerce").fillna(0.0)
df = df.drop(columns=["customerID"])
y = (df.pop("Churn") == "Yes").astype(int).to_numpy()
X = pd.get_dummies(df, drop_first=True).astype(np.float32)
print(X.shape, y.mean())
X.head()


# In[4]:


X_train, X_test, y_train, y_test = train_test_split(X.to_numpy(), y, test_size=0.25, stratify=y, random_state=0)
scaler = StandardScaler().fit(X_train)
X_train = torch.tensor(scaler.transform(X_train), dtype=torch.float32)
X_test = torch.tensor(scaler.transform(X_test), dtype=torch.float32)
y_train = torch.tensor(y_train)
y_test = torch.tensor(y_test)


# In[5]:


class ChurnNet(nn.Module):
    def __init__(self, d_in, hidden):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_in, hidden), nn.ReLU(), nn.Dropout(0.3),
            nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(0.3),
            nn.Linear(hidden, 2),
        )

    def forward(self, x):
        return torch.softmax(self.net(x), -1)


model = ChurnNet(X_train.shape[1], args.hidden)
counts = torch.bincount(y_train).float()
criterion = nn.CrossEntropyLoss(weight=counts.sum() / (2 * counts))
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)


# In[6]:


train_hist, test_hist = [], []
for epoch in range(args.epochs):
    model.train()
    perm = torch.randperm(len(X_train))
    for idx in perm.split(128):
        optimizer.zero_grad()
        loss = criterion(model(X_train[idx]), y_train[idx])
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        train_hist.append(criterion(model(X_train), y_train).item())
        test_hist.append(criterion(model(X_test), y_test).item())

plt.plot(train_hist, label="train")
plt.plot(test_hist, label="test")
plt.legend()


# In[7]:


with torch.no_grad():
    proba = model(X_test)[:, 1].numpy()
print("ROC AUC", roc_auc_score(y_test.numpy(), proba))
print(classification_report(y_test.numpy(), (proba > 0.5).astype(int)))


# In[ ]:




